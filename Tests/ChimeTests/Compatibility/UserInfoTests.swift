import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// `userInfo` holds property-list values, and only those.
@Suite("userInfo property-list values", .testThreads)
struct UserInfoTests {
    static let when = Date(timeIntervalSince1970: 1_780_000_123.5)
    static let bytes = Data([0, 1, 2, 254, 255])

    /// The info an app sets, with one key per property-list type.
    static func info() -> [AnyHashable: Any] {
        [
            "string": "Grüße ✓",
            "int": 42,
            "negative": -7,
            "double": 2.5,
            "true": true,
            "false": false,
            "data": bytes,
            "date": when,
            "strings": ["a", "b"],
            "mixed": [1, "two", 3.5, false] as [Any],
            "nested": ["task": ["id": 9, "tags": ["x"]] as [String: Any], "empty": [String: Any]()] as [String: Any],
        ]
    }

    static func check(_ info: [AnyHashable: Any], at stage: String) throws {
        #expect(info.count == 11, "\(stage): \(info.keys)")
        #expect(info["string"] as? String == "Grüße ✓", "\(stage)")
        #expect(info["int"] as? Int == 42, "\(stage)")
        #expect(info["negative"] as? Int == -7, "\(stage)")
        #expect(info["double"] as? Double == 2.5, "\(stage)")
        #expect(info["true"] as? Bool == true, "\(stage)")
        #expect(info["false"] as? Bool == false, "\(stage)")
        #expect(info["data"] as? Data == bytes, "\(stage)")
        #expect(info["date"] as? Date == when, "\(stage)")
        #expect(info["strings"] as? [String] == ["a", "b"], "\(stage)")
        let mixed = try #require(info["mixed"] as? [Any], "\(stage)")
        #expect(mixed.count == 4)
        #expect(
            mixed[0] as? Int == 1 && mixed[1] as? String == "two" && mixed[2] as? Double == 3.5
                && mixed[3] as? Bool == false,
            "\(stage): \(mixed)")
        let nested = try #require(info["nested"] as? [String: Any], "\(stage)")
        let task = try #require(nested["task"] as? [String: Any], "\(stage)")
        #expect(task["id"] as? Int == 9 && task["tags"] as? [String] == ["x"], "\(stage)")
        #expect((nested["empty"] as? [String: Any])?.isEmpty == true, "\(stage)")
    }

    /// Which info a round trip carries: one key per property-list type, or the numbers an app
    /// casts (``UserInfoBridgingTests``).
    enum Info: CaseIterable, Sendable {
        case propertyListTypes, numbers
        var value: [AnyHashable: Any] { self == .numbers ? UserInfoBridgingTests.info() : UserInfoTests.info() }
        func check(_ info: [AnyHashable: Any], at stage: String) throws {
            try self == .numbers ? UserInfoBridgingTests.check(info, at: stage) : UserInfoTests.check(info, at: stage)
        }
    }

    @Test(
        "every property-list type, and numbers as NSNumbers, survive add → pending → delivered → response",
        arguments: Info.allCases)
    @MainActor
    func roundTrip(info: Info) async throws {
        let simulator = try await authorizedSimulator()
        let delegate = RecordingDelegate()
        simulator.center.delegate = delegate
        let content = content("Info")
        content.userInfo = info.value
        try await simulator.center.add(
            UNNotificationRequest(
                identifier: "info", content: content,
                trigger: UNTimeIntervalNotificationTrigger(timeInterval: 1, repeats: false)))
        try info.check(try #require(await simulator.pendingRequests.first).content.userInfo, at: "pending")
        await simulator.advance(by: 1)
        try info.check(
            try #require(await simulator.deliveredNotifications.first).request.content.userInfo, at: "delivered")
        try await simulator.tap("info")
        try info.check(try #require(delegate.responses.first).notification.request.content.userInfo, at: "response")
    }

    struct Task { var id = 1 }

    static func badValue(_ key: String) -> Any {
        switch key {
        case "custom": Task()
        case "object": NSObject()
        case "url": URL(string: "https://example.com")!
        default: UUID()
        }
    }

    @Test(
        "a value that is not a property-list type makes add fail with an error naming its key",
        arguments: [
            ("custom", "content.userInfo.custom"), ("object", "content.userInfo.object"),
            ("url", "content.userInfo.url"),
            ("uuid", "content.userInfo.uuid"),
        ])
    func nonPropertyList(key: String, field: String) async throws {
        let simulator = try await authorizedSimulator()
        let content = content("Bad")
        content.userInfo = ["fine": "yes", key: Self.badValue(key)]
        let error = await #expect(throws: ChimeError.self) {
            try await simulator.center.add(UNNotificationRequest(identifier: "bad", content: content, trigger: nil))
        }
        #expect(error?.code == .invalidUserInfo)
        #expect(error?.field == field)
        #expect(error?.message.contains(key) == true, "\(error?.message ?? "")")
        #expect(await simulator.deliveredNotifications.isEmpty)
        #expect(await simulator.pendingRequests.isEmpty)
    }

    @Test("a bad value deep inside an array or dictionary is named by its path")
    func nestedBadValue() async throws {
        let simulator = try await authorizedSimulator()
        let content = content("Bad")
        content.userInfo = ["items": ["ok", ["deep": NSObject()] as [String: Any]] as [Any]]
        let error = await #expect(throws: ChimeError.self) {
            try await simulator.center.add(UNNotificationRequest(identifier: "bad", content: content, trigger: nil))
        }
        #expect(error?.field == "content.userInfo.items[1].deep")
    }

    @Test("the completion-handler add reports a bad userInfo value instead of crashing")
    func completionHandlerReportsBadValue() async throws {
        let simulator = try await authorizedSimulator()
        let content = content("Bad")
        content.userInfo = ["custom": Task()]
        let request = UNNotificationRequest(identifier: "bad", content: content, trigger: nil)
        let error = await withCheckedContinuation { (continuation: CheckedContinuation<(any Error)?, Never>) in
            simulator.center.add(request) { continuation.resume(returning: $0) }
        }
        #expect((error as? ChimeError)?.field == "content.userInfo.custom")
    }
}
