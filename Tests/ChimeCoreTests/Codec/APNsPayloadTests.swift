import Foundation
import TestThreads
import Testing

@testable import ChimeCore

@Suite("APNs payload decoder", .testThreads)
struct APNsPayloadTests {
    func decode(_ text: String) throws(APNsPayloadError) -> APNsPayload {
        try APNsPayload.decode(Array(text.utf8))
    }

    @Test("decodes the drinking-reminder payload")
    func drinkingReminder() throws {
        let p = try decode(
            #"{"aps": {"alert": {"title": "Stay hydrated", "body": "It's time for a glass of water"}, "sound": "default", "category": "drinkingReminderCategory"}}"#
        )
        #expect(p.content.title == "Stay hydrated")
        #expect(p.content.body == "It's time for a glass of water")
        #expect(p.content.sound == .default)
        #expect(p.content.categoryIdentifier == "drinkingReminderCategory")
        #expect(p.content.userInfo.isEmpty)
        #expect(!p.isContentAvailable && !p.isMutableContent)
    }

    @Test("an alert string is the body; Data input works too")
    func alertString() throws {
        let p = try APNsPayload.decode(
            Data(
                #"{"aps": {"alert": "Hello", "badge": 4, "sound": "bell.caf", "thread-id": "t", "mutable-content": 1}}"#
                    .utf8))
        #expect(p.content.body == "Hello" && p.content.title == "")
        #expect(p.content.badge == 4)
        #expect(p.content.sound == NotificationSound(name: "bell.caf"))
        #expect(p.content.threadIdentifier == "t")
        #expect(p.isMutableContent)
    }

