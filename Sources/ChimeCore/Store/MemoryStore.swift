import Foundation

/// A store that keeps everything in memory: the simulator's default, and the reference the durable
/// stores are tested against. Transactions are real: a throw inside `transaction` restores the
/// state from before it.
///
/// Not thread-safe by itself: like every ``NotificationStore`` it is used from the engine's queue.
public final class MemoryStore: NotificationStore {
    private struct State {
        // Keyed literally, as the durable stores compare (see ``LiteralKey``).
        var apps: [LiteralKey: AppRecord] = [:]
        var categories: [LiteralKey: [NotificationCategory]] = [:]
        var pending: [LiteralKey: [LiteralKey: PendingRequest]] = [:]
        var delivered: [LiteralKey: [LiteralKey: DeliveredNotification]] = [:]
        var responses: [LiteralKey: [NotificationResponse]] = [:]
        var events: [EngineEvent] = []
        var values: [String: String] = [:]
        var nextSequence: Int64 = 1
        var nextResponseID: Int64 = 1
        var nextEventSequence: Int64 = 1
        var quarantine: [QuarantinedRequest] = []
        var nextQuarantineID: Int64 = 1
        var webPushSubscriptions: [String: WebPushSubscription] = [:]
        var webPushMessages: [Int64: (app: String, body: String)] = [:]
        var webPushQueue: [QueuedWebPush] = []
        var nextWebPushMessage: Int64 = 1
        var receipts: [LiteralKey: [LiteralKey: EscalationReceipt]] = [:]
    }

    private var state = State()
    private var depth = 0

    public init() {}

    public func transaction<T>(_ body: () throws -> T) throws -> T {
        let saved = depth == 0 ? state : nil
        depth += 1
        defer { depth -= 1 }
        do {
            return try body()
        } catch {
            if let saved { state = saved }
            throw error
        }
    }

    private func takeSequence() -> Int64 {
        defer { state.nextSequence += 1 }
        return state.nextSequence
    }

    // MARK: Apps

    public func app(_ bundleIdentifier: String) throws -> AppRecord? { state.apps[LiteralKey(bundleIdentifier)] }
    public func apps() throws -> [AppRecord] { state.apps.values.sorted { $0.bundleIdentifier < $1.bundleIdentifier } }
    public func putApp(_ record: AppRecord) throws { state.apps[LiteralKey(record.bundleIdentifier)] = record }
    public func removeApp(_ bundleIdentifier: String) throws {
        state.apps[LiteralKey(bundleIdentifier)] = nil
        state.categories[LiteralKey(bundleIdentifier)] = nil
        state.pending[LiteralKey(bundleIdentifier)] = nil
        state.delivered[LiteralKey(bundleIdentifier)] = nil
        state.responses[LiteralKey(bundleIdentifier)] = nil
        state.events.removeAll { $0.app.isLiterally(bundleIdentifier) }
        state.quarantine.removeAll { $0.app.isLiterally(bundleIdentifier) }
        state.webPushQueue.removeAll { $0.app.isLiterally(bundleIdentifier) }
        state.webPushMessages = state.webPushMessages.filter { !$0.value.app.isLiterally(bundleIdentifier) }
        state.receipts[LiteralKey(bundleIdentifier)] = nil
    }

    // MARK: Categories

    public func categories(app: String) throws -> [NotificationCategory] { state.categories[LiteralKey(app)] ?? [] }
    public func setCategories(_ categories: [NotificationCategory], app: String) throws {
        state.categories[LiteralKey(app)] = categories
    }

    // MARK: Pending

    public func putPending(_ record: PendingRequest, app: String) throws {
        var record = record
        let identifier = record.request.identifier
        if record.sequence == 0 {
            record.sequence = state.pending[LiteralKey(app)]?[LiteralKey(identifier)]?.sequence ?? takeSequence()
        }
        state.pending[LiteralKey(app), default: [:]][LiteralKey(identifier)] = record
    }

    public func pending(app: String) throws -> [PendingRequest] {
        (state.pending[LiteralKey(app)] ?? [:]).values.sorted { $0.sequence < $1.sequence }
    }

    public func pending(app: String, identifier: String) throws -> PendingRequest? {
        state.pending[LiteralKey(app)]?[LiteralKey(identifier)]
    }

    public func removePending(app: String, identifiers: [String]) throws -> [String] {
        var removed: [String] = []
        for identifier in identifiers
        where state.pending[LiteralKey(app)]?.removeValue(forKey: LiteralKey(identifier)) != nil {
            removed.append(identifier)
        }
        return removed
    }

