// Apple's option sets and enums, with Apple's names and raw values. They are plain values, so they
// live in the core and the `Chime` module re-exports them unchanged.

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

/// How an action behaves when the user picks it.
public struct UNNotificationActionOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    public static let authenticationRequired = UNNotificationActionOptions(rawValue: 1 << 0)
    public static let destructive = UNNotificationActionOptions(rawValue: 1 << 1)
    public static let foreground = UNNotificationActionOptions(rawValue: 1 << 2)
}

/// How the notifications of a category are handled.
public struct UNNotificationCategoryOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    public static let customDismissAction = UNNotificationCategoryOptions(rawValue: 1 << 0)
    public static let allowInCarPlay = UNNotificationCategoryOptions(rawValue: 1 << 1)
    public static let hiddenPreviewsShowTitle = UNNotificationCategoryOptions(rawValue: 1 << 2)
    public static let hiddenPreviewsShowSubtitle = UNNotificationCategoryOptions(rawValue: 1 << 3)
    @available(*, deprecated, message: "Announcement is always allowed on Apple's platforms")
    public static let allowAnnouncement = UNNotificationCategoryOptions(rawValue: 1 << 4)
}

/// Whether the user has allowed the app's notifications.
public enum UNAuthorizationStatus: Int, Sendable, Hashable, CaseIterable {
    case notDetermined = 0
    case denied = 1
    case authorized = 2
    case provisional = 3
    case ephemeral = 4
}

/// The state of one notification setting.
public enum UNNotificationSetting: Int, Sendable, Hashable, CaseIterable {
    case notSupported = 0
    case disabled = 1
    case enabled = 2
}

/// How alerts are shown.
public enum UNAlertStyle: Int, Sendable, Hashable, CaseIterable {
    case none = 0
    case banner = 1
    case alert = 2
}

/// When previews (the body) are shown.
public enum UNShowPreviewsSetting: Int, Sendable, Hashable, CaseIterable {
    case always = 0
    case whenAuthenticated = 1
    case never = 2
}

/// How urgently a notification asks for attention.
public enum UNNotificationInterruptionLevel: UInt, Sendable, Hashable, CaseIterable {
    case passive = 0
    case active = 1
    case timeSensitive = 2
    case critical = 3
}

/// The identifier of the response when the user opens a notification (taps its body).
public let UNNotificationDefaultActionIdentifier = "com.apple.UNNotificationDefaultActionIdentifier"
/// The identifier of the response when the user dismisses a notification of a category with
/// `.customDismissAction`.
public let UNNotificationDismissActionIdentifier = "com.apple.UNNotificationDismissActionIdentifier"

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

extension UNNotificationActionOptions {
    /// Apple's option names: `authenticationRequired`, `destructive`, `foreground`.
    public static let names: [(String, UNNotificationActionOptions)] = [
        ("authenticationRequired", .authenticationRequired), ("destructive", .destructive), ("foreground", .foreground),
    ]
}

extension UNNotificationCategoryOptions {
    /// Apple's option names: `customDismissAction`, `allowInCarPlay`, ….
    public static let names: [(String, UNNotificationCategoryOptions)] = [
        ("customDismissAction", .customDismissAction), ("allowInCarPlay", .allowInCarPlay),
        ("hiddenPreviewsShowTitle", .hiddenPreviewsShowTitle),
        ("hiddenPreviewsShowSubtitle", .hiddenPreviewsShowSubtitle),
        ("allowAnnouncement", UNNotificationCategoryOptions(rawValue: 1 << 4)),
    ]
}

extension UNNotificationPresentationOptions {
    /// Apple's option names: `badge`, `sound`, `alert`, `list`, `banner`.
    public static let names: [(String, UNNotificationPresentationOptions)] = [
        ("badge", .badge), ("sound", .sound), ("alert", .alertBit), ("list", .list), ("banner", .banner),
    ]
}

extension UNNotificationInterruptionLevel {
    /// Apple's case names, as used in JSON and APNs payloads (`"time-sensitive"` is accepted too).
    public var name: String {
        switch self {
        case .passive: "passive"
        case .active: "active"
        case .timeSensitive: "timeSensitive"
        case .critical: "critical"
        }
    }

    /// Parses `passive`, `active`, `timeSensitive` / `time-sensitive`, `critical`.
    public init?(name: String) {
        switch name {
        case "passive": self = .passive
        case "active": self = .active
        case "timeSensitive", "time-sensitive": self = .timeSensitive
        case "critical": self = .critical
        default: return nil
        }
    }
}

extension UNAuthorizationStatus {
    /// Apple's case name: `notDetermined`, `denied`, `authorized`, `provisional`, `ephemeral`.
    public var name: String {
        switch self {
        case .notDetermined: "notDetermined"
        case .denied: "denied"
        case .authorized: "authorized"
        case .provisional: "provisional"
        case .ephemeral: "ephemeral"
        }
    }

    /// Parses Apple's case name (see ``name``).
    public init?(name: String) {
        guard let status = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = status
    }

    /// Whether notifications may be delivered in this state.
    public var allowsDelivery: Bool { self == .authorized || self == .provisional || self == .ephemeral }
}

extension OptionSet where RawValue == UInt, Element == Self {
    /// The names of the members set, from a `names` table.
    public func names(from table: [(String, Self)]) -> [String] {
        table.filter { contains($0.1) && $0.1.rawValue != 0 }.map(\.0)
    }
}
