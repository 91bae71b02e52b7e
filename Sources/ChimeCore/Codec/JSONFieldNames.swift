import Foundation

/// JSON field names of the settings, authorization and badge bodies and answers, declared once:
/// the encoders (``NotificationSettings/json``, ``AuthorizationAnswer/json``), the strict decoders
/// of request bodies (``SettingsChange/init(json:)``, ``JSONMapping/authorizationOptions(_:)``,
/// ``JSONMapping/authorizationAllow(_:)``, ``JSONMapping/badgeCount(_:)``), the tolerant decoders of
/// answers (``NotificationSettings/init(json:)``, ``AuthorizationAnswer/init(json:)``) and the CLI
/// all spell a field through these.
///
/// ```swift
/// let status = settingsJSON[JSONFieldName.authorizationStatus]
/// ```
package enum JSONFieldName {
    // `NotificationSettings`: Apple's `UNNotificationSettings` property names.
    package static let authorizationStatus = "authorizationStatus"
    package static let alertStyle = "alertStyle"
    package static let showPreviewsSetting = "showPreviewsSetting"
    package static let providesAppNotificationSettings = "providesAppNotificationSettings"

    // `POST /v1/apps/{app}/authorization` `{"options": […]}`, `…/authorization/answer` `{"allow": true}`,
    // and their answer `{"granted", "status", "settings"}`.
    package static let options = "options"
    package static let allow = "allow"
    package static let granted = "granted"
    package static let status = "status"
    package static let settings = "settings"

    // `PUT /v1/apps/{app}/badge` `{"badge": 3}` and its answer.
    package static let badge = "badge"
}

extension NotificationSettings {
    /// The settings' switches (``UNNotificationSetting`` values) by JSON name, in the encoder's order.
    package static let switchFields:
        [(name: String, keyPath: WritableKeyPath<NotificationSettings, UNNotificationSetting> & Sendable)] = [
            ("soundSetting", \.soundSetting),
            ("badgeSetting", \.badgeSetting),
            ("alertSetting", \.alertSetting),
            ("notificationCenterSetting", \.notificationCenterSetting),
            ("lockScreenSetting", \.lockScreenSetting),
            ("carPlaySetting", \.carPlaySetting),
            ("criticalAlertSetting", \.criticalAlertSetting),
            ("announcementSetting", \.announcementSetting),
            ("timeSensitiveSetting", \.timeSensitiveSetting),
            ("scheduledDeliverySetting", \.scheduledDeliverySetting),
            ("directMessagesSetting", \.directMessagesSetting),
        ]

    /// The JSON name of the switch at `keyPath`.
    package static func fieldName(of keyPath: WritableKeyPath<NotificationSettings, UNNotificationSetting>) -> String {
        switchFields.first { $0.keyPath == keyPath }!.name
    }
}
