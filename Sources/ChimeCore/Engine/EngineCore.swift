import Foundation

/// The engine's state machine: the rules, applied to the store. Runs only on the engine's writer,
/// always inside a store transaction. Every operation checks before it writes (see
/// `NotificationEngine.submit`).
final class EngineCore {
    package let store: any NotificationStore
    /// The store, when other engines share it (see ``SharedNotificationStore``).
    package let shared: (any SharedNotificationStore)?
    package let clock: any NotificationClock
    package let policy: any AuthorizationPolicy
    package let configuration: NotificationEngine.Configuration
    package var timeZone: TimeZone
    package var location: Coordinate?
    /// The zone the engine was made with, for a store that has none recorded.
    let initialTimeZone: TimeZone
    var window: ScheduleWindow
    /// The soonest ends of relevance of delivered notifications (``NotificationRequest/autoDismiss``),
    /// as `window` holds fire dates: the scheduler removes each when it comes.
    var dismissals: ScheduleWindow
    /// The soonest next steps of escalating notifications (``NotificationRequest/escalation``), as
    /// `window` holds fire dates: the scheduler alerts each again when it comes.
    var escalations: ScheduleWindow
    /// The focus modes and when they are next looked at (EngineCore+Focus.swift).
    var focus = FocusState()
    /// The apps' scheduled summaries and when they are next looked at (EngineCore+Summary.swift).
    var summaries = SummaryState()
    /// Set when a fire batch was full, so the scheduler runs again at once.
    package var moreDue = false
    /// How many due requests the last `fireDue` took (with a shared store: claimed).
    package var claimed = 0
    var pendingEvents: [EngineEvent] = []
    /// Due requests a firing transaction found it cannot deliver: moved to the quarantine at the
    /// start of the next firing transaction, and forgotten once one that moved them commits (a
    /// rolled-back transaction leaves them here).
    package var toQuarantine: [UndeliverableRequest] = []
    /// Whether the transaction now running moved `toQuarantine` aside.
    var quarantinedInTransaction = false
    var appCache: [LiteralKey: AppRecord] = [:]
    /// Each app's usage as counted here since the store was last asked (see ``StorageQuota``).
    var usage: [LiteralKey: UsageTally] = [:]
    /// Each app's categories by identifier, as last read or written here (deliveries carry theirs).
    var categoryCache: [LiteralKey: [LiteralKey: NotificationCategory]] = [:]
    /// Whether an app is in front — its `willPresent` is the hub's presenter for it — so its answer
    /// decides whether a delivery's badge is applied (set by the engine).
    var isInFront: @Sendable (String) -> Bool = { _ in false }

    init(
        store: any NotificationStore, clock: any NotificationClock, timeZone: TimeZone, policy: any AuthorizationPolicy,
        configuration: NotificationEngine.Configuration
    ) {
        self.store = store
        self.shared = store as? any SharedNotificationStore
        self.clock = clock
        self.policy = policy
        self.configuration = configuration
        self.timeZone = timeZone
        self.initialTimeZone = timeZone
        self.window = ScheduleWindow(capacity: configuration.windowCapacity)
        self.dismissals = ScheduleWindow(capacity: configuration.windowCapacity)
        self.escalations = ScheduleWindow(capacity: configuration.windowCapacity)
    }

    /// Loads device state and the window. Errors here surface on the first operation instead.
    package func open() {
        loadDeviceState()
        refillWindows()
    }

    private func loadDeviceState() {
        // A store that cannot be read now leaves what is in memory.
        if case .success(let stored) = Result(catching: { try store.value(forKey: "device.timeZone") }) {
            timeZone = stored.flatMap(TimeZone.init(identifier:)) ?? initialTimeZone
        }
        if case .success(let stored) = Result(catching: { try store.value(forKey: "device.location") }) {
            let parts = stored?.split(separator: ",").compactMap { Double($0) } ?? []
            location = parts.count == 2 ? Coordinate(latitude: parts[0], longitude: parts[1]) : nil
        }
        loadFocus()
        loadSummaries()
    }

