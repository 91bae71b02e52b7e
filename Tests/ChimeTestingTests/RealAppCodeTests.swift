import Chime
import ChimeTesting
import Foundation
import Testing

/// A messaging app's reply handling, as such apps write it for iOS: the sender's id comes from the
/// push's JSON and is force-cast to `UInt`.
@MainActor
final class MessagingDelegate: UNUserNotificationCenterDelegate {
    var replies: [(sender: UInt, conversation: Int64, text: String, urgent: Bool)] = []

    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
                                withCompletionHandler completionHandler: @escaping () -> Void) {
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
@Suite("Real app code, as on iOS")
struct RealAppCodeTests {
    /// A messaging app's simulator, with its reply category and delegate.
    @MainActor
    static func messaging() async throws -> (NotificationSimulator, MessagingDelegate) {
        let simulator = try await grantedSimulator(bundle: "com.example.messages")
        let reply = UNTextInputNotificationAction(identifier: "reply", title: "Reply", options: [],
                                                  textInputButtonTitle: "Send", textInputPlaceholder: "Message")
        simulator.center.setNotificationCategories([UNNotificationCategory(identifier: "MESSAGE", actions: [reply],
                                                                           intentIdentifiers: [], options: [])])
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
        try await simulator.center.add(UNNotificationRequest(identifier: "msg-2", content: content,
                                                             trigger: UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false)))
        await simulator.advance(by: 5)
        try await simulator.reply("Yes", with: "reply", on: "msg-2")
        #expect(delegate.replies.map(\.sender) == [7])
        #expect(delegate.replies.map(\.conversation) == [12])
    }

    @Test("pushed reals, integers and booleans keep their kinds")
    func pushedKinds() async throws {
        let simulator = try await grantedSimulator()
        try await simulator.push(Data(#"{"aps": {"alert": "x"}, "price": 7.0, "count": 7, "ok": true, "list": [1, 2.5]}"#.utf8))
        let info = try #require(await simulator.deliveredNotifications.first).request.content.userInfo
        #expect(String(cString: try #require(info["price"] as? NSNumber).objCType) == "d")
        #expect(String(cString: try #require(info["count"] as? NSNumber).objCType) != "d")
        #expect(String(cString: try #require(info["ok"] as? NSNumber).objCType) == "c")
        #expect(info["price"] as? UInt == 7 && info["count"] as? Double == 7 && info["ok"] as? Bool == true)
        let list = try #require(info["list"] as? [NSNumber])
        #expect(list.map(\.doubleValue) == [1, 2.5] && (info["list"] as? [Int]) == nil, "2.5 is no Int")
    }
}
