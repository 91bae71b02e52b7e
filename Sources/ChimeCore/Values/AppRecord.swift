import Foundation

/// One app's notification settings, as the user sees them in a settings screen.
public struct NotificationSettings: Sendable, Hashable {
    public var authorizationStatus: UNAuthorizationStatus = .notDetermined
    public var soundSetting: UNNotificationSetting = .notSupported
    public var badgeSetting: UNNotificationSetting = .notSupported
    public var alertSetting: UNNotificationSetting = .notSupported
    public var notificationCenterSetting: UNNotificationSetting = .notSupported
    public var lockScreenSetting: UNNotificationSetting = .notSupported
    public var carPlaySetting: UNNotificationSetting = .notSupported
    public var alertStyle: UNAlertStyle = .none
    public var showPreviewsSetting: UNShowPreviewsSetting = .always
    public var criticalAlertSetting: UNNotificationSetting = .notSupported
    public var providesAppNotificationSettings: Bool = false
    public var announcementSetting: UNNotificationSetting = .notSupported
    public var timeSensitiveSetting: UNNotificationSetting = .notSupported
    public var scheduledDeliverySetting: UNNotificationSetting = .notSupported
    public var directMessagesSetting: UNNotificationSetting = .notSupported

    public init() {}
}

/// Everything the engine keeps about one app besides its notifications.
public struct AppRecord: Sendable, Hashable {
    /// The app's bundle identifier, which is its name everywhere in Chime.
    public var bundleIdentifier: String
    /// The user's answer and the resulting per-feature settings.
    public var settings: NotificationSettings
    /// The options the app asked for when it last requested authorization.
    public var requestedOptions: UNAuthorizationOptions
    /// Whether a question to the user is waiting for an answer (service mode).
    public var promptPending: Bool
    /// The app's badge number.
    public var badge: Int
    /// The device token, 64 hexadecimal characters, as from `registerForRemoteNotifications`.
    public var deviceToken: String
    /// The hash of the app's access token (service mode), never the token itself.
    public var tokenHash: String?
    /// When the app was first seen.
    public var created: Date

    public init(bundleIdentifier: String, created: Date, deviceToken: String) {
        self.bundleIdentifier = bundleIdentifier
        self.settings = NotificationSettings()
        self.requestedOptions = []
        self.promptPending = false
        self.badge = 0
        self.deviceToken = deviceToken
        self.tokenHash = nil
        self.created = created
    }
}

/// Something that happened to an app's notifications, recorded for event streams.
public struct EngineEvent: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A notification was delivered (`notification` is set).
        case delivered
        /// The user answered (`response` is set).
        case response
        /// Pending requests or delivered notifications were removed (`identifiers`, `scope`).
        case removed
        /// A silent (content-available) push arrived (`notification` is set, never shown).
        case silentPush
        /// The app's authorization or settings changed.
        case settings
        /// Requests were added or replaced (`identifiers`, when at most 100). Announced to
        /// subscribers only, not kept in the event log (no `sequence`): a hint to refresh a list.
        case scheduled
        /// The app's categories were replaced. Announced only, not logged.
        case categories
        /// The app was registered, changed (its token) or removed. Announced only, not logged.
        case app
    }

    /// The event's position in the store's log; resumable streams continue after it.
    public var sequence: Int64
    public var app: String
    public var kind: Kind
    public var date: Date
    public var notification: DeliveredNotification?
    public var response: NotificationResponse?
    /// For `removed`: the identifiers removed.
    public var identifiers: [String]
    /// For `removed`: `pending` or `delivered`.
    public var scope: String?

    public init(sequence: Int64 = 0, app: String, kind: Kind, date: Date, notification: DeliveredNotification? = nil,
                response: NotificationResponse? = nil, identifiers: [String] = [], scope: String? = nil) {
        self.sequence = sequence
        self.app = app
        self.kind = kind
        self.date = date
        self.notification = notification
        self.response = response
        self.identifiers = identifiers
        self.scope = scope
    }
}
