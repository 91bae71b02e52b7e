import ChimeCore
import ChimeTesting
import Foundation
import StoreTestSupport
import TestThreads
import Testing

@testable import ChimeSQLite

/// Request expiry (a Chime addition) in the record format and in the engine on every store: a
/// request due after its expiration is removed with one `expired` event instead of being delivered.
@Suite("Request expiry in the stores", .testThreads)
struct ExpiryStoreTests {
    static let app = "com.example.expiry"

    static func request(_ identifier: String, _ trigger: NotificationTrigger?, expires: NotificationDeadline?)
        -> NotificationRequest
    {
        NotificationRequest(
            identifier: identifier, content: Samples.content("Title \(identifier)"), trigger: trigger,
            expiration: expires)
    }

    @Test("an expiration round-trips in format 6; requests without one keep their lower formats")
    func format() throws {
        let date = Samples.base.addingTimeInterval(600)
        let request = Self.request("x", .timeInterval(60, repeats: false), expires: .at(date))
        let bytes = RecordCodec.encode(request)
        #expect(bytes.first == 6)
        #expect(try RecordCodec.decodeRequest(bytes) == request)
        let seconds = Self.request("s", nil, expires: .after(90))
        #expect(try RecordCodec.decodeRequest(RecordCodec.encode(seconds)) == seconds)
        // With thumbnail options and a recurrence rule too: one version for the whole record.
        var content = Samples.content()
        content.attachments[0].thumbnailHidden = true
        let rule = try RecurrenceSchedule(
            rule: RecurrenceRule(parsing: "FREQ=DAILY;COUNT=3"),
            start: DateComponents(year: 2027, month: 1, day: 1, hour: 9), timeZone: TimeZone(identifier: "UTC")!)
        let all = NotificationRequest(
            identifier: "all", content: content, trigger: .recurrence(rule), expiration: .at(date))
        #expect(try RecordCodec.decodeRequest(RecordCodec.encode(all)) == all)
        let delivered = DeliveredNotification(request: all, date: date, sequence: 9)
        #expect(
            try RecordCodec.decodeDelivered(RecordCodec.encode(delivered, encodedRequest: RecordCodec.encode(all)))
                == delivered)
        #expect(try RecordCodec.decodeDelivered(RecordCodec.encode(delivered)) == delivered)
        let event = EngineEvent(
            sequence: 4, app: Self.app, date: date,
            payload: .expired(ExpiredRequest(request: request, dueDate: date.addingTimeInterval(-1))))
        #expect(try RecordCodec.decodeEvent(RecordCodec.encode(event)) == event)
        // Without an expiration nothing changes: format 1 (4 with a rule).
        #expect(RecordCodec.encode(Self.request("plain", .timeInterval(60, repeats: false), expires: nil)).first == 1)
        #expect(
            RecordCodec.encode(NotificationRequest(identifier: "r", content: content, trigger: .recurrence(rule))).first
                == 4)
        // Option bits this format does not know are corruption, not guessed at: the mask sits
        // before the 8-byte date at the end.
        var unknown = bytes
        unknown[unknown.count - 9] = 4
        #expect(throws: ChimeError.self) { try RecordCodec.decodeRequest(unknown) }
    }

    /// Every store: "late" is due after its expiration and expires; "fresh" is due before its own and
    /// is delivered; "hourly" repeats twice and then ends at its expiration; "gone" (no trigger,
    /// expired already) expires at the add and "now" (`.after(0)`, no trigger) is delivered.
    @Test(
        "due after its expiration a request is removed with one expired event; a repeating one ends there",
        arguments: StoreKind.allCases)
    func engineExpires(kind: StoreKind) async throws {
        let start = Samples.base
        let clock = ManualClock(now: start)
        try await kind.withEngine(clock: clock) { engine in
            _ = try await engine.requestAuthorization(app: Self.app, options: [.alert])
            let firsts = try await engine.add(
                [
                    Self.request("late", .timeInterval(600, repeats: false), expires: .after(300)),
                    Self.request("fresh", .timeInterval(600, repeats: false), expires: .after(900)),
                    Self.request(
                        "hourly", .timeInterval(3600, repeats: true),
                        expires: .at(start.addingTimeInterval(3 * 3600 - 1))),
                ], app: Self.app)
            #expect(
                firsts == [
                    start.addingTimeInterval(600), start.addingTimeInterval(600), start.addingTimeInterval(3600),
                ])
            // Listed with the date the duration made.
            let listed = try await engine.pending(app: Self.app)
            #expect(
                listed.first { $0.request.identifier == "late" }?.request.expiration
                    == .at(start.addingTimeInterval(300)))
            _ = try await engine.add(
                [
                    Self.request("gone", nil, expires: .at(start.addingTimeInterval(-1))),
                    Self.request("now", nil, expires: .after(0)),
                ], app: Self.app)

            var delivered: [String] = []
            var firings = 0
            while let next = try await engine.nextFireDate(), firings < 10 {
                clock.set(next)
                delivered += try await engine.fireDue(now: next).map(\.request.identifier)
                firings += 1
            }
            #expect(delivered == ["fresh", "hourly", "hourly"])
            #expect(try await engine.pending(app: Self.app).isEmpty, "the expired and ended requests were removed")
            #expect(
                try await engine.delivered(app: Self.app).map(\.request.identifier).sorted() == [
                    "fresh", "hourly", "now",
                ])

            let expired = try await engine.events(after: 0, app: Self.app).compactMap {
                event -> (String, Date, Date)? in
                guard case .expired(let entry) = event.payload else { return nil }
                return (entry.request.identifier, entry.dueDate, event.date)
            }
            #expect(expired.map(\.0) == ["gone", "late", "hourly"])
            #expect(expired.map(\.1) == [start, start.addingTimeInterval(600), start.addingTimeInterval(3 * 3600)])
            #expect(expired.map(\.2) == expired.map(\.1), "found expired when it fell due")
            // Nothing is left to fire or expire again.
            #expect(try await engine.fireDue(now: start.addingTimeInterval(86_400)).isEmpty)
            #expect(try await engine.events(after: 0, app: Self.app).filter { $0.kind == .expired }.count == 3)
        }
    }

    @Test("a request delivered late is delivered only if it has not expired by then")
    func lateFiring() async throws {
        let start = Samples.base
        let clock = ManualClock(now: start)
        try await StoreKind.memory.withEngine(clock: clock) { engine in
            _ = try await engine.requestAuthorization(app: Self.app, options: [.alert])
            _ = try await engine.add(
                [
                    Self.request("a", .timeInterval(60, repeats: false), expires: .after(120)),
                    Self.request("b", .timeInterval(60, repeats: false), expires: .after(600)),
                ], app: Self.app)
            // The scheduler was away from 60 s to 300 s: "a" expired meanwhile, "b" has not.
            clock.set(start.addingTimeInterval(300))
            #expect(try await engine.fireDue(now: clock.now).map(\.request.identifier) == ["b"])
            let expired = try await engine.events(after: 0, app: Self.app).compactMap { event -> ExpiredRequest? in
                if case .expired(let entry) = event.payload { return entry } else { return nil }
            }
            #expect(expired.map(\.request.identifier) == ["a"])
            #expect(expired.first?.dueDate == start.addingTimeInterval(60))
        }
    }

    @Test("an expiry survives restarts of the engine on its SQLite file and happens once")
    func restart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("chime.sqlite")
        let start = Samples.base
        func run(at date: Date, _ body: (NotificationEngine) async throws -> Void) async throws {
            let store = try SQLiteStore(path: path)
            let engine = NotificationEngine(
                store: store, clock: ManualClock(now: date), timeZone: TimeZone(identifier: "UTC")!)
            try await body(engine)
            await engine.shutdown()
            store.close()
        }
        try await run(at: start) { engine in
            _ = try await engine.requestAuthorization(app: Self.app, options: [.alert])
            _ = try await engine.add(
                [Self.request("r", .timeInterval(600, repeats: false), expires: .after(300))], app: Self.app)
        }
        try await run(at: start.addingTimeInterval(600)) { (engine) async throws in
            #expect(
                try await engine.pending(app: Self.app).first?.request.expiration == .at(start.addingTimeInterval(300)))
            #expect(try await engine.nextFireDate() == start.addingTimeInterval(600))
            #expect(try await engine.fireDue(now: start.addingTimeInterval(600)).isEmpty)
        }
        try await run(at: start.addingTimeInterval(700)) { (engine) async throws in
            #expect(try await engine.nextFireDate() == nil)
            #expect(try await engine.fireDue(now: start.addingTimeInterval(700)).isEmpty)
            #expect(try await engine.pending(app: Self.app).isEmpty)
            #expect(try await engine.delivered(app: Self.app).isEmpty)
            let kinds = try await engine.events(after: 0, app: Self.app).map(\.kind)
            #expect(kinds.filter { $0 == .expired }.count == 1)
        }
    }
}
