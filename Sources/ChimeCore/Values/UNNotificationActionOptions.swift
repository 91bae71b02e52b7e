// Apple's option set, with Apple's names and raw values: a plain value, so it lives in the core and the
// `Chime` module re-exports it unchanged.

/// How an action behaves when the user picks it.
public struct UNNotificationActionOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    public static let authenticationRequired = UNNotificationActionOptions(rawValue: 1 << 0)
    public static let destructive = UNNotificationActionOptions(rawValue: 1 << 1)
    public static let foreground = UNNotificationActionOptions(rawValue: 1 << 2)
}

// MARK: - Names used by JSON, the CLI and the docs

extension UNNotificationActionOptions {
    /// Apple's option names: `authenticationRequired`, `destructive`, `foreground`.
    public static let names: [(String, UNNotificationActionOptions)] = [
        ("authenticationRequired", .authenticationRequired), ("destructive", .destructive), ("foreground", .foreground),
    ]
}
