import Chime
import ChimeTesting
import Foundation
import Testing
import TutorialApps

/// Schedules through `current()`, as app code does.
func schedule(_ identifier: String, after seconds: TimeInterval) async throws {
    let content = UNMutableNotificationContent()
    content.title = identifier
    try await UNUserNotificationCenter.current().add(
        UNNotificationRequest(
            identifier: identifier, content: content,
            trigger: UNTimeIntervalNotificationTrigger(timeInterval: seconds, repeats: false)))
}

/// Many tests at once, each seeing only its own notifications, wherever its code runs.
@Suite("Tests in parallel see only their own simulator")
@MainActor
struct IsolationTests {
    @Test(
        "each of 16 cases schedules from Task {}, async let, a task group and a completion handler, and sees only its own",
        arguments: 0..<16)
    func cases(index: Int) async throws {
        let simulator = NotificationSimulator(bundleIdentifier: "com.example.case-\(index)")
        simulator.install()
        #expect(try await UNUserNotificationCenter.current().requestAuthorization(options: [.alert]))
        try await Task { try await schedule("task-\(index)", after: 1) }.value
        async let child: Void = schedule("child-\(index)", after: 1)
        try await child
        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 0..<3 { group.addTask { try await schedule("group-\(index)-\(n)", after: 1) } }
            try await group.waitForAll()
        }
        let fromHandler: [String] = await withCheckedContinuation { continuation in
            UNUserNotificationCenter.current().getPendingNotificationRequests { requests in
                continuation.resume(returning: requests.map(\.identifier))
            }
        }
        #expect(
            fromHandler.count == 5 && fromHandler.allSatisfy { $0.hasSuffix("-\(index)") || $0.contains("-\(index)-") })
        await simulator.advance(by: 1)
        #expect(await simulator.deliveredNotifications.count == 5)
    }

    @Test("a delegate's callback and the Task it starts use the test's simulator")
    func callbacks() async throws {
        let simulator = NotificationSimulator(bundleIdentifier: "com.example.callbacks")
        simulator.install()
        let alarm = await loadedAlarm()
        alarm.startButton()
        await simulator.advance(by: 10)
        try await simulator.perform("snooze", on: "Alarm")  // the delegate adds through current()
        #expect(await simulator.pendingRequests.map(\.identifier) == ["Alarm"])
    }

    @Test("an app object made before install() keeps the center it was made with")
    func madeBefore() async throws {
        let first = NotificationSimulator(bundleIdentifier: "com.example.first")
        first.install()
        #expect(try await first.center.requestAuthorization(options: [.alert]))
        let show = ShowMeNotifications()  // keeps current() in a property
        let second = NotificationSimulator(bundleIdentifier: "com.example.second")
        second.install()
        #expect(UNUserNotificationCenter.current() === second.center)
        show.showNotification(
            with: ("Q", "A"), showBody: false, withAction: true, atDate: first.now.addingTimeInterval(60))
        #expect(await first.pendingRequests.map(\.identifier) == ["Q"])
        #expect(await second.pendingRequests.isEmpty)
    }

    @Test(
        "the suite trait and install() are the same simulator for the test",
        .notificationSimulator(bundleIdentifier: "com.example.trait"))
    func traitAndCurrent() async throws {
        #expect(UNUserNotificationCenter.current() === NotificationSimulator.current.center)
        #expect(try await UNUserNotificationCenter.current().requestAuthorization(options: [.alert]))
        try await schedule("traited", after: 1)
        #expect(await NotificationSimulator.current.pendingRequests.map(\.identifier) == ["traited"])
    }

    @Test(
        "a fresh simulator per test: nothing carried over from another",
        .notificationSimulator(bundleIdentifier: "com.example.alarm"))
    func fresh() async throws {
        #expect(await NotificationSimulator.current.pendingRequests.isEmpty)
        #expect(await NotificationSimulator.current.deliveredNotifications.isEmpty)
        #expect(
            try await NotificationSimulator.current.engine.app("com.example.alarm").settings.authorizationStatus
                == .notDetermined)
    }
}

@Suite("Attachments as app code makes them", .notificationSimulator(bundleIdentifier: "com.example.media"))
struct AttachmentShapeTests {
    func authorized() async throws -> NotificationSimulator {
        #expect(try await UNUserNotificationCenter.current().requestAuthorization(options: [.alert]))
        return NotificationSimulator.current
    }

    @Test("a download without an extension needs the type hint")
    func typeHint() async throws {
        let file = try downloadedImage()
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(throws: UNError.self) { try UNNotificationAttachment(identifier: "a", url: file, options: nil) }
        let attachment = try UNNotificationAttachment(
            identifier: "a", url: file, options: [UNNotificationAttachmentOptionsTypeHintKey: "public.jpeg"])
        #expect(attachment.type == "public.jpeg")
    }

    @Test("a hidden thumbnail stays hidden through delivery")
    func hidden() async throws {
        let simulator = try await authorized()
        let content = UNMutableNotificationContent()
        content.title = "Receipt"
        content.attachments = [
            try UNNotificationAttachment(
                identifier: "r", url: try downloadedImage(),
                options: [
                    UNNotificationAttachmentOptionsTypeHintKey: "public.png",
                    UNNotificationAttachmentOptionsThumbnailHiddenKey: true,
                ])
        ]
        try await UNUserNotificationCenter.current().add(
            UNNotificationRequest(identifier: "receipt", content: content, trigger: nil))
        #expect(
            await simulator.deliveredNotifications.first?.request.content.attachments.first?.thumbnailHidden == true)
    }

    @Test("a video's thumbnail time, as a CMTime dictionary, comes back in seconds")
    func time() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString).mp4")
        try Data(repeating: 1, count: 512).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let attachment = try UNNotificationAttachment(
            identifier: "v", url: file,
            options: [
                UNNotificationAttachmentOptionsThumbnailTimeKey: ["value": 90, "timescale": 30, "flags": 1, "epoch": 0]
            ])
        #expect(attachment.thumbnailTime == 3)
    }

    @Test("a clipping rectangle outside the image is refused, naming the option")
    func badRect() throws {
        let image = try downloadedImage()
        defer { try? FileManager.default.removeItem(at: image) }
        let error = #expect(throws: ChimeError.self) {
            try UNNotificationAttachment(
                identifier: "p", url: image,
                options: [
                    UNNotificationAttachmentOptionsTypeHintKey: "public.jpeg",
                    UNNotificationAttachmentOptionsThumbnailClippingRectKey: CGRect(x: 0.5, y: 0.5, width: 1, height: 1)
                        .dictionaryRepresentation,
                ])
        }
        #expect(error?.field?.contains("thumbnailClippingRect") == true)
    }

    @Test("a missing file is attachmentInvalidURL")
    func missing() throws {
        let error = #expect(throws: UNError.self) {
            try UNNotificationAttachment(
                identifier: "x", url: URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString).png"))
        }
        #expect(error?.code == .attachmentInvalidURL)
    }
}
