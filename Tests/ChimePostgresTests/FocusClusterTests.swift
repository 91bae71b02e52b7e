import ChimeCore
import ChimePostgres
import Foundation
import PostgresTestServer
import Synchronization
import TestThreads
import Testing

/// Focus modes on engines sharing one PostgreSQL database (several `chime serve` nodes): a mode
/// set on one node holds notifications fired on every node, and the spell's summary is delivered
/// once, whichever nodes fire at its end.
@Suite("Focus on a PostgreSQL cluster", .testThreads)
struct FocusClusterTests {
    /// One clock for all the engines, moved by the test (the tests fire with `fireDue(now:)`).
    final class SharedClock: NotificationClock, Sendable {
        private let date: Mutex<Date>
        init(_ date: Date) { self.date = Mutex(date) }
        var now: Date { date.withLock { $0 } }
        func set(_ to: Date) { date.withLock { $0 = to } }
        func sleep(until deadline: Date) async throws { try await Sleep.for(.seconds(3600)) }
    }

    static func date(_ text: String) throws -> Date { try Date(text, strategy: .iso8601) }

    /// Fires on every node at once at `date`: how many requests they fired together.
    @discardableResult
    static func fireAll(_ engines: [NotificationEngine], at date: Date) async throws -> Int {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for engine in engines { group.addTask { try await engine.fireDue(now: date).count } }
            return try await group.reduce(0, +)
        }
    }

    /// The logged deliveries of the notification `identifier`, as `engine` reads the event log.
    static func deliveries(of identifier: String, app: String, on engine: NotificationEngine) async throws -> [Delivery]
    {
        try await engine.events(after: 0, app: app, limit: 1000).compactMap(\.delivery).filter {
            $0.notification.request.identifier == identifier
        }
    }

    @Test(
        "12 notifications fired on three nodes during Sleep are held; three nodes firing at 07:00 deliver one summary; another node tells of the mode"
    )
    func summaryOnce() async throws {
        let url = try PostgresTestServer.shared().makeSchema()
        let stores = try (0..<3).map { _ in try PostgresStore(url: url) }
        let clock = SharedClock(try Self.date("2027-06-07T21:00:00Z"))
        let engines = stores.map {
            NotificationEngine(store: $0, clock: clock, policy: FixedAuthorizationPolicy(.grant))
        }
        defer { for store in stores { store.close() } }
        do {
            let app = "com.example.focus"
            _ = try await engines[0].requestAuthorization(app: app, options: [.alert, .sound])
            // What node two's owner stream hears of the modes (`focus` events; a mode set on node one).
            let heard = Mutex<[[String]]>([])
            let listening = engines[1].subscribe(app: nil) { event in
                if case .focus(let modes) = event.payload {
                    heard.withLock { $0.append(modes.map { "\($0.mode.name) \($0.isActive ? "on" : "off")" }) }
                }
            }
            defer { engines[1].unsubscribe(listening) }
            func hears(_ modes: [String]) async throws -> Bool {
                let deadline = Date().addingTimeInterval(60)
                while !heard.withLock({ $0.contains(modes) }), Date() < deadline {
                    try await Sleep.for(.milliseconds(10))
                }
                return heard.withLock { $0.contains(modes) }
            }
            try await engines[0].putFocusMode(
                FocusMode(
                    name: "Sleep",
                    schedule: FocusSchedule(
                        from: "22:00", to: "07:00", days: FocusDay.everyDay, timeZone: "UTC")))
            // The other nodes learn of it through the feed (a device change): wait for it, bounded.
            let deadline = Date().addingTimeInterval(60)
            for engine in engines[1...] {
                while try await engine.focusModes().isEmpty, Date() < deadline {
                    try await Sleep.for(.milliseconds(10))
                }
                #expect(try await engine.focusModes().map(\.mode.name) == ["Sleep"])
            }
            // Node two reloaded the modes: its next look tells its subscribers.
            try await engines[1].fireDue(now: clock.now)
            #expect(try await hears(["Sleep off"]))
            clock.set(try Self.date("2027-06-07T22:30:00Z"))
            for index in 0..<12 {
                var content = NotificationContent(title: "n\(index)")
                content.sound = NotificationSound(name: nil)
                _ = try await engines[index % 3].add(
                    [
                        NotificationRequest(
                            identifier: "n\(index)", content: content,
                            trigger: .timeInterval(Double(60 * (index + 1)), repeats: false))
                    ],
                    app: app)
            }
            let night = try Self.date("2027-06-07T23:00:00Z")
            clock.set(night)
            #expect(try await Self.fireAll(engines, at: night) == 12)
            #expect(try await hears(["Sleep on"]), "the schedule's start, told on node two")
            let held = try await engines[2].events(after: 0, app: app, limit: 1000).compactMap(\.delivery)
            #expect(held.count == 12)
            #expect(
                held.allSatisfy {
                    $0.focus == FocusDecision(focus: "Sleep", quiet: true, reason: .focus) && $0.presentation == [.list]
                })
            #expect(try await engines[1].focusModes().first?.held == [app: 12])

            let morning = try Self.date("2027-06-08T07:00:01Z")
            clock.set(morning)
            try await Self.fireAll(engines, at: morning)
            let summaries = try await Self.deliveries(of: "chime.focus.Sleep", app: app, on: engines[0])
            #expect(summaries.map(\.notification.request.content.body) == ["12 notifications during Sleep"])
            #expect(summaries.first?.presentation.contains(.banner) == true && summaries.first?.focus == nil)
            // Later firings on any node add none.
            for engine in engines { try await engine.fireDue(now: morning.addingTimeInterval(60)) }
            #expect(try await Self.deliveries(of: "chime.focus.Sleep", app: app, on: engines[1]).count == 1)
            #expect(try await engines[2].focusModes().first?.held.isEmpty == true)
        } catch {
            for engine in engines { await engine.shutdown() }
            throw error
        }
        for engine in engines { await engine.shutdown() }
    }
}