    /// Called at the start of each transaction. With a shared store, apps and categories are read
    /// again in each transaction (another engine may have changed them), and device state when
    /// another engine changed it.
    package func beginTransaction(deviceChanged: Bool) {
        guard shared != nil else { return }
        appCache.removeAll(keepingCapacity: true)
        categoryCache.removeAll(keepingCapacity: true)
        if deviceChanged { loadDeviceState() }
    }

    /// Forgets what the failed transaction did to memory.
    package func abandon() {
        // The zone and location as the store still has them (a rolled-back change set them here).
        loadDeviceState()
        pendingEvents.removeAll()
        quarantinedInTransaction = false
        appCache.removeAll()
        usage.removeAll()
        categoryCache.removeAll()
        moreDue = false
        refillWindows()
    }

    /// Called after a transaction commits.
    package func committed() {
        if quarantinedInTransaction {
            toQuarantine.removeAll()
            quarantinedInTransaction = false
        }
    }

    package func takeEvents() -> [EngineEvent] {
        defer { pendingEvents.removeAll() }
        // A shared store's logged events come back through its feed, numbered in commit order.
        if shared != nil { return pendingEvents.filter { $0.sequence == 0 } }
        return pendingEvents
    }

    /// Reloads a window with the store's soonest entries of its kind (left as it is when the
    /// store cannot answer: the next operation reports the store's error).
    private func refill(
        _ window: inout ScheduleWindow,
        from soonest: (Int) throws -> [(app: String, identifier: String, date: Date, sequence: Int64)]
    ) {
        if let entries = try? soonest(window.capacity) { window.load(entries) }
    }

    func refillWindow() { refill(&window) { try store.soonest(limit: $0) } }
    func refillDismissals() { refill(&dismissals) { try store.soonestDismissals(limit: $0) } }
    func refillEscalations() { refill(&escalations) { try store.soonestEscalations(limit: $0) } }

    private func refillWindows() {
        refillWindow()
        refillDismissals()
        refillEscalations()
    }

    var eventsSincePrune = 0
    var bytesSincePrune = 0

    /// Logs the event, and keeps the log within its count, bytes and age: pruned every tenth of
    /// the count (at least 1,000 events) or of the bytes, whichever comes first. A prune leaves
    /// nine tenths of the bytes, so the log never holds more than its byte bound.
    func log(_ event: EngineEvent) throws {
        var event = event
        if configuration.recordsEvents {
            // Encoded once: the bytes the store keeps are the bytes the bound counts (large events,
            // a delivery carrying its notification, bring it near sooner).
            event.sequence = 0
            let encoded = RecordCodec.encode(event)
            event.sequence = try store.appendEvent(event, encoded: encoded)
            let retention = configuration.retention
            eventsSincePrune += 1
            bytesSincePrune += encoded.count
            if eventsSincePrune >= max(1000, retention.count / 10) || bytesSincePrune >= retention.bytes / 10 {
                var target = retention
                target.bytes -= retention.bytes / 10
                try store.pruneEvents(target, now: clock.now)
                // Ended escalations' receipts, at the same pace (an index of only the ended ones).
                try store.pruneReceipts(endedBefore: clock.now.addingTimeInterval(-configuration.receiptRetentionAge))
                eventsSincePrune = 0
                bytesSincePrune = 0
            }
        }
        pendingEvents.append(event)
    }

    func log(_ payload: EngineEvent.Payload, app: String, date: Date? = nil) throws {
        try log(EngineEvent(app: app, date: date ?? clock.now, payload: payload))
    }

    /// Tells subscribers without writing to the event log: for changes a surface refreshes from,
    /// which a resumed stream need not replay.
    package func announce(_ payload: EngineEvent.Payload, app: String) {
        pendingEvents.append(EngineEvent(app: app, date: clock.now, payload: payload))
    }
}
