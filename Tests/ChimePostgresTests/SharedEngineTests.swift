import ChimeCore
import ChimePostgres
import Foundation
import PostgresTestServer
import Synchronization
import TestThreads
import Testing

/// Engines in one process, each with a store of its own on one database: what several `chime
/// serve` nodes do, without the HTTP around it.
@Suite("Engines sharing a PostgreSQL database", .testThreads)
struct SharedEngineTests {
    /// A clock that stands still at `base` (the tests fire with `fireDue(now:)`).
    struct StillClock: NotificationClock {
        var now: Date { PostgresStoreTests.base }
        func sleep(until deadline: Date) async throws { try await Sleep.for(.seconds(3600)) }
    }

    /// Engines on stores of their own on one fresh schema; shut down and closed at the end.
    static func withEngines(_ count: Int, _ body: ([NotificationEngine]) async throws -> Void) async throws {
        let url = try PostgresTestServer.shared().makeSchema()
        let stores = try (0..<count).map { _ in try PostgresStore(url: url) }
        let engines = stores.map {
            NotificationEngine(store: $0, clock: StillClock(), policy: FixedAuthorizationPolicy(.grant))
        }
        do {
            try await body(engines)
        } catch {
            for engine in engines { await engine.shutdown() }
            for store in stores { store.close() }
            throw error
        }
        for engine in engines { await engine.shutdown() }
        for store in stores { store.close() }
    }

    /// Collects an engine's delivery events as its hub publishes them.
    final class Deliveries: Sendable {
        private let seen = Mutex<[(sequence: Int64, identifier: String)]>([])
        init(_ engine: NotificationEngine) {
            _ = engine.subscribe(app: nil) { [self] event in
                if let delivery = event.delivery {
                    self.seen.withLock { $0.append((event.sequence, delivery.notification.request.identifier)) }
                }
            }
        }
        var all: [(sequence: Int64, identifier: String)] { seen.withLock { $0 } }

        /// Waits (at most 60 s) until `count` deliveries arrived.
        func wait(for count: Int) async throws {
            let deadline = Date().addingTimeInterval(60)
            while all.count < count && Date() < deadline { try await Sleep.for(.milliseconds(10)) }
        }
    }

    static func sound(_ setting: UNNotificationSetting) -> SettingsChange {
        var change = SettingsChange()
        change.sound = setting
        return change
    }

    static func requests(_ range: Range<Int>) -> [NotificationRequest] {
        range.map {
            NotificationRequest(
                identifier: "r\($0)", content: NotificationContent(title: "\($0)"),
                trigger: .timeInterval(1, repeats: false))
        }
    }

    @Test(
        "two engines firing at once deliver each due request exactly once, and both hubs see every delivery once, in order"
    )
    func exactlyOnce() async throws {
        try await Self.withEngines(2) { engines in
            let app = "com.example.shared"
            _ = try await engines[0].requestAuthorization(app: app, options: [.alert])
            let watchers = engines.map(Deliveries.init)
            // Adds through both.
            for start in stride(from: 0, to: 3000, by: 500) {
                try await engines[(start / 500) % 2].add(Self.requests(start..<(start + 500)), app: app)
            }
            let later = PostgresStoreTests.base.addingTimeInterval(10)
            async let first = engines[0].fireDue(now: later)
            async let second = engines[1].fireDue(now: later)
            let fired = try await first.map(\.request.identifier) + second.map(\.request.identifier)
            #expect(fired.count == 3000)
            #expect(Set(fired).count == 3000)
            for watcher in watchers {
                try await watcher.wait(for: 3000)
                let seen = watcher.all
                #expect(seen.count == 3000)
                #expect(Set(seen.map(\.identifier)) == Set(fired))
                #expect(seen.map(\.sequence) == seen.map(\.sequence).sorted())
                #expect(Set(seen.map(\.sequence)).count == 3000)
            }
            #expect(try await engines[1].pendingCount() == 0)
            #expect(try await engines[1].deliveredCount() == 3000)
        }
    }

