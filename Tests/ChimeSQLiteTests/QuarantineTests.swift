import ChimeCore
import ChimeTesting
import Foundation
import PostgresTestServer
import StoreTestSupport
import Synchronization
import TestThreads
import Testing

@testable import ChimePostgres
@testable import ChimeSQLite

/// Nothing stored can stop the scheduler or make anything fire twice: a due request that cannot be
/// delivered is set aside (the quarantine) in a transaction of which nothing else stays, and the
/// rest fires. And identifiers are compared literally, as the stores compare them.
@Suite("The quarantine, and identifiers compared literally", .testThreads, .timeLimit(.minutes(2)))
struct QuarantineTests {
    /// `com.example.Kiosk` with U+212A KELVIN SIGN for the K: equal to the real name under
    /// `String ==`, another name to the stores — and not a bundle identifier.
    static let kelvinApp = "com.example.\u{212A}iosk"
    static let app = "com.example.kiosk"
    static let other = "com.example.other"
    static let utc = TimeZone(identifier: "UTC")!

    // MARK: The stores

    @Test(
        "a store moves a pending request aside with why, lists it with its request, removes it; removing the app takes its entries",
        arguments: StoreKind.allCases)
    func storeQuarantine(kind: StoreKind) throws {
        try kind.withStore { store in
            try store.transaction {
                try store.putApp(Samples.app(Self.app))
                try store.putPending(pending("a", fire: 10), app: Self.app)
                try store.putPending(pending("b", fire: 20), app: Self.app)
                try store.putPending(pending("c", fire: 30), app: Self.kelvinApp)
            }
            let entry = try store.transaction {
                try store.quarantinePending(app: Self.kelvinApp, identifier: "c", reason: "why", date: Samples.base)
            }
            #expect(entry?.app == Self.kelvinApp)
            #expect(entry?.request?.identifier == "c")
            #expect(
                try store.transaction {
                    try store.quarantinePending(app: Self.app, identifier: "missing", reason: "x", date: Samples.base)
                } == nil)
            // The look-alike app's row is gone from pending; the real app's rows are untouched.
            #expect(try store.pendingCount(app: nil) == 2)
            #expect(
                try store.due(before: Samples.base.addingTimeInterval(100), limit: 10).map(\.pending.request.identifier)
                    == ["a", "b"])
            let second = try store.transaction {
                try store.quarantinePending(
                    app: Self.app, identifier: "b", reason: "because", date: Samples.base.addingTimeInterval(1))
            }
            let listed = try store.quarantined(after: 0, limit: 10)
            #expect(listed.map(\.identifier) == ["c", "b"])
            #expect(listed.map(\.reason) == ["why", "because"])
            #expect(listed[0].date == Samples.base)
            #expect(listed[1].request == Samples.request("b"))
            #expect(try store.quarantined(after: listed[0].id, limit: 10).map(\.identifier) == ["b"])
            #expect(try store.quarantinedCount() == 2)
            #expect(try store.transaction { try store.removeQuarantined(id: entry!.id) })
            #expect(try !store.transaction { try store.removeQuarantined(id: entry!.id) })
            try store.transaction { try store.removeApp(Self.app) }
            #expect(try store.quarantined(after: 0, limit: 10).isEmpty)
            #expect(second != nil)
        }
    }

    @Test(
        "a quarantine move inside a transaction that rolls back leaves the request pending",
        arguments: StoreKind.allCases)
    func rollback(kind: StoreKind) throws {
        try kind.withStore { store in
            try store.transaction { try store.putPending(pending("a", fire: 10), app: Self.app) }
            struct Abort: Error {}
            #expect(throws: Abort.self) {
                try store.transaction {
                    _ = try store.quarantinePending(app: Self.app, identifier: "a", reason: "x", date: Samples.base)
                    throw Abort()
                }
            }
            #expect(try store.pendingCount(app: Self.app) == 1)
            #expect(try store.quarantinedCount() == 0)
        }
    }

    @Test(
        "precomposed and decomposed café are two requests, and the Kelvin-sign app another app, in every store",
        arguments: StoreKind.allCases)
    func literalIdentifiers(kind: StoreKind) throws {
        let precomposed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(precomposed == decomposed)  // Swift's rule, which the stores do not follow
        try kind.withStore { store in
            try store.transaction {
                try store.putPending(pending(precomposed, fire: 10), app: Self.app)
                try store.putPending(pending(decomposed, fire: 20), app: Self.app)
                try store.putPending(pending("k", fire: 30), app: "com.example.Kiosk")
                try store.putPending(pending("k", fire: 40), app: Self.kelvinApp)
            }
            #expect(try store.pendingCount(app: Self.app) == 2)
            #expect(
                try store.pending(app: Self.app, identifier: decomposed)?.nextFireDate
                    == Samples.base.addingTimeInterval(20))
            #expect(
                try store.pending(app: Self.app, identifier: precomposed)?.nextFireDate
                    == Samples.base.addingTimeInterval(10))
            #expect(try store.pendingCount(app: "com.example.Kiosk") == 1)
            #expect(try store.pendingCount(app: Self.kelvinApp) == 1)
            #expect(
                try store.transaction { try store.removePending(app: Self.app, identifiers: [decomposed]) } == [
                    decomposed
                ])
            #expect(
                try store.pending(app: Self.app).map(\.request.identifier).map { Array($0.unicodeScalars) } == [
                    Array(precomposed.unicodeScalars)
                ])
        }
    }

    // MARK: The engine

    /// An engine over `store`, on a manual clock at `Samples.base`.
    static func engine(_ store: any NotificationStore, clock: ManualClock) -> NotificationEngine {
        NotificationEngine(store: store, clock: clock, timeZone: utc, policy: FixedAuthorizationPolicy(.grant))
    }

    /// Good requests through the engine, due at 1…count seconds, for two apps; poisoned rows put
    /// straight into the store (under the look-alike app, as a store written before paths were
    /// checked holds them) at scattered due dates among them. Every good one is delivered exactly once,
    /// every poisoned one is quarantined with an event, and firing again delivers nothing more.
    @Test(
        "random poisoned rows among good ones: every good one delivered exactly once, on its date; the bad ones set aside",
        arguments: StoreKind.allCases)
    func poisonedRows(kind: StoreKind) async throws {
        for round in 0..<3 {
            let count = 40 + round * 30
            // Scattered, repeatable due dates (a multiplicative hash of the index), some shared.
            let poisoned = (0..<(3 + round * 4)).map { index in Double((index * 7_919 + round * 31) % count + 1) + 0.5 }
            try await kind.withAsyncStore { store in
                try store.transaction {
                    for (index, offset) in poisoned.enumerated() {
                        try store.putPending(pending("bad\(index)", fire: offset), app: Self.kelvinApp)
                    }
                }
                let clock = ManualClock(now: Samples.base)
                let engine = Self.engine(store, clock: clock)
                let collector = EventCollector(engine.events(app: nil))
                for app in [Self.app, Self.other] {
                    _ = try await engine.requestAuthorization(app: app, options: [.alert])
                    let requests = (1...count).map { index in
                        NotificationRequest(
                            identifier: "r\(index)", content: NotificationContent(title: "\(index)"),
                            trigger: .timeInterval(Double(index), repeats: false))
                    }
                    _ = try await engine.add(requests, app: app)
                }
                // Fire in steps, as the scheduler does when time passes.
                var delivered: [DeliveredNotification] = []
                for step in stride(from: 0, through: count, by: 7) {
                    clock.set(Samples.base.addingTimeInterval(Double(step) + 0.75))
                    delivered += try await engine.fireDue(now: clock.now)
                }
                clock.set(Samples.base.addingTimeInterval(Double(count) + 1))
                delivered += try await engine.fireDue(now: clock.now)
                #expect(try await engine.fireDue(now: clock.now).isEmpty)

                let byIdentifier = Dictionary(grouping: delivered, by: \.request.identifier)
                #expect(delivered.count == 2 * count, "round \(round): \(delivered.count) delivered")
                #expect(byIdentifier.values.allSatisfy { $0.count == 2 })  // once for each app
                for notification in delivered {
                    let index = Double(notification.request.identifier.dropFirst())!
                    #expect(notification.date == Samples.base.addingTimeInterval(index))
                }
                #expect(try await engine.pendingCount() == 0)
                let quarantined = try await engine.quarantined()
                #expect(Set(quarantined.map(\.identifier)) == Set(poisoned.indices.map { "bad\($0)" }))
                #expect(
                    quarantined.allSatisfy { $0.app == Self.kelvinApp && $0.reason.contains("not a bundle identifier") }
                )
                // What subscribers saw: each delivery once, and a quarantined event per bad row.
                let events = try await collector.wait { events in
                    events.filter { $0.kind == .delivered }.count >= 2 * count
                        && events.filter { $0.kind == .quarantined }.count >= poisoned.count
                }
                #expect(events.filter { $0.kind == .delivered }.count == 2 * count)
                #expect(events.filter { $0.kind == .quarantined }.count == poisoned.count)
                await engine.shutdown()
            }
        }
    }

    @Test("a record that cannot be read is set aside with why, and the rest fires (SQLite)")
    func damagedRecord() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        do {
            let clock = ManualClock(now: Samples.base)
            let engine = Self.engine(try SQLiteStore(path: path), clock: clock)
            _ = try await engine.requestAuthorization(app: Self.app, options: [.alert])
            _ = try await engine.add(
                (1...5).map {
                    NotificationRequest(
                        identifier: "r\($0)", content: NotificationContent(title: "t"),
                        trigger: .timeInterval(Double($0), repeats: false))
                }, app: Self.app)
            await engine.shutdown()
        }
        // Damage two records in place, as a disk fault or a hand edit would.
        let raw = try SQLiteConnection(path: path)
        try raw.execute("UPDATE pending SET request = x'00ff00ff' WHERE identifier IN ('r2', 'r4')")
        raw.close()

        let clock = ManualClock(now: Samples.base.addingTimeInterval(10))
        let engine = Self.engine(try SQLiteStore(path: path), clock: clock)
        let delivered = try await engine.fireDue(now: clock.now)
        #expect(delivered.map(\.request.identifier) == ["r1", "r3", "r5"])
        let quarantined = try await engine.quarantined()
        #expect(quarantined.map(\.identifier) == ["r2", "r4"])
        #expect(quarantined.allSatisfy { $0.request == nil && $0.reason.contains("cannot be read") })
        #expect(try await engine.pendingCount() == 0)
        await engine.shutdown()
    }

    @Test(
        "a listing that meets a record it cannot read sets it aside and lists the rest, beside the writer and on it",
        arguments: [StoreKind.sqlite, .postgres])
    func damagedRecordListed(kind: StoreKind) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        let url = kind == .postgres ? try PostgresTestServer.shared().makeSchema() : ""
        func open() throws -> any NotificationStore {
            kind == .postgres ? try PostgresStore(url: url) : try SQLiteStore(path: path)
        }
        func damage(_ identifiers: [String]) throws {
            let list = identifiers.map { "'\($0)'" }.joined(separator: ", ")
            if kind == .postgres {
                let raw = try PostgresConnection(url: url, applicationName: "chime-test-damage")
                try raw.execute("UPDATE chime_pending SET request = '\\x00ff00ff'::bytea WHERE identifier IN (\(list))")
            } else {
                let raw = try SQLiteConnection(path: path)
                try raw.execute("UPDATE pending SET request = x'00ff00ff' WHERE identifier IN (\(list))")
                raw.close()
            }
        }
        let clock = ManualClock(now: Samples.base)
        let engine = Self.engine(try open(), clock: clock)
        let collector = EventCollector(engine.events(app: nil))
        _ = try await engine.requestAuthorization(app: Self.app, options: [.alert])
        _ = try await engine.add(
            (1...5).map {
                NotificationRequest(
                    identifier: "r\($0)", content: NotificationContent(title: "t"),
                    trigger: .timeInterval(100, repeats: false))
            }, app: Self.app)
        try damage(["r2", "r4"])

        // Beside the writer (SQLite's readers) or on it (PostgreSQL): the damaged rows go to the
        // quarantine, each with an event, and the listing has the others in their order.
        #expect(try await engine.pending(app: Self.app).map(\.request.identifier) == ["r1", "r3", "r5"])
        #expect(try await engine.quarantined().map(\.identifier) == ["r2", "r4"])
        _ = try await collector.wait { $0.filter { $0.kind == .quarantined }.count == 2 }
        #expect(try await engine.pendingCount(app: Self.app) == 3)

        // A page and the writer's own reads (the Apple API's ordered listing) meet one more.
        try damage(["r3"])
        #expect(try await engine.pending(app: Self.app, after: 0, limit: 10).map(\.request.identifier) == ["r1", "r5"])
        try damage(["r5"])
        let ordered = try await withCheckedThrowingContinuation { continuation in
            engine.pending(app: Self.app, ordered: { continuation.resume(with: $0) })
        }
        #expect(ordered.map(\.request.identifier) == ["r1"])
        #expect(try await engine.quarantined().map(\.identifier) == ["r2", "r4", "r3", "r5"])
        await engine.shutdown()
    }

    @Test("the scheduler carries on past a bad row: another app's request fires on its date, once")
    func schedulerCarriesOn() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore(path: directory.path("store.sqlite"))
        try store.transaction { try store.putPending(pending("bad", fire: 5), app: Self.kelvinApp) }
        let clock = ManualClock(now: Samples.base)
        let engine = Self.engine(store, clock: clock)
        let collector = EventCollector(engine.events(app: nil))
        _ = try await engine.requestAuthorization(app: Self.other, options: [.alert])
        _ = try await engine.add(
            [
                NotificationRequest(
                    identifier: "before", content: NotificationContent(title: "t"),
                    trigger: .timeInterval(4, repeats: false)),
                NotificationRequest(
                    identifier: "after", content: NotificationContent(title: "t"),
                    trigger: .timeInterval(8, repeats: false)),
            ],
            app: Self.other)
        engine.startScheduler()
        clock.set(Samples.base.addingTimeInterval(5))
        _ = try await collector.wait { $0.contains { $0.kind == .quarantined } }
        clock.set(Samples.base.addingTimeInterval(8))
        let events = try await collector.wait { events in
            events.contains { $0.delivery?.notification.request.identifier == "after" }
        }
        let deliveries = events.compactMap { $0.delivery?.notification.request.identifier }
        #expect(deliveries == ["before", "after"])
        #expect(deliveries.filter { $0 == "before" }.count == 1)
        engine.stopScheduler()
        await engine.shutdown()
    }

    @Test("an app cannot be named by a look-alike: the engine refuses the Kelvin-sign name before any write")
    func engineRefusesLookAlike() async throws {
        let clock = ManualClock(now: Samples.base)
        let store = MemoryStore()
        let engine = Self.engine(store, clock: clock)
        _ = try await engine.requestAuthorization(app: "com.example.Kiosk", options: [.alert])
        await #expect(throws: ChimeError.self) {
            _ = try await engine.add(
                [
                    NotificationRequest(
                        identifier: "x", content: NotificationContent(title: "t"),
                        trigger: .timeInterval(5, repeats: false))
                ], app: Self.kelvinApp)
        }
        #expect(try store.pendingCount(app: nil) == 0)
        await engine.shutdown()
    }

    @Test("categories and actions that differ only in normalization are different identifiers")
    func literalCategories() throws {
        let categories = [
            NotificationCategory(identifier: "caf\u{E9}", actions: []),
            NotificationCategory(identifier: "cafe\u{301}", actions: []),
        ]
        try Validation.validate(categories)
        let category = NotificationCategory(
            identifier: "c",
            actions: [
                NotificationAction(identifier: "caf\u{E9}", title: "a"),
                NotificationAction(identifier: "cafe\u{301}", title: "b"),
            ])
        try Validation.validate([category])
        #expect(category.action("cafe\u{301}")?.title == "b")
        #expect(category.action("caf\u{E9}")?.title == "a")
    }
}

