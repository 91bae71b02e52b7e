import Foundation

/// Somewhere notifications are shown: a terminal, a desktop, a web page.
///
/// A surface is attached to a hub — the engine's (``NotificationEngine/attach(_:app:)``), or an app's
/// center on a service — for one app or for all. Each attached surface runs on a queue of its own,
/// in the order the engine announced, off the engine's writer: a slow surface delays neither a
/// commit nor another surface. It shows what it is given and reports the user's answers to the
/// engine (``NotificationEngine/respond(app:notification:action:userText:)``, or for an app,
/// `UNUserNotificationCenter.respond(to:actionIdentifier:userText:)`), and nowhere else.
///
/// ```swift
/// struct PrintingSurface: NotificationSurface {
///     func show(_ delivery: Delivery, app: String) async {
///         print(app, delivery.notification.request.content.title, delivery.category?.actions.map(\.title) ?? [])
///     }
///     func withdraw(_ identifiers: [String], app: String) async {}
/// }
/// engine.attach(PrintingSurface(), app: nil)
/// ```
public protocol NotificationSurface: Sendable {
    /// Shows a delivered notification as `delivery.presentation` says (never called with an empty
    /// presentation), with the actions of `delivery.category`.
    func show(_ delivery: Delivery, app: String) async
    /// Takes notifications away (removed, answered or dismissed anywhere).
    func withdraw(_ identifiers: [String], app: String) async
}
