import Chime
import ChimeTesting
import Foundation
import Testing
import TutorialApps

/// A push for the extension: mutable content, an alert, a conversation and maybe an image.
func richPayload(media: String? = nil) -> Data {
    let mediaKey = media.map { #", "media-url": "\#($0)""# } ?? ""
    return Data(
        #"{"aps": {"alert": {"title": "[encrypted] Ann", "body": "Photo"}, "mutable-content": 1}, "conversation": "ann"\#(mediaKey)}"#
            .utf8)
}

/// A downloaded image as a download leaves it: a temporary file without an extension.
func downloadedImage() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
        "CFNetworkDownload_\(UUID().uuidString).tmp")
    try Data(repeating: 0xFF, count: 2_048).write(to: url)
    return url
}

@Suite("A rich-push notification service extension", .notificationSimulator(bundleIdentifier: "com.example.chat"))
struct RichPushTests {
    func simulator(_ service: UNNotificationServiceExtension.Type) async throws -> NotificationSimulator {
        let simulator = NotificationSimulator.current
        #expect(try await UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .sound]))
        UNUserNotificationCenter.current().notificationServiceExtension = service
        return simulator
    }

    @Test("the extension decodes the title, groups by conversation and attaches the downloaded image")
    func richContent() async throws {
        let simulator = try await simulator(LocalRichPushService.self)
        let address = "https://cdn.example.com/\(UUID().uuidString).jpg"
        let image = try downloadedImage()
        defer { try? FileManager.default.removeItem(at: image) }
        LocalRichPushService.serve(address, from: image)
        try await simulator.push(richPayload(media: address), identifier: "photo")
        let content = try #require(await simulator.deliveredNotifications.first).request.content
        #expect(content.title == "Ann")
        #expect(content.threadIdentifier == "ann")
        let attachment = try #require(content.attachments.first)
        #expect(attachment.type == "public.jpeg", "the type hint makes the extension-less download acceptable")
        #expect(attachment.thumbnailClippingRect == CGRect(x: 0, y: 0, width: 1, height: 0.5))
    }

    @Test("a download that never ends: at 30 s the best attempt is delivered, without the image")
    func bestAttempt() async throws {
        let simulator = try await simulator(StalledRichPushService.self)
        let start = simulator.now
        try await simulator.push(
            richPayload(media: "https://cdn.example.com/slow.jpg"), identifier: "slow", advancingBy: 30)
        let delivered = try #require(await simulator.deliveredNotifications.first)
        #expect(delivered.request.content.title == "Ann")
        #expect(delivered.request.content.subtitle == "Image not loaded")
        #expect(delivered.request.content.attachments.isEmpty)
        #expect(delivered.date == start.addingTimeInterval(30))
    }

    @Test("the content handler called twice: the first answer is delivered")
    func twice() async throws {
        let simulator = try await simulator(EagerService.self)
        try await simulator.push(richPayload())
        #expect(await simulator.deliveredNotifications.map(\.request.content.body) == ["first answer"])
    }

    @Test("never called: the push arrives as it was sent")
    func never() async throws {
        let simulator = try await simulator(ForgetfulService.self)
        try await simulator.push(richPayload(), identifier: "raw", advancingBy: 30)
        #expect(await simulator.deliveredNotifications.map(\.request.content.title) == ["[encrypted] Ann"])
    }

    @Test("a push without mutable-content does not go through the extension")
    func notMutable() async throws {
        let simulator = try await simulator(EagerService.self)
        try await simulator.push(Data(#"{"aps": {"alert": {"title": "Plain", "body": "as sent"}}}"#.utf8))
        #expect(await simulator.deliveredNotifications.map(\.request.content.body) == ["as sent"])
    }
}
