import ChimeCore
import ChimeSQLite
import ChimeTesting
import Foundation
import StoreTestSupport
import Synchronization
import TestThreads
import Testing

/// A large `engine.add` is prepared slice by slice while the writer writes: on a real SQLite file
/// (and the rollbacks on the simulator's memory store too), it must behave exactly as one add in
/// one transaction — in order, one announcement, and nothing
/// added when any request fails, whichever slice it is in.
@Suite("A large add, streamed to the writer", .testThreads)
struct StreamedAddTests {
    static let app = "com.example.streamed"
    static let start = Date(timeIntervalSince1970: 1_780_000_000)
    /// More than two slices, and not a multiple of one.
    static let count = 5_000

    /// The store under the engine: a real SQLite file, or the simulator's memory store.
    enum StoreKind: String, CaseIterable, Sendable {
        case sqlite, memory
    }

    struct Fixture {
        let directory: TemporaryDirectory
        let clock = ManualClock(now: StreamedAddTests.start)
        let engine: NotificationEngine

        init(authorized: Bool = true, store kind: StoreKind = .sqlite, refusesPastCalendarTriggers: Bool = false)
            async throws
        {
            directory = try TemporaryDirectory()
            let store: any NotificationStore =
                switch kind {
                case .sqlite: try SQLiteStore(path: directory.path("store.sqlite"))
                case .memory: MemoryStore()
                }
            var configuration = NotificationEngine.Configuration()
            configuration.refusesPastCalendarTriggers = refusesPastCalendarTriggers
            engine = NotificationEngine(
                store: store, clock: clock,
                timeZone: TimeZone(identifier: "UTC")!,
                policy: FixedAuthorizationPolicy(authorized ? .grant : .deny), configuration: configuration)
            _ = try await engine.requestAuthorization(app: StreamedAddTests.app, options: [.alert, .sound, .badge])
        }

        func close() async {
            await engine.shutdown()
            directory.remove()
        }
    }

    /// Requests 0..<count; every 7th has no trigger (delivered at once), every 5th repeats.
    static func requests(count: Int = count) -> [NotificationRequest] {
        (0..<count).map { index in
            let trigger: NotificationTrigger? =
                index % 7 == 3 ? nil : .timeInterval(Double(60 + index), repeats: index % 5 == 0)
            return NotificationRequest(
                identifier: "r\(index)", content: NotificationContent(title: "Request \(index)"), trigger: trigger)
        }
    }

