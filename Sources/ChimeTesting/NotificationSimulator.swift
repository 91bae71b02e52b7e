import Chime
import ChimeCore
import ChimeSQLite
import Foundation
import Synchronization

/// A deterministic stand-in for the device and its user, running the real engine on a manual clock.
///
/// ```swift
/// let simulator = NotificationSimulator(bundleIdentifier: "com.example.alarm",
///                                       now: Date(timeIntervalSince1970: 1_780_000_000),
///                                       timeZone: TimeZone(identifier: "Europe/Berlin")!)
/// simulator.install()
/// let app = AlarmApp()                      // uses UNUserNotificationCenter.current()
/// app.start()
/// await simulator.advance(by: 10)           // the alarm fires
/// try await simulator.perform("snooze", on: "Alarm")
/// await simulator.advance(by: 5)            // and comes back
/// ```
///
/// `advance`, `tap`, `perform`, `reply`, `dismiss`, `push` and `move` return when every delegate
/// callback they caused has finished and everything those callbacks asked the center to do is done.
///
/// `@unchecked Sendable`: what it records is behind a `Mutex`, the center and engine are thread-safe,
/// and `expiredSubscription` is written once, in `init`.
public final class NotificationSimulator: @unchecked Sendable {
    /// What the simulated user answers when the app asks for permission.
    public enum AuthorizationAnswer: Sendable, Hashable {
        case grant
        case deny
    }

    /// Whether the app is in front (then `willPresent` decides presentation) or not.
    public enum AppState: Sendable, Hashable {
        case foreground
        case background
    }

    /// The center under test.
    public let center: UNUserNotificationCenter
    /// The simulator's clock.
    public let clock: ManualClock
    /// The engine behind the center.
    public var engine: NotificationEngine { center.engine }
    public let bundleIdentifier: String

    private let policy: SimulatedUser
    private var expiredSubscription = 0

    /// What the simulator saw and is waiting for.
    private struct Record {
        var presented: [(notification: UNNotification, options: UNNotificationPresentationOptions)] = []
        var expired: [(request: UNNotificationRequest, dueDate: Date)] = []
        var autoDismissed: [(identifier: String, date: Date)] = []
        var realerted: [(identifier: String, alert: Int, date: Date)] = []
        var focused: [(identifier: String, decision: FocusDecision, date: Date)] = []
        /// Pushes the app's service extension is working on: when their time runs out (virtual),
        /// and the delivery that follows.
        var extensionRuns: [(id: UUID, deadline: Date, delivery: Task<Void, any Error>)] = []
    }

    private let record = Mutex(Record())

    /// Makes a simulator.
    ///
    /// - Parameters:
    ///   - storePath: a SQLite file to keep state in; `nil` (the default) keeps it in memory.
    ///     Attachment files that `add` moves in are kept beside it (`attachments/<bundle
    ///     identifier>/`), or without a file in a temporary directory removed with the simulator.
    public init(
        bundleIdentifier: String = "com.example.app", now: Date = Date(timeIntervalSince1970: 1_780_000_000),
        timeZone: TimeZone = TimeZone(identifier: "UTC")!, storePath: String?
    ) throws {
        _ = SimulatorRegistry.shared
        self.bundleIdentifier = bundleIdentifier
        clock = ManualClock(now: now)
        policy = SimulatedUser()
        let store: any NotificationStore = try storePath.map { try SQLiteStore(path: $0) } ?? MemoryStore()
        let engine = NotificationEngine(store: store, clock: clock, timeZone: timeZone, policy: policy)
        // Attachment files beside a store file (so a reopened simulator finds them), else in a
        // temporary directory of the simulator's own, removed with it.
        let attachments = storePath.map {
            AttachmentStore.directory(
                inDataDirectory: URL(fileURLWithPath: $0).deletingLastPathComponent(), app: bundleIdentifier)
        }
        center = UNUserNotificationCenter(
            engine: engine, bundleIdentifier: bundleIdentifier, timeZone: timeZone,
            driven: true, foreground: false, attachmentDirectory: attachments)
        center.addSurface(
            PresentationRecorder { [weak self] delivery in
                guard let self else { return }
                self.record.withLock { record in
                    record.presented.append((UNNotification(value: delivery.notification), delivery.presentation))
                    if let focus = delivery.focus {
                        record.focused.append((delivery.notification.request.identifier, focus, self.clock.now))
                    }
                }
            })
        expiredSubscription = engine.subscribe(app: bundleIdentifier) { [weak self] event in
            guard let self else { return }
            switch event.payload {
            case .expired(let expired):
                self.record.withLock {
                    $0.expired.append((UNNotificationRequest(value: expired.request), expired.dueDate))
                }
            case .removed(let identifiers, .delivered, .autoDismiss):
                self.record.withLock { $0.autoDismissed += identifiers.map { ($0, event.date) } }
            case .realerted(let delivery):
                self.record.withLock {
                    $0.realerted.append((delivery.notification.request.identifier, delivery.alert, event.date))
                }
            default:
                break
            }
        }
    }

