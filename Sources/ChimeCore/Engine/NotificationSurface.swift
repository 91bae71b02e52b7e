import Foundation

/// Somewhere notifications are shown: a terminal, a desktop, a web page.
///
/// A surface shows what it is given and reports the user's answers back through whoever attached
/// it (for an app, `UNUserNotificationCenter.respond(to:actionIdentifier:userText:)`).
public protocol NotificationSurface: Sendable {
    /// Shows a delivered notification with the presentation decided by the engine's rules, and the
    /// actions of its category (if registered).
    func show(_ notification: DeliveredNotification, app: String, options: UNNotificationPresentationOptions,
              category: NotificationCategory?) async
    /// Takes notifications away (removed, or answered elsewhere).
    func withdraw(_ identifiers: [String], app: String) async
}
