// Apple's option set, with Apple's names and raw values: a plain value, so it lives in the core and the
// `Chime` module re-exports it unchanged.

/// What an app asks the user to allow.
///
/// ```swift
/// try await center.requestAuthorization(options: [.alert, .sound, .badge])
/// ```
public struct UNAuthorizationOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    public static let badge = UNAuthorizationOptions(rawValue: 1 << 0)
    public static let sound = UNAuthorizationOptions(rawValue: 1 << 1)
    public static let alert = UNAuthorizationOptions(rawValue: 1 << 2)
    public static let carPlay = UNAuthorizationOptions(rawValue: 1 << 3)
    public static let criticalAlert = UNAuthorizationOptions(rawValue: 1 << 4)
    public static let providesAppNotificationSettings = UNAuthorizationOptions(rawValue: 1 << 5)
    public static let provisional = UNAuthorizationOptions(rawValue: 1 << 6)
    @available(*, deprecated, message: "Announcement authorization is always included on Apple's platforms")
    public static let announcement = UNAuthorizationOptions(rawValue: 1 << 7)
    public static let timeSensitive = UNAuthorizationOptions(rawValue: 1 << 8)
}

// MARK: - Names used by JSON, the CLI and the docs

extension UNAuthorizationOptions {
    /// Apple's option names, in raw-value order: `badge`, `sound`, `alert`, ….
    public static let names: [(String, UNAuthorizationOptions)] = [
        ("badge", .badge), ("sound", .sound), ("alert", .alert), ("carPlay", .carPlay),
        ("criticalAlert", .criticalAlert), ("providesAppNotificationSettings", .providesAppNotificationSettings),
        ("provisional", .provisional), ("announcement", UNAuthorizationOptions(rawValue: 1 << 7)),
        ("timeSensitive", .timeSensitive),
    ]
}
