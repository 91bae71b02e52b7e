import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// A messaging app's reply handling, as such apps write it for iOS: the sender's id comes from the
/// push's JSON and is force-cast to `UInt`.
@MainActor
final class MessagingDelegate: UNUserNotificationCenterDelegate {
    var replies: [(sender: UInt, conversation: Int64, text: String, urgent: Bool)] = []

    func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping () -> Void
    ) {
        let userInfo = response.notification.request.content.userInfo
        if let reply = response as? UNTextInputNotificationResponse {
            let sender = userInfo["messageSenderId"] as! UInt
            let conversation = (userInfo["conversation"] as! [String: Any])["id"] as! Int64
            let urgent = userInfo["urgent"] as? Bool ?? false
            replies.append((sender, conversation, reply.userText, urgent))
        }
        completionHandler()
    }
}

/// Real notification code from iOS apps, unchanged but for the import, behaves as on iOS.
@Suite("Real app code, as on iOS", .testThreads)
struct RealAppCodeTests {
    /// A messaging app's simulator, with its reply category and delegate.
    @MainActor
    static func messaging() async throws -> (NotificationSimulator, MessagingDelegate) {
        let simulator = try await grantedSimulator(bundle: "com.example.messages")
        let reply = UNTextInputNotificationAction(
            identifier: "reply", title: "Reply", options: [],
            textInputButtonTitle: "Send", textInputPlaceholder: "Message")
        simulator.center.setNotificationCategories([
            UNNotificationCategory(
                identifier: "MESSAGE", actions: [reply],
                intentIdentifiers: [], options: [])
        ])
        let delegate = MessagingDelegate()
        simulator.center.delegate = delegate
        return (simulator, delegate)
    }