    @Test("a repeating request fires once per occurrence whichever engine fires it")
    func repeatsOnce() async throws {
        try await Self.withEngines(3) { engines in
            let app = "com.example.repeat"
            _ = try await engines[0].requestAuthorization(app: app, options: [.alert])
            try await engines[0].add(
                [
                    NotificationRequest(
                        identifier: "tick", content: NotificationContent(title: "tick"),
                        trigger: .timeInterval(60, repeats: true))
                ], app: app)
            var deliveries = 0
            for minute in 1...5 {
                let now = PostgresStoreTests.base.addingTimeInterval(Double(minute) * 60 + 1)
                async let a = engines[0].fireDue(now: now)
                async let b = engines[1].fireDue(now: now)
                async let c = engines[2].fireDue(now: now)
                let fired = try await a.count + b.count + c.count
                #expect(fired == 1, "minute \(minute)")
                deliveries += fired
            }
            #expect(deliveries == 5)
            let pending = try #require(try await engines[2].pending(app: app).first)
            #expect(pending.nextFireDate == PostgresStoreTests.base.addingTimeInterval(360))
        }
    }

    @Test("an escalation step is alerted once whichever of three engines takes it; an answer on one ends it on all")
    func escalationStepOnce() async throws {
        try await Self.withEngines(3) { engines in
            let app = "com.example.escalate"
            let base = PostgresStoreTests.base
            _ = try await engines[0].requestAuthorization(app: app, options: [.alert])
            try await engines[0].add(
                (0..<20).map {
                    NotificationRequest(
                        identifier: "e\($0)", content: NotificationContent(title: "\($0)"),
                        escalation: NotificationEscalation(every: 60, for: 600))
                }, app: app)
            for minute in 1...3 {
                let now = base.addingTimeInterval(Double(minute) * 60 + 1)
                async let a = engines[0].fireDue(now: now)
                async let b = engines[1].fireDue(now: now)
                async let c = engines[2].fireDue(now: now)
                _ = try await (a, b, c)
                let alerts = try await engines[1].events(after: 0, app: app, limit: 10_000).filter {
                    $0.kind == .realerted
                }
                #expect(alerts.count == 20 * minute, "minute \(minute)")
                for index in 0..<20 {
                    #expect(
                        try await engines[index % 3].receipt(app: app, notification: "e\(index)")?.alerts == minute + 1)
                }
            }
            _ = try await engines[2].respond(
                app: app, notification: "e7", action: UNNotificationDefaultActionIdentifier, surface: "web")
            let now = base.addingTimeInterval(241)
            async let a = engines[0].fireDue(now: now)
            async let b = engines[1].fireDue(now: now)
            _ = try await (a, b)
            let receipt = try await engines[0].receipt(app: app, notification: "e7")
            #expect(receipt?.acknowledged == true && receipt?.alerts == 4 && receipt?.surface == "web")
            let alerts = try await engines[0].events(after: 0, app: app, limit: 10_000).filter { $0.kind == .realerted }
            #expect(alerts.count == 60 + 19)
        }
    }

    @Test("what one engine writes to an app the other reads at its next operation, and concurrent writes lose nothing")
    func appsAreShared() async throws {
        try await Self.withEngines(2) { engines in
            let app = "com.example.settings"
            _ = try await engines[0].requestAuthorization(app: app, options: [.alert, .sound, .badge])
            _ = try await engines[0].changeSettings(app: app, Self.sound(.disabled))
            #expect(try await engines[1].settings(app: app).soundSetting == .disabled)
            // One engine sets badges while the other switches sounds: both read-modify-write the
            // same record; compare-and-set with a retry keeps both.
            async let badges: Void = {
                for badge in 1...40 { try await engines[0].setBadge(badge, app: app) }
            }()
            async let sounds: Void = {
                for index in 1...40 {
                    _ = try await engines[1].changeSettings(app: app, Self.sound(index % 2 == 0 ? .enabled : .disabled))
                }
            }()
            _ = try await (badges, sounds)
            let record = try await engines[1].app(app)
            #expect(record.badge == 40)
            #expect(record.settings.soundSetting == .enabled)
        }
    }

    @Test("a time zone set through one engine reaches the other")
    func deviceState() async throws {
        try await Self.withEngines(2) { engines in
            let zone = try #require(TimeZone(identifier: "Pacific/Auckland"))
            try await engines[0].setTimeZone(zone)
            let deadline = Date().addingTimeInterval(60)
            while try await engines[1].timeZone() != zone && Date() < deadline {
                try await Sleep.for(.milliseconds(10))
            }
            #expect(try await engines[1].timeZone() == zone)
        }
    }
}
