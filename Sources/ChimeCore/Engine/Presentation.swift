import Foundation

/// How the engine decides who asks the user for permission, and how notifications are shown.
public enum AuthorizationDecision: Sendable, Hashable {
    /// The user allowed notifications.
    case grant
    /// The user declined.
    case deny
    /// The question waits for the user (service mode): the status stays `notDetermined` until
    /// someone answers with ``NotificationEngine/answerAuthorization(app:allow:)``.
    case ask
}

/// Answers `requestAuthorization` the first time an app asks. The simulator's policy is its
/// `authorizationAnswer`; embedded use reads `CHIME_AUTHORIZATION`; the service asks the user.
public protocol AuthorizationPolicy: Sendable {
    func decide(app: String, options: UNAuthorizationOptions) -> AuthorizationDecision
}

/// A policy that always gives the same answer.
public struct FixedAuthorizationPolicy: AuthorizationPolicy {
    public let decision: AuthorizationDecision
    public init(_ decision: AuthorizationDecision) { self.decision = decision }
    public func decide(app: String, options: UNAuthorizationOptions) -> AuthorizationDecision { decision }
}

/// The presentation rules, shared by every surface and adapter.
public enum Presentation {
    /// How a notification is shown when the app is not in front (or has no `willPresent`):
    /// as its content says, within what the user allowed.
    ///
    /// - Passive notifications go to the list only, silently.
    /// - Provisional authorization delivers quietly: list only.
    /// - A banner and the list need the alert setting; sound needs content with a sound and the sound
    ///   setting; the badge needs content with a badge and the badge setting.
    public static func background(for content: NotificationContent, settings: NotificationSettings)
        -> UNNotificationPresentationOptions
    {
        guard settings.authorizationStatus.allowsDelivery else { return [] }
        if settings.authorizationStatus == .provisional { return listed(settings) ? [.list] : [] }
        var options: UNNotificationPresentationOptions = []
        if listed(settings) { options.insert(.list) }
        if settings.alertSetting == .enabled && content.interruptionLevel != .passive { options.insert(.banner) }
        if content.sound != nil && content.interruptionLevel != .passive
            && (settings.soundSetting == .enabled
                || (content.interruptionLevel == .critical && settings.criticalAlertSetting == .enabled))
        {
            options.insert(.sound)
        }
        if content.badge != nil && settings.badgeSetting == .enabled { options.insert(.badge) }
        return options
    }

    /// Whether the app's delivered notifications are in the list under `settings` (the `.list` of
    /// their ``background(for:settings:)`` presentation, whatever their content): notifications
    /// allowed and Notification Center not off.
    ///
    /// ```swift
    /// Presentation.listed(settings)   // false once the user turns Notification Center off
    /// ```
    public static func listed(_ settings: NotificationSettings) -> Bool {
        settings.authorizationStatus.allowsDelivery && settings.notificationCenterSetting != .disabled
    }

    /// What the app asked for in `willPresent`, limited to what the user allowed. The deprecated
    /// `.alert` means banner and list.
    public static func foreground(requested: UNNotificationPresentationOptions, settings: NotificationSettings)
        -> UNNotificationPresentationOptions
    {
        guard settings.authorizationStatus.allowsDelivery else { return [] }
        var options = requested
        if options.contains(.alertBit) {
            options.remove(.alertBit)
            options.formUnion([.banner, .list])
        }
        if settings.alertSetting != .enabled { options.remove(.banner) }
        if settings.soundSetting != .enabled { options.remove(.sound) }
        if settings.badgeSetting != .enabled { options.remove(.badge) }
        return options
    }

    /// The settings after the user answered a request for `options`.
    public static func settings(
        after decision: AuthorizationDecision, options: UNAuthorizationOptions,
        previous: NotificationSettings
    ) -> NotificationSettings {
        var settings = NotificationSettings()
        switch decision {
        case .ask:
            return previous
        case .deny:
            settings.authorizationStatus = .denied
            for keyPath in [
                \NotificationSettings.soundSetting, \.badgeSetting, \.alertSetting, \.notificationCenterSetting,
                \.lockScreenSetting, \.criticalAlertSetting, \.timeSensitiveSetting,
                \.scheduledDeliverySetting, \.directMessagesSetting,
            ] {
                settings[keyPath: keyPath] = .disabled
            }
            settings.alertStyle = .none
        case .grant:
            let provisionalOnly = options.contains(.provisional)
            settings.authorizationStatus = provisionalOnly ? .provisional : .authorized
            settings.alertSetting = options.contains(.alert) ? .enabled : .disabled
            settings.soundSetting = options.contains(.sound) ? .enabled : .disabled
            settings.badgeSetting = options.contains(.badge) ? .enabled : .disabled
            settings.notificationCenterSetting = .enabled
            settings.lockScreenSetting = .enabled
            settings.alertStyle = options.contains(.alert) ? .banner : .none
            settings.criticalAlertSetting = options.contains(.criticalAlert) ? .enabled : .disabled
            // Time-sensitive notifications break through focus modes (``FocusMode``) for an
            // authorized app, as iOS's default for an app with the entitlement; provisional
            // delivery is quiet anyway. The owner may turn it off per app (settings).
            settings.timeSensitiveSetting = provisionalOnly ? .disabled : .enabled
            settings.providesAppNotificationSettings = options.contains(.providesAppNotificationSettings)
            settings.scheduledDeliverySetting = .disabled
            settings.directMessagesSetting = .disabled
        }
        // Linux has no CarPlay and no announcements.
        settings.carPlaySetting = .notSupported
        settings.announcementSetting = .notSupported
        settings.showPreviewsSetting = previous.showPreviewsSetting
        return settings
    }
}
