import ChimeCore
import Foundation
import Synchronization
import TestThreads
import Testing

/// The engine as the hub: what a delivery event carries, and surfaces attached off the writer.
@Suite("The engine as the hub", .testThreads)
struct NotificationHubTests {
    static let app = "com.example.hub"

    /// An engine on a memory store with `app` authorized for alerts, sounds and badges.
    static func engine(apps: [String] = [app]) async throws -> NotificationEngine {
        let engine = NotificationEngine(store: MemoryStore(), policy: FixedAuthorizationPolicy(.grant))
        for app in apps { _ = try await engine.requestAuthorization(app: app, options: [.alert, .sound, .badge]) }
        return engine
    }

    static func now(_ identifier: String, category: String = "", sound: Bool = false, badge: Int? = nil)
        -> NotificationRequest
    {
        var content = NotificationContent(title: identifier)
        content.categoryIdentifier = category
        content.sound = sound ? .default : nil
        content.badge = badge
        return NotificationRequest(identifier: identifier, content: content, trigger: nil)
    }

    static func change(
        _ keyPath: WritableKeyPath<SettingsChange, UNNotificationSetting?>, _ value: UNNotificationSetting
    ) -> SettingsChange {
        var change = SettingsChange()
        change[keyPath: keyPath] = value
        return change
    }

    static let alarm = NotificationCategory(
        identifier: "alarm", actions: [NotificationAction(identifier: "snooze", title: "Snooze")],
        options: [.customDismissAction])

    @Test(
        "a delivery event carries the notification, its category, the settings and the presentation decided from them")
    func deliveryPayload() async throws {
        let engine = try await Self.engine()
        try await engine.setCategories([Self.alarm], app: Self.app)
        let events = Recorder<EngineEvent>()
        let token = engine.subscribe(app: Self.app) { events.append($0) }
        defer { engine.unsubscribe(token) }
        try await engine.add([Self.now("a", category: "alarm", sound: true, badge: 3)], app: Self.app)
        let delivery = try #require(events.values.compactMap(\.delivery).first)
        #expect(delivery.notification.request.identifier == "a")
        #expect(delivery.category == Self.alarm)
        #expect(delivery.settings == (try await engine.settings(app: Self.app)))
        #expect(delivery.presentation == [.list, .banner, .sound, .badge])
        #expect(delivery.badge == 3)

        // The category travels as it is when the notification is delivered: replaced, then gone.
        let renamed = NotificationCategory(
            identifier: "alarm", actions: [NotificationAction(identifier: "later", title: "Later")])
        try await engine.setCategories([renamed], app: Self.app)
        try await engine.add([Self.now("b", category: "alarm")], app: Self.app)
        try await engine.setCategories([], app: Self.app)
        try await engine.add([Self.now("c", category: "alarm")], app: Self.app)
        let deliveries = events.values.compactMap(\.delivery)
        #expect(deliveries.map(\.category) == [Self.alarm, renamed, nil])
        #expect(deliveries[1].badge == nil, "no badge in the content: the badge did not change")

        // Settings changed by the user change the presentation of the next delivery.
        _ = try await engine.changeSettings(app: Self.app, Self.change(\.alert, .disabled))
        try await engine.add([Self.now("d", sound: true)], app: Self.app)
        #expect(events.values.compactMap(\.delivery).last?.presentation == [.list, .sound])
        #expect(events.values.compactMap(\.delivery).last?.settings.alertSetting == .disabled)
    }

    @Test("a scheduled event carries the requests as the pending list has them, for at most 100 of 64 KiB")
    func scheduledPayload() async throws {
        let engine = try await Self.engine()
        let events = Recorder<EngineEvent>()
        let token = engine.subscribe(app: Self.app) { events.append($0) }
        defer { engine.unsubscribe(token) }
        func later(_ identifier: String, body: Int = 0) -> NotificationRequest {
            var content = NotificationContent(title: identifier)
            content.body = String(repeating: "b", count: body)
            return NotificationRequest(
                identifier: identifier, content: content, trigger: .timeInterval(600, repeats: false))
        }
        /// The last scheduled event's identifiers and requests.
        func scheduled() throws -> (identifiers: [String], requests: [PendingRequest]) {
            let last = events.values.last { if case .scheduled = $0.payload { true } else { false } }
            guard case .scheduled(let identifiers, let requests) = try #require(last).payload else { return ([], []) }
            return (identifiers, requests)
        }

        // Requests without a trigger are delivered, not scheduled: they are not in it.
        try await engine.add([later("a"), Self.now("now"), later("b")], app: Self.app)
        let small = try scheduled()
        #expect(small.identifiers == ["a", "b"])
        #expect(small.requests.map(\.json) == (try await engine.pending(app: Self.app)).map(\.json))
        try await engine.add([later("a", body: 10)], app: Self.app)
        #expect(try scheduled().requests.map(\.request) == [later("a", body: 10)])

        try await engine.add((0..<101).map { later("many\($0)") }, app: Self.app)
        #expect(try scheduled().identifiers.isEmpty)
        #expect(try scheduled().requests.isEmpty, "more than 100 requests: none carried")
        try await engine.add([later("big1", body: 40 * 1024), later("big2", body: 40 * 1024)], app: Self.app)
        #expect(try scheduled().identifiers == ["big1", "big2"])
        #expect(try scheduled().requests.isEmpty, "more than 64 KiB of requests: none carried")
    }

