import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// `userInfo` numbers as iOS hands them: `NSNumber`s, which bridge to every numeric type that
/// holds them (SE-0170), through every path an app reads them from.
@Suite("userInfo numbers bridge as on iOS", .testThreads)
struct UserInfoBridgingTests {
    /// What swift-corelibs-foundation does with the casts iOS code makes on `userInfo` values, and
    /// that Chime's NSNumbers therefore get. (Darwin's Foundation answers the same, except
    /// `as? CGFloat`, which Linux does not bridge.)
    @Test("Linux Foundation bridges NSNumber casts as SE-0170 says")
    func linuxFoundationBridging() {
        let seven: Any = NSNumber(value: 7)
        let real: Any = NSNumber(value: 7.5)
        let yes: Any = NSNumber(value: true)
        #expect(seven as? UInt == 7 && seven as? Int == 7 && seven as? Int64 == 7 && seven as? UInt8 == 7)
        #expect(seven as? Double == 7 && seven as? Float == 7 && (seven as? NSNumber)?.intValue == 7)
        #expect(seven as? Bool == nil, "only 0 and 1 are booleans")
        #expect((NSNumber(value: 1) as Any) as? Bool == true && (NSNumber(value: 0) as Any) as? Bool == false)
        #expect(real as? Double == 7.5 && real as? Float == 7.5 && real as? Int == nil, "no lossy conversion")
        #expect(yes as? Bool == true && yes as? Int == 1)
        #expect((NSNumber(value: -1) as Any) as? UInt == nil)
        #expect(seven as? CGFloat == nil, "not bridged on Linux (Darwin gives 7): see docs/differences-from-apple.md")
        // What Chime handed out before: a Swift Int in an Any casts to nothing else.
        let swiftInt: Any = 7
        #expect(swiftInt as? UInt == nil && swiftInt as? Double == nil)
        // Collections of NSNumbers bridge element by element.
        let list: Any = [NSNumber(value: 1), NSNumber(value: 2)] as [Any]
        let dictionary: Any = ["a": NSNumber(value: 3)] as [String: Any]
        #expect(list as? [UInt] == [1, 2] && list as? [Double] == [1, 2] && (list as? NSArray)?.count == 2)
        #expect(dictionary as? [String: UInt] == ["a": 3] && (dictionary as? NSDictionary)?.count == 1)
        #expect((dictionary as? [AnyHashable: Any])?["a"] as? Int64 == 3)
    }

    /// What an app sets, with the casts it makes afterwards.
    static func info() -> [AnyHashable: Any] {
        [
            "messageSenderId": UInt(7), "count": 3, "ratio": 2.0, "flag": true, "zero": 0, "big": Int64(1) << 40,
            "nested": ["ids": [UInt(1), UInt(2)], "inner": ["level": 2.5] as [String: Any]] as [String: Any],
        ]
    }

    static func check(_ info: [AnyHashable: Any], at stage: String) throws {
        #expect(info["messageSenderId"] as! UInt == 7, "\(stage)")
        #expect(info["messageSenderId"] as? Int == 7 && info["messageSenderId"] as? Double == 7, "\(stage)")
        #expect(info["count"] as? Int == 3 && info["count"] as? UInt16 == 3 && info["count"] as? Float == 3, "\(stage)")
        #expect(info["zero"] as? Bool == false && info["count"] as? Bool == nil, "\(stage)")
        #expect(info["ratio"] as? Double == 2 && info["ratio"] as? Int == 2, "\(stage)")
        #expect(info["flag"] as? Bool == true, "\(stage)")
        #expect(info["big"] as? Int64 == 1 << 40 && info["big"] as? Int32 == nil, "\(stage)")
        for key in ["messageSenderId", "count", "ratio", "flag", "zero", "big"] {
            #expect(info[key] is NSNumber, "\(stage): \(key) is \(type(of: info[key]))")
        }
        // The kind is kept: an integer is an integer, a real a real, a boolean a boolean.
        #expect(String(cString: try #require(info["count"] as? NSNumber).objCType) != "d", "\(stage)")
        #expect(String(cString: try #require(info["ratio"] as? NSNumber).objCType) == "d", "\(stage)")
        #expect(String(cString: try #require(info["flag"] as? NSNumber).objCType) == "c", "\(stage)")
        let nested = try #require(info["nested"] as? [String: Any], "\(stage)")
        #expect(nested["ids"] as? [UInt] == [1, 2], "\(stage)")
        #expect((nested["inner"] as? NSDictionary)?["level"] as? Double == 2.5, "\(stage)")
        #expect(
            (info["nested"] as? [String: Any]).flatMap { $0["inner"] as? [String: Float] } == ["level": 2.5], "\(stage)"
        )
        // App code forwards userInfo as JSON; the kinds survive.
        let json = try JSONSerialization.data(
            withJSONObject: ["ratio": info["ratio"]!, "flag": info["flag"]!, "count": info["count"]!],
            options: [.sortedKeys])
        #expect(
            String(decoding: json, as: UTF8.self) == #"{"count":3,"flag":true,"ratio":2}"#
                || String(decoding: json, as: UTF8.self) == #"{"count":3,"flag":true,"ratio":2.0}"#, "\(stage)")
    }

    // Set by the app and read back pending, delivered and in the response: UserInfoTests.roundTrip.

    @Test("before add, the content hands back the app's own dictionary, as iOS does")
    func beforeAdd() {
        let content = UNMutableNotificationContent()
        content.userInfo = Self.info()
        #expect(content.userInfo["messageSenderId"] as! UInt == 7)
        #expect(content.userInfo["count"] is Int, "as the app set it, not yet a property list")
    }

    @Test("the kinds survive the SQLite store and a copy of the content")
    func throughTheStore() async throws {
        // The store's companions (-wal, -shm, -verified) go with the directory.
        let path = scratchDirectory("chime-userinfo").appendingPathComponent("store.sqlite").path
        do {
            let simulator = try NotificationSimulator(bundleIdentifier: "com.example.tests", storePath: path)
            #expect(try await simulator.center.requestAuthorization(options: [.alert]))
            let content = content("Stored")
            content.userInfo = Self.info()
            try await simulator.center.add(
                UNNotificationRequest(
                    identifier: "s", content: content,
                    trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false)))
        }
        let reopened = try NotificationSimulator(bundleIdentifier: "com.example.tests", storePath: path)
        let stored = try #require(await reopened.center.pendingNotificationRequests().first).content
        try Self.check(stored.userInfo, at: "reopened")
        let copy = try #require(stored.mutableCopy() as? UNMutableNotificationContent)
        try Self.check(copy.userInfo, at: "copied")
        // Set again from what was read (NSNumbers), the kinds stay.
        copy.userInfo = stored.userInfo
        try await reopened.center.add(UNNotificationRequest(identifier: "again", content: copy, trigger: nil))
        try Self.check(
            try #require(await reopened.center.deliveredNotifications().first).request.content.userInfo, at: "re-added")
    }
}