/// Collects a stream's events and lets a test wait for a condition on them (a signal, not a sleep).
final class EventCollector: @unchecked Sendable {
    // @unchecked: `task` is written once, in `init`.
    private struct State {
        var events: [EngineEvent] = []
        var waiters:
            [(condition: @Sendable ([EngineEvent]) -> Bool, continuation: CheckedContinuation<[EngineEvent], Never>)] =
                []
    }

    private let state = Mutex(State())
    private var task: Task<Void, Never>?

    init(_ stream: AsyncStream<EngineEvent>) {
        task = Task { [weak self] in
            for await event in stream { self?.append(event) }
        }
    }

    deinit { task?.cancel() }

    private func append(_ event: EngineEvent) {
        let ready: [(CheckedContinuation<[EngineEvent], Never>, [EngineEvent])] = state.withLock { state in
            state.events.append(event)
            var ready: [(CheckedContinuation<[EngineEvent], Never>, [EngineEvent])] = []
            let events = state.events
            state.waiters.removeAll { waiter in
                guard waiter.condition(events) else { return false }
                ready.append((waiter.continuation, events))
                return true
            }
            return ready
        }
        for (continuation, events) in ready { continuation.resume(returning: events) }
    }

    /// The events so far once `condition` holds for them.
    func wait(_ condition: @escaping @Sendable ([EngineEvent]) -> Bool) async throws -> [EngineEvent] {
        await withCheckedContinuation { continuation in
            let now: [EngineEvent]? = state.withLock { state in
                if condition(state.events) { return state.events }
                state.waiters.append((condition, continuation))
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }
}

extension StoreKind {
    /// `withStore` for an async body.
    func withAsyncStore(_ body: (NotificationStore) async throws -> Void) async throws {
        switch self {
        case .memory:
            try await body(MemoryStore())
        case .sqlite:
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = try SQLiteStore(path: directory.path("store.sqlite"))
            try await body(store)
            store.close()
        case .postgres:
            let store = try PostgresStore(url: try PostgresTestServer.shared().makeSchema())
            defer { store.close() }
            try await body(store)
        }
    }
}
