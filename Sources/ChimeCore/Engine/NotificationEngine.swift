import Foundation
import Synchronization

/// The notification engine: every app's authorization, categories, pending requests, delivered
/// notifications and response outbox, kept in a ``NotificationStore``.
///
/// Every operation runs on one serial writer, in the order it was called, inside a store
/// transaction; an operation completes only after its transaction commits. Operations that arrive
/// while a commit is under way share the next transaction (group commit), so durability does not
/// cost throughput.
///
/// ```swift
/// let engine = NotificationEngine(store: MemoryStore(), policy: FixedAuthorizationPolicy(.grant))
/// _ = try await engine.requestAuthorization(app: "com.example.alarm", options: [.alert, .sound])
/// var content = NotificationContent(title: "Alarm")
/// content.sound = .default
/// try await engine.add([NotificationRequest(identifier: "Alarm", content: content,
///                                           trigger: .timeInterval(10, repeats: false))],
///                      app: "com.example.alarm")
/// ```
///
/// The engine does not run by itself: call ``startScheduler()`` to fire notifications on the
/// clock, or drive it with ``fireDue(now:)`` (as the simulator does).
public final class NotificationEngine: Sendable {
    /// Engine settings.
    public struct Configuration: Sendable {
        /// How many of the soonest fire dates are held in memory.
        public var windowCapacity = 1024
        /// The most operations committed in one transaction.
        public var maxBatch = 8192
        /// The most notifications fired in one transaction.
        public var fireBatch = 4096
        /// How many events the store keeps for resumable streams.
        public var eventRetention = 100_000
        /// How many bytes of events the store keeps (64 MiB).
        public var eventRetentionBytes = 64 << 20
        /// How long the store keeps an event, in seconds (7 days).
        public var eventRetentionAge: TimeInterval = 7 * 24 * 3600
        /// The three bounds of the event log together.
        public var retention: EventRetention { EventRetention(count: eventRetention, bytes: eventRetentionBytes, age: eventRetentionAge) }
        /// Whether events are written to the store's log (needed for resumable event streams, and
        /// with a shared store for other engines to see them).
        public var recordsEvents = true
        /// With a shared store: the longest the scheduler sleeps before asking the store again, in
        /// seconds (for requests whose engine died in the middle of firing them; other engines'
        /// new requests wake it through the store's feed).
        public var sharedStoreRecheck: TimeInterval = 0.25
        /// The shortest time, in seconds, between two firing transactions of the scheduler while
        /// notifications keep falling due: what falls due in between is fired together, at most
        /// this late. A notification due after a quiet spell fires at its date; under a steady
        /// stream this bounds the commits (and the write-ahead log they write) to about a thousand
        /// a second instead of one per notification. 0 fires each as it falls due.
        public var firingInterval: TimeInterval = 0.001
        /// How long before the first due date after a quiet spell (a sleep of more than a second)
        /// the scheduler wakes to return freed memory to the system (glibc's `malloc_trim`), so
        /// the allocator's deferred merging of freed blocks does not land in the first firing
        /// transaction. `nil`: never.
        public var memoryTidyLead: TimeInterval? = 0.25
        /// Whether `add` refuses a calendar trigger that matches no future date ("today at 09:00"
        /// added after 09:00) with ``ChimeError`` `invalidTrigger` naming `trigger.dateComponents`.
        /// `false` (the default) does what iOS does: the request is accepted (replacing a pending
        /// request with its identifier) and never fires; it is not listed as pending.
        public var refusesPastCalendarTriggers = false
        /// Whether read-only operations use the store's reader connections (``NotificationStore/readers``);
        /// `false` reads on the writer, as before readers existed (the benchmark's comparison).
        package var readsBesideWriter = true
        /// How much each app may keep in the store (``StorageQuota``; none by default, as an app's
        /// own engine; `chime serve` sets ``StorageQuota/serviceDefault``).
        public var quota = StorageQuota.unlimited
        /// What escalations (``NotificationRequest/escalation``) may ask: by default alerts at
        /// least 10 seconds apart, for at most 24 hours. An add beyond them is refused naming the
        /// field (`escalateEvery`, `escalateFor`).
        public var escalationLimits = EscalationLimits()
        /// How long an ended escalation's receipt is kept, in seconds (7 days).
        public var receiptRetentionAge: TimeInterval = 7 * 24 * 3600
        public init() {}
    }

    let core: EngineCoreBox
    private let queue: DispatchQueue
    /// The store's connections beside the writer (`nil`: reads run on the writer), and the threads
    /// they are used on.
    private let readers: (any NotificationStoreReaders)?
    private let readQueue = DispatchQueue(label: "chime.engine.readers", qos: .userInitiated, attributes: .concurrent)
    /// The next date a timed request fires, as the writer last saw it after a commit (embedded
    /// store: the window; a shared store's comes from the store instead).
    private let nextDate = Mutex<Date?>(nil)
    private let inbox = Mutex(Inbox())
    /// Where events go after each commit: subscribers, presenters and attached surfaces.
    public let hub = NotificationHub()
    private let schedulerState = Mutex(SchedulerState())
    /// The engine's clock.
    public let clock: any NotificationClock
    /// Whether other engines share the store (``SharedNotificationStore``).
    public let isStoreShared: Bool
    /// The device's time zone as the writer last set it, so adds can compute fire dates on the
    /// caller's thread (the writer checks it is still the zone, and recomputes when not).
    private let deviceZone: Mutex<TimeZone>
    private let configuration: Configuration
    /// Set by a shared store's feed when another engine changed device state.
    private let deviceChangedElsewhere = Atomic<Bool>(false)
    /// Who is told when another engine gives back Web Push claims (the Web Push sender).
    let webPushReleasedHandler = Mutex<(@Sendable () -> Void)?>(nil)