    @Test(
        "every request is added, in call order, with its fire date; those without a trigger are delivered; one announcement"
    )
    func addsAll() async throws {
        let fixture = try await Fixture()
        let events = fixture.engine.events(app: Self.app)
        let requests = Self.requests()
        let firsts = try await fixture.engine.add(requests, app: Self.app)
        #expect(
            firsts
                == requests.map {
                    $0.trigger == nil
                        ? nil : Self.start.addingTimeInterval(60 + Double(Int($0.identifier.dropFirst())!))
                })
        let scheduled = requests.filter { $0.trigger != nil }
        #expect(
            try await fixture.engine.pending(app: Self.app).map(\.request.identifier) == scheduled.map(\.identifier))
        let immediate = Set(requests.filter { $0.trigger == nil }.map(\.identifier))
        #expect(Set(try await fixture.engine.delivered(app: Self.app).map(\.request.identifier)) == immediate)
        // What the add announced, up to a later marker operation's event.
        try await fixture.engine.add(
            [
                NotificationRequest(
                    identifier: "marker", content: NotificationContent(title: "m"),
                    trigger: .timeInterval(10, repeats: false))
            ], app: Self.app)
        var announcements: [[String]] = []
        var deliveries = 0
        for await event in events {
            if case .scheduled(let identifiers, let requests) = event.payload {
                if identifiers == ["marker"] { break }
                announcements.append(identifiers)
                #expect(requests.isEmpty, "a streamed add carries none of its requests")
            }
            if case .delivered = event.payload { deliveries += 1 }
        }
        #expect(announcements == [[]], "one announcement for the whole add, without 4,000 identifiers")
        #expect(deliveries == immediate.count)
        await fixture.close()
    }

    @Test(
        "by default a request with no next date in any slice is accepted and never fires; the rest are added",
        arguments: StoreKind.allCases, [0, 1_500, 4_999])
    func noNextDateAccepted(store: StoreKind, at index: Int) async throws {
        let fixture = try await Fixture(store: store)
        var requests = Self.requests()
        let scheduled = requests.filter { $0.trigger != nil }.count
        requests[index].trigger = .calendar(DateComponents(year: 2001, month: 1, day: 1), repeats: false)
        try await fixture.engine.add(requests, app: Self.app)
        #expect(try await fixture.engine.pendingCount(app: Self.app) == scheduled - 1)
        #expect(
            try await fixture.engine.pending(app: Self.app).contains { $0.request.identifier == "r\(index)" } == false)
        await fixture.close()
    }

    @Test(
        "with refusesPastCalendarTriggers a request with no next date in any slice fails the whole add: nothing pending, nothing delivered",
        arguments: StoreKind.allCases, [0, 1_500, 4_999])
    func noNextDate(store: StoreKind, at index: Int) async throws {
        let fixture = try await Fixture(store: store, refusesPastCalendarTriggers: true)
        var requests = Self.requests()
        requests[index].trigger = .calendar(DateComponents(year: 2001, month: 1, day: 1), repeats: false)
        let error = await #expect(throws: ChimeError.self) { try await fixture.engine.add(requests, app: Self.app) }
        #expect(error?.code == .invalidTrigger)
        #expect(error?.field == "trigger.dateComponents")
        #expect(try await fixture.engine.pendingCount(app: Self.app) == 0)
        #expect(try await fixture.engine.delivered(app: Self.app).isEmpty)
        // The writer goes on: the same add without the bad request succeeds.
        requests.remove(at: index)
        try await fixture.engine.add(requests, app: Self.app)
        #expect(try await fixture.engine.pendingCount(app: Self.app) == requests.filter { $0.trigger != nil }.count)
        await fixture.close()
    }

    @Test(
        "an invalid request is refused with its index, and the slices written before it are rolled back",
        arguments: StoreKind.allCases, [0, 3_210, 4_999])
    func invalid(store: StoreKind, at index: Int) async throws {
        let fixture = try await Fixture(store: store)
        var requests = Self.requests()
        requests[index].identifier = ""
        let error = await #expect(throws: ChimeError.self) { try await fixture.engine.add(requests, app: Self.app) }
        #expect(error?.field == "[\(index)].identifier")
        #expect(try await fixture.engine.pendingCount(app: Self.app) == 0)
        #expect(try await fixture.engine.delivered(app: Self.app).isEmpty)
        await fixture.close()
    }

    @Test("an app without permission gets notificationsNotAllowed and nothing is added")
    func notAllowed() async throws {
        let fixture = try await Fixture(authorized: false)
        let error = await #expect(throws: UNError.self) { try await fixture.engine.add(Self.requests(), app: Self.app) }
        #expect(error?.code == .notificationsNotAllowed)
        #expect(try await fixture.engine.pendingCount(app: Self.app) == 0)
        await fixture.close()
    }

    @Test("a read during a large add sees none of it, and the add then commits all of it")
    func callOrder() async throws {
        let fixture = try await Fixture()
        let engine = fixture.engine
        let requests = Self.requests(count: 20_000)
        // The writer stops after the add's first slice, inside its open transaction, until the read
        // below is done: the read comes while the add is under way every run, not by timing.
        let gate = WriterGate()
        engine.onStreamedSliceWritten { _ in gate.holdFirst() }
        let large = Task { try await engine.add(requests, app: Self.app).count }
        try await waitWhile { !gate.isHolding }
        #expect(gate.isHolding, "the add wrote no slice within 60 s")
        let counted = try await engine.pendingCount(app: Self.app)
        gate.release()
        #expect(counted == 0, "a read beside the writer sees the last commit, never a part of the add: \(counted)")
        #expect(try await large.value == requests.count)
        #expect(try await engine.pendingCount(app: Self.app) == requests.filter { $0.trigger != nil }.count)
        await fixture.close()
    }

    @Test("the store file holds the whole add after a reopen")
    func durable() async throws {
        let fixture = try await Fixture()
        try await fixture.engine.add(Self.requests(), app: Self.app)
        await fixture.engine.shutdown()
        let reopened = try SQLiteStore(path: fixture.directory.path("store.sqlite"))
        #expect(try reopened.pendingCount(app: Self.app) == Self.requests().filter { $0.trigger != nil }.count)
        reopened.close()
        fixture.directory.remove()
    }
}

/// Holds the writer at the first slice of a streamed add (``NotificationEngine/onStreamedSliceWritten(_:)``)
/// until the test releases it, or 60 s have passed.
private final class WriterGate: Sendable {
    private let state = Mutex((first: true, holding: false))
    private let released = DispatchSemaphore(value: 0)

    /// On the writer: the first call waits for ``release()``; later ones pass.
    func holdFirst() {
        let first = state.withLock { state in
            defer { state.first = false }
            if state.first { state.holding = true }
            return state.first
        }
        guard first else { return }
        _ = released.wait(timeout: .now() + 60)
    }

    var isHolding: Bool { state.withLock { $0.holding } }

    func release() { released.signal() }
}