    deinit { engine.unsubscribe(expiredSubscription) }

    /// A simulator kept in memory (this initialiser does not throw).
    public convenience init(
        bundleIdentifier: String = "com.example.app", now: Date = Date(timeIntervalSince1970: 1_780_000_000),
        timeZone: TimeZone = TimeZone(identifier: "UTC")!
    ) {
        try! self.init(bundleIdentifier: bundleIdentifier, now: now, timeZone: timeZone, storePath: nil)
    }

    /// Makes `UNUserNotificationCenter.current()` return this simulator's center for the running
    /// test, replacing any simulator the test installed before. Other tests running at the same
    /// time (Swift Testing runs them in parallel) keep their own.
    ///
    /// ```swift
    /// @Test func snooze() async throws {
    ///     let simulator = NotificationSimulator(bundleIdentifier: "com.example.alarm")
    ///     simulator.install()
    ///     let alarm = Alarm()                 // its current() is this simulator's center…
    ///     try await alarm.start()             // …also in its callbacks, `Task {}` and `async let`
    ///     await simulator.advance(by: 10)
    /// }
    /// ```
    ///
    /// The test is found through Swift Testing's task-local `Test.current`, which the tasks the test
    /// starts inherit, and callbacks are bound to their center, so app code needs no change. Keep
    /// the simulator for as long as the test runs (a `let`): it is held weakly and forgotten when it
    /// goes away. Outside Swift Testing (XCTest's `setUp`, a program) it is installed for the
    /// process; call ``uninstall()`` when done (`XCTestCase.installNotificationSimulator(…)` does).
    ///
    /// Code that calls `current()` outside every test's task — a `DispatchQueue.main.async` block,
    /// a `Thread`, `Task.detached` — gets this simulator only while it is the one installed in the
    /// process; while other tests have one too, `current()` stops the test run with a message naming
    /// the fixes (take the center first, hop with `Task { @MainActor in … }`, or run the test alone
    /// with the trait's `exclusive: true`).
    public func install() {
        SimulatorRegistry.shared.install(self)
    }

    /// Undoes ``install()``: `current()` no longer returns this simulator's center.
    public func uninstall() {
        SimulatorRegistry.shared.remove(self)
    }

    /// The simulator of the running test: the one it installed last, else the one the
    /// `.notificationSimulator` trait made for it.
    ///
    /// ```swift
    /// @Suite(.notificationSimulator(bundleIdentifier: "com.example.alarm"))
    /// struct AlarmTests {
    ///     @Test func rings() async throws {
    ///         let simulator = NotificationSimulator.current
    ///         try await Alarm().start()
    ///         await simulator.advance(by: 10)
    ///         #expect(await simulator.deliveredNotifications.count == 1)
    ///     }
    /// }
    /// ```
    ///
    /// Stops the test run with a message when the running test has no simulator.
    public static var current: NotificationSimulator {
        guard let simulator = SimulatorRegistry.shared.simulatorOfRunningTest() else {
            fatalError(
                """
                Chime: NotificationSimulator.current was read in a test without a simulator; give the test \
                (or its suite) the trait `.notificationSimulator(bundleIdentifier: "…")`, or make one \
                with `NotificationSimulator(bundleIdentifier:)` and call `install()`.
                """)
        }
        return simulator
    }

