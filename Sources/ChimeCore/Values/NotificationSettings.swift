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
