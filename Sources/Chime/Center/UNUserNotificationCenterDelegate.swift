import ChimeCore
import Foundation
import Synchronization

/// Receives notifications while the app is in front, and the user's answers.
///
/// Every method is optional. Chime calls them on the main actor, as iOS calls them on the main
/// thread. (`@preconcurrency`: code in the Swift 5 language mode, like most app code ported from
/// iOS, conforms without isolation errors, as it does with Apple's Objective-C-imported protocol.) Implement either the completion-handler form or the async form of each:
///
/// ```swift
/// final class Handler: UNUserNotificationCenterDelegate {
///     func userNotificationCenter(_ center: UNUserNotificationCenter,
///                                 willPresent notification: UNNotification) async -> UNNotificationPresentationOptions {
///         [.banner, .sound]
///     }
///     func userNotificationCenter(_ center: UNUserNotificationCenter,
///                                 didReceive response: UNNotificationResponse) async {
///         if response.actionIdentifier == "snooze" { /* re-add the request */ }
///     }
/// }
/// ```
@preconcurrency @MainActor
public protocol UNUserNotificationCenterDelegate: AnyObject {
    /// A notification arrived while the app is in front: say how to show it. Without this method
    /// nothing is shown (the notification is still delivered).
    func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void)
    /// The async form of `willPresent`.
    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification) async
        -> UNNotificationPresentationOptions
    /// The user answered: opened the notification, picked an action, typed a reply, or dismissed it
    /// (only for categories with `.customDismissAction`). Call the completion handler when done: the
    /// response then counts as handled and leaves the outbox.
    func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping () -> Void)
    /// The async form of `didReceive`; returning counts as calling the completion handler.
    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async
    /// The user asked for the app's notification settings.
    func userNotificationCenter(_ center: UNUserNotificationCenter, openSettingsFor notification: UNNotification?)
}

extension UNUserNotificationCenterDelegate {
    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void
    ) {
        completionHandler([])
    }

    public func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification)
        async
        -> UNNotificationPresentationOptions
    {
        await withCheckedContinuation { continuation in
            let once = Once()
            userNotificationCenter(center, willPresent: notification) { options in
                if once.first() { continuation.resume(returning: options) }
            }
        }
    }

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping () -> Void
    ) {
        completionHandler()
    }

    public func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse)
        async
    {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = Once()
            userNotificationCenter(center, didReceive: response) {
                if once.first() { continuation.resume() }
            }
        }
    }

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, openSettingsFor notification: UNNotification?
    ) {}
}

/// Lets a completion handler called twice resume its continuation once.
final class Once: Sendable {
    private let called = Mutex(false)
    func first() -> Bool {
        called.withLock { called in
            defer { called = true }
            return !called
        }
    }
}