    /// What the user answers when asked for permission (default `.grant`).
    public var authorizationAnswer: AuthorizationAnswer {
        get { policy.answer }
        set { policy.answer = newValue }
    }

    /// Whether the app is in front (default `.background`).
    public var appState: AppState {
        get { center.isAppInForeground ? .foreground : .background }
        set { center.isAppInForeground = newValue == .foreground }
    }

    /// The virtual date.
    public var now: Date { clock.now }

    // MARK: - Time

    /// Moves virtual time forward, firing everything that falls due, in order.
    public func advance(by seconds: TimeInterval) async {
        await advance(to: clock.now.addingTimeInterval(seconds))
    }

    /// Moves virtual time to `date`, firing everything that falls due, in order.
    ///
    /// A service extension whose time limit passes meanwhile gets `serviceExtensionTimeWillExpire()`
    /// at that moment, and its best attempt is delivered then.
    public func advance(to date: Date) async {
        await center.processEvents()
        while true {
            let fire = try? await engine.nextFireDate()
            let expiry = record.withLock { $0.extensionRuns.map(\.deadline).min() }
            guard let next = [fire, expiry].compactMap({ $0 }).min(), next <= date else { break }
            clock.set(max(next, clock.now))
            if let fire, fire <= clock.now { _ = try? await engine.fireDue(now: clock.now) }
            await finishExtensionRuns(until: clock.now)
            await center.processEvents()
        }
        clock.set(date)
        await center.processEvents()
    }

    /// Waits for the pushes whose service extension ran out of time by `date` to be delivered.
    private func finishExtensionRuns(until date: Date) async {
        let expired = record.withLock { record -> [Task<Void, any Error>] in
            defer { record.extensionRuns.removeAll { $0.deadline <= date } }
            return record.extensionRuns.filter { $0.deadline <= date }.map(\.delivery)
        }
        for delivery in expired { _ = await delivery.result }
    }

    // MARK: - What the user sees

    /// The delivered notifications, newest first.
    public var deliveredNotifications: [UNNotification] {
        get async {
            await center.processEvents()
            return await center.deliveredNotifications()
        }
    }

    /// The pending requests.
    public var pendingRequests: [UNNotificationRequest] {
        get async {
            await center.processEvents()
            return await center.pendingNotificationRequests()
        }
    }

    /// Every notification shown so far, with how it was shown, oldest first.
    public var presented: [(notification: UNNotification, options: UNNotificationPresentationOptions)] {
        get async {
            await center.processEvents()
            return record.withLock { $0.presented }
        }
    }

    /// The requests that fell due after their expiration (Chime's addition, ``UNNotificationRequest/expiration``)
    /// and so were never delivered, with when each was due, oldest first.
    ///
    /// ```swift
    /// try await center.add(UNNotificationRequest(identifier: "ride", content: content,
    ///                                            trigger: UNTimeIntervalNotificationTrigger(timeInterval: 600, repeats: false),
    ///                                            expiration: .after(300)))
    /// await simulator.advance(by: 600)
    /// #expect(await simulator.expired.map(\.request.identifier) == ["ride"])
    /// ```
    public var expired: [(request: UNNotificationRequest, dueDate: Date)] {
        get async {
            await center.processEvents()
            return record.withLock { $0.expired }
        }
    }