    private struct Inbox {
        var jobs: [Job] = []
        var draining = false
        var closed = false
    }

    private struct SchedulerState {
        var task: Task<Void, Never>?
        var sleeper: Task<Void, any Error>?
        var target: Date?
        var changed = false
    }

    /// Creates an engine over a store.
    ///
    /// - Parameters:
    ///   - store: where state is kept; used from the engine's writer only from now on.
    ///   - clock: the source of "now" and of sleeping.
    ///   - timeZone: the device's time zone, for calendar triggers without one of their own. The
    ///     store's remembered zone wins when there is one (it follows ``setTimeZone(_:)``).
    ///   - policy: who answers `requestAuthorization`.
    public init(store: any NotificationStore, clock: any NotificationClock = SystemClock(),
                timeZone: TimeZone = .current, policy: any AuthorizationPolicy = FixedAuthorizationPolicy(.grant),
                configuration: Configuration = Configuration()) {
        self.clock = clock
        self.configuration = configuration
        readers = store.readers
        let queue = DispatchQueue(label: "chime.engine.writer", qos: .userInitiated)
        self.queue = queue
        self.core = EngineCoreBox(queue: queue, EngineCore(store: store, clock: clock, timeZone: timeZone, policy: policy,
                                             configuration: configuration))
        deviceZone = Mutex(timeZone)
        let hub = self.hub
        core.beforeShared.isInFront = { app in hub.hasPresenter(app: app) }
        let shared = store as? any SharedNotificationStore
        isStoreShared = shared != nil
        // The feed first, so that what other engines commit while this one loads is not missed.
        shared?.startFeed(SharedStoreFeed(
            events: { [hub] events in hub.publish(events) },
            scheduleChanged: { [weak self] date in self?.scheduleChangedElsewhere(date) },
            deviceChanged: { [weak self] in self?.deviceChangedElsewhere.store(true, ordering: .releasing) },
            webPushReleased: { [weak self] in self?.webPushReleasedElsewhere() }))
        let (opened, next) = queue.sync { () -> (TimeZone, Date?) in
            core.value.open()
            return (core.value.timeZone, shared == nil ? core.value.windowNextDate() : nil)
        }
        deviceZone.withLock { $0 = opened }
        nextDate.withLock { $0 = next }
        // A badge that waited for the app in front: applied through the writer, in call order.
        hub.setBadgeApplier { [weak self] app, count in
            self?.submit({ try $0.applyDeferredBadge(count, app: app) }, completion: { _ in })
        }
    }

    deinit {
        schedulerState.withLock { state in
            state.task?.cancel()
            state.sleeper?.cancel()
        }
    }

    // MARK: - The writer

    /// Runs `body` on the writer inside a transaction and hands its result to `completion` after
    /// the transaction commits. Calls are processed in the order they are made.
    ///
    /// `body` must check before it writes: a ``ChimeError`` or ``UNError`` thrown by `body` fails
    /// only this operation (its writes, if any, would stay), while any other error (a store failure)
    /// rolls back the whole transaction and fails every operation in it.
    /// - Parameter alone: run `body` in a transaction of its own, rolled back by any error it
    ///   throws (then `body` may write before it knows it will fail).
    func submit<T: Sendable>(alone: Bool = false, _ body: @escaping @Sendable (EngineCore) throws -> T,
                                     completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        let box = ResultBox<T>()
        let job = Job(
            run: { core in
                do { box.result = .success(try body(core)) } catch let error where !alone && Self.isOperationError(error) {
                    box.result = .failure(error)
                }
            },
            finish: { failure in completion(failure.map { .failure($0) } ?? box.result ?? .failure(ChimeError(.shutDown, "no result"))) },
            alone: alone
        )
        let schedule = inbox.withLock { inbox -> Bool? in
            if inbox.closed { return nil }
            inbox.jobs.append(job)
            if inbox.draining { return false }
            inbox.draining = true
            return true
        }
        switch schedule {
        case nil: completion(.failure(ChimeError(.shutDown, "the notification engine has shut down")))
        case true?: queue.async { self.drain() }
        case false?: break
        }
    }

