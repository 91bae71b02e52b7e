import ChimeCore
import Foundation
import TestThreads
import Testing

/// The engine's rules, driven directly: `NotificationEngine` over a `MemoryStore` on a `ManualClock`.
@Suite("Notification engine rules", .testThreads)
struct EngineRulesTests {
    static let app = "com.example.engine"
    static let start = Date(timeIntervalSince1970: 1_780_000_000)

    struct Fixture {
        let clock = ManualClock(now: EngineRulesTests.start)
        let engine: NotificationEngine

        init(policy: AuthorizationDecision = .grant, configuration: NotificationEngine.Configuration = .init())
            async throws
        {
            engine = NotificationEngine(
                store: MemoryStore(), clock: clock, timeZone: TimeZone(identifier: "UTC")!,
                policy: FixedAuthorizationPolicy(policy), configuration: configuration)
            _ = try await engine.requestAuthorization(app: EngineRulesTests.app, options: [.alert, .sound, .badge])
        }

        func add(_ identifier: String, _ trigger: NotificationTrigger?, title: String? = nil) async throws {
            try await engine.add(
                [
                    NotificationRequest(
                        identifier: identifier, content: NotificationContent(title: title ?? identifier),
                        trigger: trigger)
                ], app: EngineRulesTests.app)
        }
    }

    // MARK: Calendar triggers in the past

    /// 09:00 on the day of `start` (20:26 UTC).
    static func todayAtNine() -> NotificationTrigger {
        .calendar(
            DateComponents(timeZone: TimeZone(identifier: "UTC"), year: 2026, month: 5, day: 28, hour: 9, minute: 0),
            repeats: false)
    }

    @Test(
        "by default a calendar trigger in the past is accepted, replaces the pending request of its name, and never fires"
    )
    func pastCalendarAccepted() async throws {
        let fixture = try await Fixture()
        try await fixture.add("bill", .timeInterval(60, repeats: false))
        try await fixture.add("bill", Self.todayAtNine())
        try await fixture.add("other", .timeInterval(60, repeats: false))
        #expect(try await fixture.engine.pending(app: Self.app).map(\.request.identifier) == ["other"])
        fixture.clock.advance(by: 120)
        _ = try await fixture.engine.fireDue(now: fixture.clock.now)
        #expect(try await fixture.engine.delivered(app: Self.app).map(\.request.identifier) == ["other"])
    }