    /// The delivered notifications removed at their end of relevance (Chime's addition,
    /// ``UNNotificationRequest/autoDismiss``), with when, oldest first. They are gone from
    /// `deliveredNotifications()` too.
    ///
    /// ```swift
    /// try await center.add(UNNotificationRequest(identifier: "bus", content: content,
    ///                                            trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false),
    ///                                            autoDismiss: .after(600)))
    /// await simulator.advance(by: 660)
    /// #expect(await simulator.autoDismissed.map(\.identifier) == ["bus"])
    /// ```
    public var autoDismissed: [(identifier: String, date: Date)] {
        get async {
            await center.processEvents()
            return record.withLock { $0.autoDismissed }
        }
    }

    /// The escalating notifications alerted again (Chime's addition, ``UNNotificationRequest/escalation``),
    /// each with the number of the alert (2 for the first time again) and when, oldest first.
    /// Each is in ``presented`` too, shown again.
    ///
    /// ```swift
    /// try await center.add(UNNotificationRequest(identifier: "wake", content: content, trigger: nil,
    ///                                            escalation: NotificationEscalation(every: 60, for: 300)))
    /// await simulator.advance(by: 150)
    /// #expect(await simulator.realerted.map(\.alert) == [2, 3])
    /// ```
    public var realerted: [(identifier: String, alert: Int, date: Date)] {
        get async {
            await center.processEvents()
            return record.withLock { $0.realerted }
        }
    }

    /// What focus modes (Chime's addition, ``FocusMode``) did to the notifications shown while one
    /// was on, oldest first: held quietly (``FocusDecision/quiet``; shown in ``presented`` without
    /// banner or sound) or let through, and why.
    ///
    /// ```swift
    /// try await simulator.putFocusMode(FocusMode(name: "Work"))
    /// try await simulator.setFocus("Work", on: true)
    /// try await center.add(request)
    /// #expect(await simulator.focusDecisions.map(\.decision.reason) == [.focus])
    /// ```
    public var focusDecisions: [(identifier: String, decision: FocusDecision, date: Date)] {
        get async {
            await center.processEvents()
            return record.withLock { $0.focused }
        }
    }

    /// The receipt of an escalating notification: alerts so far, whether and how it was answered
    /// (the simulator's answers say `surface` "simulator"), whether its window ended unanswered.
    public func receipt(for identifier: String) async throws -> EscalationReceipt? {
        await center.processEvents()
        return try await engine.receipt(app: bundleIdentifier, notification: identifier)
    }

    // MARK: - What the user does

    /// Taps the notification's body: the default action.
    public func tap(_ identifier: String) async throws {
        try await respond(identifier, action: UNNotificationDefaultActionIdentifier, text: nil)
    }

    /// Picks one of the notification's actions.
    public func perform(_ action: String, on identifier: String) async throws {
        try await respond(identifier, action: action, text: nil)
    }

    /// Types a reply into a text-input action.
    public func reply(_ text: String, with action: String, on identifier: String) async throws {
        try await respond(identifier, action: action, text: text)
    }

    /// Dismisses the notification (the app hears of it only with `.customDismissAction`).
    public func dismiss(_ identifier: String) async throws {
        try await respond(identifier, action: UNNotificationDismissActionIdentifier, text: nil)
    }

    private func respond(_ identifier: String, action: String, text: String?) async throws {
        await center.processEvents()
        _ = try await engine.respond(
            app: bundleIdentifier, notification: identifier, action: action, userText: text, surface: "simulator")
        await center.processEvents()
    }

    /// Delivers a remote notification from an APNs JSON payload (`aps.alert`, `sound`, `badge`,
    /// `category`, `thread-id`, …; other top-level keys become `userInfo`).
    ///
    /// With `mutable-content: 1` and an alert, it goes through the app's
    /// `center.notificationServiceExtension` first, and `push` returns when the extension has called
    /// its content handler — from whichever thread — and the notification is delivered. The
    /// extension's time limit (`center.serviceExtensionTimeLimit`, 30 s) runs on the simulator's
    /// clock, which moves only when the test moves it: for an extension that does not answer in
    /// time, use ``push(_:identifier:advancingBy:)``, or `push` stays waiting for the answer.
    ///
    /// - Parameter identifier: the request identifier (APNs' collapse id); a new UUID by default.
    /// - Throws: ``APNsPayloadError`` for a payload APNs would refuse.
    public func push(_ payload: Data, identifier: String = UUID().uuidString) async throws {
        try await push(payload, identifier: identifier, advancing: nil)
    }