    @Test("a delegate force-casting a pushed JSON 7 to UInt gets the inline reply")
    @MainActor
    func pushedSenderIdForceCast() async throws {
        let (simulator, delegate) = try await Self.messaging()
        let payload = #"""
            {"aps": {"alert": {"title": "Ada", "body": "Lunch?"}, "category": "MESSAGE"},
             "messageSenderId": 7, "urgent": 1, "conversation": {"id": 1099511627776}}
            """#
        try await simulator.push(Data(payload.utf8), identifier: "msg-1")
        try await simulator.reply("On my way", with: "reply", on: "msg-1")
        #expect(delegate.replies.count == 1)
        #expect(delegate.replies.first?.sender == 7)
        #expect(delegate.replies.first?.conversation == 1 << 40)
        #expect(delegate.replies.first?.text == "On my way")
        #expect(delegate.replies.first?.urgent == true, "a JSON 1 is `as? Bool` true, as on iOS")
    }

    @Test("a delegate force-casting a UInt the app set itself gets the inline reply")
    @MainActor
    func appSetSenderIdForceCast() async throws {
        let (simulator, delegate) = try await Self.messaging()
        let content = UNMutableNotificationContent()
        content.title = "Ada"
        content.categoryIdentifier = "MESSAGE"
        content.userInfo = ["messageSenderId": UInt(7), "conversation": ["id": Int64(12)]]
        try await simulator.center.add(
            UNNotificationRequest(
                identifier: "msg-2", content: content,
                trigger: UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false)))
        await simulator.advance(by: 5)
        try await simulator.reply("Yes", with: "reply", on: "msg-2")
        #expect(delegate.replies.map(\.sender) == [7])
        #expect(delegate.replies.map(\.conversation) == [12])
    }

    @Test("pushed reals, integers and booleans keep their kinds")
    func pushedKinds() async throws {
        let simulator = try await grantedSimulator()
        try await simulator.push(
            Data(#"{"aps": {"alert": "x"}, "price": 7.0, "count": 7, "ok": true, "list": [1, 2.5]}"#.utf8))
        let info = try #require(await simulator.deliveredNotifications.first).request.content.userInfo
        #expect(String(cString: try #require(info["price"] as? NSNumber).objCType) == "d")
        #expect(String(cString: try #require(info["count"] as? NSNumber).objCType) != "d")
        #expect(String(cString: try #require(info["ok"] as? NSNumber).objCType) == "c")
        #expect(info["price"] as? UInt == 7 && info["count"] as? Double == 7 && info["ok"] as? Bool == true)
        let list = try #require(info["list"] as? [NSNumber])
        #expect(list.map(\.doubleValue) == [1, 2.5] && (info["list"] as? [Int]) == nil, "2.5 is no Int")
    }
}

/// A rich-notification extension as iOS apps write it: the image (here from the push itself) is
/// written from `Data` to a temporary name without an extension, attached with a `public.png`
/// hint in `[NSObject: AnyObject]` options, and the temporary folder is cleaned up afterwards.
final class ImageAttachingService: UNNotificationServiceExtension {
    static let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 7, count: 56))

    override func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        let content = request.content.mutableCopy() as! UNMutableNotificationContent
        let folder = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
            .appendingPathComponent(ProcessInfo.processInfo.globallyUniqueString, isDirectory: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let file = folder.appendingPathComponent(UUID().uuidString)
            try Self.png.write(to: file)
            let options: [NSObject: AnyObject] = [
                UNNotificationAttachmentOptionsTypeHintKey as NSString: "public.png" as NSString
            ]
            content.attachments = [try UNNotificationAttachment(identifier: "image", url: file, options: options)]
        } catch {
            content.body = "no image: \(error)"
        }
        contentHandler(content)
    }
}

extension RealAppCodeTests {
    @Test("a bill reminder for today at 09:00 added at 17:00 is accepted, as on iOS, and never fires")
    func billReminderAfterNine() async throws {
        let simulator = try await grantedSimulator(now: try simulatorDate("2026-06-01T17:00:00Z"))
        simulator.install()
        defer { simulator.uninstall() }
        let center = UNUserNotificationCenter.current()
        var calendar = Calendar.current
        calendar.timeZone = TimeZone(identifier: "UTC")!  // the simulator's zone
        var components = calendar.dateComponents([.year, .month, .day], from: simulator.now)
        components.hour = 9
        components.minute = 0
        let trigger = UNCalendarNotificationTrigger(dateMatching: components, repeats: false)
        let content = UNMutableNotificationContent()
        content.title = "Electricity bill due"
        let error = await withCheckedContinuation { (done: CheckedContinuation<(any Error)?, Never>) in
            center.add(UNNotificationRequest(identifier: "bill-42", content: content, trigger: trigger)) {
                done.resume(returning: $0)
            }
        }
        #expect(error == nil, "the service reports no error")
        #expect(trigger.nextTriggerDate() == nil)
        #expect(await center.pendingNotificationRequests().isEmpty)
        await simulator.advance(by: 3 * 86_400)
        #expect(await simulator.deliveredNotifications.isEmpty)
    }

    @Test(
        "an extension's hinted, extension-less temporary image is delivered from the attachment store and leaves with it"
    )
    func extensionAttachesTemporaryImage() async throws {
        let simulator = try await grantedSimulator(bundle: "com.example.rich")
        simulator.center.notificationServiceExtension = ImageAttachingService.self
        try await simulator.push(
            Data(#"{"aps": {"alert": {"title": "Photo"}, "mutable-content": 1}}"#.utf8), identifier: "photo")
        let content = try #require(await simulator.deliveredNotifications.first).request.content
        let attachment = try #require(content.attachments.first, "\(content.body)")
        #expect(attachment.type == "public.png" && attachment.identifier == "image")
        #expect(
            try Data(contentsOf: attachment.url) == ImageAttachingService.png,
            "the temporary folder is gone; the store has the file")
        simulator.center.removeAllDeliveredNotifications()
        #expect(await simulator.deliveredNotifications.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: attachment.url.path))
    }

    @Test("a temporary attachment file the app deletes after add is delivered all the same")
    func temporaryFileDeletedAfterAdd() async throws {
        let simulator = try await grantedSimulator()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("chime-\(UUID().uuidString).jpg")
        try Data("jpeg bytes".utf8).write(to: file)
        let content = UNMutableNotificationContent()
        content.title = "Receipt"
        content.attachments = [try UNNotificationAttachment(identifier: "receipt", url: file)]
        try await simulator.center.add(
            UNNotificationRequest(
                identifier: "r", content: content,
                trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false)))
        try? FileManager.default.removeItem(at: file)  // as apps clean up; on iOS (and Chime) it is already gone
        await simulator.advance(by: 60)
        let delivered = try #require(await simulator.deliveredNotifications.first?.request.content.attachments.first)
        #expect(try Data(contentsOf: delivered.url) == Data("jpeg bytes".utf8))
    }
}