    /// `submit`, awaited.
    func perform<T: Sendable>(_ body: @escaping @Sendable (EngineCore) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            submit(body) { continuation.resume(with: $0) }
        }
    }

    /// Runs a read-only `body` beside the writer, on one of the store's reader connections (a
    /// snapshot of the last commit: every operation that completed before this call is in it), or
    /// on the writer when the store has no readers. Never opens a write transaction.
    ///
    /// A pending record that cannot be read stops no listing: the writer sets it aside (the
    /// quarantine, with a `quarantined` event) and the read runs again, at most a batch of times.
    func read<T: Sendable>(_ body: @escaping @Sendable (any NotificationStore) throws -> T) async throws -> T {
        guard configuration.readsBesideWriter, let readers else { return try await perform { try body($0.store) } }
        var setAside = 0
        while true {
            if inbox.withLock({ $0.closed }) { throw ChimeError(.shutDown, "the notification engine has shut down") }
            do {
                return try await withCheckedThrowingContinuation { continuation in
                    readQueue.async { continuation.resume(with: Result { try readers.read(body) }) }
                }
            } catch let row as UndeliverableRequest where setAside < configuration.fireBatch {
                setAside += 1
                try await perform { core in
                    core.toQuarantine.append(row)
                    try core.quarantineQueued(now: core.clock.now)
                }
            }
        }
    }

    /// Whether `error` fails only the operation that threw it (an input or rule error), not the
    /// transaction it ran in (a store failure, or anything else): the error table's kind.
    package static func isOperationError(_ error: any Error) -> Bool {
        ErrorTable.entry(for: error).kind == .operation
    }

    private func drain() {
        while true {
            let jobs = inbox.withLock { inbox -> [Job] in
                // Up to `maxBatch` jobs, stopping before one that runs alone (or taking it alone).
                let limit = min(inbox.jobs.count, configuration.maxBatch)
                var end = 0
                while end < limit {
                    if inbox.jobs[end].alone {
                        if end == 0 { end = 1 }
                        break
                    }
                    end += 1
                }
                let batch = Array(inbox.jobs[..<end])
                inbox.jobs.removeFirst(end)
                if batch.isEmpty { inbox.draining = false }
                return batch
            }
            if jobs.isEmpty { return }
            run(jobs)
        }
    }

    /// How often a batch runs again after a shared store's conflict before its jobs fail.
    private static let conflictRetries = 8

    private func run(_ jobs: [Job]) {
        let core = self.core.value
        let before = core.windowFirstDate
        var attempt = 0
        var setAside = 0
        while true {
            do {
                let deviceChanged = isStoreShared && deviceChangedElsewhere.exchange(false, ordering: .acquiring)
                try core.store.transaction {
                    core.beginTransaction(deviceChanged: deviceChanged)
                    // Rows met unreadable by an earlier try (any job's, not only a firing's).
                    try core.quarantineQueued(now: core.clock.now)
                    for job in jobs { try job.run(core) }
                }
                if deviceChanged { deviceZone.withLock { $0 = core.timeZone } }
                break
            } catch let error as ChimeError where error.code == .storeConflict && attempt < Self.conflictRetries {
                // Another engine changed what this batch read: nothing was written; run it again.
                core.abandon()
                attempt += 1
            } catch let row as UndeliverableRequest where setAside <= configuration.fireBatch {
                // A due request firing cannot deliver, or a record a job read cannot be read:
                // nothing of the transaction stays. Run it again with that request set aside first
                // (one more each time, at most a batch).
                core.abandon()
                core.toQuarantine.append(row)
                setAside += 1
            } catch {
                core.abandon()
                for job in jobs { job.finish(error) }
                return
            }
        }
        core.committed()
        // Published before the scheduler hears of a change (`scheduleChanged` below), so it never
        // reads an older date after being told.
        if !isStoreShared {
            let next = core.windowNextDate()
            nextDate.withLock { $0 = next }
        }
        // Events go out before completions, so whoever awaits an operation finds its events
        // already handed to subscribers.
        hub.publish(core.takeEvents())
        for job in jobs { job.finish(nil) }
        let after = core.windowFirstDate
        if after != before { scheduleChanged(next: after) }
        if core.moreDue { wakeScheduler() }
    }

    /// Stops accepting operations, finishes those already accepted, and stops the scheduler (and a
    /// shared store's feed).
    public func shutdown() async {
        stopScheduler()
        core.shared?.stopFeed()
        inbox.withLock { $0.closed = true }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { continuation.resume() }
        }
        // Jobs queued before closing run on the writer before the continuation above resumes,
        // because `drain` was scheduled on the same serial queue earlier.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { continuation.resume() }
        }
        hub.finish()
    }

    /// Waits until every operation submitted before this call has committed.
    public func barrier() async {
        _ = try? await perform { _ in () }
    }

    // MARK: - Events

    /// Calls `handler` with every event of one app (or, with `nil`, of every app) from now on,
    /// on the engine's writer, after the event's transaction committed and before the operation that
    /// caused it completes. The handler must return quickly and must not wait for the engine.
    /// With a shared store, logged events — this engine's and every other's — come from the store's
    /// feed instead, in the log's order, moments after their commit.
    ///
    /// - Returns: a token; pass it to ``unsubscribe(_:)`` to stop.
    public func subscribe(app: String?, handler: @escaping @Sendable (EngineEvent) -> Void) -> Int {
        hub.subscribe(app: app, handler: handler)
    }

    /// Stops a subscription made with ``subscribe(app:handler:)``.
    public func unsubscribe(_ token: Int) {
        hub.unsubscribe(token)
    }

    /// A live stream of events, for one app or (with `nil`) every app, from now on.
    ///
    /// For resumable streams, read the log first with ``events(after:app:limit:)``.
    public func events(app: String?) -> AsyncStream<EngineEvent> {
        hub.events(app: app)
    }

    /// Shows one app's notifications (or, with `nil`, every app's) on `surface`, on a queue of the
    /// surface's own, off the writer. Answers from the surface go to ``respond(app:notification:action:userText:)``.
    ///
    /// ```swift
    /// let attachment = engine.attach(TerminalSurface(engine: engine), app: "com.example.alarm")
    /// ```
    @discardableResult
    public func attach(_ surface: any NotificationSurface, app: String?) -> NotificationHub.Attachment {
        hub.attach(surface, app: app)
    }

    /// Events from the store's log after `sequence`, oldest first.
    public func events(after sequence: Int64, app: String?, limit: Int = 1000) async throws -> [EngineEvent] {
        try await read { try $0.events(after: sequence, app: app, limit: limit) }
    }

    /// The oldest event sequence the log still holds (0 when empty).
    public func oldestEventSequence() async throws -> Int64 {
        try await read { try $0.oldestEventSequence() }
    }

    // MARK: - Apps and authorization

    /// The app's record, created on first use.
    public func app(_ app: String) async throws -> AppRecord {
        if let record = try await read({ try $0.app(app) }) { return record }
        return try await perform { try $0.appRecord(app) }
    }

    /// Every app the engine knows.
    public func apps() async throws -> [AppRecord] {
        try await read { try $0.apps() }
    }

    /// A page of the apps: those after `bundleIdentifier` (nil: from the first), at most `limit`.
    public func apps(after bundleIdentifier: String?, limit: Int) async throws -> [AppRecord] {
        try await read { try $0.apps(after: bundleIdentifier, limit: limit) }
    }

    /// `registerForRemoteNotifications()`: the app's record (created on first use) with its device
    /// token, taking pushes again if the app had unregistered; the token stays the same.
    ///
    /// ```swift
    /// let token = try await engine.registerForRemoteNotifications(app: "com.example.chat").deviceToken
    /// ```
    public func registerForRemoteNotifications(app: String) async throws -> AppRecord {
        try await perform { try $0.registerForRemoteNotifications(app: app) }
    }

    /// `unregisterForRemoteNotifications()`: from now a push to the app's device token is answered
    /// 410 `Unregistered`, with the date in ``AppRecord/deviceTokenUnregistered``, until the app
    /// registers again.
    public func unregisterForRemoteNotifications(app: String) async throws -> AppRecord {
        try await perform { try $0.unregisterForRemoteNotifications(app: app) }
    }

    /// Creates or replaces an app's record (service mode: registration, token rotation).
    public func putApp(_ record: AppRecord) async throws {
        try await perform { try $0.putApp(record) }
    }

    /// Sets (or with `nil` clears) the command the service starts to hand the app an answer while
    /// it is not running. Only the owner may call this: it runs code on the user's machine.
    ///
    /// - Returns: the app's record after the change.
    /// - Throws: ``ChimeError`` `notFound` when the app is not registered.
    @discardableResult
    public func setLaunchCommand(_ command: LaunchCommand?, app: String) async throws -> AppRecord {
        try await perform { try $0.setLaunchCommand(command, app: app) }
    }

    /// Removes an app and everything it owns.
    public func removeApp(_ app: String) async throws {
        try await perform { try $0.removeApp(app) }
    }

    /// Asks the user once; later calls return the stored answer.
    ///
    /// - Returns: whether notifications are allowed, and the resulting settings.
    public func requestAuthorization(app: String, options: UNAuthorizationOptions) async throws -> (granted: Bool, settings: NotificationSettings) {
        try await perform { try $0.requestAuthorization(app: app, options: options) }
    }

    /// Answers a waiting question (`chime apps allow|deny`, the web center), or changes the answer.
    public func answerAuthorization(app: String, allow: Bool) async throws -> NotificationSettings {
        try await perform { try $0.answerAuthorization(app: app, allow: allow) }
    }

    /// The app's current settings.
    public func settings(app: String) async throws -> NotificationSettings {
        try await self.app(app).settings
    }

    /// Changes individual settings (what a settings screen does): alerts, sounds, badges, previews.
    public func updateSettings(app: String, _ change: @escaping @Sendable (inout NotificationSettings) -> Void) async throws -> NotificationSettings {
        try await perform { try $0.updateSettings(app: app, change) }
    }

    /// Applies the user's change to an app's settings (see ``SettingsChange`` for what may change).
    public func changeSettings(app: String, _ change: SettingsChange) async throws -> NotificationSettings {
        try await perform { try $0.changeSettings(app: app, change) }
    }

    // MARK: - Categories

    /// Replaces the app's categories.
    public func setCategories(_ categories: [NotificationCategory], app: String) async throws {
        try await withCheckedThrowingContinuation { continuation in
            setCategories(categories, app: app) { continuation.resume(with: $0) }
        }
    }

    /// `setCategories`, with a completion handler; the call order is the processing order.
    public func setCategories(_ categories: [NotificationCategory], app: String,
                              completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        submit({ core in
            try Validation.validate(categories)
            try core.setCategories(categories, app: app)
        }, completion: completion)
    }

    /// The app's categories.
    public func categories(app: String) async throws -> [NotificationCategory] {
        try await read { try $0.categories(app: app) }
    }

    // MARK: - Requests

    /// Adds requests; each replaces a pending request with the same identifier. Requests without a
    /// trigger are delivered at once. Completes after the requests are committed.
    ///
    /// - Returns: each request's next fire date (`nil` for location triggers and immediate delivery).
    /// - Throws: ``UNError`` `notificationsNotAllowed` when the app is not authorized;
    ///   ``ChimeError`` naming the field for invalid input (then nothing is added).
    ///
    /// A large add (more than two ``streamedSlice``s, on a store of its own) is prepared slice by
    /// slice on the caller's thread while the writer writes the slices before: still one
    /// transaction, committed before this returns, with nothing added when any request fails.
    @discardableResult
    public func add(_ requests: [NotificationRequest], app: String) async throws -> [Date?] {
        if requests.count > 2 * Self.streamedSlice && !isStoreShared { return try await streamedAdd(requests, app: app) }
        let prepared = try prepare(requests)
        return try await perform { try $0.add(prepared, app: app) }
    }

    /// How many requests of a large add are prepared at a time while the writer writes.
    static let streamedSlice = 1024

    /// `add` for many requests: each slice checked, encoded and dated here and handed to the
    /// writer, which writes the slices in one transaction of its own as they come. A bad request
    /// in any slice (invalid, or a trigger with no next date) rolls back the slices before it.
    private func streamedAdd(_ requests: [NotificationRequest], app: String) async throws -> [Date?] {
        let now = clock.now
        let feed = SliceFeed()
        return try await withCheckedThrowingContinuation { continuation in
            submit(alone: true, { core -> [Date?] in
                defer { feed.abandon() }
                var firsts: [Date?] = []
                firsts.reserveCapacity(requests.count)
                var scheduled = 0
                while let slice = try feed.next() {
                    let added = try core.add(slice, app: app, announcing: false)
                    firsts += added.firsts
                    scheduled += added.scheduled
                }
                if scheduled > 0 { core.announce(.scheduled(identifiers: []), app: app) }
                return firsts
            }, completion: { continuation.resume(with: $0) })
            // The writer takes each slice as soon as it is here; the feed ends even when the writer
            // stopped listening (it failed, or the engine has shut down).
            var start = 0
            do {
                while start < requests.count, !feed.isAbandoned {
                    let end = min(start + Self.streamedSlice, requests.count)
                    feed.put(try prepare(requests, start..<end, now: now))
                    start = end
                }
                feed.finish(nil)
            } catch {
                feed.finish(error)
            }
        }
    }

    /// `add`, with a completion handler; the call order is the processing order.
    public func add(_ requests: [NotificationRequest], app: String, completion: @escaping @Sendable (Result<[Date?], any Error>) -> Void) {
        let prepared: PreparedAdd
        do {
            prepared = try prepare(requests)
        } catch {
            // Keep the order promise: report through the writer, after earlier operations.
            submit({ _ in throw error }, completion: completion)
            return
        }
        submit({ try $0.add(prepared, app: app) }, completion: completion)
    }

    /// What an add can do before it reaches the writer, on the caller's thread: the checks, the
    /// first fire dates (in the device's zone as last known) and the store encoding.
    private func prepare(_ requests: [NotificationRequest]) throws -> PreparedAdd {
        try prepare(requests, requests.indices, now: clock.now)
    }

    /// `prepare` for the requests at `slice` of an add of `requests` (a streamed add's slice),
    /// each refused with its index in the whole add.
    private func prepare(_ requests: [NotificationRequest], _ slice: Range<Int>, now: Date) throws -> PreparedAdd {
        for index in slice {
            try Validation.validate(requests[index], field: requests.count == 1 ? "" : "[\(index)]",
                                    escalationLimits: configuration.escalationLimits)
        }
        // The whole add (the usual case) is handed on as it is, not copied request by request.
        let taken = slice == requests.indices ? requests : Array(requests[slice])
        return PreparedAdd(taken, now: now, timeZone: deviceZone.withLock { $0 })
    }

    /// The app's pending requests, in the order they were first added.
    public func pending(app: String) async throws -> [PendingRequest] {
        try await read { try $0.pending(app: app) }
    }

    /// A page of the app's pending requests: those first added after `sequence` (0: from the
    /// first), in that order, at most `limit`.
    public func pending(app: String, after sequence: Int64, limit: Int) async throws -> [PendingRequest] {
        try await read { try $0.pending(app: app, after: sequence, limit: limit) }
    }

    /// Removes pending requests by identifier (all of the app's when `identifiers` is `nil`).
    @discardableResult
    public func removePending(app: String, identifiers: [String]?) async throws -> [String] {
        try await perform { try $0.removePending(app: app, identifiers: identifiers) }
    }

    /// Runs an operation without waiting, keeping the call order (for the fire-and-forget API).
    public func removePending(app: String, identifiers: [String]?, completion: @escaping @Sendable (Result<[String], any Error>) -> Void) {
        submit({ try $0.removePending(app: app, identifiers: identifiers) }, completion: completion)
    }

    /// How many requests are pending (one app, or all).
    public func pendingCount(app: String? = nil) async throws -> Int {
        try await read { try $0.pendingCount(app: app) }
    }

    // MARK: - Quarantine

    /// The quarantine: due requests the scheduler could not deliver and set aside (all apps), after
    /// entry `id`, oldest first, at most `limit`. See ``QuarantinedRequest``.
    public func quarantined(after id: Int64 = 0, limit: Int = 1000) async throws -> [QuarantinedRequest] {
        try await read { try $0.quarantined(after: id, limit: limit) }
    }

    /// How many requests are in the quarantine.
    public func quarantinedCount() async throws -> Int {
        try await read { try $0.quarantinedCount() }
    }

    /// Removes a quarantine entry (the owner has seen it); returns whether it was there.
    @discardableResult
    public func removeQuarantined(_ id: Int64) async throws -> Bool {
        try await perform { try $0.store.removeQuarantined(id: id) }
    }

    // MARK: - Delivered

    /// The app's delivered notifications, newest first, optionally of one thread.
    public func delivered(app: String, thread: String? = nil) async throws -> [DeliveredNotification] {
        try await read { try $0.delivered(app: app, thread: thread) }
    }

    /// A page of the app's delivered notifications, newest first, after `cursor` (nil: from the
    /// newest), at most `limit`.
    public func delivered(app: String, thread: String?, after cursor: DeliveredCursor?, limit: Int) async throws -> [DeliveredNotification] {
        try await read { try $0.delivered(app: app, thread: thread, after: cursor, limit: limit) }
    }

    /// Removes delivered notifications (all of the app's, or of a thread, when `identifiers` is `nil`).
    @discardableResult
    public func removeDelivered(app: String, identifiers: [String]?, thread: String? = nil) async throws -> [String] {
        try await perform { try $0.removeDelivered(app: app, identifiers: identifiers, thread: thread) }
    }

    public func removeDelivered(app: String, identifiers: [String]?, completion: @escaping @Sendable (Result<[String], any Error>) -> Void) {
        submit({ try $0.removeDelivered(app: app, identifiers: identifiers, thread: nil) }, completion: completion)
    }

    /// How many notifications are delivered (one app, or all).
    public func deliveredCount(app: String? = nil) async throws -> Int {
        try await read { try $0.deliveredCount(app: app) }
    }

    // MARK: - Badge

    /// Sets the app's badge; 0 clears it.
    ///
    /// - Throws: ``UNError`` `badgeInputInvalid` for a negative count.
    public func setBadge(_ count: Int, app: String) async throws {
        try await perform { try $0.setBadge(count, app: app) }
    }

    // MARK: - Firing

    /// The next date a timed request fires: from memory (the window as of the last commit), or
    /// with a shared store from the store (other engines add and fire too).
    public func nextFireDate() async throws -> Date? {
        if !isStoreShared { return nextDate.withLock { $0 } }
        return try await perform { try $0.nextFireDate() }
    }

    /// Delivers every timed request due at `now` (in order of due date), in transactions of at most
    /// ``Configuration/fireBatch``.
    ///
    /// - Returns: the notifications delivered.
    @discardableResult
    public func fireDue(now: Date) async throws -> [DeliveredNotification] {
        var all: [DeliveredNotification] = []
        try await fireDue(now: now) { all += $0 }
        return all
    }

    /// `fireDue(now:)`, handing each transaction's deliveries to `collect` (the scheduler passes
    /// nothing, so a burst builds no list).
    /// - Returns: how many due requests were taken (with a shared store: claimed).
    @discardableResult
    private func fireDue(now: Date, collect: ((_ delivered: [DeliveredNotification]) -> Void)?) async throws -> Int {
        let wanted = collect != nil
        var claimed = 0
        while true {
            let (delivered, more, taken) = try await perform { core in
                let delivered = try core.fireDue(now: now, limit: core.configuration.fireBatch, listing: wanted)
                return (wanted ? delivered.map(\.notification) : [], core.moreDue, core.claimed)
            }
            collect?(delivered)
            claimed += taken
            if !more { return claimed }
        }
    }

    /// Delivers a remote notification at once (the push endpoint and the simulator's `push`). A
    /// delivered notification with the same identifier is replaced (APNs' collapse id).
    ///
    /// - Parameter expiration: APNs' `apns-expiration` (``APNsRequestHeaders/Expiration``): how
    ///   long the push may be held for a device that is away. The engine delivers it now whatever
    ///   it says — APNs too tries a push at least once — and the notification keeps it as its
    ///   request's ``NotificationRequest/expiration`` (`0`, "now or never", is the arrival), for
    ///   surfaces that hand it on to a device: Web Push's `TTL`.
    @discardableResult
    public func deliverPush(_ content: NotificationContent, identifier: String, silent: Bool, app: String,
                            date: Date? = nil, expiration: NotificationDeadline? = nil) async throws -> DeliveredNotification? {
        try Validation.validateIdentifier(identifier, field: "identifier")
        try Validation.validate(content)
        if let expiration { try Validation.validate(expiration, field: "expiration") }
        return try await perform {
            try $0.deliverPush(content, identifier: identifier, silent: silent, app: app, date: date, expiration: expiration)
        }
    }

    // MARK: - Device state

    /// Tells the engine where the device is; location triggers whose region was entered or left fire.
    @discardableResult
    public func updateLocation(_ coordinate: Coordinate) async throws -> [DeliveredNotification] {
        guard coordinate.isValid else {
            throw ChimeError(.invalidValue, field: "latitude",
                             "(\(coordinate.latitude), \(coordinate.longitude)) is not a position; latitude -90 to 90, longitude -180 to 180")
        }
        return try await perform { try $0.updateLocation(coordinate) }
    }

    /// The last known location.
    public func location() async throws -> Coordinate? {
        try await perform { $0.location }
    }

    /// Changes the device's time zone: calendar triggers without a zone of their own move with it.
    public func setTimeZone(_ timeZone: TimeZone) async throws {
        try await perform { core in
            try core.setTimeZone(timeZone)
            self.deviceZone.withLock { $0 = core.timeZone }
        }
    }

    /// The device's time zone.
    public func timeZone() async throws -> TimeZone {
        if !isStoreShared { return deviceZone.withLock { $0 } }
        return try await perform { $0.timeZone }
    }

    // MARK: - Responses

    /// Records the user's answer: checks it against the notification's category, removes the
    /// notification from the delivered list, and stores the response in the app's outbox.
    ///
    /// - Returns: the stored response, or `nil` for a dismissal of a notification whose category
    ///   has no `.customDismissAction` (the app does not hear of it).
    /// - Throws: ``ChimeError`` `notFound` when the notification is not delivered, `unknownAction`
    ///   when the action is not in its category, `invalidValue` for text on a non-text action or a
    ///   `surface` that is not 1 to 64 letters, digits, `.`, `-` or `_` (``Validation/validateSurface(_:field:)``).
    /// - Parameter surface: where the answer came from (`web`, `desktop`, `webPush`, `api` …), kept
    ///   in an escalating notification's ``EscalationReceipt``.
    public func respond(app: String, notification identifier: String, action: String, userText: String? = nil,
                        surface: String? = nil) async throws -> NotificationResponse? {
        try await perform { try $0.respond(app: app, identifier: identifier, action: action, userText: userText, surface: surface) }
    }

    /// The receipt of the app's escalating notification with this identifier (its latest
    /// delivery's): alerts so far, whether and how it was answered, whether its window ended.
    /// Kept after the notification is removed, for ``Configuration/receiptRetentionAge`` after
    /// the escalation ended. `nil` when there is none.
    ///
    /// ```swift
    /// if let receipt = try await engine.receipt(app: "com.example.alarm", notification: "wake"), receipt.acknowledged {
    ///     print("answered with", receipt.actionIdentifier ?? "", "on", receipt.surface ?? "")
    /// }
    /// ```
    public func receipt(app: String, notification identifier: String) async throws -> EscalationReceipt? {
        try await read { try $0.receipt(app: app, identifier: identifier) }
    }

    /// The app's outbox: responses not yet acknowledged, oldest first.
    public func outbox(app: String) async throws -> [NotificationResponse] {
        try await read { try $0.responses(app: app) }
    }

    /// A page of the app's outbox: responses after `id`, oldest first, at most `limit`.
    public func outbox(app: String, after id: Int64, limit: Int) async throws -> [NotificationResponse] {
        try await read { try $0.responses(app: app, after: id, limit: limit) }
    }

    /// Acknowledges a response: it leaves the outbox and is never handed over again.
    @discardableResult
    public func acknowledge(response id: Int64, app: String) async throws -> Bool {
        try await perform { try $0.store.removeResponse(app: app, id: id) }
    }

    // MARK: - Scheduler

    /// Starts firing notifications on the clock: the engine sleeps until the next fire date and
    /// delivers what is due, including what fell due while nothing ran (once, dated when due).
    public func startScheduler() {
        schedulerState.withLock { state in
            guard state.task == nil else { return }
            state.task = Task.detached(priority: .userInitiated) { [weak self] in
                await self?.schedulerLoop()
            }
        }
    }

    /// Stops the scheduler started by ``startScheduler()``.
    public func stopScheduler() {
        schedulerState.withLock { state in
            state.task?.cancel()
            state.sleeper?.cancel()
            state.task = nil
            state.sleeper = nil
        }
    }

    private func schedulerLoop() async {
        // When the last firing transaction started: the next one waits for `firingInterval` after it.
        var lastFiring = Date.distantPast
        // Whether memory was tidied since the last firing (once per quiet spell).
        var tidied = false
        while !Task.isCancelled {
            // Anything that changes the schedule from here on sets `changed`, so a change that
            // commits while the next date is being read is never slept through.
            schedulerState.withLock { $0.changed = false }
            let now = clock.now
            do {
                let next = try await nextFireDate()
                let floor = lastFiring.addingTimeInterval(configuration.firingInterval)
                if let next, next <= now, now >= floor {
                    lastFiring = now
                    tidied = false
                    // With a shared store the next date may belong to a request another engine is
                    // firing right now: when there was nothing to claim, give it a moment.
                    if try await fireDue(now: now, collect: nil) == 0 && isStoreShared {
                        try? await Sleep.for(.milliseconds(5))
                    }
                    continue
                }
                // A quiet spell before `next`: wake `memoryTidyLead` ahead of it to tidy memory first.
                var tidyLead: TimeInterval?
                if !tidied, let next, next.timeIntervalSince(now) > 1 { tidyLead = configuration.memoryTidyLead }
                if let sleeper = sleeper(next: next, now: now, floor: floor, lead: tidyLead) {
                    let slept = await sleeper.result
                    if tidyLead != nil, case .success = slept {
                        MemoryTidy.settle()
                        tidied = true
                    }
                }
            } catch {
                // A store failure: retry after a pause rather than spinning.
                try? await Sleep.for(.milliseconds(200))
            }
        }
    }

    /// The scheduler's sleep until `next` (an hour without one), or `nil` when the schedule changed
    /// since the loop looked: until `floor` while coalescing, `lead` earlier when memory is to be
    /// tidied first, at most ``Configuration/sharedStoreRecheck`` with a shared store.
    private func sleeper(next: Date?, now: Date, floor: Date, lead: TimeInterval?) -> Task<Void, any Error>? {
        schedulerState.withLock { state -> Task<Void, any Error>? in
            if state.changed { return nil }
            let clock = self.clock
            var deadline = next ?? now.addingTimeInterval(3600)
            // Due, but the last firing was under `firingInterval` ago: a short wait that
            // no schedule change shortens (nothing can be due sooner than now).
            let coalescing = deadline < floor
            if coalescing { deadline = floor }
            state.target = coalescing ? .distantPast : next
            if let lead { deadline = deadline.addingTimeInterval(-lead) }
            if self.isStoreShared { deadline = min(deadline, now.addingTimeInterval(self.configuration.sharedStoreRecheck)) }
            let task = Task { try await clock.sleep(until: deadline) }
            state.sleeper = task
            return task
        }
    }

    private func scheduleChanged(next: Date?) {
        schedulerState.withLock { state in
            state.changed = true
            guard let next, let sleeper = state.sleeper else { return }
            if state.target.map({ next < $0 }) ?? true { sleeper.cancel() }
        }
    }

    /// Another engine on a shared store scheduled a request for `date` (`nil`: anything may have
    /// changed).
    private func scheduleChangedElsewhere(_ date: Date?) {
        if let date { scheduleChanged(next: date) } else { wakeScheduler() }
    }

    private func wakeScheduler() {
        schedulerState.withLock { state in
            state.changed = true
            state.sleeper?.cancel()
        }
    }
}