    /// Delivers a remote notification and lets `seconds` of virtual time pass while the app's
    /// service extension works on it (firing what falls due meanwhile, as ``advance(by:)``): for
    /// testing an extension that runs out of time. When its time limit passes,
    /// `serviceExtensionTimeWillExpire()` is called and the best attempt it then hands to the
    /// content handler is delivered, else the content as it arrived. Returns when the
    /// notification is delivered.
    ///
    /// ```swift
    /// try await simulator.push(payload, identifier: "slow", advancingBy: 30)
    /// #expect(await simulator.deliveredNotifications.first?.request.content.title == "Best attempt")
    /// ```
    public func push(_ payload: Data, identifier: String = UUID().uuidString, advancingBy seconds: TimeInterval)
        async throws
    {
        try await push(payload, identifier: identifier, advancing: seconds)
    }

    private func push(_ payload: Data, identifier: String, advancing seconds: TimeInterval?) async throws {
        let decoded = try APNsPayload.decode(payload)
        await center.processEvents()
        let request = NotificationRequest(identifier: identifier, content: decoded.content, trigger: .push)
        guard decoded.goesThroughServiceExtension, let run = center.startServiceExtension(for: request) else {
            try await engine.deliverPush(
                decoded.content, identifier: identifier, silent: decoded.isSilent, app: bundleIdentifier)
            if let seconds { await advance(by: seconds) }
            await center.processEvents()
            return
        }
        let (engine, app) = (self.engine, bundleIdentifier)
        let delivery = Task<Void, any Error> {
            _ = try await engine.deliverPush(await run.content(), identifier: identifier, silent: false, app: app)
        }
        let id = UUID()
        record.withLock { $0.extensionRuns.append((id, run.deadline, delivery)) }
        await run.didReceiveReturned()
        if let seconds { await advance(by: seconds) }
        let result = await delivery.result
        record.withLock { $0.extensionRuns.removeAll { $0.id == id } }
        await center.processEvents()
        try result.get()
    }

    /// Moves the device: location triggers whose region is entered or left fire.
    public func move(to coordinate: CLLocationCoordinate2D) async {
        _ = try? await engine.updateLocation(Coordinate(latitude: coordinate.latitude, longitude: coordinate.longitude))
        await center.processEvents()
    }

    /// Changes the device's time zone: calendar triggers without a zone of their own move with it.
    public func setTimeZone(_ timeZone: TimeZone) async {
        try? await engine.setTimeZone(timeZone)
        center.timeZone = timeZone
        await center.processEvents()
    }
}

/// The simulated screen: records what is shown, with how (the `presented` list).
private struct PresentationRecorder: NotificationSurface {
    let record: @Sendable (Delivery) -> Void
    func show(_ delivery: Delivery, app: String) async { record(delivery) }
    func withdraw(_ identifiers: [String], app: String) async {}
}

/// The simulated user's answer to permission requests.
final class SimulatedUser: AuthorizationPolicy, Sendable {
    private let current = Mutex(NotificationSimulator.AuthorizationAnswer.grant)

    var answer: NotificationSimulator.AuthorizationAnswer {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    func decide(app: String, options: UNAuthorizationOptions) -> AuthorizationDecision {
        answer == .grant ? .grant : .deny
    }
}

extension NotificationSimulator {
    /// Runs `body` while no test that uses the `.notificationSimulator` trait runs, and keeps them
    /// waiting until it is done (what `exclusive: true` on the trait does).
    ///
    /// Only code that calls `UNUserNotificationCenter.current()` outside the test's task (in a
    /// `DispatchQueue` block, say) needs this; see ``install()``.
    public static func exclusively(_ body: @Sendable () async throws -> Void) async rethrows {
        try await SimulatorGate.shared.run(exclusive: true, body)
    }
}
