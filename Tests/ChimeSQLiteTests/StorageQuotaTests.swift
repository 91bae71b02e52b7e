import ChimeCore
import ChimeTesting
import Foundation
import StoreTestSupport
import TestThreads
import Testing

@testable import ChimeSQLite

/// One app cannot fill the store for every other: its pending requests and stored bytes are
/// bounded (an add past a bound is refused whole, naming the app), its delivered list keeps the
/// newest, and other apps carry on. And the device-state operations set damaged rows aside as the
/// scheduler does.
@Suite("Per-app storage quotas, and damaged rows in device-state changes", .testThreads, .timeLimit(.minutes(2)))
struct StorageQuotaTests {
    static let app = "com.example.filler"
    static let other = "com.example.other"

    static func engine(
        _ store: any NotificationStore, quota: StorageQuota, clock: ManualClock = ManualClock(now: Samples.base)
    ) -> NotificationEngine {
        var configuration = NotificationEngine.Configuration()
        configuration.quota = quota
        return NotificationEngine(
            store: store, clock: clock, timeZone: TimeZone(identifier: "UTC")!,
            policy: FixedAuthorizationPolicy(.grant), configuration: configuration)
    }

    static func requests(_ identifiers: some Sequence<String>, body: String = "b", after seconds: TimeInterval? = 3600)
        -> [NotificationRequest]
    {
        identifiers.map {
            NotificationRequest(
                identifier: $0, content: NotificationContent(title: "t", body: body),
                trigger: seconds.map { .timeInterval($0, repeats: false) })
        }
    }

    // MARK: The stores

    @Test(
        "a store counts an app's pending and delivered rows and their bytes, and lists its oldest deliveries",
        arguments: StoreKind.allCases)
    func storeUsage(kind: StoreKind) throws {
        try kind.withStore { store in
            #expect(try store.usage(app: Self.app) == StorageUsage())
            try store.transaction {
                for index in 0..<4 {
                    try store.putPending(pending("p\(index)", fire: Double(index + 1)), app: Self.app)
                }
                try store.putPending(pending("q", fire: 1), app: Self.other)
                for index in 0..<3 {
                    let notification = DeliveredNotification(
                        request: Samples.request("d\(index)"), date: Samples.base.addingTimeInterval(Double(10 - index))
                    )
                    _ = try store.putDelivered(notification, app: Self.app)
                }
            }
            let usage = try store.usage(app: Self.app)
            #expect(usage.pending == 4)
            #expect(usage.delivered == 3)
            // Each record's bytes as stored: at least their encoding's, and the same order of size.
            let encoded = (0..<4).reduce(0) { $0 + RecordCodec.encode(Samples.request("p\($1)")).count }
            #expect(usage.bytes > encoded)
            #expect(usage.bytes < encoded * 4)
            #expect(try store.usage(app: Self.other).pending == 1)
            #expect(try store.usage(app: Self.other).delivered == 0)
            // Oldest first, by date: d2 was delivered first.
            #expect(try store.oldestDelivered(app: Self.app, limit: 2) == ["d2", "d1"])
            #expect(try store.oldestDelivered(app: Self.app, limit: 10) == ["d2", "d1", "d0"])
            #expect(try store.oldestDelivered(app: Self.other, limit: 10).isEmpty)
        }
    }

    // MARK: Pending and bytes

