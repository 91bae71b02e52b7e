import Chime
import ChimeTesting
import Foundation
import Synchronization
import TestThreads
import Testing

/// A push the app's service extension gets: `mutable-content` and an alert.
private func mutablePush(_ title: String, extra: String = "") -> Data {
    Data(
        #"{"aps": {"alert": {"title": "\#(title)", "body": "ciphertext"}, "mutable-content": 1\#(extra)}, "key": "k1"}"#
            .utf8)
}

/// Changes everything iOS lets an extension change.
final class RewritingService: UNNotificationServiceExtension {
    override func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        let content = request.content.mutableCopy() as! UNMutableNotificationContent
        content.title = "\(content.title) [decrypted]"
        content.subtitle = "From Ann"
        content.body = "Lunch at noon? (key \(content.userInfo["key"] as? String ?? "?"))"
        content.sound = UNNotificationSound(named: UNNotificationSoundName("ping.caf"))
        content.badge = 3
        content.threadIdentifier = "chat-ann"
        content.categoryIdentifier = "MESSAGE"
        content.userInfo = ["decrypted": true, "key": content.userInfo["key"] ?? ""]
        content.interruptionLevel = .timeSensitive
        contentHandler(content)
        content.title = "changed after handing over"
    }
}

/// Calls the handler twice: the first call counts.
final class TwiceService: UNNotificationServiceExtension {
    override func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        let first = UNMutableNotificationContent()
        first.title = "first"
        contentHandler(first)
        let second = UNMutableNotificationContent()
        second.title = "second"
        contentHandler(second)
    }
}

/// Answers from another thread, after didReceive returned.
final class BackgroundService: UNNotificationServiceExtension {
    override func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        let content = request.content.mutableCopy() as! UNMutableNotificationContent
        nonisolated(unsafe) let handler = contentHandler
        DispatchQueue.global().async {
            content.title = "from another thread"
            handler(content)
        }
    }
}

/// The bestAttemptContent pattern with a download that never finishes.
final class SlowService: UNNotificationServiceExtension {
    var contentHandler: ((UNNotificationContent) -> Void)?
    var bestAttemptContent: UNMutableNotificationContent?
    static let expired = Counter()

    override func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        self.contentHandler = contentHandler
        bestAttemptContent = request.content.mutableCopy() as? UNMutableNotificationContent
        bestAttemptContent?.title = "Best attempt"
        // …the image download would call contentHandler when done; it never is.
    }

    override func serviceExtensionTimeWillExpire() {
        Self.expired.add()
        if let contentHandler, let bestAttemptContent { contentHandler(bestAttemptContent) }
    }
}

/// Never calls the handler, not even when its time runs out.
final class SilentService: UNNotificationServiceExtension {
    override func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {}
}

/// Hands over content the engine cannot take (userInfo that is not a property list).
final class BrokenService: UNNotificationServiceExtension {
    override func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        let content = UNMutableNotificationContent()
        content.title = "broken"
        content.userInfo = ["handle": FileHandle.standardOutput]
        contentHandler(content)
    }
}

/// Reads `current()` inside the extension.
final class CenterReadingService: UNNotificationServiceExtension {
    static let centers = Recorded<ObjectIdentifier>()
    override func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        Self.centers.add(ObjectIdentifier(UNUserNotificationCenter.current()))
        contentHandler(request.content)
    }
}

final class Counter: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

final class Recorded<T: Sendable>: Sendable {
    private let items = Mutex<[T]>([])
    func add(_ item: T) { items.withLock { $0.append(item) } }
    var all: [T] { items.withLock { $0 } }
}

@Suite("The notification service extension in the simulator", .testThreads)
struct ServiceExtensionTests {
    func simulator(_ type: UNNotificationServiceExtension.Type) async throws -> NotificationSimulator {
        let simulator = try await grantedSimulator(bundle: "com.example.service-\(type)")
        simulator.center.notificationServiceExtension = type
        return simulator
    }

