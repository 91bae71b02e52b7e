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
        public var retention: EventRetention {
            EventRetention(count: eventRetention, bytes: eventRetentionBytes, age: eventRetentionAge)
        }
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
    let queue: DispatchQueue
    /// The store's connections beside the writer (`nil`: reads run on the writer), and the threads
    /// they are used on.
    let readers: (any NotificationStoreReaders)?
    let readQueue = DispatchQueue(label: "chime.engine.readers", qos: .userInitiated, attributes: .concurrent)
    /// The next date a timed request fires, as the writer last saw it after a commit (embedded
    /// store: the window; a shared store's comes from the store instead).
    let nextDate = Mutex<Date?>(nil)
    let inbox = Mutex(Inbox())
    /// Where events go after each commit: subscribers, presenters and attached surfaces.
    public let hub = NotificationHub()
    let schedulerState = Mutex(SchedulerState())
    /// The engine's clock.
    public let clock: any NotificationClock
    /// Whether other engines share the store (``SharedNotificationStore``).
    public let isStoreShared: Bool
    /// The device's time zone as the writer last set it, so adds can compute fire dates on the
    /// caller's thread (the writer checks it is still the zone, and recomputes when not).
    let deviceZone: Mutex<TimeZone>
    let configuration: Configuration
    /// Set by a shared store's feed when another engine changed device state.
    let deviceChangedElsewhere = Atomic<Bool>(false)
    /// Who is told when another engine gives back Web Push claims (the Web Push sender).
    let webPushReleasedHandler = Mutex<(@Sendable () -> Void)?>(nil)
    /// For tests: called on the writer after each slice of a streamed add is written, inside the
    /// add's open transaction (see ``onStreamedSliceWritten(_:)``).
    let streamedSliceWritten = Mutex<(@Sendable (_ written: Int) -> Void)?>(nil)

    struct Inbox {
        var jobs: [Job] = []
        var draining = false
        var closed = false
        /// The jobs of the batch the writer finished last, while more were waiting: the next
        /// caller to submit lets them go (see `drain`).
        var done: [Job] = []
    }

    struct SchedulerState {
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
    public init(
        store: any NotificationStore, clock: any NotificationClock = SystemClock(),
        timeZone: TimeZone = .current, policy: any AuthorizationPolicy = FixedAuthorizationPolicy(.grant),
        configuration: Configuration = Configuration()
    ) {
        self.clock = clock
        self.configuration = configuration
        readers = store.readers
        let queue = DispatchQueue(label: "chime.engine.writer", qos: .userInitiated)
        self.queue = queue
        self.core = EngineCoreBox(
            queue: queue,
            EngineCore(
                store: store, clock: clock, timeZone: timeZone, policy: policy,
                configuration: configuration))
        deviceZone = Mutex(timeZone)
        let hub = self.hub
        core.beforeShared.isInFront = { app in hub.hasPresenter(app: app) }
        let shared = store as? any SharedNotificationStore
        isStoreShared = shared != nil
        // The feed first, so that what other engines commit while this one loads is not missed.
        shared?.startFeed(
            SharedStoreFeed(
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

    /// Stops hearing what other engines on a shared store commit (the store's feed), while this one
    /// goes on serving; only a new engine hears them again. For tests of a node whose feed is
    /// behind; nothing on a store of its own.
    package func stopFeed() {
        core.shared?.stopFeed()
    }

    /// Calls `handler` on the writer each time a streamed add (a large ``add(_:app:)``) has written
    /// a slice, with how many of its requests are written so far, before the add commits: a test
    /// can reach "while a large add is under way" every run instead of by timing (the writer waits
    /// while `handler` runs). `nil` removes it. Nothing else calls it.
    ///
    /// ```swift
    /// engine.onStreamedSliceWritten { written in print("\(written) written, not committed") }
    /// ```
    package func onStreamedSliceWritten(_ handler: (@Sendable (_ written: Int) -> Void)?) {
        streamedSliceWritten.withLock { $0 = handler }
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
}