    public func removeAllPending(app: String) throws -> [String] {
        let removed = try pending(app: app).map(\.request.identifier)
        state.pending[LiteralKey(app)] = nil
        return removed
    }

    private func timed() -> [(app: String, pending: PendingRequest)] {
        state.pending.flatMap { key, requests in
            requests.values.filter { $0.nextFireDate != nil }.map { (app: key.text, pending: $0) }
        }.sorted { a, b in
            (a.pending.nextFireDate!, a.pending.sequence) < (b.pending.nextFireDate!, b.pending.sequence)
        }
    }

    public func due(before date: Date, limit: Int) throws -> [(app: String, pending: PendingRequest)] {
        Array(timed().prefix { $0.pending.nextFireDate! <= date }.prefix(limit))
    }

    public func soonest(limit: Int) throws -> [(app: String, identifier: String, date: Date, sequence: Int64)] {
        timed().prefix(limit).map {
            ($0.app, $0.pending.request.identifier, $0.pending.nextFireDate!, $0.pending.sequence)
        }
    }

    public func locationPending() throws -> [(app: String, pending: PendingRequest)] {
        state.pending.flatMap { key, requests in
            requests.values.filter {
                if case .location = $0.request.trigger { return true }
                return false
            }.map { (app: key.text, pending: $0) }
        }.sorted { $0.pending.sequence < $1.pending.sequence }
    }

    public func floatingPending() throws -> [(app: String, pending: PendingRequest)] {
        state.pending.flatMap { key, requests in
            requests.values.filter { $0.request.trigger?.isFloating == true }.map { (app: key.text, pending: $0) }
        }.sorted { $0.pending.sequence < $1.pending.sequence }
    }

    public func pendingCount(app: String?) throws -> Int {
        if let app { return state.pending[LiteralKey(app)]?.count ?? 0 }
        return state.pending.values.reduce(0) { $0 + $1.count }
    }

    // MARK: Quarantine

    public func quarantinePending(app: String, identifier: String, reason: String, date: Date) throws
        -> QuarantinedRequest?
    {
        guard let pending = state.pending[LiteralKey(app)]?.removeValue(forKey: LiteralKey(identifier)) else {
            return nil
        }
        let entry = QuarantinedRequest(
            id: state.nextQuarantineID, app: app, identifier: identifier, reason: reason, date: date,
            request: pending.request)
        state.nextQuarantineID += 1
        state.quarantine.append(entry)
        return entry
    }

    public func quarantined(after id: Int64, limit: Int) throws -> [QuarantinedRequest] {
        Array(state.quarantine.lazy.filter { $0.id > id }.prefix(max(0, limit)))
    }

    public func removeQuarantined(id: Int64) throws -> Bool {
        guard let index = state.quarantine.firstIndex(where: { $0.id == id }) else { return false }
        state.quarantine.remove(at: index)
        return true
    }

    public func quarantinedCount() throws -> Int { state.quarantine.count }

    // MARK: Delivered

    @discardableResult
    public func putDelivered(_ notification: DeliveredNotification, app: String) throws -> Int64 {
        var notification = notification
        if notification.sequence == 0 { notification.sequence = takeSequence() }
        state.delivered[LiteralKey(app), default: [:]][LiteralKey(notification.request.identifier)] = notification
        return notification.sequence
    }

    public func delivered(app: String, thread: String?) throws -> [DeliveredNotification] {
        (state.delivered[LiteralKey(app)] ?? [:]).values
            .filter { thread == nil || $0.request.content.threadIdentifier.isLiterally(thread!) }
            .sorted { ($0.date, $0.sequence) > ($1.date, $1.sequence) }
    }

    public func delivered(app: String, identifier: String) throws -> DeliveredNotification? {
        state.delivered[LiteralKey(app)]?[LiteralKey(identifier)]
    }

    public func removeDelivered(app: String, identifiers: [String]) throws -> [String] {
        var removed: [String] = []
        for identifier in identifiers
        where state.delivered[LiteralKey(app)]?.removeValue(forKey: LiteralKey(identifier)) != nil {
            removed.append(identifier)
        }
        return removed
    }

    public func removeAllDelivered(app: String, thread: String?) throws -> [String] {
        let removed = try delivered(app: app, thread: thread).map(\.request.identifier)
        for identifier in removed { state.delivered[LiteralKey(app)]?[LiteralKey(identifier)] = nil }
        return removed
    }