    @Test(
        "past its pending bound an app's add is refused whole, naming the app; replacing still works; other apps carry on",
        arguments: StoreKind.allCases)
    func pendingBound(kind: StoreKind) async throws {
        try await kind.withAsyncStore { store in
            let engine = Self.engine(store, quota: StorageQuota(pending: 5))
            for app in [Self.app, Self.other] { _ = try await engine.requestAuthorization(app: app, options: [.alert]) }
            _ = try await engine.add(Self.requests((0..<4).map { "r\($0)" }), app: Self.app)
            // Two more would make six: neither is stored.
            do {
                _ = try await engine.add(Self.requests(["r4", "r5"]), app: Self.app)
                Issue.record("an add past the bound was accepted")
            } catch let error as ChimeError {
                #expect(error.code == .quotaExceeded)
                #expect(error.field == "app")
                #expect(error.message.contains(Self.app))
                #expect(error.message.contains("at most 5"))
            }
            #expect(try await engine.pendingCount(app: Self.app) == 4)
            _ = try await engine.add(Self.requests(["r4"]), app: Self.app)
            await #expect(throws: ChimeError.self) { _ = try await engine.add(Self.requests(["r5"]), app: Self.app) }
            // At the bound, a request replaced by its identifier takes no more room.
            _ = try await engine.add(Self.requests(["r0", "r1"], body: "changed"), app: Self.app)
            #expect(
                try await engine.pending(app: Self.app).first { $0.request.identifier == "r0" }?.request.content.body
                    == "changed")
            // Another app is not affected; removing one of the first app's makes room for one.
            _ = try await engine.add(Self.requests((0..<5).map { "o\($0)" }), app: Self.other)
            _ = try await engine.removePending(app: Self.app, identifiers: ["r3"])
            _ = try await engine.add(Self.requests(["r5"]), app: Self.app)
            #expect(try await engine.pendingCount(app: Self.app) == 5)
            #expect(try await engine.pendingCount(app: Self.other) == 5)
            // Fired requests leave the pending list: their room is free again.
            _ = try await engine.fireDue(now: Samples.base.addingTimeInterval(7200))
            _ = try await engine.add(Self.requests((10..<15).map { "r\($0)" }), app: Self.app)
            #expect(try await engine.pendingCount(app: Self.app) == 5)
            await engine.shutdown()
        }
    }

    @Test(
        "past its byte bound an app's add is refused, and what it keeps stays within the bound",
        arguments: StoreKind.allCases)
    func byteBound(kind: StoreKind) async throws {
        try await kind.withAsyncStore { store in
            let bound = 8_000
            let engine = Self.engine(store, quota: StorageQuota(bytes: bound))
            _ = try await engine.requestAuthorization(app: Self.app, options: [.alert])
            let body = String(repeating: "x", count: 500)
            var added = 0
            var refusal: ChimeError?
            for index in 0..<100 where refusal == nil {
                do {
                    _ = try await engine.add(Self.requests(["r\(index)"], body: body), app: Self.app)
                    added += 1
                } catch let error as ChimeError {
                    refusal = error
                }
            }
            #expect(refusal?.code == .quotaExceeded)
            #expect(refusal?.message.contains("--app-max-bytes") == true)
            #expect(added >= 5)
            #expect(try store.usage(app: Self.app).bytes <= bound)
            #expect(try await engine.pendingCount(app: Self.app) == added)
            await engine.shutdown()
        }
    }

    // MARK: Delivered

    @Test(
        "past its delivered bound an app's oldest delivered notifications are removed, with an event; deliveries go on",
        arguments: StoreKind.allCases)
    func deliveredBound(kind: StoreKind) async throws {
        try await kind.withAsyncStore { store in
            let clock = ManualClock(now: Samples.base)
            let engine = Self.engine(store, quota: StorageQuota(delivered: 10), clock: clock)
            let collector = EventCollector(engine.events(app: Self.app))
            for app in [Self.app, Self.other] { _ = try await engine.requestAuthorization(app: app, options: [.alert]) }
            _ = try await engine.add(Self.requests(["other"], after: nil), app: Self.other)
            for index in 0..<25 {
                clock.advance(by: 1)
                _ = try await engine.add(Self.requests(["d\(index)"], after: nil), app: Self.app)
            }
            let kept = try await engine.delivered(app: Self.app).map(\.request.identifier)
            #expect(kept.count <= 10)
            #expect(kept.count >= 9)
            // The newest are kept, newest first.
            #expect(kept == (25 - kept.count..<25).reversed().map { "d\($0)" })
            let events = try await collector.wait { events in events.filter { $0.delivery != nil }.count == 25 }
            let removed = events.flatMap { event -> [String] in
                if case .removed(let identifiers, .delivered, _) = event.payload { return identifiers }
                return []
            }
            #expect(Set(removed) == Set((0..<(25 - kept.count)).map { "d\($0)" }))
            #expect(try await engine.delivered(app: Self.other).count == 1)
            await engine.shutdown()
        }
    }

    // MARK: Damaged rows in device-state changes

    /// A SQLite store with a good location request and a floating calendar request for `app`, and
    /// damaged copies of both (their records overwritten as a disk fault would).
    static func damagedDeviceRows(_ path: String) async throws {
        let engine = Self.engine(try SQLiteStore(path: path), quota: .unlimited)
        _ = try await engine.requestAuthorization(app: Self.app, options: [.alert])
        let region = CircularRegion(
            identifier: "office", center: Coordinate(latitude: 48.8566, longitude: 2.3522),
            radius: 150, notifyOnEntry: true, notifyOnExit: false)
        let content = NotificationContent(title: "t")
        _ = try await engine.add(
            ["good-place", "bad-place"].map {
                NotificationRequest(identifier: $0, content: content, trigger: .location(region, repeats: false))
            }
                + ["good-time", "bad-time"].map {
                    NotificationRequest(
                        identifier: $0, content: content,
                        trigger: .calendar(DateComponents(hour: 9, minute: 0), repeats: true))
                }, app: Self.app)
        await engine.shutdown()
        let raw = try SQLiteConnection(path: path)
        try raw.execute("UPDATE pending SET request = x'00ff00ff' WHERE identifier IN ('bad-place', 'bad-time')")
        raw.close()
    }

    @Test("a damaged location row is set aside when the device moves, and the good one fires (SQLite)")
    func damagedLocationRow() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        try await Self.damagedDeviceRows(path)
        let engine = Self.engine(try SQLiteStore(path: path), quota: .unlimited)
        let delivered = try await engine.updateLocation(Coordinate(latitude: 48.8566, longitude: 2.3522))
        #expect(delivered.map(\.request.identifier) == ["good-place"])
        #expect(try await engine.quarantined().map(\.identifier) == ["bad-place"])
        #expect(try await engine.location() == Coordinate(latitude: 48.8566, longitude: 2.3522))
        await engine.shutdown()
    }

    @Test(
        "a damaged floating row is set aside when the time zone changes, and the good one moves with the zone (SQLite)")
    func damagedFloatingRow() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        try await Self.damagedDeviceRows(path)
        let engine = Self.engine(try SQLiteStore(path: path), quota: .unlimited)
        let tokyo = TimeZone(identifier: "Asia/Tokyo")!
        try await engine.setTimeZone(tokyo)
        #expect(try await engine.timeZone() == tokyo)
        #expect(try await engine.quarantined().map(\.identifier) == ["bad-time"])
        // (Listing the app's requests would meet the damaged location row, which only the
        // scheduler and a move of the device set aside: read the one row.)
        let store = try SQLiteStore(path: path)
        let next = try store.pending(app: Self.app, identifier: "good-time")?.nextFireDate
        store.close()
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = tokyo
        #expect(next.map { calendar.component(.hour, from: $0) } == 9)
        await engine.shutdown()
        // The change is durable: a new engine on the store has the zone.
        let reopened = Self.engine(try SQLiteStore(path: path), quota: .unlimited)
        #expect(try await reopened.timeZone() == tokyo)
        await reopened.shutdown()
    }
}
