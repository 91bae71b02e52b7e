import Chime
import ChimeCore
import Foundation
import TestThreads
import Testing

/// Doubles a notification's title.
final class EchoService: UNNotificationServiceExtension {
    override func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        let content = request.content.mutableCopy() as! UNMutableNotificationContent
        content.title += " " + content.title
        contentHandler(content)
    }
}

/// Never answers.
final class MuteService: UNNotificationServiceExtension {
    override func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {}
}

/// The embedded center (an app on the real clock) runs the service extension on a remote
/// notification delivered to it.
@Suite("The notification service extension in an app's own center", .testThreads)
struct ServiceExtensionEmbeddedTests {
    func center(_ type: UNNotificationServiceExtension.Type) async throws -> UNUserNotificationCenter {
        let engine = NotificationEngine(
            store: MemoryStore(), clock: SystemClock(), policy: FixedAuthorizationPolicy(.grant))
        let center = UNUserNotificationCenter(
            engine: engine, bundleIdentifier: "com.example.embedded-\(type)", timeZone: .current,
            driven: false, foreground: false)
        #expect(try await center.requestAuthorization(options: [.alert]))
        center.notificationServiceExtension = type
        return center
    }

    @Test("deliverRemoteNotification runs the extension and returns once its content is delivered")
    func runs() async throws {
        let center = try await center(EchoService.self)
        try await center.deliverRemoteNotification(
            Data(#"{"aps": {"alert": {"title": "Hi"}, "mutable-content": 1}}"#.utf8), identifier: "e")
        #expect(await center.deliveredNotifications().map(\.request.content.title) == ["Hi Hi"])
        #expect(center.notificationServiceExtension == EchoService.self)
    }

    @Test("an extension that never answers: after the time limit (real time here) the original is delivered")
    func expires() async throws {
        let center = try await center(MuteService.self)
        center.serviceExtensionTimeLimit = 0.05
        try await center.deliverRemoteNotification(
            Data(#"{"aps": {"alert": {"title": "As sent"}, "mutable-content": 1}}"#.utf8), identifier: "m")
        #expect(await center.deliveredNotifications().map(\.request.content.title) == ["As sent"])
    }
}
