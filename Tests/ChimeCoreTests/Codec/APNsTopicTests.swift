import ChimeCore
import Foundation
import TestThreads
import Testing

@Suite("APNs topics", .testThreads)
struct APNsTopicTests {
    typealias PushType = APNsRequestHeaders.PushType

    @Test(
        "Apple's suffix of each push type splits back to the bundle identifier and the type",
        arguments: PushType.allCases)
    func suffixes(type: PushType) throws {
        let topic = APNsTopic(APNsTopic.topic(for: type, bundleIdentifier: "com.example.call"))
        #expect(topic.bundleIdentifier == "com.example.call")
        let bare: Set<PushType> = [.alert, .background, .mdm]
        #expect(topic.suffixPushType == (bare.contains(type) ? nil : type))
        // The type the topic is for is accepted, given or not (a bare topic without the header is an alert).
        #expect(try topic.pushType(given: type) == type)
        #expect(try topic.pushType(given: nil) == (bare.contains(type) ? .alert : type))
    }

    @Test(
        "a push type the topic is not for is InvalidPushType, naming the topic it needs",
        arguments: [
            ("com.example.call", PushType.voip, "com.example.call.voip"),
            ("com.example.call.voip", .alert, "com.example.call"),
            ("com.example.call.voip", .background, "com.example.call"),
            ("com.example.call.voip", .pushtotalk, "com.example.call.voip-ptt"),
            ("com.example.call.complication", .liveactivity, "com.example.call.push-type.liveactivity"),
            ("com.example.call.push-type.liveactivity", .widgets, "com.example.call.push-type.widgets"),
            ("com.example.call", .location, "com.example.call.location-query"),
        ])
    func mismatch(topic: String, type: PushType, needed: String) {
        do {
            let accepted = try APNsTopic(topic).pushType(given: type)
            Issue.record("\(type) to \(topic) accepted as \(accepted)")
        } catch {
            #expect(
                error.reason == "InvalidPushType" && error.status == 400 && error.header == "apns-push-type", "\(error)"
            )
            #expect(error.message.contains("needs apns-topic \(needed),"), "\(error)")
        }
    }

    @Test("a topic that is only a suffix, or ends like one without the dot, is a bundle identifier")
    func notSuffixes() throws {
        for text in [".voip", "com.examplevoip", "com.example.voip.x", "com.example.push-type.other"] {
            let topic = APNsTopic(text)
            #expect(topic.bundleIdentifier == text && topic.suffixPushType == nil, "\(text)")
        }
        #expect(APNsTopic(bundleIdentifier: "com.example.voip").suffixPushType == nil)
        #expect(throws: APNsHeaderError.self) {
            try APNsTopic(bundleIdentifier: "com.example.voip").pushType(given: .voip)
        }
    }

    @Test("what the device does with each push type and payload")
    func delivery() throws {
        let alert = try APNsPayload.decode(Array(#"{"aps": {"alert": "Hi"}}"#.utf8))
        let wake = try APNsPayload.decode(Array(#"{"aps": {"content-available": 1}}"#.utf8))
        #expect(APNsTopic.delivery(of: .alert, payload: alert) == .shown)
        #expect(APNsTopic.delivery(of: .liveactivity, payload: alert) == .shown)
        #expect(APNsTopic.delivery(of: .alert, payload: wake) == .toApp)
        #expect(APNsTopic.delivery(of: .background, payload: wake) == .toApp)
        #expect(APNsTopic.delivery(of: .background, payload: alert) == .dropped)
        for type in PushType.allCases where ![.alert, .background, .liveactivity].contains(type) {
            #expect(APNsTopic.delivery(of: type, payload: alert) == .toApp, "\(type)")
        }
    }
}
