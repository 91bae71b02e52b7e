import Foundation

/// What the user changes in an app's notification settings (the web center's switches, like the
/// Settings app's on iOS). `nil` leaves a setting as it is.
///
/// ```swift
/// var change = SettingsChange()
/// change.sound = .disabled
/// change.showPreviews = .never
/// let settings = try await engine.changeSettings(app: "com.example.alarm", change)
/// ```
///
/// Only an app the user allowed has settings to change, and only what the app asked for can be
/// switched (a setting Apple reports as `.notSupported` stays so).
public struct SettingsChange: Sendable, Hashable {
    public var alert: UNNotificationSetting?
    public var sound: UNNotificationSetting?
    public var badge: UNNotificationSetting?
    public var lockScreen: UNNotificationSetting?
    public var notificationCenter: UNNotificationSetting?
    public var criticalAlert: UNNotificationSetting?
    public var timeSensitive: UNNotificationSetting?
    public var showPreviews: UNShowPreviewsSetting?

    public init() {}

    /// The switches by Apple's `UNNotificationSettings` property names, for JSON and errors.
    /// `requires` is the authorization option the app must have asked for before the user can turn
    /// the switch on (none: always available once allowed).
    public static let switchNames:
        [(
            name: String, keyPath: any WritableKeyPath<SettingsChange, UNNotificationSetting?> & Sendable,
            setting: any WritableKeyPath<NotificationSettings, UNNotificationSetting> & Sendable,
            requires: UNAuthorizationOptions?
        )] = [
            (NotificationSettings.fieldName(of: \.alertSetting), \.alert, \.alertSetting, .alert),
            (NotificationSettings.fieldName(of: \.soundSetting), \.sound, \.soundSetting, .sound),
            (NotificationSettings.fieldName(of: \.badgeSetting), \.badge, \.badgeSetting, .badge),
            (NotificationSettings.fieldName(of: \.lockScreenSetting), \.lockScreen, \.lockScreenSetting, nil),
            (
                NotificationSettings.fieldName(of: \.notificationCenterSetting), \.notificationCenter,
                \.notificationCenterSetting, nil
            ),
            (
                NotificationSettings.fieldName(of: \.criticalAlertSetting), \.criticalAlert, \.criticalAlertSetting,
                .criticalAlert
            ),
            (
                NotificationSettings.fieldName(of: \.timeSensitiveSetting), \.timeSensitive, \.timeSensitiveSetting,
                .timeSensitive
            ),
        ]
}

extension NotificationSettings {
    /// These settings with `change` applied, or the error that names the switch that cannot change.
    package func applying(_ change: SettingsChange, app: String, requested: UNAuthorizationOptions) throws
        -> NotificationSettings
    {
        guard authorizationStatus.allowsDelivery else {
            // Apple's error for an app without permission (the service answers it 409).
            throw UNError(
                .notificationsNotAllowed,
                "\(app) is not allowed to notify (\(authorizationStatus.name)); allow it first, then change its settings"
            )
        }
        var result = self
        for entry in SettingsChange.switchNames {
            guard let wanted = change[keyPath: entry.keyPath] else { continue }
            guard wanted != .notSupported else {
                throw ChimeError(
                    .invalidValue, field: entry.name,
                    "\(entry.name) can be set to enabled or disabled, not notSupported")
            }
            let asked = entry.requires.map { requested.isEmpty || requested.contains($0) } ?? true
            guard self[keyPath: entry.setting] != .notSupported, wanted == .disabled || asked else {
                throw ChimeError(
                    .invalidValue, field: entry.name,
                    "\(app) did not ask for this (it requested \(requested.names(from: UNAuthorizationOptions.names).joined(separator: ", "))); only what an app requested can be turned on"
                )
            }
            result[keyPath: entry.setting] = wanted
        }
        if let previews = change.showPreviews { result.showPreviewsSetting = previews }
        return result
    }
}
