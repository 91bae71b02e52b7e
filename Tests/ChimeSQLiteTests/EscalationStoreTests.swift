import ChimeCore
import ChimeTesting
import Foundation
import StoreTestSupport
import TestThreads
import Testing

@testable import ChimeSQLite

/// Escalation — repeat until acknowledged, a Chime addition — in the record format and in the
/// engine on every store: each step alerted once (a `realerted` event), the receipt kept through
/// answers, removals, the end of the window and restarts.
@Suite("Escalation in the stores", .testThreads)
struct EscalationStoreTests {
    static let app = "com.example.escalate"

    static func request(
        _ identifier: String, _ trigger: NotificationTrigger? = nil, every: TimeInterval?,
        for duration: TimeInterval = 300,
        category: String = ""
    ) -> NotificationRequest {
        var content = Samples.content("Title \(identifier)")
        content.categoryIdentifier = category
        return NotificationRequest(
            identifier: identifier, content: content, trigger: trigger,
            escalation: every.map { NotificationEscalation(every: $0, for: duration) })
    }

    /// The `realerted` events: identifier, alert number and seconds after `start`.
    static func realerts(_ engine: NotificationEngine, since start: Date) async throws -> [String] {
        try await engine.events(after: 0, app: app).compactMap { event in
            guard case .realerted(let delivery) = event.payload else { return nil }
            return
                "\(delivery.notification.request.identifier)#\(delivery.alert)@\(Int(event.date.timeIntervalSince(start)))"
        }
    }

    /// Runs the scheduler's dates up to `end` (at most 40 firings).
    static func fire(_ engine: NotificationEngine, clock: ManualClock, until end: Date) async throws -> [Date] {
        var dates: [Date] = []
        while let next = try await engine.nextFireDate(), next <= end, dates.count < 40 {
            clock.set(max(next, clock.now))
            dates.append(next)
            try await engine.fireDue(now: clock.now)
        }
        clock.set(max(end, clock.now))
        return dates
    }

    @Test(
        "an escalation round-trips in format 9, and so does a realerted event; requests without one keep their formats")
    func format() throws {
        let escalating = Self.request("e", .timeInterval(60, repeats: false), every: 60, for: 1800)
        let bytes = RecordCodec.encode(escalating)
        #expect(bytes.first == 9)
        #expect(try RecordCodec.decodeRequest(bytes) == escalating)
        var both = escalating
        both.autoDismiss = .after(90)
        both.expiration = .at(Samples.base)
        #expect(try RecordCodec.decodeRequest(RecordCodec.encode(both)) == both)
        #expect(RecordCodec.encode(Self.request("p", every: nil)).first == 1)
        // A bit no format knows is corruption: the mask sits before the two 8-byte doubles.
        var unknown = bytes
        #expect(unknown[unknown.count - 17] == 16)
        unknown[unknown.count - 17] = 48
        #expect(throws: ChimeError.self) { try RecordCodec.decodeRequest(unknown) }
        // Format 8 does not know bit 4.
        var older = bytes
        older[0] = 8
        #expect(throws: ChimeError.self) { try RecordCodec.decodeRequest(older) }
        let event = Samples.event(Self.app, kind: .realerted)
        let encoded = RecordCodec.encode(event)
        #expect(encoded.first == 9)
        #expect(try RecordCodec.decodeEvent(encoded) == event)
        #expect(RecordCodec.encode(Samples.event(Self.app, kind: .delivered)).first != 9)
    }

