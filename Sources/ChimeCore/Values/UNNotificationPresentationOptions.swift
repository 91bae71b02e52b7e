// Apple's option set, with Apple's names and raw values: a plain value, so it lives in the core and the
// `Chime` module re-exports it unchanged.

/// How a notification is shown when it arrives while the app is in front.
public struct UNNotificationPresentationOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    public static let badge = UNNotificationPresentationOptions(rawValue: 1 << 0)
    public static let sound = UNNotificationPresentationOptions(rawValue: 1 << 1)
    @available(*, deprecated, message: "Use .list and .banner")
    public static let alert = UNNotificationPresentationOptions(rawValue: 1 << 2)
    public static let list = UNNotificationPresentationOptions(rawValue: 1 << 3)
    public static let banner = UNNotificationPresentationOptions(rawValue: 1 << 4)

    /// The deprecated `.alert` bit, without the deprecation warning, for Chime's own code.
    static let alertBit = UNNotificationPresentationOptions(rawValue: 1 << 2)
}

// MARK: - Names used by JSON, the CLI and the docs

extension UNNotificationPresentationOptions {
    /// Apple's option names: `badge`, `sound`, `alert`, `list`, `banner`.
    public static let names: [(String, UNNotificationPresentationOptions)] = [
        ("badge", .badge), ("sound", .sound), ("alert", .alertBit), ("list", .list), ("banner", .banner),
    ]
}
