import Chime
import ChimeTesting
import Foundation
import Testing

/// A date from an ISO 8601 string with an offset (`2026-03-29T01:00:00Z`).
func date(_ text: String) throws -> Date {
    try Date(text, strategy: .iso8601)
}

/// Content with a title (and optionally more), as an app would fill it in.
func content(
    _ title: String, body: String = "", category: String = "", thread: String = "",
    sound: UNNotificationSound? = nil
) -> UNMutableNotificationContent {
    let content = UNMutableNotificationContent()
    content.title = title
    content.body = body
    content.categoryIdentifier = category
    content.threadIdentifier = thread
    content.sound = sound
    return content
}

/// A request firing after `seconds`.
func request(_ identifier: String, after seconds: TimeInterval, title: String? = nil, repeats: Bool = false)
    -> UNNotificationRequest
{
    UNNotificationRequest(
        identifier: identifier, content: content(title ?? identifier),
        trigger: UNTimeIntervalNotificationTrigger(timeInterval: seconds, repeats: repeats))
}

/// A simulator whose app has asked for (and been granted) `options`.
func authorizedSimulator(
    _ options: UNAuthorizationOptions = [.alert, .sound, .badge], bundle: String = "com.example.tests",
    now: Date = Date(timeIntervalSince1970: 1_780_000_000),
    timeZone: TimeZone = TimeZone(identifier: "UTC")!
) async throws -> NotificationSimulator {
    let simulator = NotificationSimulator(bundleIdentifier: bundle, now: now, timeZone: timeZone)
    let granted = try await simulator.center.requestAuthorization(options: options)
    try #require(granted)
    return simulator
}

/// A delegate that implements every method and records what it is told.
@MainActor
final class RecordingDelegate: UNUserNotificationCenterDelegate {
    var presentationAnswer: UNNotificationPresentationOptions
    var willPresent: [String] = []
    var responses: [UNNotificationResponse] = []
    /// Runs inside `didReceive`, before the completion handler.
    var onResponse: ((UNUserNotificationCenter, UNNotificationResponse) -> Void)?

    init(presenting answer: UNNotificationPresentationOptions = [.banner, .list, .sound]) {
        presentationAnswer = answer
    }

    func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void
    ) {
        willPresent.append(notification.request.identifier)
        completionHandler(presentationAnswer)
    }

    func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping () -> Void
    ) {
        responses.append(response)
        onResponse?(center, response)
        completionHandler()
    }
}

/// A delegate that only handles responses: it has no `willPresent`.
@MainActor
final class ResponseOnlyDelegate: UNUserNotificationCenterDelegate {
    var responses: [UNNotificationResponse] = []

    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
        responses.append(response)
    }
}
