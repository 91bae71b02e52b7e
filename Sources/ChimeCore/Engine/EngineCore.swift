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
    private let initialTimeZone: TimeZone
    var window: ScheduleWindow
    /// The soonest ends of relevance of delivered notifications (``NotificationRequest/autoDismiss``),
    /// as `window` holds fire dates: the scheduler removes each when it comes.
    var dismissals: ScheduleWindow
    /// The soonest next steps of escalating notifications (``NotificationRequest/escalation``), as
    /// `window` holds fire dates: the scheduler alerts each again when it comes.
    var escalations: ScheduleWindow
    /// Set when a fire batch was full, so the scheduler runs again at once.
    package var moreDue = false
    /// How many due requests the last `fireDue` took (with a shared store: claimed).
    package var claimed = 0
    private var pendingEvents: [EngineEvent] = []
    /// Due requests a firing transaction found it cannot deliver: moved to the quarantine at the
    /// start of the next firing transaction, and forgotten once one that moved them commits (a
    /// rolled-back transaction leaves them here).
    package var toQuarantine: [UndeliverableRequest] = []
    /// Whether the transaction now running moved `toQuarantine` aside.
    private var quarantinedInTransaction = false
    private var appCache: [LiteralKey: AppRecord] = [:]
    /// Each app's usage as counted here since the store was last asked (see ``StorageQuota``).
    private var usage: [LiteralKey: UsageTally] = [:]
    /// Each app's categories by identifier, as last read or written here (deliveries carry theirs).
    private var categoryCache: [LiteralKey: [LiteralKey: NotificationCategory]] = [:]
    /// Whether an app is in front — its `willPresent` is the hub's presenter for it — so its answer
    /// decides whether a delivery's badge is applied (set by the engine).
    var isInFront: @Sendable (String) -> Bool = { _ in false }

    init(store: any NotificationStore, clock: any NotificationClock, timeZone: TimeZone, policy: any AuthorizationPolicy,
         configuration: NotificationEngine.Configuration) {
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
    private func refill(_ window: inout ScheduleWindow,
                        from soonest: (Int) throws -> [(app: String, identifier: String, date: Date, sequence: Int64)]) {
        if let entries = try? soonest(window.capacity) { window.load(entries) }
    }

    private func refillWindow() { refill(&window) { try store.soonest(limit: $0) } }
    private func refillDismissals() { refill(&dismissals) { try store.soonestDismissals(limit: $0) } }
    private func refillEscalations() { refill(&escalations) { try store.soonestEscalations(limit: $0) } }

    private func refillWindows() {
        refillWindow()
        refillDismissals()
        refillEscalations()
    }

    private var eventsSincePrune = 0
    private var bytesSincePrune = 0

    /// Logs the event, and keeps the log within its count, bytes and age: pruned every tenth of
    /// the count (at least 1,000 events) or of the bytes, whichever comes first. A prune leaves
    /// nine tenths of the bytes, so the log never holds more than its byte bound.
    private func log(_ event: EngineEvent) throws {
        var event = event
        if configuration.recordsEvents {
            event.sequence = try store.appendEvent(event)
            let retention = configuration.retention
            eventsSincePrune += 1
            // Large events (a delivery carries its notification) bring the byte bound near sooner.
            if case .delivered = event.payload { bytesSincePrune += RecordCodec.encode(event).count } else { bytesSincePrune += 256 }
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

    private func log(_ payload: EngineEvent.Payload, app: String, date: Date? = nil) throws {
        try log(EngineEvent(app: app, date: date ?? clock.now, payload: payload))
    }

    /// Tells subscribers without writing to the event log: for changes a surface refreshes from,
    /// which a resumed stream need not replay.
    package func announce(_ payload: EngineEvent.Payload, app: String) {
        pendingEvents.append(EngineEvent(app: app, date: clock.now, payload: payload))
    }

    // MARK: Apps

    package func appRecord(_ app: String) throws -> AppRecord {
        // Before the cache: only a valid (ASCII) bundle identifier names an app, whichever adapter
        // passed it, so nothing is ever stored under a name the store would not find again.
        try Validation.validateBundleIdentifier(app)
        let key = LiteralKey(app)
        if let cached = appCache[key] { return cached }
        if let stored = try store.app(app) {
            appCache[key] = stored
            return stored
        }
        let record = AppRecord(bundleIdentifier: app, created: clock.now, deviceToken: Self.makeDeviceToken())
        try store.putApp(record)
        appCache[key] = record
        return record
    }

    package func putApp(_ record: AppRecord) throws {
        try save(record)
        announce(.app(.updated), app: record.bundleIdentifier)
    }

    /// Sets or clears the app's background-launch command (the owner's call, never the app's).
    package func setLaunchCommand(_ command: LaunchCommand?, app: String) throws -> AppRecord {
        guard var record = try store.app(app) else {
            throw ChimeError(.notFound, field: "app", "no app \(app); register it with `chime apps add \(app)`")
        }
        record.launchCommand = command
        try putApp(record)
        return record
    }

    func removeApp(_ app: String) throws {
        try store.removeApp(app)
        dismissals.removeApp(app)
        escalations.removeApp(app)
        appCache[LiteralKey(app)] = nil
        categoryCache[LiteralKey(app)] = nil
        usage[LiteralKey(app)] = nil
        window.removeApp(app)
        announce(.app(.removed), app: app)
    }

    private func save(_ record: AppRecord) throws {
        try store.putApp(record)
        appCache[LiteralKey(record.bundleIdentifier)] = record
    }

    // MARK: Categories

    package func categories(app: String) throws -> [NotificationCategory] {
        try store.categories(app: app)
    }

    package func setCategories(_ categories: [NotificationCategory], app: String) throws {
        try store.setCategories(categories, app: app)
        categoryCache[LiteralKey(app)] = Dictionary(categories.map { (LiteralKey($0.identifier), $0) }, uniquingKeysWith: { first, _ in first })
        announce(.categories(categories), app: app)
    }

    /// The app's category with this identifier, from the cache (filled from the store once).
    private func category(_ identifier: String, app: String) throws -> NotificationCategory? {
        guard !identifier.isEmpty else { return nil }
        if let cached = categoryCache[LiteralKey(app)] { return cached[LiteralKey(identifier)] }
        let all = Dictionary(try store.categories(app: app).map { (LiteralKey($0.identifier), $0) }, uniquingKeysWith: { first, _ in first })
        categoryCache[LiteralKey(app)] = all
        return all[LiteralKey(identifier)]
    }

    /// `registerForRemoteNotifications()`: the app's record, registered again if it had
    /// unregistered (with the same device token, as iOS gives an app that stays installed).
    package func registerForRemoteNotifications(app: String) throws -> AppRecord {
        var record = try appRecord(app)
        if record.deviceTokenUnregistered != nil {
            record.deviceTokenUnregistered = nil
            try putApp(record)
        }
        return record
    }

    /// `unregisterForRemoteNotifications()`: pushes to the app's device token are answered 410
    /// `Unregistered` from now (the first unregistration's date is kept until it registers again).
    package func unregisterForRemoteNotifications(app: String) throws -> AppRecord {
        var record = try appRecord(app)
        if record.deviceTokenUnregistered == nil {
            record.deviceTokenUnregistered = clock.now
            try putApp(record)
        }
        return record
    }

    static func makeDeviceToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    package func requestAuthorization(app: String, options: UNAuthorizationOptions) throws -> (granted: Bool, settings: NotificationSettings) {
        var record = try appRecord(app)
        let status = record.settings.authorizationStatus
        if status == .notDetermined || (status == .provisional && !options.contains(.provisional)) {
            let decision: AuthorizationDecision = options.contains(.provisional) ? .grant : policy.decide(app: app, options: options)
            record.requestedOptions = options
            record.promptPending = decision == .ask
            record.settings = Presentation.settings(after: decision, options: options, previous: record.settings)
            try save(record)
            try log(.settings(record.settings), app: app)
        }
        return (record.settings.authorizationStatus.allowsDelivery, record.settings)
    }

    package func answerAuthorization(app: String, allow: Bool) throws -> NotificationSettings {
        var record = try appRecord(app)
        var options = record.requestedOptions
        if options.isEmpty { options = [.alert, .sound, .badge] }
        options.remove(.provisional)
        record.settings = Presentation.settings(after: allow ? .grant : .deny, options: options, previous: record.settings)
        record.promptPending = false
        try save(record)
        try log(.settings(record.settings), app: app)
        return record.settings
    }

    package func updateSettings(app: String, _ change: (inout NotificationSettings) -> Void) throws -> NotificationSettings {
        var record = try appRecord(app)
        change(&record.settings)
        try save(record)
        try log(.settings(record.settings), app: app)
        return record.settings
    }

    package func changeSettings(app: String, _ change: SettingsChange) throws -> NotificationSettings {
        var record = try appRecord(app)
        record.settings = try record.settings.applying(change, app: app, requested: record.requestedOptions)
        try save(record)
        try log(.settings(record.settings), app: app)
        return record.settings
    }

    package func setBadge(_ count: Int, app: String) throws {
        if let refusal = Validation.badgeRefusal(count, field: "badge") { throw UNError(.badgeInputInvalid, refusal) }
        var record = try appRecord(app)
        guard record.badge != count else { return }
        record.badge = count
        try save(record)
        announce(.app(.updated), app: app)
    }

    /// A delivery's badge, applied after the app in front answered `willPresent` with `.badge` (or
    /// stopped being in front): only if the user still allows badges.
    package func applyDeferredBadge(_ count: Int, app: String) throws {
        guard try appRecord(app).settings.badgeSetting == .enabled else { return }
        try setBadge(count, app: app)
    }

    // MARK: Requests

    package func add(_ requests: [NotificationRequest], app: String) throws -> [Date?] {
        try add(PreparedAdd(requests, now: clock.now, timeZone: timeZone), app: app)
    }

    package func add(_ prepared: PreparedAdd, app: String) throws -> [Date?] {
        try add(prepared, app: app, announcing: true).firsts
    }

    /// `add`, announcing the scheduled requests (`.scheduled`) only when `announcing`; a streamed
    /// add announces once for all its slices.
    /// - Returns: the fire dates, and how many requests were scheduled (not delivered at once).
    package func add(_ prepared: PreparedAdd, app: String, announcing: Bool) throws -> (firsts: [Date?], scheduled: Int) {
        let record = try appRecord(app)
        guard record.settings.authorizationStatus.allowsDelivery else {
            throw UNError(.notificationsNotAllowed,
                          "notifications are not allowed for \(app) (authorization: \(record.settings.authorizationStatus.name)); request authorization first")
        }
        let requests = prepared.requests, now = prepared.now
        // Every fire date is known before anything is written, so a bad request fails alone. They
        // were computed on the caller's thread; a time zone change since then means again, here.
        let computed = prepared.timeZone == timeZone.identifier ? prepared.firsts
            : requests.map { PreparedAdd.first(of: $0, now: now, timeZone: timeZone) }
        // A calendar trigger that matches no future date is accepted and never fires, as on iOS
        // (it still replaces a pending request of its identifier), unless the configuration refuses it.
        var neverFires: Set<Int> = []
        let firsts: [Date?] = try computed.enumerated().map { index, first in
            if case .failure(let error) = first, !configuration.refusesPastCalendarTriggers, FireDates.matchesNoFutureDate(error) {
                neverFires.insert(index)
                return nil
            }
            return try first.get()
        }
        var records: [PendingRequest] = []
        records.reserveCapacity(requests.count)
        var encoded: [[UInt8]] = []
        encoded.reserveCapacity(requests.count)
        var immediate: [NotificationRequest] = []
        var dropped: [String] = []
        // The `.scheduled` event names at most 100 requests (none for more), gathered here for
        // the usual small add rather than copied out of the records after.
        let listsScheduled = announcing && requests.count <= 100
        var scheduled: [String] = []
        for (index, (request, first)) in zip(requests, firsts).enumerated() {
            let key = ScheduleWindow.Key(app: app, identifier: request.identifier)
            if neverFires.contains(index) {
                dropped.append(request.identifier)
                window.remove(key)
                continue
            }
            guard let trigger = request.trigger else {
                immediate.append(request)
                window.remove(key)
                continue
            }
            var pending = PendingRequest(request: request, nextFireDate: first, anchor: now)
            if case .location(let region, _) = trigger {
                pending.inside = location.map(region.contains)
            }
            records.append(pending)
            encoded.append(prepared.encoded[index])
            if listsScheduled { scheduled.append(request.identifier) }
        }
        if !records.isEmpty {
            try admit(records, bytes: encoded.reduce(0) { $0 + $1.count }, app: app)
            try store.putPending(records, encodedRequests: encoded, app: app)
            if announcing { announce(.scheduled(identifiers: records.count > 100 ? [] : listsScheduled ? scheduled : records.map(\.request.identifier)), app: app) }
        }
        for index in records.indices {
            let key = ScheduleWindow.Key(app: app, identifier: records[index].request.identifier)
            window.set(key, date: records[index].nextFireDate, sequence: records[index].sequence)
        }
        if !dropped.isEmpty {
            countRemoved(app: app, pending: try store.removePending(app: app, identifiers: dropped).count)
        }
        if !immediate.isEmpty {
            countRemoved(app: app, pending: try store.removePending(app: app, identifiers: immediate.map(\.identifier)).count)
            for request in immediate {
                if request.isStale(deliveredAt: now, now: now) {
                    try expire(request, app: app, due: now, now: now)
                } else {
                    _ = try deliver(request, app: app, date: now) as DeliveredNotification?
                }
            }
        }
        return (firsts, records.count)
    }

    package func removePending(app: String, identifiers: [String]?) throws -> [String] {
        let removed: [String]
        if let identifiers {
            removed = try store.removePending(app: app, identifiers: identifiers)
        } else {
            removed = try store.removeAllPending(app: app)
        }
        for identifier in removed { window.remove(.init(app: app, identifier: identifier)) }
        if !removed.isEmpty {
            countRemoved(app: app, pending: removed.count)
            try log(.removed(identifiers: removed, scope: .pending), app: app)
        }
        return removed
    }

    package func removeDelivered(app: String, identifiers: [String]?, thread: String?) throws -> [String] {
        let removed: [String]
        if let identifiers {
            removed = try store.removeDelivered(app: app, identifiers: identifiers)
        } else {
            removed = try store.removeAllDelivered(app: app, thread: thread)
        }
        if !removed.isEmpty {
            try forgetDelivered(app: app, identifiers: removed)
            countRemoved(app: app, delivered: removed.count)
            try log(.removed(identifiers: removed, scope: .delivered), app: app)
        }
        return removed
    }

    /// Delivered notifications gone from the list: out of the dismissal window too (when it holds
    /// any: most engines' is empty), and their escalations end.
    private func forgetDelivered(app: String, identifiers: [String]) throws {
        if dismissals.count > 0 {
            for identifier in identifiers { dismissals.remove(.init(app: app, identifier: identifier)) }
        }
        try endEscalations(app: app, identifiers: identifiers, removedAt: clock.now)
    }

    // MARK: Escalation

    /// Ends the escalations of these notifications, removed unanswered at `removedAt`: their
    /// receipts say so and the scheduler no longer wakes for them. Without a shared store, the
    /// window says which may have one (most engines' is empty: nothing is asked of the store).
    private func endEscalations(app: String, identifiers: [String], removedAt: Date) throws {
        guard shared != nil || escalations.count > 0 || !escalations.complete else { return }
        for identifier in identifiers {
            let key = ScheduleWindow.Key(app: app, identifier: identifier)
            guard shared != nil || escalations.mayHold(key) else { continue }
            escalations.remove(key)
            guard var receipt = try store.receipt(app: app, identifier: identifier), receipt.isEscalating else { continue }
            receipt.nextAlertAt = nil
            receipt.removedAt = removedAt
            try store.putReceipt(receipt)
        }
    }

    /// Starts the escalation of a notification just delivered (its receipt, the first step in the
    /// window), or, for a notification without one, ends the escalation of the one it replaced.
    private func startEscalation(_ notification: DeliveredNotification, app: String) throws {
        let identifier = notification.request.identifier
        guard let escalation = notification.request.escalation else {
            // A replacement without one: only when the window says there may be one to end (a
            // shared store's is found by its next step instead).
            if shared == nil, escalations.mayHold(.init(app: app, identifier: identifier)) {
                try endEscalations(app: app, identifiers: [identifier], removedAt: notification.date)
            }
            return
        }
        let next = escalation.nextDate(after: notification.date, deliveredAt: notification.date)
        try store.putReceipt(EscalationReceipt(app: app, identifier: identifier, sequence: notification.sequence,
                                               deliveredAt: notification.date, escalation: escalation, nextAlertAt: next))
        escalations.set(.init(app: app, identifier: identifier), date: next, sequence: notification.sequence)
    }

    /// The user answered an escalating notification: its receipt records when, how and where, in
    /// the answer's transaction (also after its window ended), and the escalation stops.
    private func acknowledge(app: String, identifier: String, action: String, surface: String?, now: Date) throws {
        escalations.remove(.init(app: app, identifier: identifier))
        guard var receipt = try store.receipt(app: app, identifier: identifier),
              receipt.acknowledgedAt == nil, receipt.removedAt == nil else { return }
        receipt.nextAlertAt = nil
        receipt.acknowledgedAt = now
        receipt.actionIdentifier = action
        receipt.surface = surface
        try store.putReceipt(receipt)
    }

    /// Takes the escalation steps due by `now`, at most `limit`: each notification still delivered
    /// and unanswered is alerted again — a `realerted` event, which every surface presents again —
    /// and its next step set; at the end of its window the receipt says it expired. Part of the
    /// firing transaction, so each step is taken once (a shared store claims it), and a step
    /// missed while the service was down is alerted once at the first firing after it starts.
    /// - Returns: how many were due (a full `limit`: there may be more).
    private func escalateDue(now: Date, limit: Int) throws -> Int {
        // Without a shared store, the window says whether anything is due.
        if shared == nil, escalations.nothingDue(by: now) { return 0 }
        let due = try store.dueEscalations(before: now, limit: limit)
        for var receipt in due {
            let key = ScheduleWindow.Key(app: receipt.app, identifier: receipt.identifier)
            escalations.remove(key)
            if now >= receipt.endsAt {
                receipt.nextAlertAt = nil
                receipt.expired = true
                try store.putReceipt(receipt)
                continue
            }
            // Replaced or removed meanwhile (a shared store's other engine, or a replacement
            // without an escalation): it ends here.
            guard let notification = try store.delivered(app: receipt.app, identifier: receipt.identifier),
                  notification.sequence == receipt.sequence else {
                receipt.nextAlertAt = nil
                receipt.removedAt = now
                try store.putReceipt(receipt)
                continue
            }
            try settingAside(app: receipt.app, identifier: receipt.identifier) {
                receipt.alerts += 1
                receipt.lastAlertedAt = now
                let next = receipt.escalation.nextDate(after: now, deliveredAt: receipt.deliveredAt)
                receipt.nextAlertAt = next
                try store.putReceipt(receipt)
                escalations.set(key, date: next, sequence: receipt.sequence)
                let record = try appRecord(receipt.app)
                let content = notification.request.content
                var delivery = Delivery(notification: notification, category: try category(content.categoryIdentifier, app: receipt.app),
                                        settings: record.settings,
                                        presentation: Presentation.background(for: content, settings: record.settings))
                delivery.alert = receipt.alerts
                try log(.realerted(delivery), app: receipt.app, date: now)
            }
        }
        // Whatever else the window holds as due is gone from the store (ended meanwhile).
        if due.count < limit { escalations.dropDue(by: now) }
        if escalations.wantsRefill { refillEscalations() }
        return due.count
    }

    /// Removes the delivered notifications whose end of relevance has come by `now`, at most
    /// `limit`, through the path every removal takes (a `removed` event, here with reason
    /// ``RemovalReason/autoDismiss``, which every surface follows); part of the firing
    /// transaction, so each is removed once, and one due while the service was down goes at the
    /// first firing after it starts.
    /// - Returns: how many were due (a full `limit`: there may be more).
    private func dismissDue(now: Date, limit: Int) throws -> Int {
        // Without a shared store, the window says whether anything is due (and nothing is asked
        // of the store when nothing is).
        if shared == nil, dismissals.nothingDue(by: now) { return 0 }
        let due = try store.dueDismissals(before: now, limit: limit)
        var byApp: [(app: String, identifiers: [String])] = []
        var index: [LiteralKey: Int] = [:]
        for (app, identifier) in due {
            dismissals.remove(.init(app: app, identifier: identifier))
            if let at = index[LiteralKey(app)] {
                byApp[at].identifiers.append(identifier)
            } else {
                index[LiteralKey(app)] = byApp.count
                byApp.append((app, [identifier]))
            }
        }
        for (app, identifiers) in byApp {
            let removed = try store.removeDelivered(app: app, identifiers: identifiers)
            guard !removed.isEmpty else { continue }
            try endEscalations(app: app, identifiers: removed, removedAt: now)
            countRemoved(app: app, delivered: removed.count)
            try log(.removed(identifiers: removed, scope: .delivered, reason: .autoDismiss), app: app, date: now)
        }
        // Whatever else the window holds as due is gone from the store (removed meanwhile).
        if due.count < limit { dismissals.dropDue(by: now) }
        if dismissals.wantsRefill { refillDismissals() }
        return due.count
    }

    // MARK: Quota

    /// An app's usage as counted here: what the store said when last asked, plus what was added
    /// and minus what was removed since. A replacement by identifier counts as an addition, so the
    /// tally errs high, never low (with a shared store, other engines' additions are not seen: it
    /// is asked again after a sixteenth of a bound).
    private struct UsageTally {
        var pending: Int
        var delivered: Int
        var bytes: Int
        /// When the store was asked.
        var asked: Date
        /// Requests and deliveries counted since the store was asked.
        var sinceAsked = 0

        /// Bytes of `count` records by the tally's average record.
        func bytes(of count: Int) -> Int {
            let records = pending + delivered
            return records > 0 ? bytes / records * count : 0
        }
    }

    /// The shortest time between two asks of the store for one app when its tally is at a bound:
    /// an app at its quota that keeps adding costs the writer one count of its rows per this.
    private static let recountInterval: TimeInterval = 2

    /// The app's usage as the store has it now.
    @discardableResult
    private func askStore(_ app: String) throws -> UsageTally {
        let counted = try store.usage(app: app)
        let tally = UsageTally(pending: counted.pending, delivered: counted.delivered, bytes: counted.bytes, asked: clock.now)
        usage[LiteralKey(app)] = tally
        return tally
    }

    /// Whether the store should be asked again, rather than the tally trusted, for a bound.
    private func isStale(_ tally: UsageTally, bound: Int) -> Bool {
        guard shared != nil else { return false }
        return tally.sinceAsked >= max(1, bound / 16)
    }

    /// Counts removals the app's tally has not seen (when there is one).
    private func countRemoved(app: String, pending: Int = 0, delivered: Int = 0) {
        guard pending + delivered > 0, var tally = usage[LiteralKey(app)] else { return }
        tally.bytes = max(0, tally.bytes - tally.bytes(of: pending + delivered))
        tally.pending = max(0, tally.pending - pending)
        tally.delivered = max(0, tally.delivered - delivered)
        usage[LiteralKey(app)] = tally
    }

    /// Checks that `records` (`bytes` of records) fit the app's pending and byte bounds, or
    /// throws `quotaExceeded`; counts them when they do.
    private func admit(_ records: [PendingRequest], bytes: Int, app: String) throws {
        let quota = configuration.quota
        guard quota.pending != nil || quota.bytes != nil else { return }
        let key = LiteralKey(app)
        var tally = try usage[key] ?? askStore(app)
        func exceeds(_ tally: UsageTally, replacing: Int = 0, replacingBytes: Int = 0) -> Bool {
            if let bound = quota.pending, tally.pending - replacing + records.count > bound { return true }
            if let bound = quota.bytes, tally.bytes - replacingBytes + bytes > bound { return true }
            return false
        }
        if isStale(tally, bound: quota.pending ?? 16_384) { tally = try askStore(app) }
        if exceeds(tally) {
            if clock.now.timeIntervalSince(tally.asked) >= Self.recountInterval { tally = try askStore(app) }
            if exceeds(tally) {
                // At a bound, count exactly: requests replaced by identifier free their room.
                var replacing = 0, replacingBytes = 0
                for record in records {
                    if let existing = try store.pending(app: app, identifier: record.request.identifier) {
                        replacing += 1
                        replacingBytes += RecordCodec.encode(existing.request).count
                    }
                }
                if exceeds(tally, replacing: replacing, replacingBytes: replacingBytes) {
                    throw quotaExceeded(tally, adding: records.count, bytes: bytes, replacing: replacing,
                                        replacingBytes: replacingBytes, app: app)
                }
                tally.pending -= replacing
                tally.bytes -= replacingBytes
            }
        }
        tally.pending += records.count
        tally.bytes += bytes
        tally.sinceAsked += records.count
        usage[key] = tally
    }

    private func quotaExceeded(_ tally: UsageTally, adding count: Int, bytes: Int, replacing: Int, replacingBytes: Int,
                               app: String) -> ChimeError {
        let quota = configuration.quota
        let adding = count == 1 ? "1 request" : "\(count) requests"
        if let bound = quota.pending, tally.pending - replacing + count > bound {
            return ChimeError(.quotaExceeded, field: "app", """
                \(app) has \(tally.pending) pending requests and may have at most \(bound) (chime serve --app-max-pending); \
                \(adding) not added: remove pending requests, or ask the owner to raise the quota
                """)
        }
        return ChimeError(.quotaExceeded, field: "app", """
            \(app) keeps \(tally.bytes) bytes of pending and delivered notifications and may keep at most \(quota.bytes ?? 0) \
            (chime serve --app-max-bytes); \(adding) of \(bytes - replacingBytes) bytes not added: remove pending or \
            delivered notifications, or ask the owner to raise the quota
            """)
    }

    /// Past the app's delivered bound, removes its oldest delivered notifications down to nine
    /// tenths of it, with a `removed` event, so the next removal is a tenth of the bound away.
    private func keepDeliveredWithinQuota(app: String, bytes: Int) throws {
        guard let bound = configuration.quota.delivered else { return }
        let key = LiteralKey(app)
        guard var tally = usage[key] else {
            // The store's count includes the one just delivered.
            try askStore(app)
            return try trimDelivered(app: app, bound: bound)
        }
        tally.delivered += 1
        tally.bytes += bytes
        tally.sinceAsked += 1
        usage[key] = tally
        if isStale(tally, bound: bound) { tally = try askStore(app) }
        if tally.delivered > bound { try trimDelivered(app: app, bound: bound) }
    }

    private func trimDelivered(app: String, bound: Int) throws {
        guard let tally = usage[LiteralKey(app)], tally.delivered > bound else { return }
        let oldest = try store.oldestDelivered(app: app, limit: tally.delivered - (bound - bound / 10))
        let removed = try store.removeDelivered(app: app, identifiers: oldest)
        try forgetDelivered(app: app, identifiers: removed)
        if !removed.isEmpty { try log(.removed(identifiers: removed, scope: .delivered), app: app) }
        countRemoved(app: app, delivered: removed.count)
    }

    // MARK: Delivery

    /// Moves a request to the delivered list (replacing one with the same identifier), applies its
    /// badge, and records the event with the category and the presentation decided from the
    /// settings read here. Part of the caller's transaction.
    ///
    /// The badge, as on iOS: applied here unless the app is in front; then it waits for the app's
    /// `willPresent` answer (``Delivery/pendingBadge``; the hub applies it when the answer includes
    /// `.badge`). A badge-only request (no title, subtitle, body, sound or attachment) only sets the
    /// badge: it is not listed as delivered, nor shown (`nil`).
    private func deliver(_ request: NotificationRequest, app: String, date: Date) throws -> DeliveredNotification? {
        try deliver(request, app: app, record: appRecord(app), date: date, encodedRequest: nil)
    }

    /// `deliver`, with the app's record as the caller already has it.
    /// - Parameter encodedRequest: the request's store record, when the store gave it (firing).
    private func deliver(_ request: NotificationRequest, app: String, record: AppRecord, date: Date, encodedRequest: [UInt8]?) throws -> DeliveredNotification? {
        let content = request.content
        var record = record
        var badge: Int?, pendingBadge: Int?
        if let wanted = content.badge, record.settings.badgeSetting == .enabled && record.badge != wanted {
            if content.isBadgeOnly || !isInFront(app) {
                record.badge = wanted
                try save(record)
                badge = wanted
            } else {
                pendingBadge = wanted
            }
        }
        if content.isBadgeOnly {
            if badge != nil { announce(.app(.updated), app: app) }
            return nil
        }
        var encodedRequest = encodedRequest
        var request = request
        if case .after? = request.autoDismiss {
            // Counted from this delivery: the notification keeps the date (its record is new).
            request = request.delivered(at: date)
            encodedRequest = nil
        }
        var notification = DeliveredNotification(request: request, date: date)
        notification.sequence = try store.putDelivered(notification, app: app, encodedRequest: encodedRequest)
        // A replaced notification's end of relevance goes with it.
        let key = ScheduleWindow.Key(app: app, identifier: request.identifier)
        if let dismissDate = notification.dismissDate {
            dismissals.set(key, date: dismissDate, sequence: notification.sequence)
        } else if dismissals.count > 0 {
            dismissals.remove(key)
        }
        // Most notifications neither escalate nor replace one that did: nothing asked of the store.
        if request.escalation != nil || escalations.count > 0 || !escalations.complete {
            try startEscalation(notification, app: app)
        }
        try keepDeliveredWithinQuota(app: app, bytes: encodedRequest?.count ?? 0)
        var delivery = Delivery(notification: notification, category: try category(content.categoryIdentifier, app: app),
                                settings: record.settings, presentation: Presentation.background(for: content, settings: record.settings),
                                badge: badge)
        delivery.pendingBadge = pendingBadge
        try log(.delivered(delivery), app: app, date: date)
        return notification
    }

    package func nextFireDate() throws -> Date? {
        // Other engines add and fire too: the store knows, the window does not.
        if let shared { return try shared.soonestFireDate() }
        return windowNextDate()
    }

    /// The windows' first date — the next fire date or end of relevance — each refilled first
    /// when it ran low (an embedded store's next date the scheduler has work).
    package func windowNextDate() -> Date? {
        if window.wantsRefill { refillWindow() }
        if dismissals.wantsRefill { refillDismissals() }
        if escalations.wantsRefill { refillEscalations() }
        return windowFirstDate
    }

    /// The soonest of the windows' first dates, as they are.
    package var windowFirstDate: Date? {
        let fire = window.first?.date
        // Most engines have no dismissal or escalation: then the fire date, as before.
        guard dismissals.count > 0 || escalations.count > 0 else { return fire }
        return Self.sooner(Self.sooner(fire, dismissals.first?.date), escalations.first?.date)
    }

    private static func sooner(_ a: Date?, _ b: Date?) -> Date? {
        guard let a else { return b }
        guard let b else { return a }
        return min(a, b)
    }

    /// Delivers what is due at `now`: each occurrence once, dated when it was due. A repeating
    /// request moves on to its first occurrence after `now` (missed ones coalesce).
    /// - Parameter listing: whether to return what was delivered (the scheduler does not ask, so a
    ///   burst builds no list).
    ///
    /// All or nothing: a request that cannot be delivered (its app is not a valid identifier, its
    /// record cannot be read, its delivery fails for a reason of its own) throws
    /// ``UndeliverableRequest``, which rolls the whole transaction back; the engine then runs it
    /// again with that request in ``toQuarantine``, which this moves aside first.
    package func fireDue(now: Date, limit: Int, listing: Bool = true) throws -> [(app: String, notification: DeliveredNotification)] {
        try quarantineQueued(now: now)
        let dismissed = try dismissDue(now: now, limit: limit)
        let escalated = try escalateDue(now: now, limit: limit)
        let due = try store.dueEncoded(before: now, limit: limit)
        var delivered: [(app: String, notification: DeliveredNotification)] = []
        if listing { delivered.reserveCapacity(due.count) }
        var finished: [String: [String]] = [:]
        for (app, pending, encoded) in due {
            let request = pending.request
            let dueDate = pending.nextFireDate ?? now
            let key = ScheduleWindow.Key(app: app, identifier: request.identifier)
            try settingAside(app: app, identifier: request.identifier) {
                if request.isStale(deliveredAt: dueDate, now: now) {
                    try expire(request, app: app, due: dueDate, now: now)
                    finished[app, default: []].append(request.identifier)
                    window.remove(key)
                    return
                }
                let record = try appRecord(app)
                if record.settings.authorizationStatus.allowsDelivery,
                   let notification = try deliver(request, app: app, record: record, date: dueDate, encodedRequest: encoded), listing {
                    delivered.append((app, notification))
                }
                if let trigger = request.trigger, trigger.repeats,
                   let next = FireDates.next(for: trigger, due: dueDate, anchor: pending.anchor, now: now, timeZone: timeZone) {
                    var moved = pending
                    moved.nextFireDate = next
                    if case .calendar = trigger { moved.anchor = dueDate }
                    try store.putPending(moved, app: app)
                    window.set(key, date: next, sequence: moved.sequence)
                } else {
                    finished[app, default: []].append(request.identifier)
                    window.remove(key)
                }
            }
        }
        for (app, identifiers) in finished {
            countRemoved(app: app, pending: try store.removePending(app: app, identifiers: identifiers).count)
        }
        moreDue = due.count == limit || dismissed == limit || escalated == limit
        claimed = due.count + dismissed + escalated
        if window.needsRefill { refillWindow() }
        return delivered
    }

    /// Moves ``toQuarantine`` aside: out of the pending list and the window, each with a
    /// `quarantined` event (logged under the app as stored).
    package func quarantineQueued(now: Date) throws {
        guard !toQuarantine.isEmpty else { return }
        for row in toQuarantine {
            window.remove(ScheduleWindow.Key(app: row.app, identifier: row.identifier))
            guard let entry = try store.quarantinePending(app: row.app, identifier: row.identifier, reason: row.reason, date: now) else {
                continue
            }
            countRemoved(app: row.app, pending: 1)
            try log(.quarantined(entry), app: row.app, date: now)
        }
        quarantinedInTransaction = true
    }

    /// Records that `request`, due at `due`, expired undelivered: an `expired` event, logged with
    /// the caller's removal of the request (part of its transaction, so it happens once).
    private func expire(_ request: NotificationRequest, app: String, due: Date, now: Date) throws {
        try log(.expired(ExpiredRequest(request: request, dueDate: due)), app: app, date: now)
    }

    /// - Parameter expiration: APNs' `apns-expiration` as a deadline; the push is delivered now
    ///   whatever it says (there is no device to wait for), and keeps it (resolved from `date`).
    package func deliverPush(_ content: NotificationContent, identifier: String, silent: Bool, app: String, date: Date?,
                             expiration: NotificationDeadline? = nil) throws -> DeliveredNotification? {
        let record = try appRecord(app)
        guard record.settings.authorizationStatus.allowsDelivery || silent else {
            throw UNError(.notificationsNotAllowed, "notifications are not allowed for \(app); the push was not delivered")
        }
        let when = date ?? clock.now
        let request = NotificationRequest(identifier: identifier, content: content, trigger: .push,
                                          expiration: expiration?.resolved(from: when))
        if silent {
            let notification = DeliveredNotification(request: request, date: when)
            try log(.silentPush(notification), app: app, date: when)
            return nil
        }
        return try deliver(request, app: app, date: when)
    }

    // MARK: Device state

    package func updateLocation(_ coordinate: Coordinate) throws -> [DeliveredNotification] {
        location = coordinate
        try store.setValue("\(coordinate.latitude),\(coordinate.longitude)", forKey: "device.location")
        let now = clock.now
        try quarantineQueued(now: now)
        var delivered: [DeliveredNotification] = []
        for (app, pending) in try store.locationPending() {
            guard case .location(let region, let repeats) = pending.request.trigger else { continue }
            let inside = region.contains(coordinate)
            let wasInside = pending.inside ?? false
            let fires = (inside && !wasInside && region.notifyOnEntry) || (!inside && wasInside && region.notifyOnExit)
            try settingAside(app: app, identifier: pending.request.identifier) {
                if fires, pending.request.isStale(deliveredAt: now, now: now) {
                    try expire(pending.request, app: app, due: now, now: now)
                    countRemoved(app: app, pending: try store.removePending(app: app, identifiers: [pending.request.identifier]).count)
                    return
                }
                if fires, try appRecord(app).settings.authorizationStatus.allowsDelivery {
                    if let notification = try deliver(pending.request, app: app, date: now) { delivered.append(notification) }
                    if !repeats {
                        countRemoved(app: app, pending: try store.removePending(app: app, identifiers: [pending.request.identifier]).count)
                        return
                    }
                }
                if pending.inside != inside {
                    var moved = pending
                    moved.inside = inside
                    try store.putPending(moved, app: app)
                }
            }
        }
        return delivered
    }

    /// Runs `body` for one stored request; an error that is the request's own (not the store's)
    /// becomes ``UndeliverableRequest``, so the engine sets the request aside and runs the
    /// operation again without it, as the scheduler does.
    private func settingAside(app: String, identifier: String, _ body: () throws -> Void) throws {
        do { try body() } catch let error where NotificationEngine.isOperationError(error) {
            throw UndeliverableRequest(app: app, identifier: identifier, reason: ChimeError.message(of: error))
        }
    }

    package func setTimeZone(_ zone: TimeZone) throws {
        guard zone.identifier != timeZone.identifier else { return }
        timeZone = zone
        try store.setValue(zone.identifier, forKey: "device.timeZone")
        let now = clock.now
        try quarantineQueued(now: now)
        for (app, pending) in try store.floatingPending() {
            guard case .calendar(let components, _) = pending.request.trigger else { continue }
            var moved = pending
            moved.nextFireDate = FireDates.nextCalendarDate(matching: components, after: now, timeZone: zone)
            try store.putPending(moved, app: app)
            window.set(.init(app: app, identifier: pending.request.identifier), date: moved.nextFireDate, sequence: moved.sequence)
        }
    }

    // MARK: Responses

    package func respond(app: String, identifier: String, action: String, userText: String?, surface: String? = nil) throws -> NotificationResponse? {
        if let surface { try Validation.validateSurface(surface) }
        guard let notification = try store.delivered(app: app, identifier: identifier) else {
            let delivered = try store.delivered(app: app, thread: nil).prefix(10).map { "'\($0.request.identifier)'" }
            throw ChimeError(.notFound, field: "identifier",
                             "no delivered notification '\(identifier)' for \(app); delivered: \(delivered.isEmpty ? "none" : delivered.joined(separator: ", "))")
        }
        let categoryIdentifier = notification.request.content.categoryIdentifier
        let category = try self.category(categoryIdentifier, app: app)
        var respondsToApp = true
        // The system identifiers by their scalars (a look-alike is an ordinary, unknown action).
        if action.isLiterally(UNNotificationDefaultActionIdentifier) {
            if userText != nil {
                throw ChimeError(.invalidValue, field: "userText", "the default action takes no text; send userText only with a text-input action")
            }
        } else if action.isLiterally(UNNotificationDismissActionIdentifier) {
            if userText != nil {
                throw ChimeError(.invalidValue, field: "userText", "a dismissal takes no text; send userText only with a text-input action")
            }
            respondsToApp = category?.options.contains(.customDismissAction) ?? false
        } else {
            guard let found = category?.action(action) else {
                let available = (category?.actions.map { "'\($0.identifier)'" } ?? []) + ["the default action", "dismiss"]
                let which = categoryIdentifier.isEmpty ? "it has no category" : category == nil
                    ? "its category '\(categoryIdentifier)' is not registered" : "category '\(categoryIdentifier)' has"
                throw ChimeError(.unknownAction, field: "actionIdentifier",
                                 "notification '\(identifier)' has no action '\(action)': \(which); accepted: \(available.joined(separator: ", "))")
            }
            if found.textInput != nil && userText == nil {
                throw ChimeError(.invalidValue, field: "userText", "action '\(action)' is a text-input action; give the typed text as userText")
            }
            if found.textInput == nil && userText != nil {
                throw ChimeError(.invalidValue, field: "userText", "action '\(action)' has no text field; send userText only with a text-input action")
            }
        }
        let now = clock.now
        if notification.request.escalation != nil {
            try acknowledge(app: app, identifier: identifier, action: action, surface: surface, now: now)
        }
        _ = try removeDelivered(app: app, identifiers: [identifier], thread: nil)
        guard respondsToApp else { return nil }
        var response = NotificationResponse(notification: notification, actionIdentifier: action, userText: userText, date: now)
        response.id = try store.appendResponse(response, app: app)
        try log(.response(response), app: app, date: now)
        return response
    }
}

/// An add as far as it gets on the caller's thread: the requests checked, their first fire dates
/// in the device's zone as last known (or the error that says why not), and their store encoding.
package struct PreparedAdd: Sendable {
    let requests: [NotificationRequest]
    let now: Date
    /// The zone `firsts` were computed in.
    let timeZone: String
    let firsts: [Result<Date?, ChimeError>]
    /// Each request as `RecordCodec` bytes (empty for requests without a trigger, never stored).
    let encoded: [[UInt8]]

    init(_ requests: [NotificationRequest], now: Date, timeZone: TimeZone) {
        // An expiration given as a duration counts from the add: kept as the date it makes. Only
        // then is the list copied; most requests have none and are kept as they came.
        let requests = requests.contains(where: { $0.expiresAfterAdd }) ? requests.map { $0.added(at: now) } : requests
        self.requests = requests
        self.now = now
        self.timeZone = timeZone.identifier
        firsts = requests.map { Self.first(of: $0, now: now, timeZone: timeZone) }
        encoded = requests.map { $0.trigger == nil ? [] : RecordCodec.encode($0) }
    }

    /// A request's first fire date, or the error that says why it has none.
    static func first(of request: NotificationRequest, now: Date, timeZone: TimeZone) -> Result<Date?, ChimeError> {
        Result { () throws(ChimeError) -> Date? in
            do { return try FireDates.first(for: request.trigger, now: now, timeZone: timeZone) } catch let error as ChimeError {
                throw error
            } catch {
                throw ChimeError(.invalidTrigger, field: "trigger", "\(error)")
            }
        }
    }
}