    /// Every delivered notification with an end of relevance, soonest first (a scan: this store
    /// is the reference, not the fast path).
    private func dismissals() -> [(app: String, identifier: String, date: Date, sequence: Int64)] {
        state.delivered.flatMap { key, notifications in
            notifications.values.compactMap { notification in
                notification.dismissDate.map { (key.text, notification.request.identifier, $0, notification.sequence) }
            }
        }.sorted { ($0.date, $0.sequence) < ($1.date, $1.sequence) }
    }

    public func dueDismissals(before date: Date, limit: Int) throws -> [(app: String, identifier: String)] {
        dismissals().prefix { $0.date <= date }.prefix(max(0, limit)).map { ($0.app, $0.identifier) }
    }

    public func soonestDismissals(limit: Int) throws -> [(app: String, identifier: String, date: Date, sequence: Int64)]
    {
        Array(dismissals().prefix(max(0, limit)))
    }

    public func putReceipt(_ receipt: EscalationReceipt) throws {
        state.receipts[LiteralKey(receipt.app), default: [:]][LiteralKey(receipt.identifier)] = receipt
    }

    public func receipt(app: String, identifier: String) throws -> EscalationReceipt? {
        state.receipts[LiteralKey(app)]?[LiteralKey(identifier)]
    }

    /// Every receipt still escalating, soonest next step first (a scan: this store is the
    /// reference, not the fast path).
    private func escalating() -> [EscalationReceipt] {
        state.receipts.values.flatMap { $0.values.filter(\.isEscalating) }
            .sorted { ($0.nextAlertAt!, $0.sequence) < ($1.nextAlertAt!, $1.sequence) }
    }

    public func dueEscalations(before date: Date, limit: Int) throws -> [EscalationReceipt] {
        Array(escalating().prefix { $0.nextAlertAt! <= date }.prefix(max(0, limit)))
    }

    public func soonestEscalations(limit: Int) throws -> [(
        app: String, identifier: String, date: Date, sequence: Int64
    )] {
        escalating().prefix(max(0, limit)).map { ($0.app, $0.identifier, $0.nextAlertAt!, $0.sequence) }
    }

    public func pruneReceipts(endedBefore date: Date) throws {
        for (app, receipts) in state.receipts {
            let kept = receipts.filter { $0.value.endedAt.map { $0 >= date } ?? true }
            state.receipts[app] = kept.isEmpty ? nil : kept
        }
    }

    public func deliveredCount(app: String?) throws -> Int {
        if let app { return state.delivered[LiteralKey(app)]?.count ?? 0 }
        return state.delivered.values.reduce(0) { $0 + $1.count }
    }

    // MARK: Outbox

    public func appendResponse(_ response: NotificationResponse, app: String) throws -> Int64 {
        var response = response
        response.id = state.nextResponseID
        state.nextResponseID += 1
        state.responses[LiteralKey(app), default: []].append(response)
        return response.id
    }

    public func responses(app: String) throws -> [NotificationResponse] { state.responses[LiteralKey(app)] ?? [] }

    public func removeResponse(app: String, id: Int64) throws -> Bool {
        guard let index = state.responses[LiteralKey(app)]?.firstIndex(where: { $0.id == id }) else { return false }
        state.responses[LiteralKey(app)]?.remove(at: index)
        return true
    }

    // MARK: Events

    public func appendEvent(_ event: EngineEvent) throws -> Int64 {
        var event = event
        event.sequence = state.nextEventSequence
        state.nextEventSequence += 1
        state.events.append(event)
        return event.sequence
    }

    public func events(after sequence: Int64, app: String?, limit: Int) throws -> [EngineEvent] {
        let start = state.events.partitioningIndex { $0.sequence > sequence }
        return Array(state.events[start...].lazy.filter { app == nil || $0.app.isLiterally(app!) }.prefix(limit))
    }

    public func oldestEventSequence() throws -> Int64 { state.events.first?.sequence ?? 0 }

    public func newestEventSequence() throws -> Int64 { state.events.last?.sequence ?? 0 }

    public func pruneEvents(keeping: Int) throws {
        if state.events.count > keeping { state.events.removeFirst(state.events.count - max(0, keeping)) }
    }

