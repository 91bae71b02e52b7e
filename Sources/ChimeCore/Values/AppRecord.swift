import Foundation

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
    /// The command the service starts to hand the app an answer while it has no open event stream
    /// (service mode, set by the owner only; an app's own token can never change it).
    public var launchCommand: LaunchCommand?
    /// The team and provider key APNs providers authenticate with (set by the owner only).
    public var apnsProvider: APNsProvider?
    /// When the app gave up its device token with `unregisterForRemoteNotifications()`; `nil`
    /// while it is registered (from its first use, and again after `registerForRemoteNotifications()`).
    /// A push to the token meanwhile is answered 410 `Unregistered` with this date.
    public var deviceTokenUnregistered: Date?
    /// The APNs provider certificate registered for the app (set by the owner only): a TLS client
    /// presenting it may push to the app's topics.
    public var apnsCertificate: CertificateFingerprint?

    public init(bundleIdentifier: String, created: Date, deviceToken: String) {
        self.bundleIdentifier = bundleIdentifier
        self.settings = NotificationSettings()
        self.requestedOptions = []
        self.promptPending = false
        self.badge = 0
        self.deviceToken = deviceToken
        self.tokenHash = nil
        self.created = created
        self.launchCommand = nil
        self.apnsProvider = nil
        self.deviceTokenUnregistered = nil
        self.apnsCertificate = nil
    }
}