    @Test(
        "Configuration.refusesPastCalendarTriggers refuses it with an error naming trigger.dateComponents; nothing is added"
    )
    func pastCalendarRefused() async throws {
        var configuration = NotificationEngine.Configuration()
        configuration.refusesPastCalendarTriggers = true
        let fixture = try await Fixture(configuration: configuration)
        try await fixture.add("bill", .timeInterval(60, repeats: false))
        let error = await #expect(throws: ChimeError.self) {
            try await fixture.engine.add(
                [
                    NotificationRequest(identifier: "fine", content: NotificationContent(title: "x"), trigger: nil),
                    NotificationRequest(
                        identifier: "bill", content: NotificationContent(title: "x"),
                        trigger: Self.todayAtNine()),
                ], app: Self.app)
        }
        #expect(error?.code == .invalidTrigger)
        #expect(error?.field == "trigger.dateComponents")
        #expect(try await fixture.engine.pending(app: Self.app).map(\.request.identifier) == ["bill"])
        #expect(try await fixture.engine.delivered(app: Self.app).isEmpty)
    }

    // MARK: Time-interval validation (every entry point but the Swift initialiser)

    @Test(
        "an app is named by a bundle identifier, embedded or on the service: anything else is refused before it is stored",
        arguments: ["", "com example", "com/example", "ümlaut.app", String(repeating: "a", count: 256)])
    func bundleIdentifiers(name: String) async throws {
        let fixture = try await Fixture()
        let error = await #expect(throws: ChimeError.self) {
            _ = try await fixture.engine.requestAuthorization(app: name, options: [.alert])
        }
        #expect(error?.code == .invalidIdentifier)
        #expect(error?.field == "bundleIdentifier")
        #expect(try await fixture.engine.apps().map(\.bundleIdentifier) == [Self.app])
    }

    @Test(
        "engine.add refuses bad time intervals with an error naming trigger.timeInterval",
        arguments: [
            (0.0, false, "must be greater than 0"), (-1, false, "must be greater than 0"),
            (-.infinity, false, "must be greater than 0"),
            (.nan, false, "must be greater than 0"), (0, true, "must be greater than 0"),
            (59.9, true, "at least 60 if repeating"),
            (1, true, "at least 60 if repeating"),
        ] as [(Double, Bool, String)])
    func badIntervals(interval: Double, repeats: Bool, message: String) async throws {
        let fixture = try await Fixture()
        let error = await #expect(throws: ChimeError.self) {
            try await fixture.add("bad", .timeInterval(interval, repeats: repeats))
        }
        #expect(error?.code == .invalidTrigger)
        #expect(error?.field == "trigger.timeInterval")
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
        #expect(try await fixture.engine.pendingCount(app: Self.app) == 0)
    }

    @Test(
        "engine.add accepts 60 s repeating and any positive one-off interval",
        arguments: [
            (60.0, true), (0.001, false), (86_400 * 365, true),
        ] as [(Double, Bool)])
    func goodIntervals(interval: Double, repeats: Bool) async throws {
        let fixture = try await Fixture()
        try await fixture.add("ok", .timeInterval(interval, repeats: repeats))
        #expect(try await fixture.engine.nextFireDate() == Self.start.addingTimeInterval(interval))
    }

    @Test(
        "JSON input with a bad time interval is refused before a trigger exists",
        arguments: [
            (#"{"type": "timeInterval", "timeInterval": 0}"#, "greater than 0"),
            (#"{"type": "timeInterval", "timeInterval": -3}"#, "greater than 0"),
            (#"{"type": "timeInterval", "timeInterval": 30, "repeats": true}"#, "at least 60"),
        ])
    func jsonIntervals(json: String, message: String) throws {
        let error = #expect(throws: ChimeError.self) { try NotificationTrigger(json: JSONValue.parse(json)) }
        #expect(error?.field == "trigger.timeInterval")
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
    }

    @Test("a batch with one bad request adds nothing")
    func badBatchAddsNothing() async throws {
        let fixture = try await Fixture()
        let good = NotificationRequest(
            identifier: "good", content: NotificationContent(title: "g"), trigger: .timeInterval(10, repeats: false))
        let bad = NotificationRequest(
            identifier: "bad", content: NotificationContent(title: "b"), trigger: .timeInterval(10, repeats: true))
        let error = await #expect(throws: ChimeError.self) { try await fixture.engine.add([good, bad], app: Self.app) }
        #expect(error?.field == "[1].trigger.timeInterval")
        #expect(try await fixture.engine.pendingCount(app: Self.app) == 0)
    }

    // MARK: Repeats and missed occurrences

    @Test("a repeating interval fires every N s when driven step by step")
    func repeatingSteps() async throws {
        let fixture = try await Fixture()
        try await fixture.add("tick", .timeInterval(60, repeats: true))
        var dates: [Date] = []
        for _ in 0..<3 {
            let next = try #require(try await fixture.engine.nextFireDate())
            fixture.clock.set(next)
            dates += try await fixture.engine.fireDue(now: next).map(\.date)
        }
        #expect(dates == [60.0, 120, 180].map { Self.start.addingTimeInterval($0) })
    }

    @Test("a repeating request's delivered event carries the date it stays pending for; a one-off's none")
    func deliveredNextDate() async throws {
        let fixture = try await Fixture()
        let events = fixture.engine.events(app: Self.app)
        try await fixture.add("tick", .timeInterval(60, repeats: true))
        try await fixture.add("once", .timeInterval(60, repeats: false))
        fixture.clock.set(Self.start.addingTimeInterval(60))
        #expect(try await fixture.engine.fireDue(now: fixture.clock.now).count == 2)
        var next: [String: Date?] = [:]
        var iterator = events.makeAsyncIterator()
        while next.count < 2, let event = await iterator.next() {
            if let delivery = event.delivery {
                next[delivery.notification.request.identifier] = delivery.nextTriggerDate
            }
        }
        #expect(next.keys.sorted() == ["once", "tick"])
        #expect((next["tick"] ?? nil) == Self.start.addingTimeInterval(120))
        #expect((next["once"] ?? nil) == nil)
        #expect(
            try await fixture.engine.pending(app: Self.app).map(\.nextFireDate) == [Self.start.addingTimeInterval(120)])
    }

    @Test("when time jumps far ahead, missed occurrences coalesce into one delivery dated when due")
    func coalesce() async throws {
        let fixture = try await Fixture()
        try await fixture.add("tick", .timeInterval(60, repeats: true))
        fixture.clock.set(Self.start.addingTimeInterval(3630))
        let delivered = try await fixture.engine.fireDue(now: fixture.clock.now)
        #expect(delivered.map(\.date) == [Self.start.addingTimeInterval(60)])
        #expect(try await fixture.engine.nextFireDate() == Self.start.addingTimeInterval(3660))
        #expect(try await fixture.engine.fireDue(now: fixture.clock.now).isEmpty, "nothing more is due")
        #expect(try await fixture.engine.delivered(app: Self.app).count == 1)
    }

    @Test("the scheduler fires on the clock and coalesces what fell due while time jumped", .timeLimit(.minutes(1)))
    func scheduler() async throws {
        let fixture = try await Fixture()
        let events = fixture.engine.events(app: Self.app)
        try await fixture.add("tick", .timeInterval(60, repeats: true))
        fixture.engine.startScheduler()
        defer { fixture.engine.stopScheduler() }
        while fixture.clock.sleeperCount == 0 { try await Sleep.for(.milliseconds(1)) }
        fixture.clock.set(Self.start.addingTimeInterval(60 * 100 + 1))
        var iterator = events.makeAsyncIterator()
        var delivered: [Date] = []
        while let event = await iterator.next() {
            if let date = event.delivery?.notification.date { delivered.append(date) }
            if !delivered.isEmpty { break }
        }
        #expect(delivered == [Self.start.addingTimeInterval(60)])
        #expect(try await fixture.engine.nextFireDate() == Self.start.addingTimeInterval(60 * 101))
        #expect(try await fixture.engine.delivered(app: Self.app).count == 1)
    }

    @Test(
        "after a quiet spell the scheduler wakes memoryTidyLead before the due date, then fires on the date, not earlier",
        .timeLimit(.minutes(1)))
    func tidyBeforeFiring() async throws {
        let fixture = try await Fixture()
        let lead = try #require(NotificationEngine.Configuration().memoryTidyLead)
        let due = Self.start.addingTimeInterval(10)
        try await fixture.add("later", .timeInterval(10, repeats: false))
        fixture.engine.startScheduler()
        defer { fixture.engine.stopScheduler() }
        while fixture.clock.sleeperDeadlines != [due.addingTimeInterval(-lead)] {
            try await Sleep.for(.milliseconds(1))
        }
        fixture.clock.set(due.addingTimeInterval(-lead / 2))
        // Woken to tidy, then asleep again until the due date itself (once per quiet spell).
        while fixture.clock.sleeperDeadlines != [due] { try await Sleep.for(.milliseconds(1)) }
        #expect(try await fixture.engine.delivered(app: Self.app).isEmpty)
        fixture.clock.set(due)
        while try await fixture.engine.delivered(app: Self.app).isEmpty { try await Sleep.for(.milliseconds(1)) }
        #expect(try await fixture.engine.delivered(app: Self.app).map(\.date) == [due])
    }

    @Test("a due date within a second of now is slept for directly, with no tidy wake", .timeLimit(.minutes(1)))
    func noTidyWhenSoon() async throws {
        let fixture = try await Fixture()
        let due = Self.start.addingTimeInterval(0.5)
        try await fixture.add("soon", .timeInterval(0.5, repeats: false))
        fixture.engine.startScheduler()
        defer { fixture.engine.stopScheduler() }
        while fixture.clock.sleeperCount == 0 { try await Sleep.for(.milliseconds(1)) }
        #expect(fixture.clock.sleeperDeadlines == [due])
    }

    // MARK: Many pending requests

    @Test(
        "100,000 pending requests (standing in for a million, which a debug build makes slow): next date and firing the soonest",
        .timeLimit(.minutes(5)))
    func manyPending() async throws {
        let fixture = try await Fixture()
        let count = 100_000
        // Added latest first, so the soonest are not simply the first added.
        let requests = (0..<count).reversed().map { i in
            NotificationRequest(
                identifier: "r\(i)", content: NotificationContent(title: "#\(i)"),
                trigger: .timeInterval(Double(60 + i), repeats: false))
        }
        try await fixture.engine.add(requests, app: Self.app)
        #expect(try await fixture.engine.pendingCount(app: Self.app) == count)
        #expect(try await fixture.engine.nextFireDate() == Self.start.addingTimeInterval(60))
        fixture.clock.set(Self.start.addingTimeInterval(62))
        let fired = try await fixture.engine.fireDue(now: fixture.clock.now)
        #expect(fired.map(\.request.identifier) == ["r0", "r1", "r2"])
        #expect(try await fixture.engine.pendingCount(app: Self.app) == count - 3)
        #expect(try await fixture.engine.nextFireDate() == Self.start.addingTimeInterval(63))
    }

    @Test("with a tiny in-memory window, every request still fires, in order, as the window refills")
    func windowRefills() async throws {
        var configuration = NotificationEngine.Configuration()
        configuration.windowCapacity = 8
        configuration.fireBatch = 5
        let fixture = try await Fixture(configuration: configuration)
        var generator = SeededGenerator(seed: 42)
        let offsets = (1...200).map { Double($0) * 7 }.shuffled(using: &generator)
        for (i, offset) in offsets.enumerated() {
            try await fixture.add("r\(i)", .timeInterval(offset, repeats: false))
        }
        var fired: [Date] = []
        while let next = try await fixture.engine.nextFireDate() {
            fixture.clock.set(next)
            fired += try await fixture.engine.fireDue(now: next).map(\.date)
        }
        #expect(fired.count == 200)
        #expect(fired == fired.sorted())
        #expect(try await fixture.engine.pendingCount(app: Self.app) == 0)

        // All due at once: delivered in due order across several fire batches.
        for (i, offset) in offsets.enumerated() {
            try await fixture.add("s\(i)", .timeInterval(offset, repeats: false))
        }
        fixture.clock.set(fixture.clock.now.addingTimeInterval(10_000))
        let all = try await fixture.engine.fireDue(now: fixture.clock.now).map(\.date)
        #expect(all.count == 200 && all == all.sorted())
    }

    // MARK: Authorization, responses, outbox, badge

    @Test("a denied app cannot add")
    func denied() async throws {
        let fixture = try await Fixture(policy: .deny)
        let error = await #expect(throws: UNError.self) { try await fixture.add("a", nil) }
        #expect(error?.code == .notificationsNotAllowed)
        #expect(try await fixture.engine.settings(app: Self.app).authorizationStatus == .denied)
    }

    @Test("a response stays in the outbox until acknowledged")
    func outboxAcknowledge() async throws {
        let fixture = try await Fixture()
        try await fixture.add("n", nil)
        let response = try #require(
            try await fixture.engine.respond(
                app: Self.app, notification: "n", action: UNNotificationDefaultActionIdentifier))
        #expect(try await fixture.engine.outbox(app: Self.app).map(\.id) == [response.id])
        #expect(try await fixture.engine.outbox(app: Self.app).map(\.id) == [response.id], "reading does not remove")
        #expect(try await fixture.engine.acknowledge(response: response.id, app: Self.app))
        #expect(try await fixture.engine.outbox(app: Self.app).isEmpty)
        #expect(try await fixture.engine.acknowledge(response: response.id, app: Self.app) == false)
    }

    @Test("responding to a notification that is not delivered names it")
    func respondUnknown() async throws {
        let fixture = try await Fixture()
        try await fixture.add("there", nil)
        let error = await #expect(throws: ChimeError.self) {
            try await fixture.engine.respond(
                app: Self.app, notification: "elsewhere", action: UNNotificationDefaultActionIdentifier)
        }
        #expect(error?.code == .notFound)
        #expect(error?.message.contains("'elsewhere'") == true)
        #expect(error?.message.contains("'there'") == true, "the message lists what is delivered")
    }

    @Test("the badge cannot be negative")
    func negativeBadge() async throws {
        let fixture = try await Fixture()
        let error = await #expect(throws: UNError.self) { try await fixture.engine.setBadge(-1, app: Self.app) }
        #expect(error?.code == .badgeInputInvalid)
        var content = NotificationContent(title: "x")
        content.badge = -3
        let contentError = await #expect(throws: ChimeError.self) {
            try await fixture.engine.add([NotificationRequest(identifier: "x", content: content)], app: Self.app)
        }
        #expect(contentError?.field == "content.badge")
    }
}

/// A small deterministic generator (SplitMix64) so shuffled inputs are the same on every run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