    /// Keeps the newest events within the count and the bytes (each event's encoded size), and
    /// drops those dated before `now - age`.
    public func pruneEvents(_ retention: EventRetention, now: Date) throws {
        try pruneEvents(keeping: retention.count)
        var kept = 0
        var bytes = 0
        for event in state.events.reversed() {
            bytes += RecordCodec.encode(event).count
            if bytes > retention.bytes { break }
            kept += 1
        }
        state.events.removeFirst(state.events.count - kept)
        let cutoff = now.addingTimeInterval(-retention.age)
        state.events.removeAll { $0.date < cutoff }
    }

    // MARK: Values

    // MARK: Web Push

    public func webPushSubscriptions() throws -> [WebPushSubscription] {
        state.webPushSubscriptions.values.sorted { ($0.created, $0.id) < ($1.created, $1.id) }
    }

    public func webPushSubscription(id: String) throws -> WebPushSubscription? {
        state.webPushSubscriptions[id]
    }

    public func webPushSubscription(endpoint: String) throws -> WebPushSubscription? {
        state.webPushSubscriptions.values.first { $0.endpoint == endpoint }
    }

    public func putWebPushSubscription(_ subscription: WebPushSubscription) throws {
        if state.webPushSubscriptions.values.contains(where: {
            $0.endpoint == subscription.endpoint && $0.id != subscription.id
        }) {
            throw ChimeError(.invalidValue, field: "endpoint", "another subscription has this endpoint")
        }
        state.webPushSubscriptions[subscription.id] = subscription
    }

    public func removeWebPushSubscription(id: String) throws -> Bool {
        guard state.webPushSubscriptions.removeValue(forKey: id) != nil else { return false }
        let messages = Set(state.webPushQueue.filter { $0.subscription == id }.map(\.message))
        state.webPushQueue.removeAll { $0.subscription == id }
        for message in messages { dropWebPushMessageIfDone(message) }
        return true
    }

    public func hasWebPushSubscriptions() throws -> Bool { !state.webPushSubscriptions.isEmpty }

    public func queueWebPush(_ message: String, app: String, subscriptions: [String], claimedUntil: Date) throws
        -> Int64
    {
        let id = state.nextWebPushMessage
        state.nextWebPushMessage += 1
        state.webPushMessages[id] = (app, message)
        for subscription in subscriptions {
            state.webPushQueue.append(
                QueuedWebPush(
                    message: id, subscription: subscription, app: app, body: message, attempts: 0,
                    notBefore: claimedUntil))
        }
        return id
    }

    public func claimWebPushes(before date: Date, claimUntil: Date, limit: Int) throws -> [QueuedWebPush] {
        let due = state.webPushQueue.indices.filter { state.webPushQueue[$0].notBefore <= date }
            .sorted {
                let (a, b) = (state.webPushQueue[$0], state.webPushQueue[$1])
                return (a.notBefore, a.message, a.subscription) < (b.notBefore, b.message, b.subscription)
            }
            .prefix(max(0, limit))
        var claimed: [QueuedWebPush] = []
        for index in due {
            claimed.append(state.webPushQueue[index])
            state.webPushQueue[index].notBefore = claimUntil
        }
        return claimed
    }

    public func retryWebPush(message: Int64, subscription: String, attempts: Int, notBefore: Date) throws {
        guard
            let index = state.webPushQueue.firstIndex(where: {
                $0.message == message && $0.subscription == subscription
            })
        else { return }
        state.webPushQueue[index].attempts = attempts
        state.webPushQueue[index].notBefore = notBefore
    }

    public func finishWebPush(message: Int64, subscription: String) throws {
        state.webPushQueue.removeAll { $0.message == message && $0.subscription == subscription }
        dropWebPushMessageIfDone(message)
    }

    public func releaseWebPushes(_ pushes: [QueuedWebPushID], at date: Date) throws {
        let released = Set(pushes)
        for index in state.webPushQueue.indices where released.contains(state.webPushQueue[index].id) {
            state.webPushQueue[index].notBefore = date
        }
    }

    public func queuedWebPushCount() throws -> Int { state.webPushQueue.count }

    private func dropWebPushMessageIfDone(_ message: Int64) {
        if !state.webPushQueue.contains(where: { $0.message == message }) { state.webPushMessages[message] = nil }
    }

    public func value(forKey key: String) throws -> String? { state.values[key] }
    public func setValue(_ value: String?, forKey key: String) throws { state.values[key] = value }
}

extension Array {
    /// The first index whose element satisfies `predicate`, for an array partitioned by it
    /// (all non-matching elements first). Binary search.
    func partitioningIndex(where predicate: (Element) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            if predicate(self[mid]) { high = mid } else { low = mid + 1 }
        }
        return low
    }
}