    @Test("localisation keys are formatted with their arguments")
    func locKeys() throws {
        let p = try decode(
            #"""
            {"aps": {"alert": {"title": "ignored", "title-loc-key": "%@ invited you", "title-loc-args": ["Jenna"],
             "subtitle-loc-key": "SUBTITLE", "loc-key": "%2$@ and %1$@ play %@, 100%%", "loc-args": ["Jenna", "Frank"], "launch-image": "L.png"}}}
            """#)
        #expect(p.content.title == "Jenna invited you")
        #expect(p.content.subtitle == "SUBTITLE")
        #expect(p.content.body == "Frank and Jenna play Jenna, 100%")
        #expect(p.content.launchImageName == "L.png")
        let game = try decode(
            #"{"aps": {"alert": {"loc-key": "GAME_PLAY_REQUEST_FORMAT", "loc-args": ["Jenna", "Frank"]}}}"#)
        #expect(game.content.body == "GAME_PLAY_REQUEST_FORMAT")
        #expect(APNsPayload.format("%@ %@ %@", arguments: ["a"]) == "a %@ %@")
        #expect(APNsPayload.format("%5$@ %d %", arguments: ["a"]) == "%5$@ %d %")
    }

    @Test("critical sound dictionary and the other aps keys")
    func criticalSound() throws {
        let p = try decode(
            #"""
            {"aps": {"alert": "Fire", "sound": {"critical": 1, "name": "alarm.caf", "volume": 0.5}, "interruption-level": "time-sensitive",
             "relevance-score": 0.75, "filter-criteria": "work", "target-content-id": "room-1", "future-key": {"x": 1}}}
            """#)
        #expect(p.content.sound == NotificationSound(name: "alarm.caf", isCritical: true, volume: 0.5))
        #expect(p.content.interruptionLevel == .timeSensitive)
        #expect(p.content.relevanceScore == 0.75)
        #expect(p.content.filterCriteria == "work")
        #expect(p.content.targetContentIdentifier == "room-1")
    }

    @Test("content-available makes a silent push")
    func silent() throws {
        let p = try decode(#"{"aps": {"content-available": 1}, "sync": "inbox"}"#)
        #expect(p.isContentAvailable)
        #expect(p.content.body == "" && p.content.title == "")
        #expect(p.content.userInfo == ["sync": .string("inbox")])
    }

    @Test("keys outside aps become userInfo, nulls dropped; the simulator bundle is kept apart")
    func customKeys() throws {
        let p = try decode(
            #"""
            {"aps": {"alert": "x"}, "orderId": 1234, "price": 9.5, "flags": [true, null, "a"], "meta": {"k": null, "v": "w"}, "gone": null,
             "Simulator Target Bundle": "com.example.app"}
            """#)
        #expect(
            p.content.userInfo == [
                "orderId": .integer(1234), "price": .double(9.5), "flags": .array([.bool(true), .string("a")]),
                "meta": .dictionary(["v": .string("w")]),
            ])
        #expect(p.simulatorTargetBundle == "com.example.app")
    }

    @Test("a payload over the limit is PayloadTooLarge (413)")
    func tooLarge() {
        let big = #"{"aps": {"alert": ""# + String(repeating: "x", count: 4100) + #""}}"#
        do throws(APNsPayloadError) {
            _ = try decode(big)
            Issue.record("accepted")
        } catch {
            #expect(error.reason == "PayloadTooLarge")
            #expect(error.status == 413)
            #expect(error.message.contains("4096"))
        }
        #expect((try? APNsPayload.decode(Array(big.utf8), maxSize: 5000)) != nil)
    }

    /// (payload, field, words in the message)
    static let invalid: [(String, String?, [String])] = [
        ("", nil, ["empty"]),
        ("  \n", nil, ["empty"]),
        (#"{"aps": "#, nil, ["not valid JSON", "malformed JSON at byte"]),
        (#"{"aps": {"alert": "x",}}"#, nil, ["trailing commas"]),
        ("[1]", nil, ["must be a JSON object"]),
        (#"{"alert": "x"}"#, "aps", ["no \"aps\" dictionary"]),
        (#"{"aps": "hello"}"#, "aps", ["expected a dictionary"]),
        (#"{"aps": {"alert": 5}}"#, "aps.alert", ["expected a string or a dictionary"]),
        (#"{"aps": {"alert": {"title": 1}}}"#, "aps.alert.title", ["expected a string, found an integer"]),
        (#"{"aps": {"alert": {"loc-key": "K", "loc-args": "Jenna"}}}"#, "aps.alert.loc-args", ["array of strings"]),
        (
            #"{"aps": {"alert": {"loc-key": "K", "loc-args": ["a", {}]}}}"#, "aps.alert.loc-args[1]",
            ["expected a string"]
        ),
        (#"{"aps": {"badge": "1"}}"#, "aps.badge", ["expected an integer, found a string"]),
        (#"{"aps": {"badge": -1}}"#, "aps.badge", ["0 or more"]),
        (#"{"aps": {"badge": 1.5}}"#, "aps.badge", ["expected an integer"]),
        (#"{"aps": {"sound": 1}}"#, "aps.sound", ["sound file name or a dictionary"]),
        (#"{"aps": {"sound": {"critical": 1, "volume": 3}}}"#, "aps.sound.volume", ["0 to 1"]),
        (#"{"aps": {"sound": {"critical": "yes"}}}"#, "aps.sound.critical", ["1 or 0"]),
        (#"{"aps": {"thread-id": 5}}"#, "aps.thread-id", ["expected a string"]),
        (#"{"aps": {"category": []}}"#, "aps.category", ["expected a string"]),
        (#"{"aps": {"content-available": "1"}}"#, "aps.content-available", ["1 or 0"]),
        (
            #"{"aps": {"interruption-level": "loud"}}"#, "aps.interruption-level",
            ["passive, active, time-sensitive, critical"]
        ),
        (#"{"aps": {"relevance-score": 2}}"#, "aps.relevance-score", ["0 to 1"]),
        (#"{"aps": {"relevance-score": "high"}}"#, "aps.relevance-score", ["expected a number"]),
        (#"{"aps": {"alert": "x"}, "Simulator Target Bundle": 3}"#, "Simulator Target Bundle", ["bundle identifier"]),
    ]

    @Test("rejects unusable payloads as PayloadEmpty naming the key", arguments: invalid)
    func rejects(text: String, field: String?, words: [String]) {
        do throws(APNsPayloadError) {
            let p = try decode(text)
            Issue.record("accepted \(text) as \(p)")
        } catch {
            #expect(error.reason == "PayloadEmpty")
            #expect(error.status == 400)
            #expect(error.field == field, "\(text): \(error.message)")
            for word in words { #expect(error.message.contains(word), "\(text): \(error.message) lacks \(word)") }
        }
    }

    @Test("a value out of range gets Validation's message in Apple's key names: the ranges are Validation's alone")
    func rangesAreValidations() {
        let cases: [(payload: String, expected: String?)] = [
            (#"{"aps": {"badge": -1}}"#, refusalMessage { try Validation.validateBadge(-1, field: "aps.badge") }),
            (
                #"{"aps": {"summary-arg-count": -1}}"#,
                refusalMessage { try Validation.validateSummaryArgumentCount(-1, field: "aps.summary-arg-count") }
            ),
            (
                #"{"aps": {"alert": {"summary-arg-count": -3}}}"#,
                refusalMessage { try Validation.validateSummaryArgumentCount(-3, field: "aps.alert.summary-arg-count") }
            ),
            (
                #"{"aps": {"relevance-score": 2}}"#,
                refusalMessage { try Validation.validateRelevanceScore(2, field: "aps.relevance-score") }
            ),
            (
                #"{"aps": {"sound": {"critical": 1, "volume": 3}}}"#,
                refusalMessage { try Validation.validateVolume(3, field: "aps.sound.volume") }
            ),
        ]
        for (payload, expected) in cases {
            #expect(expected != nil, "\(payload): Validation accepts it")
            #expect(refusalMessage { _ = try decode(payload) } == expected, "\(payload)")
        }
    }

    @Test("never crashes on prefixes and byte flips of a payload")
    func robustness() {
        let bytes = Array(
            #"{"aps": {"alert": {"title": "T", "loc-key": "%1$@ %@", "loc-args": ["é😀"]}, "sound": {"critical": 1}}, "k": [1, {"a": null}]}"#
                .utf8)
        for end in 0...bytes.count { _ = try? APNsPayload.decode(bytes[0..<end]) }
        for i in 0..<bytes.count {
            for flip: UInt8 in [0x00, 0x22, 0x5C, 0x7B, 0x80, 0xFF] {
                var mutated = bytes
                mutated[i] = flip
                _ = try? APNsPayload.decode(mutated)
            }
        }
        #expect((try? APNsPayload.decode(bytes)) != nil)
    }
}
