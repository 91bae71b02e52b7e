import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

@Suite("Event frames", .testThreads)
struct EventFrameTests {
    @Test("a frame has id, event, one data line per line, and ends with a blank line")
    func frame() {
        let frame = EventStream.frame(event: "delivered", id: "7", data: Array("{\"a\":1}\nsecond\n".utf8))
        #expect(
            String(decoding: frame, as: UTF8.self)
                == "id: 7\nevent: delivered\ndata: {\"a\":1}\ndata: second\ndata: \n\n")
        #expect(String(decoding: EventStream.frame(data: []), as: UTF8.self) == "data: \n\n")
        var parser = ServerSentEventParser()
        let events = parser.feed(frame)
        #expect(events == [ServerSentEventParser.Event(kind: "delivered", id: "7", data: "{\"a\":1}\nsecond\n")])
    }

    @Test("one frame per event sequence, shared; events without a sequence are built each time")
    func cache() {
        let frames = EventFeed.FrameCache()
        let event = EngineEvent(
            sequence: 42, app: "com.example.a", date: Date(timeIntervalSince1970: 0),
            payload: .removed(identifiers: ["x"], scope: .pending))
        let first = frames.frame(for: event)
        #expect(frames.frame(for: event) == first)
        #expect(String(decoding: first, as: UTF8.self).hasPrefix("id: 42\nevent: removed\ndata: {"))
        for sequence in 43..<1_200 {
            _ = frames.frame(
                for: EngineEvent(
                    sequence: Int64(sequence), app: "a", date: Date(), payload: .settings(NotificationSettings())))
        }
        let unsequenced = EngineEvent(
            app: "a", date: Date(timeIntervalSince1970: 0), payload: .settings(NotificationSettings()))
        #expect(!String(decoding: frames.frame(for: unsequenced), as: UTF8.self).hasPrefix("id:"))
    }
}