    @Test("a removed and re-registered app's deliveries carry its new categories, not the old ones")
    func categoriesAfterRemoval() async throws {
        let engine = try await Self.engine()
        try await engine.setCategories([Self.alarm], app: Self.app)
        try await engine.removeApp(Self.app)
        _ = try await engine.requestAuthorization(app: Self.app, options: [.alert])
        let events = Recorder<EngineEvent>()
        let token = engine.subscribe(app: Self.app) { events.append($0) }
        defer { engine.unsubscribe(token) }
        try await engine.add([Self.now("a", category: "alarm")], app: Self.app)
        #expect(events.values.compactMap(\.delivery).first?.category == nil)
    }

    @Test("a surface that never finishes delays neither a commit nor another surface")
    func slowSurface() async throws {
        let engine = try await Self.engine()
        let gate = Gate()
        let stuck = RecordingSurface(gate: gate)
        let quick = RecordingSurface()
        engine.attach(stuck, app: nil)
        engine.attach(quick, app: Self.app)
        for index in 0..<50 {
            try await engine.add([Self.now("n\(index)")], app: Self.app)  // returns after each commit
        }
        await quick.waitFor(count: 50)
        #expect(quick.shown == (0..<50).map { "n\($0)" }, "in the order the engine delivered them")
        #expect(stuck.shown == ["n0"], "the stuck surface is still on its first notification")
        #expect(try await engine.deliveredCount(app: Self.app) == 50)
        gate.open()
        await engine.hub.settle()
        #expect(stuck.shown == (0..<50).map { "n\($0)" })
    }

    @Test(
        "subscribers off the publisher: one that is stuck holds up no commit; 100 of them, for one app and for all, each get every event in order"
    )
    func offPublisher() async throws {
        let engine = try await Self.engine(apps: [Self.app, "com.example.other"])
        // The first call blocks its fan-out queue's thread (60 s at most, so a regression that
        // calls it on the writer shows as a failure below, not as a hang).
        let release = DispatchSemaphore(value: 0)
        let stuckCalls = Atomic<Int>(0)
        let stuckReturned = Atomic<Bool>(false)
        let stuck = engine.subscribe(app: Self.app, offPublisher: true) { _ in
            if stuckCalls.add(1, ordering: .relaxed).newValue == 1 {
                _ = release.wait(timeout: .now() + 60)
                stuckReturned.store(true, ordering: .relaxed)
            }
        }
        let recorders = (0..<100).map { _ in Recorder<String>() }
        let tokens = recorders.enumerated().map { index, recorder in
            engine.subscribe(app: index % 2 == 0 ? Self.app : nil, offPublisher: true) { event in
                if let delivery = event.delivery { recorder.append(delivery.notification.request.identifier) }
            }
        }
        for index in 0..<50 {
            try await engine.add([Self.now("n\(index)")], app: Self.app)  // returns after each commit
        }
        try await engine.add([Self.now("elsewhere")], app: "com.example.other")
        let returnedBeforeRelease = stuckReturned.load(ordering: .relaxed)
        #expect(!returnedBeforeRelease, "the adds returned while a subscriber was stuck")
        #expect(try await engine.deliveredCount(app: Self.app) == 50)
        release.signal()
        await engine.hub.settle()
        let returned = stuckReturned.load(ordering: .relaxed)
        #expect(returned)
        let sent = (0..<50).map { "n\($0)" }
        for (index, recorder) in recorders.enumerated() {
            #expect(recorder.values == (index % 2 == 0 ? sent : sent + ["elsewhere"]), "subscriber \(index)")
        }
        for token in tokens + [stuck] { engine.unsubscribe(token) }
    }

    @Test("a surface attached for one app sees only that app; one attached for all sees every app; removals withdraw")
    func scopes() async throws {
        let engine = try await Self.engine(apps: ["com.a", "com.b"])
        let all = RecordingSurface()
        let onlyA = RecordingSurface()
        engine.attach(all, app: nil)
        let attachment = engine.attach(onlyA, app: "com.a")
        try await engine.add([Self.now("a1")], app: "com.a")
        try await engine.add([Self.now("b1")], app: "com.b")
        try await engine.removeDelivered(app: "com.a", identifiers: ["a1"])
        await engine.hub.settle()
        #expect(all.shown == ["a1", "b1"])
        #expect(onlyA.shown == ["a1"])
        #expect(onlyA.withdrawn == ["a1"])
        attachment.detach()
        try await engine.add([Self.now("a2")], app: "com.a")
        await engine.hub.settle()
        #expect(onlyA.shown == ["a1"], "a detached surface is no longer fed")
        #expect(all.shown == ["a1", "b1", "a2"])
    }