    /// Every store. Delivered at 0: "wake" (every 60 s for 300 s) is alerted again at 60, 120,
    /// 180 and 240 and expires at 300; "answered" is opened on the web at 130 after two re-alerts;
    /// "removed" is removed by the app at 70; "replaced" is replaced at 90 by a request without an
    /// escalation; "plain" never escalates. Receipts outlive the delivered notifications.
    @Test(
        "each step is alerted once until an answer, a removal, a replacement or the end of the window; receipts say which",
        arguments: StoreKind.allCases)
    func engineEscalates(kind: StoreKind) async throws {
        let start = Samples.base
        let clock = ManualClock(now: start)
        try await kind.withEngine(clock: clock) { engine in
            _ = try await engine.requestAuthorization(app: Self.app, options: [.alert, .sound])
            _ = try await engine.add(
                [
                    Self.request("wake", every: 60, for: 300),
                    Self.request("answered", every: 60, for: 600),
                    Self.request("removed", every: 60, for: 600),
                    Self.request("replaced", every: 60, for: 600),
                    Self.request("plain", every: nil),
                ], app: Self.app)
            #expect(try await engine.receipt(app: Self.app, notification: "plain") == nil)
            let first = try #require(try await engine.receipt(app: Self.app, notification: "wake"))
            #expect(
                first.alerts == 1 && first.lastAlertedAt == start && first.nextAlertAt == start.addingTimeInterval(60))
            #expect(!first.acknowledged && !first.expired && first.isEscalating)

            var dates = try await Self.fire(engine, clock: clock, until: start.addingTimeInterval(65))
            #expect(try await engine.removeDelivered(app: Self.app, identifiers: ["removed"]) == ["removed"])
            dates += try await Self.fire(engine, clock: clock, until: start.addingTimeInterval(90))
            _ = try await engine.add([Self.request("replaced", every: nil)], app: Self.app)
            dates += try await Self.fire(engine, clock: clock, until: start.addingTimeInterval(130))
            _ = try await engine.respond(
                app: Self.app, notification: "answered", action: UNNotificationDefaultActionIdentifier, surface: "web")
            dates += try await Self.fire(engine, clock: clock, until: start.addingTimeInterval(1000))
            #expect(dates.map { Int($0.timeIntervalSince(start)) } == [60, 120, 180, 240, 300])
            #expect(try await engine.nextFireDate() == nil, "nothing left to wake for")

            #expect(
                try await Self.realerts(engine, since: start) == [
                    "wake#2@60", "answered#2@60", "removed#2@60", "replaced#2@60", "wake#3@120", "answered#3@120",
                    "wake#4@180", "wake#5@240",
                ])
            let wake = try #require(try await engine.receipt(app: Self.app, notification: "wake"))
            #expect(wake.alerts == 5 && wake.lastAlertedAt == start.addingTimeInterval(240))
            #expect(
                wake.expired && !wake.acknowledged && wake.nextAlertAt == nil
                    && wake.endedAt == start.addingTimeInterval(300))
            let answered = try #require(try await engine.receipt(app: Self.app, notification: "answered"))
            #expect(
                answered.acknowledgedAt == start.addingTimeInterval(130)
                    && answered.actionIdentifier == UNNotificationDefaultActionIdentifier)
            #expect(
                answered.surface == "web" && answered.alerts == 3 && !answered.expired && answered.nextAlertAt == nil)
            let removed = try #require(try await engine.receipt(app: Self.app, notification: "removed"))
            #expect(removed.removedAt == start.addingTimeInterval(65) && !removed.acknowledged && removed.alerts == 2)
            let replaced = try #require(try await engine.receipt(app: Self.app, notification: "replaced"))
            #expect(replaced.removedAt != nil && replaced.alerts == 2 && replaced.nextAlertAt == nil)
            // The answered and removed ones are gone from the list; their receipts stay.
            #expect(
                Set(try await engine.delivered(app: Self.app).map(\.request.identifier)) == [
                    "wake", "replaced", "plain",
                ])
        }
    }

    @Test(
        "a repeating request's every occurrence escalates on its own; an answer after the window ends is still recorded",
        arguments: StoreKind.allCases)
    func repeating(kind: StoreKind) async throws {
        let start = Samples.base
        let clock = ManualClock(now: start)
        try await kind.withEngine(clock: clock) { engine in
            _ = try await engine.requestAuthorization(app: Self.app, options: [.alert])
            _ = try await engine.add(
                [Self.request("hourly", .timeInterval(3600, repeats: true), every: 600, for: 1500)], app: Self.app)
            let dates = try await Self.fire(engine, clock: clock, until: start.addingTimeInterval(7300))
            #expect(dates.map { Int($0.timeIntervalSince(start)) } == [3600, 4200, 4800, 5100, 7200])
            #expect(try await Self.realerts(engine, since: start) == ["hourly#2@4200", "hourly#3@4800"])
            let second = try #require(try await engine.receipt(app: Self.app, notification: "hourly"))
            #expect(second.deliveredAt == start.addingTimeInterval(7200) && second.alerts == 1 && second.isEscalating)
            // Answered: recorded, and the escalation stops.
            clock.set(start.addingTimeInterval(7300))
            _ = try await engine.respond(
                app: Self.app, notification: "hourly", action: UNNotificationDismissActionIdentifier, surface: "desktop"
            )
            let answered = try #require(try await engine.receipt(app: Self.app, notification: "hourly"))
            #expect(
                answered.acknowledgedAt == clock.now
                    && answered.actionIdentifier == UNNotificationDismissActionIdentifier)
            #expect(answered.surface == "desktop" && answered.nextAlertAt == nil)
            #expect(try await engine.nextFireDate() == start.addingTimeInterval(10_800))
        }
    }

    @Test("escalations beyond the limits are refused naming the field; the engine's configuration moves the limits")
    func limits() async throws {
        let engine = NotificationEngine(store: MemoryStore(), clock: ManualClock(now: Samples.base))
        let cases: [(NotificationEscalation, String, String)] = [
            (NotificationEscalation(every: 5, for: 600), "escalateEvery", "give 10 or more seconds"),
            (NotificationEscalation(every: .nan, for: 600), "escalateEvery", "give 10 or more seconds"),
            (NotificationEscalation(every: 60, for: 90_000), "escalateFor", "at most 86400"),
            (NotificationEscalation(every: 60, for: 60), "escalateFor", "longer than one interval"),
        ]
        for (escalation, field, accepted) in cases {
            var request = Self.request("x", every: nil)
            request.escalation = escalation
            let error = await #expect(throws: ChimeError.self) { try await engine.add([request], app: Self.app) }
            #expect(error?.field == field, "\(escalation)")
            #expect(error?.message.contains(accepted) == true, "\(error?.message ?? "")")
        }
        var two = [Self.request("a", every: nil), Self.request("b", every: 1, for: 10)]
        let indexed = await #expect(throws: ChimeError.self) { try await engine.add(two, app: Self.app) }
        #expect(indexed?.field == "[1].escalateEvery")
        var configuration = NotificationEngine.Configuration()
        configuration.escalationLimits = EscalationLimits(minimumInterval: 1, maximumDuration: 60)
        let relaxed = NotificationEngine(
            store: MemoryStore(), clock: ManualClock(now: Samples.base), configuration: configuration)
        _ = try await relaxed.requestAuthorization(app: Self.app, options: [.alert])
        two[1].escalation = NotificationEscalation(every: 1, for: 10)
        _ = try await relaxed.add(two, app: Self.app)
        #expect(
            try await relaxed.receipt(app: Self.app, notification: "b")?.nextAlertAt
                == Samples.base.addingTimeInterval(1))
        await engine.shutdown()
        await relaxed.shutdown()
    }

    @Test("a version-6 store (its fixture) is upgraded: no receipts; new escalations keep theirs")
    func upgradeFromVersion6() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore(path: try StoreFixtureTests.copy("store-v6.sqlite", into: directory))
        defer { store.close() }
        #expect(try store.soonestEscalations(limit: 10).isEmpty)
        let next = Samples.base.addingTimeInterval(60)
        let receipt = EscalationReceipt(
            app: "com.example.fixture", identifier: "new", sequence: 99, deliveredAt: Samples.base,
            escalation: NotificationEscalation(every: 60, for: 600), nextAlertAt: next)
        try store.putReceipt(receipt)
        #expect(try store.receipt(app: "com.example.fixture", identifier: "new") == receipt)
        #expect(try store.soonestEscalations(limit: 10).map(\.identifier) == ["new"])
        #expect(try store.dueEscalations(before: next, limit: 10) == [receipt])
        #expect(try store.dueEscalations(before: next.addingTimeInterval(-1), limit: 10).isEmpty)
        // Ended: no longer due, pruned once older than the bound.
        var ended = receipt
        ended.nextAlertAt = nil
        ended.removedAt = next
        try store.putReceipt(ended)
        #expect(try store.soonestEscalations(limit: 10).isEmpty)
        try store.pruneReceipts(endedBefore: next)
        #expect(try store.receipt(app: "com.example.fixture", identifier: "new") == ended)
        try store.pruneReceipts(endedBefore: next.addingTimeInterval(1))
        #expect(try store.receipt(app: "com.example.fixture", identifier: "new") == nil)
    }

    @Test(
        "steps missed while the service was down are alerted once when it starts (the scheduler running), then on schedule"
    )
    func restart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("chime.sqlite")
        let start = Samples.base
        try await withSQLiteEngine(path: path, at: start) { engine in
            _ = try await engine.requestAuthorization(app: Self.app, options: [.alert])
            _ = try await engine.add([Self.request("wake", every: 60, for: 600)], app: Self.app)
        }
        try await withSQLiteEngine(path: path, at: start.addingTimeInterval(150), scheduler: true) {
            (engine) async throws in
            // Due at 60 and 120: one alert at 150 (the manual clock never moves here).
            try await waitWhile { try await engine.receipt(app: Self.app, notification: "wake")?.alerts == 1 }
            let receipt = try await engine.receipt(app: Self.app, notification: "wake")
            #expect(receipt?.alerts == 2 && receipt?.nextAlertAt == start.addingTimeInterval(180))
        }
        try await withSQLiteEngine(path: path, at: start.addingTimeInterval(200)) { (engine) async throws in
            try await engine.fireDue(now: start.addingTimeInterval(200))
            #expect(try await Self.realerts(engine, since: start) == ["wake#2@150", "wake#3@200"])
            #expect(try await engine.nextFireDate() == start.addingTimeInterval(240))
        }
    }
}