/// Holds the writer-confined core, and checks at run time that it is used on the writer's queue:
/// ``value`` stops the program (`dispatchPrecondition`) when called anywhere else, so the
/// confinement rests on a check, not a comment. `@unchecked Sendable` for that reason: the core is
/// reached only through ``value`` on the writer, or through ``beforeShared`` in the engine's `init`,
/// before the engine exists for any other thread; ``shared`` is immutable.
final class EngineCoreBox: @unchecked Sendable {
    private let core: EngineCore
    private let queue: DispatchQueue
    /// The core's shared store (immutable, so readable from any thread: the feed is stopped off the
    /// writer).
    let shared: (any SharedNotificationStore)?

    init(queue: DispatchQueue, _ core: EngineCore) {
        self.core = core
        self.queue = queue
        shared = core.shared
    }

    /// The core, on the writer's queue only.
    var value: EngineCore {
        dispatchPrecondition(condition: .onQueue(queue))
        return core
    }

    /// The core while the engine is being made (no other thread can reach it yet).
    var beforeShared: EngineCore { core }
}

/// A queued operation. `@unchecked Sendable`: created on the caller's thread, then only touched on
/// the writer queue.
final class Job: @unchecked Sendable {
    let run: (EngineCore) throws -> Void
    let finish: ((any Error)?) -> Void
    /// Runs in a transaction of its own, which any error it throws rolls back (a streamed add,
    /// whose later slices can fail after earlier ones were written).
    let alone: Bool
    init(run: @escaping (EngineCore) throws -> Void, finish: @escaping ((any Error)?) -> Void, alone: Bool = false) {
        self.run = run
        self.finish = finish
        self.alone = alone
    }
}