    @Test("nothing is shown when the presentation is empty (a passive notification with the list switched off)")
    func emptyPresentation() async throws {
        let engine = try await Self.engine()
        let surface = RecordingSurface()
        engine.attach(surface, app: nil)
        _ = try await engine.changeSettings(app: Self.app, Self.change(\.notificationCenter, .disabled))
        var passive = Self.now("quiet")
        passive.content.interruptionLevel = .passive
        try await engine.add([passive, Self.now("loud")], app: Self.app)
        await engine.hub.settle()
        #expect(surface.shown == ["loud"])
    }

    @Test(
        "while the app is in front its presenter's answer is what surfaces show, within the settings; other apps are not held up"
    )
    func presenter() async throws {
        let engine = try await Self.engine(apps: [Self.app, "com.other"])
        _ = try await engine.changeSettings(app: Self.app, Self.change(\.sound, .disabled))
        let surface = RecordingSurface()
        engine.attach(surface, app: nil)
        let gate = Gate()
        let asked = Recorder<String>()
        engine.hub.setPresenter(app: Self.app) { deliveries in
            for delivery in deliveries { asked.append(delivery.notification.request.identifier) }
            await gate.wait()
            return deliveries.map { $0.notification.request.identifier == "hidden" ? [] : [.banner, .sound] }
        }
        try await engine.add([Self.now("shown"), Self.now("hidden")], app: Self.app)
        try await engine.add([Self.now("elsewhere")], app: "com.other")
        await surface.waitFor(count: 1)
        #expect(surface.shown == ["elsewhere"], "another app's delivery does not wait for this app's willPresent")
        gate.open()
        await engine.hub.settle()
        #expect(asked.values == ["shown", "hidden"])
        #expect(surface.shown == ["elsewhere", "shown"])
        #expect(
            surface.presentations["shown"] == [.banner],
            "sound is off in the settings, so the answer's sound is dropped")

        // Out of front (no presenter): the engine's own presentation again.
        engine.hub.setPresenter(app: Self.app, nil)
        try await engine.add([Self.now("background")], app: Self.app)
        await engine.hub.settle()
        #expect(surface.presentations["background"] == [.list, .banner])
    }
}

extension NotificationHubTests {
    @Test(
        "deliveries that queued while willPresent was busy are asked in one call, in order, at most 512 at a time; not across a new presenter"
    )
    func presenterBatches() async throws {
        let engine = try await Self.engine()
        let gate = Gate()
        let calls = Recorder<[String]>()
        engine.hub.setPresenter(app: Self.app) { deliveries in
            calls.append(deliveries.map(\.notification.request.identifier))
            await gate.wait()
            return deliveries.map { _ in [.banner] }
        }
        try await engine.add([Self.now("first")], app: Self.app)
        while calls.values.isEmpty { try await Sleep.for(.milliseconds(1)) }
        // Three transactions while the first call waits, then 600 in one.
        for name in ["a", "b", "c"] { try await engine.add([Self.now(name)], app: Self.app) }
        try await engine.add((0..<600).map { Self.now("many-\($0)") }, app: Self.app)
        gate.open()
        await engine.hub.settle()
        let names = ["a", "b", "c"] + (0..<600).map { "many-\($0)" }
        #expect(calls.values == [["first"], Array(names.prefix(512)), Array(names.dropFirst(512))])

        // Queued under one presenter, then under its replacement: each is asked for its own.
        let held = Gate()
        let old = Recorder<[String]>()
        engine.hub.setPresenter(app: Self.app) { deliveries in
            old.append(deliveries.map(\.notification.request.identifier))
            await held.wait()
            return deliveries.map { _ in [.banner] }
        }
        try await engine.add([Self.now("blocking")], app: Self.app)
        while old.values.isEmpty { try await Sleep.for(.milliseconds(1)) }
        try await engine.add([Self.now("old")], app: Self.app)
        let new = Recorder<[String]>()
        engine.hub.setPresenter(app: Self.app) { deliveries in
            new.append(deliveries.map(\.notification.request.identifier))
            return deliveries.map { _ in [.banner] }
        }
        try await engine.add([Self.now("new")], app: Self.app)
        held.open()
        await engine.hub.settle()
        #expect(old.values == [["blocking"], ["old"]])
        #expect(new.values == [["new"]])
    }

