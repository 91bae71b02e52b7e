import ChimeCore
import ChimeTesting
import Foundation
import StoreTestSupport
import TestThreads
import Testing

@testable import ChimeSQLite

/// Auto-dismissal (a Chime addition) in the record format and in the engine on every store: a
/// delivered notification is removed at its end of relevance, with a `removed` event whose reason
/// is `autoDismiss`, once, across restarts.
@Suite("Auto-dismissal in the stores", .testThreads)
struct AutoDismissStoreTests {
    static let app = "com.example.dismiss"

    static func request(
        _ identifier: String, _ trigger: NotificationTrigger?, dismiss: NotificationDeadline?,
        expires: NotificationDeadline? = nil
    ) -> NotificationRequest {
        NotificationRequest(
            identifier: identifier, content: Samples.content("Title \(identifier)"), trigger: trigger,
            expiration: expires, autoDismiss: dismiss)
    }

    /// The `removed` events with reason `autoDismiss`: identifiers and dates.
    static func dismissals(_ engine: NotificationEngine) async throws -> [([String], Date)] {
        try await engine.events(after: 0, app: app).compactMap { event in
            guard case .removed(let identifiers, .delivered, .autoDismiss) = event.payload else { return nil }
            return (identifiers, event.date)
        }
    }

    @Test("an auto-dismissal round-trips in format 8 beside an expiration; requests without one keep their formats")
    func format() throws {
        let date = Samples.base.addingTimeInterval(600)
        let seconds = Self.request("s", .timeInterval(60, repeats: false), dismiss: .after(90))
        let bytes = RecordCodec.encode(seconds)
        #expect(bytes.first == 8)
        #expect(try RecordCodec.decodeRequest(bytes) == seconds)
        let both = Self.request("b", nil, dismiss: .at(date), expires: .after(30))
        #expect(try RecordCodec.decodeRequest(RecordCodec.encode(both)) == both)
        let delivered = DeliveredNotification(request: both, date: date, sequence: 3)
        #expect(
            try RecordCodec.decodeDelivered(RecordCodec.encode(delivered, encodedRequest: RecordCodec.encode(both)))
                == delivered)
        #expect(delivered.dismissDate == date)
        #expect(DeliveredNotification(request: seconds, date: date).dismissDate == date.addingTimeInterval(90))
        // Expiry alone stays format 6, nothing at all format 1.
        #expect(RecordCodec.encode(Self.request("e", nil, dismiss: nil, expires: .at(date))).first == 6)
        #expect(RecordCodec.encode(Self.request("p", nil, dismiss: nil)).first == 1)
        // Bits neither format knows are corruption: the mask sits before the 8-byte double.
        var unknown = bytes
        #expect(unknown[unknown.count - 9] == 8)
        unknown[unknown.count - 9] = 16
        #expect(throws: ChimeError.self) { try RecordCodec.decodeRequest(unknown) }
        // The removed event says why; a plain removal's record is as before (scope byte 1).
        let dismissed = EngineEvent(
            sequence: 2, app: Self.app, date: date,
            payload: .removed(identifiers: ["a", "b"], scope: .delivered, reason: .autoDismiss))
        #expect(try RecordCodec.decodeEvent(RecordCodec.encode(dismissed)) == dismissed)
        let plain = EngineEvent(
            sequence: 2, app: Self.app, date: date, payload: .removed(identifiers: ["a"], scope: .delivered))
        #expect(RecordCodec.encode(plain).last == 1)
        #expect(RecordCodec.encode(dismissed).last == 2)
        #expect(try RecordCodec.decodeEvent(RecordCodec.encode(plain)) == plain)
    }

    /// Every store. "bus" is shown at 60 s and gone at 660 s; "plain" stays; "now" (no trigger) goes
    /// at its date, 300 s; "stale" would be shown after its end of relevance, so it expires; "hourly"
    /// gets 30 minutes per occurrence. A notification removed by hand before its end leaves nothing
    /// for the scheduler to wake for.
    @Test(
        "a delivered notification is removed at its end of relevance, once, with a removed event of reason autoDismiss",
        arguments: StoreKind.allCases)
    func engineDismisses(kind: StoreKind) async throws {
        let start = Samples.base
        let clock = ManualClock(now: start)
        try await kind.withEngine(clock: clock) { engine in
            _ = try await engine.requestAuthorization(app: Self.app, options: [.alert])
            _ = try await engine.add(
                [
                    Self.request("bus", .timeInterval(60, repeats: false), dismiss: .after(600)),
                    Self.request("plain", .timeInterval(60, repeats: false), dismiss: nil),
                    Self.request(
                        "stale", .timeInterval(60, repeats: false), dismiss: .at(start.addingTimeInterval(30))),
                    Self.request("hourly", .timeInterval(3600, repeats: true), dismiss: .after(1800)),
                    Self.request("now", nil, dismiss: .at(start.addingTimeInterval(300))),
                ], app: Self.app)
            #expect(
                try await engine.delivered(app: Self.app).first?.request.autoDismiss
                    == .at(start.addingTimeInterval(300)))
            // Pending, the duration stays a duration: each delivery counts from itself.
            #expect(
                try await engine.pending(app: Self.app).first { $0.request.identifier == "hourly" }?.request.autoDismiss
                    == .after(1800))

            var dates: [Date] = []
            while let next = try await engine.nextFireDate(), next <= start.addingTimeInterval(7200), dates.count < 20 {
                clock.set(next)
                dates.append(next)
                try await engine.fireDue(now: next)
            }
            #expect(dates.map { $0.timeIntervalSince(start) } == [60, 300, 660, 3600, 5400, 7200])
            let delivered = try await engine.delivered(app: Self.app)
            #expect(delivered.map(\.request.identifier) == ["hourly", "plain"])
            #expect(
                delivered.first?.request.autoDismiss == .at(start.addingTimeInterval(9000)),
                "counted from the second hourly delivery")
            let dismissed = try await Self.dismissals(engine)
            #expect(dismissed.map(\.0) == [["now"], ["bus"], ["hourly"]])
            #expect(dismissed.map { $0.1.timeIntervalSince(start) } == [300, 660, 5400])
            let expired = try await engine.events(after: 0, app: Self.app).compactMap { event -> String? in
                if case .expired(let entry) = event.payload { return entry.request.identifier } else { return nil }
            }
            #expect(expired == ["stale"])

            // Removed by hand before its end: the scheduler's next date is the next fire, not 9000 s.
            #expect(try await engine.removeDelivered(app: Self.app, identifiers: ["hourly"]) == ["hourly"])
            #expect(try await engine.nextFireDate() == start.addingTimeInterval(10_800))
            clock.set(start.addingTimeInterval(9000))
            #expect(try await engine.fireDue(now: clock.now).isEmpty)
            #expect(try await Self.dismissals(engine).count == 3, "nothing removed twice")
        }
    }

    @Test(
        "a delivered notification replaced without an end of relevance is not removed at the old one",
        arguments: StoreKind.allCases)
    func replaced(kind: StoreKind) async throws {
        let start = Samples.base
        let clock = ManualClock(now: start)
        try await kind.withEngine(clock: clock) { engine in
            _ = try await engine.requestAuthorization(app: Self.app, options: [.alert])
            _ = try await engine.add([Self.request("score", nil, dismiss: .after(60))], app: Self.app)
            #expect(try await engine.nextFireDate() == start.addingTimeInterval(60))
            clock.set(start.addingTimeInterval(10))
            _ = try await engine.add([Self.request("score", nil, dismiss: nil)], app: Self.app)
            #expect(try await engine.nextFireDate() == nil)
            clock.set(start.addingTimeInterval(120))
            try await engine.fireDue(now: clock.now)
            #expect(try await engine.delivered(app: Self.app).map(\.request.identifier) == ["score"])
            #expect(try await Self.dismissals(engine).isEmpty)
        }
    }

    @Test(
        "a version-5 store (its fixture) is upgraded: delivered rows kept without an end of relevance; new ones take one"
    )
    func upgradeFromVersion5() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore(path: try StoreFixtureTests.copy("store-v5.sqlite", into: directory))
        defer { store.close() }
        let app = "com.example.fixture"
        let before = try store.delivered(app: app, thread: nil)
        #expect(!before.isEmpty)
        #expect(try store.soonestDismissals(limit: 10).isEmpty)
        let dismissAt = Samples.base.addingTimeInterval(300)
        try store.putDelivered(
            DeliveredNotification(request: Self.request("new", nil, dismiss: .at(dismissAt)), date: Samples.base),
            app: app)
        #expect(try store.soonestDismissals(limit: 10).map(\.identifier) == ["new"])
        #expect(try store.dueDismissals(before: dismissAt, limit: 10).map(\.identifier) == ["new"])
        #expect(try store.dueDismissals(before: dismissAt.addingTimeInterval(-1), limit: 10).isEmpty)
        // Replaced without one, it has none.
        try store.putDelivered(
            DeliveredNotification(request: Self.request("new", nil, dismiss: nil), date: Samples.base), app: app)
        #expect(try store.soonestDismissals(limit: 10).isEmpty)
        #expect(try store.delivered(app: app, thread: nil).count == before.count + 1)
    }

    @Test(
        "a dismissal due while the service was down happens when it starts, once (SQLite file, the scheduler running)")
    func restart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("chime.sqlite")
        let start = Samples.base
        try await withSQLiteEngine(path: path, at: start) { engine in
            _ = try await engine.requestAuthorization(app: Self.app, options: [.alert])
            _ = try await engine.add(
                [Self.request("r", nil, dismiss: .after(600)), Self.request("kept", nil, dismiss: .after(7200))],
                app: Self.app)
            #expect(try await engine.nextFireDate() == start.addingTimeInterval(600))
        }
        try await withSQLiteEngine(path: path, at: start.addingTimeInterval(1000), scheduler: true) {
            (engine) async throws in
            // The scheduler finds it due at once (the manual clock never moves here).
            try await waitWhile { try await engine.delivered(app: Self.app).count > 1 }
            #expect(try await engine.delivered(app: Self.app).map(\.request.identifier) == ["kept"])
            #expect(try await engine.nextFireDate() == start.addingTimeInterval(7200))
        }
        try await withSQLiteEngine(path: path, at: start.addingTimeInterval(2000)) { (engine) async throws in
            try await engine.fireDue(now: start.addingTimeInterval(2000))
            let dismissed = try await Self.dismissals(engine)
            #expect(dismissed.map(\.0) == [["r"]])
            #expect(dismissed.first?.1 == start.addingTimeInterval(1000), "removed when the service started")
        }
    }
}