/// The slices of a streamed add, from the caller's thread (`put`, then `finish`) to the writer
/// (`next`, which waits for the next slice: `nil` at the end, the caller's error if it failed;
/// `abandon` when the writer stops early).
final class SliceFeed: Sendable {
    private struct State {
        /// Slices not taken yet (a taken one is let go: a large add is not held twice).
        var slices: [PreparedAdd] = []
        var finished = false
        var failure: (any Error)?
        var abandoned = false
    }

    private let state = Mutex(State())
    private let ready = DispatchSemaphore(value: 0)

    func put(_ slice: PreparedAdd) {
        state.withLock { $0.slices.append(slice) }
        ready.signal()
    }

    func finish(_ failure: (any Error)?) {
        state.withLock { state in
            state.finished = true
            state.failure = failure
        }
        ready.signal()
    }

    var isAbandoned: Bool { state.withLock { $0.abandoned } }

    func abandon() { state.withLock { $0.abandoned = true } }

    func next() throws -> PreparedAdd? {
        while true {
            let taken = state.withLock { state -> Result<PreparedAdd?, any Error>? in
                if !state.slices.isEmpty { return .success(state.slices.removeFirst()) }
                guard state.finished else { return nil }
                if let failure = state.failure { return .failure(failure) }
                return .success(nil)
            }
            if let taken { return try taken.get() }
            ready.wait()
        }
    }
}

/// An operation's result between running and committing. `@unchecked Sendable`: written and read on
/// the writer queue only.
final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