    @Test(
        "in front, a delivery's badge waits for the presenter: applied with .badge in the answer, not without",
        arguments: [
            (UNNotificationPresentationOptions.banner, 0), ([.banner, .badge], 5), ([], 0),
        ] as [(UNNotificationPresentationOptions, Int)])
    func foregroundBadge(answer: UNNotificationPresentationOptions, badge: Int) async throws {
        let engine = try await Self.engine()
        let surface = RecordingSurface()
        engine.attach(surface, app: Self.app)
        engine.hub.setPresenter(app: Self.app) { deliveries in deliveries.map { _ in answer } }
        let events = Recorder<EngineEvent>()
        let token = engine.subscribe(app: Self.app) { events.append($0) }
        defer { engine.unsubscribe(token) }
        try await engine.add([Self.now("b", badge: 5)], app: Self.app)
        #expect(events.values.compactMap(\.delivery).first?.badge == nil, "not applied in the delivering transaction")
        #expect(events.values.compactMap(\.delivery).first?.pendingBadge == 5)
        await engine.hub.settle()
        await engine.barrier()
        #expect(try await engine.app(Self.app).badge == badge)
        #expect(try await engine.delivered(app: Self.app).map(\.request.identifier) == ["b"], "listed either way")
    }

    @Test("a badge that waited for an app no longer in front is applied as in the background")
    func presenterGone() async throws {
        let engine = try await Self.engine()
        let gate = Gate()
        engine.hub.setPresenter(app: Self.app) { deliveries in
            await gate.wait()
            return deliveries.map { _ in nil }
        }
        try await engine.add([Self.now("b", badge: 2)], app: Self.app)
        gate.open()
        await engine.hub.settle()
        await engine.barrier()
        #expect(try await engine.app(Self.app).badge == 2, "a presenter without an answer: not in front")
    }

    @Test("a badge-only request sets the badge, in front too, and is neither listed nor shown")
    func badgeOnly() async throws {
        let engine = try await Self.engine()
        let surface = RecordingSurface()
        engine.attach(surface, app: Self.app)
        let asked = Recorder<String>()
        engine.hub.setPresenter(app: Self.app) { deliveries in
            for delivery in deliveries { asked.append(delivery.notification.request.identifier) }
            return deliveries.map { _ in [.banner] }
        }
        var content = NotificationContent()
        content.badge = 7
        let events = Recorder<EngineEvent>()
        let token = engine.subscribe(app: nil) { events.append($0) }
        defer { engine.unsubscribe(token) }
        try await engine.add([NotificationRequest(identifier: "count", content: content, trigger: nil)], app: Self.app)
        _ = try await engine.deliverPush(content, identifier: "pushed", silent: false, app: Self.app)
        await engine.hub.settle()
        #expect(try await engine.app(Self.app).badge == 7)
        #expect(try await engine.delivered(app: Self.app).isEmpty)
        #expect(surface.shown.isEmpty && asked.values.isEmpty)
        #expect(!events.values.contains { $0.kind == .delivered })
        #expect(
            events.values.contains { if case .app(.updated, _) = $0.payload { true } else { false } },
            "a refresh hint: the badge changed")
    }
}

/// A surface that records what it shows and withdraws; optionally stuck on a gate.
final class RecordingSurface: NotificationSurface {
    private let state = Mutex<
        (shown: [String], withdrawn: [String], presentations: [String: UNNotificationPresentationOptions])
    >(([], [], [:]))
    private let gate: Gate?

    init(gate: Gate? = nil) { self.gate = gate }

    func show(_ delivery: Delivery, app: String) async {
        let identifier = delivery.notification.request.identifier
        state.withLock {
            $0.shown.append(identifier)
            $0.presentations[identifier] = delivery.presentation
        }
        await gate?.wait()
    }

    func withdraw(_ identifiers: [String], app: String) async {
        state.withLock { $0.withdrawn += identifiers }
    }

    var shown: [String] { state.withLock { $0.shown } }
    var withdrawn: [String] { state.withLock { $0.withdrawn } }
    var presentations: [String: UNNotificationPresentationOptions] { state.withLock { $0.presentations } }

    /// Waits (bounded: 10 s) until `count` notifications were shown.
    /// At most 60 s: a bound for a hang (the first seconds of a full run keep two cores busy).
    func waitFor(count: Int) async {
        let deadline = ContinuousClock.now + .seconds(60)
        while shown.count < count, ContinuousClock.now < deadline { try? await Sleep.for(.milliseconds(2)) }
    }
}

/// Values appended from any thread.
final class Recorder<Value: Sendable>: Sendable {
    private let state = Mutex<[Value]>([])
    func append(_ value: Value) { state.withLock { $0.append(value) } }
    var values: [Value] { state.withLock { $0 } }
}

/// Holds whoever waits until it is opened.
final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let open = state.withLock { state -> Bool in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if open { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