    @Test("a mutable push with an alert goes through the extension: every field it may change is delivered as changed")
    func rewrites() async throws {
        let simulator = try await simulator(RewritingService.self)
        try await simulator.push(mutablePush("New message"), identifier: "m1")
        let content = try #require(await simulator.deliveredNotifications.first).request.content
        #expect(content.title == "New message [decrypted]", "the content as handed over, not as changed afterwards")
        #expect(content.subtitle == "From Ann")
        #expect(content.body == "Lunch at noon? (key k1)")
        #expect(content.sound == UNNotificationSound(named: UNNotificationSoundName("ping.caf")))
        #expect(content.badge == 3)
        #expect(content.threadIdentifier == "chat-ann")
        #expect(content.categoryIdentifier == "MESSAGE")
        #expect(content.userInfo["decrypted"] as? Bool == true)
        #expect(content.interruptionLevel == .timeSensitive)
        #expect(try await simulator.engine.app(simulator.bundleIdentifier).badge == 3)
        #expect(await simulator.presented.map(\.notification.request.content.title) == ["New message [decrypted]"])
    }

    @Test(
        "pushes without mutable-content, or without an alert, do not go through it",
        arguments: [
            #"{"aps": {"alert": "plain"}}"#, #"{"aps": {"badge": 2, "mutable-content": 1}}"#,
        ])
    func notEveryPush(payload: String) async throws {
        let simulator = try await simulator(TwiceService.self)
        try await simulator.push(Data(payload.utf8), identifier: "p")
        #expect(await simulator.deliveredNotifications.first?.request.content.title != "first")
    }

    @Test("the handler called twice: the first call counts")
    func twice() async throws {
        let simulator = try await simulator(TwiceService.self)
        try await simulator.push(mutablePush("x"))
        #expect(await simulator.deliveredNotifications.map(\.request.content.title) == ["first"])
    }

    @Test("the handler called from another thread after didReceive returned: push waits for it")
    func otherThread() async throws {
        let simulator = try await simulator(BackgroundService.self)
        try await simulator.push(mutablePush("x"))
        #expect(await simulator.deliveredNotifications.map(\.request.content.title) == ["from another thread"])
    }

    @Test(
        "out of time: serviceExtensionTimeWillExpire is called at the limit, in virtual time, and the best attempt delivered"
    )
    func bestAttempt() async throws {
        let simulator = try await simulator(SlowService.self)
        let start = simulator.now
        try await simulator.center.add(timed("local", after: 10))
        try await simulator.push(mutablePush("Photo"), identifier: "photo", advancingBy: 45)
        #expect(SlowService.expired.value == 1)
        let delivered = await simulator.deliveredNotifications
        #expect(delivered.map(\.request.content.title) == ["Best attempt", "local"])
        #expect(delivered.first?.date == start.addingTimeInterval(30), "delivered when the 30 s ran out")
        #expect(simulator.now == start.addingTimeInterval(45))
    }

    @Test("a shorter time limit is honoured")
    func shorterLimit() async throws {
        let simulator = try await simulator(SilentService.self)
        simulator.center.serviceExtensionTimeLimit = 5
        let start = simulator.now
        try await simulator.push(mutablePush("Original"), identifier: "o", advancingBy: 5)
        let delivered = try #require(await simulator.deliveredNotifications.first)
        #expect(delivered.date == start.addingTimeInterval(5))
    }

    @Test("never called, not even at the end: the original content is delivered")
    func never() async throws {
        let simulator = try await simulator(SilentService.self)
        try await simulator.push(mutablePush("Original"), identifier: "o", advancingBy: 30)
        let content = try #require(await simulator.deliveredNotifications.first).request.content
        #expect(content.title == "Original" && content.body == "ciphertext")
        #expect(content.userInfo["key"] as? String == "k1")
    }

    @Test("content the engine cannot take: the original is delivered")
    func broken() async throws {
        let simulator = try await simulator(BrokenService.self)
        try await simulator.push(mutablePush("Original"))
        #expect(await simulator.deliveredNotifications.map(\.request.content.title) == ["Original"])
    }

    @Test("current() inside the extension is the center it runs for")
    func currentInside() async throws {
        let simulator = try await simulator(CenterReadingService.self)
        try await simulator.push(mutablePush("x"))
        #expect(CenterReadingService.centers.all.contains(ObjectIdentifier(simulator.center)))
    }

    @Test("without an extension a mutable push is delivered as it came")
    func noExtension() async throws {
        let simulator = try await grantedSimulator()
        try await simulator.push(mutablePush("As sent"))
        #expect(await simulator.deliveredNotifications.map(\.request.content.title) == ["As sent"])
    }
}
