import Foundation

/// Where the engine keeps its state. Implementations: ``MemoryStore`` (here), the SQLite store
/// (`ChimeSQLite`), and the PostgreSQL store (`ChimePostgres`), which several engines share (see
/// ``SharedNotificationStore``).
///
/// The engine calls a store from one serial queue only, always inside `transaction`, so an
/// implementation needs no locking of its own. Every method may throw ``ChimeError`` with code
/// `storeFailure` (or another store code); a throw inside `transaction` rolls the whole transaction
/// back.
///
/// Ordering rules every store follows:
/// - `pending(app:)`: by `sequence` ascending (the order requests were first added).
/// - `delivered(app:thread:)`: newest first: `date` descending, then `sequence` descending.
/// - `due(before:limit:)` and `soonest(limit:)`: by `nextFireDate` ascending, then `sequence`.
/// - `responses(app:)`: by `id` ascending.
public protocol NotificationStore: AnyObject {
    /// Runs `body` in one transaction: committed (durably, at the store's durability level) when it
    /// returns, rolled back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T

    // MARK: Apps
    func app(_ bundleIdentifier: String) throws -> AppRecord?
    func apps() throws -> [AppRecord]
    /// Inserts or replaces the app's record.
    func putApp(_ record: AppRecord) throws
    /// Removes the app and everything it owns (categories, pending, delivered, outbox, events,
    /// quarantine entries, receipts).
    func removeApp(_ bundleIdentifier: String) throws

    // MARK: Categories
    func categories(app: String) throws -> [NotificationCategory]
    /// Replaces the app's whole set of categories (order is kept).
    func setCategories(_ categories: [NotificationCategory], app: String) throws

    // MARK: Pending requests
    /// Inserts, or replaces the pending request with the same identifier. A replaced request keeps
    /// its `sequence` unless the record carries a new one; the store assigns a new sequence when
    /// `record.sequence == 0` and the identifier is new.
    func putPending(_ record: PendingRequest, app: String) throws
    /// Many `putPending` at once (the bulk path); same semantics, in order.
    func putPending(_ records: [PendingRequest], app: String) throws
    /// Many `putPending` at once, each request already encoded as ``RecordCodec`` bytes (the engine
    /// encodes on the caller's thread, off its writer); a store that keeps requests as those bytes
    /// uses them instead of encoding again.
    func putPending(_ records: [PendingRequest], encodedRequests: [[UInt8]], app: String) throws
    func pending(app: String) throws -> [PendingRequest]
    func pending(app: String, identifier: String) throws -> PendingRequest?
    /// Removes these pending requests; returns the identifiers that existed.
    func removePending(app: String, identifiers: [String]) throws -> [String]
    /// Removes all of the app's pending requests; returns their identifiers.
    func removeAllPending(app: String) throws -> [String]
    /// Timed requests (any app) with `nextFireDate <= date`, soonest first, at most `limit`.
    func due(before date: Date, limit: Int) throws -> [(app: String, pending: PendingRequest)]
    /// `due(before:limit:)`, each with its request as the store keeps it (``RecordCodec`` bytes),
    /// or `nil` from a store that keeps it otherwise: firing hands them to
    /// ``putDelivered(_:app:encodedRequest:)``, which writes the delivered record without encoding
    /// the request again.
    func dueEncoded(before date: Date, limit: Int) throws -> [(app: String, pending: PendingRequest, encoded: [UInt8]?)]
    /// The soonest timed requests (any app): keys and fire dates only, soonest first.
    func soonest(limit: Int) throws -> [(app: String, identifier: String, date: Date, sequence: Int64)]
    /// Location-triggered requests (any app).
    func locationPending() throws -> [(app: String, pending: PendingRequest)]
    /// Calendar requests without a time zone (any app), which move when the time zone changes.
    func floatingPending() throws -> [(app: String, pending: PendingRequest)]
    /// How many requests are pending, for one app or all.
    func pendingCount(app: String?) throws -> Int

    // MARK: Quarantine
    /// Moves a pending request aside, with why: it leaves the pending list (it fires no more) for the
    /// quarantine, its stored record kept as it is (the record may be what is wrong). Returns the
    /// new entry, or nil when the app has no pending request with this identifier. Identifiers are
    /// compared literally (see ``LiteralKey``), and `app` need not be a valid bundle identifier.
    func quarantinePending(app: String, identifier: String, reason: String, date: Date) throws -> QuarantinedRequest?
    /// Quarantine entries after `id`, oldest first, at most `limit`; each with its request when the
    /// stored record can be read.
    func quarantined(after id: Int64, limit: Int) throws -> [QuarantinedRequest]
    /// Removes a quarantine entry; returns whether it was there.
    func removeQuarantined(id: Int64) throws -> Bool
    /// How many requests are in the quarantine.
    func quarantinedCount() throws -> Int

    // MARK: Delivered notifications
    /// Inserts, replacing a delivered notification with the same identifier. Assigns a sequence
    /// when `notification.sequence == 0` and returns the stored sequence.
    @discardableResult
    func putDelivered(_ notification: DeliveredNotification, app: String) throws -> Int64
    /// `putDelivered`, with the notification's request as ``dueEncoded(before:limit:)`` gave it.
    @discardableResult
    func putDelivered(_ notification: DeliveredNotification, app: String, encodedRequest: [UInt8]?) throws -> Int64
    func delivered(app: String, thread: String?) throws -> [DeliveredNotification]
    func delivered(app: String, identifier: String) throws -> DeliveredNotification?
    func removeDelivered(app: String, identifiers: [String]) throws -> [String]
    func removeAllDelivered(app: String, thread: String?) throws -> [String]
    func deliveredCount(app: String?) throws -> Int
    /// Delivered notifications (any app) whose end of relevance
    /// (``NotificationRequest/autoDismiss``, a date once delivered) is at or before `date`,
    /// soonest first (then by sequence), at most `limit`: keys only. A shared store claims them as
    /// `due(before:limit:)` does (locked until the transaction ends; rows another engine holds are
    /// skipped), so one engine removes each.
    func dueDismissals(before date: Date, limit: Int) throws -> [(app: String, identifier: String)]
    /// The soonest ends of relevance of delivered notifications (any app): keys, dates and
    /// sequences, soonest first, at most `limit`. Notifications without one cost nothing here: the
    /// durable stores keep the date in a column with an index of only the rows that have one.
    func soonestDismissals(limit: Int) throws -> [(app: String, identifier: String, date: Date, sequence: Int64)]

    // MARK: Escalation receipts
    /// Inserts or replaces the receipt of the app's notification with its identifier (one per app
    /// and identifier). Only escalating notifications have one, so others cost nothing here.
    func putReceipt(_ receipt: EscalationReceipt) throws
    func receipt(app: String, identifier: String) throws -> EscalationReceipt?
    /// Receipts (any app) whose next step (``EscalationReceipt/nextAlertAt``) is at or before
    /// `date`, soonest first (then by sequence), at most `limit`. A shared store claims them as
    /// `due(before:limit:)` does, so one engine takes each step.
    func dueEscalations(before date: Date, limit: Int) throws -> [EscalationReceipt]
    /// The soonest next steps of escalating notifications (any app): keys, dates and sequences,
    /// from a column indexed for only the receipts still escalating.
    func soonestEscalations(limit: Int) throws -> [(app: String, identifier: String, date: Date, sequence: Int64)]
    /// Removes receipts whose escalation ended (``EscalationReceipt/endedAt``) before `date`.
    func pruneReceipts(endedBefore date: Date) throws
    /// The app's oldest delivered notifications' identifiers (by date, then sequence), at most `limit`.
    func oldestDelivered(app: String, limit: Int) throws -> [String]
    /// What the app keeps: pending requests, delivered notifications and their records' bytes.
    func usage(app: String) throws -> StorageUsage

    // MARK: Outbox
    /// Stores a response and returns its new id (ids only grow).
    func appendResponse(_ response: NotificationResponse, app: String) throws -> Int64
    func responses(app: String) throws -> [NotificationResponse]
    /// Removes an acknowledged response; returns whether it was there.
    func removeResponse(app: String, id: Int64) throws -> Bool

    // MARK: Events
    /// Appends to the event log and returns the event's sequence (sequences only grow).
    func appendEvent(_ event: EngineEvent) throws -> Int64
    /// `appendEvent`, with the event as ``RecordCodec`` bytes (`event` with sequence 0): the
    /// engine encodes each event once, counting its bytes toward the log's bound, and a store that
    /// keeps events as those bytes writes them instead of encoding again.
    func appendEvent(_ event: EngineEvent, encoded: [UInt8]) throws -> Int64
    /// Events after `sequence`, oldest first, for one app or all, at most `limit`.
    func events(after sequence: Int64, app: String?, limit: Int) throws -> [EngineEvent]
    /// The oldest sequence still kept (0 when the log is empty).
    func oldestEventSequence() throws -> Int64
    /// The newest sequence in the log (0 when the log is empty).
    func newestEventSequence() throws -> Int64
    /// Drops all but the newest `keeping` events.
    func pruneEvents(keeping: Int) throws

    // MARK: Pages and retention (defaults below read whole lists)
    /// The app's pending requests with a sequence above `sequence`, in sequence order, at most `limit`.
    func pending(app: String, after sequence: Int64, limit: Int) throws -> [PendingRequest]
    /// The app's delivered notifications after `cursor` (newest first), at most `limit`.
    func delivered(app: String, thread: String?, after cursor: DeliveredCursor?, limit: Int) throws
        -> [DeliveredNotification]
    /// The app's outbox after response `id`, oldest first, at most `limit`.
    func responses(app: String, after id: Int64, limit: Int) throws -> [NotificationResponse]
    /// Apps after `bundleIdentifier` (from the first when nil), by bundle identifier, at most `limit`.
    func apps(after bundleIdentifier: String?, limit: Int) throws -> [AppRecord]
    /// Keeps the newest events within `retention` (count, bytes, and age before `now`).
    func pruneEvents(_ retention: EventRetention, now: Date) throws

    // MARK: Web Push
    /// Every Web Push subscription, oldest first (`created`, then `id`).
    func webPushSubscriptions() throws -> [WebPushSubscription]
    /// The subscription with this `id`, or `nil` (one row read: a push's outcome is noted per push).
    func webPushSubscription(id: String) throws -> WebPushSubscription?
    /// The subscription with this push service `endpoint`, or `nil` (endpoints are unique).
    func webPushSubscription(endpoint: String) throws -> WebPushSubscription?
    /// Inserts the subscription, or replaces the one with its `id`. Endpoints are unique: a
    /// subscription with the endpoint of another is refused (`invalidValue`).
    func putWebPushSubscription(_ subscription: WebPushSubscription) throws
    /// Removes a subscription and its queued pushes; returns whether it was there.
    func removeWebPushSubscription(id: String) throws -> Bool
    /// Whether there is any subscription (one index read, not a list).
    func hasWebPushSubscriptions() throws -> Bool
    /// Queues one message for these subscribers, claimed by the caller until `claimedUntil` (see
    /// ``claimWebPushes(before:claimUntil:limit:)``); returns the message's id.
    func queueWebPush(_ message: String, app: String, subscriptions: [String], claimedUntil: Date) throws -> Int64
    /// Takes queued pushes due before `date` (`notBefore <= date`), soonest first (then by message
    /// and subscription), at most `limit`, each with the `notBefore` it had,
    /// and sets their `notBefore` to `claimUntil`, so no other taker (another node) gets them
    /// meanwhile; a push neither finished nor retried by then is taken again.
    func claimWebPushes(before date: Date, claimUntil: Date, limit: Int) throws -> [QueuedWebPush]
    /// A push that failed for now: tried `attempts` times, not again before `notBefore`.
    func retryWebPush(message: Int64, subscription: String, attempts: Int, notBefore: Date) throws
    /// A push that is done (sent, or given up); the message goes when its last push does.
    func finishWebPush(message: Int64, subscription: String) throws
    /// Claimed pushes given back (a sender that stops): due again from `date`, attempts kept. A
    /// shared store tells the other engines at commit (``SharedStoreFeed/webPushReleased``), so
    /// their senders take them at once instead of when the claim would have ended.
    func releaseWebPushes(_ pushes: [QueuedWebPushID], at date: Date) throws
    /// How many pushes are queued.
    func queuedWebPushCount() throws -> Int

    // MARK: Device state
    /// A small key/value table for device-wide state (last known location, time zone).
    func value(forKey key: String) throws -> String?
    func setValue(_ value: String?, forKey key: String) throws
    /// Removes the value and returns what it was: of two processes taking the same key, one gets it.
    func takeValue(forKey key: String) throws -> String?
    /// Stores `value` unless the key has one, and returns the value the key has afterwards: of two
    /// processes inserting at once, both get the first one's. Inside a transaction of a shared
    /// store the key's row stays locked until the transaction ends: another process's
    /// `insertValue` of the key waits, then reads what this one wrote (the Web Push queue's
    /// position in the event log is read and moved so, once per event across nodes).
    func insertValue(_ value: String, forKey key: String) throws -> String

    // MARK: Reading beside the writer
    /// Connections that read the store as last committed while the writer writes, or `nil` when the
    /// store has none (then the engine reads on its writer). Asked once, when the engine is made.
    var readers: (any NotificationStoreReaders)? { get }
}

/// Reads beside the writer: each ``read(_:)`` runs on the caller's thread against a snapshot of
/// what was last committed (SQLite's WAL lets readers and one writer work at once), never opening a
/// write transaction; several run at once. The engine sends its read-only operations here (lists,
/// pages, counts, the event log), so a GET does not wait for the writer's batch or commit.
///
/// ```swift
/// let pending = try readers.read { try $0.pending(app: "com.example.alarm") }
/// ```
public protocol NotificationStoreReaders: Sendable {
    /// Runs `body` with a read-only view of the store: one snapshot for the whole body. A write in
    /// `body` fails with ``ChimeError`` `storeFailure`.
    func read<T>(_ body: (any NotificationStore) throws -> T) throws -> T
}

/// One push of the Web Push queue: a message for a subscriber.
public struct QueuedWebPushID: Sendable, Hashable {
    public var message: Int64
    public var subscription: String

    public init(message: Int64, subscription: String) {
        self.message = message
        self.subscription = subscription
    }
}

/// A push waiting in the store's Web Push queue: one message for one subscriber.
public struct QueuedWebPush: Sendable, Hashable {
    public var message: Int64
    public var subscription: String
    public var app: String
    /// The message as the sender queued it (``WebPushMessage/storedRecord``).
    public var body: String
    /// How often sending it failed so far.
    public var attempts: Int
    /// Not sent before this date.
    public var notBefore: Date

    public init(message: Int64, subscription: String, app: String, body: String, attempts: Int, notBefore: Date) {
        self.message = message
        self.subscription = subscription
        self.app = app
        self.body = body
        self.attempts = attempts
        self.notBefore = notBefore
    }

    /// Its identity in the queue.
    public var id: QueuedWebPushID { QueuedWebPushID(message: message, subscription: subscription) }
}

/// Where a page of delivered notifications (newest first) continues: after this date and sequence.
public struct DeliveredCursor: Sendable, Hashable {
    public var date: Date
    public var sequence: Int64
    public init(date: Date, sequence: Int64) {
        self.date = date
        self.sequence = sequence
    }
}

/// How much of the event log a store keeps: the newest events within all three bounds.
public struct EventRetention: Sendable, Hashable {
    /// The most events kept.
    public var count: Int
    /// The most bytes of stored events kept.
    public var bytes: Int
    /// Events older than this many seconds are dropped.
    public var age: TimeInterval

    /// 100,000 events, 64 MiB, 7 days.
    public init(count: Int = 100_000, bytes: Int = 64 << 20, age: TimeInterval = 7 * 24 * 3600) {
        self.count = count
        self.bytes = bytes
        self.age = age
    }
}

/// Pages of the lists (cursor paging), and the event log bounded by count, bytes and age. A store
/// may answer from indexes; these defaults, for stores that do not, read the whole list.
extension NotificationStore {
    /// None: the engine reads on its writer.
    public var readers: (any NotificationStoreReaders)? { nil }

    public func putPending(_ records: [PendingRequest], app: String) throws {
        for record in records { try putPending(record, app: app) }
    }

    public func putPending(_ records: [PendingRequest], encodedRequests: [[UInt8]], app: String) throws {
        try putPending(records, app: app)
    }

    public func dueEncoded(before date: Date, limit: Int) throws -> [(
        app: String, pending: PendingRequest, encoded: [UInt8]?
    )] {
        try due(before: date, limit: limit).map { ($0.app, $0.pending, nil) }
    }

    @discardableResult
    public func putDelivered(_ notification: DeliveredNotification, app: String, encodedRequest: [UInt8]?) throws
        -> Int64
    {
        try putDelivered(notification, app: app)
    }

    public func appendEvent(_ event: EngineEvent, encoded: [UInt8]) throws -> Int64 {
        try appendEvent(event)
    }

    public func oldestDelivered(app: String, limit: Int) throws -> [String] {
        try delivered(app: app, thread: nil).suffix(max(0, limit)).reversed().map(\.request.identifier)
    }

    /// Counts by reading the app's lists, their bytes as ``RecordCodec`` encodes them.
    public func usage(app: String) throws -> StorageUsage {
        let pending = try pending(app: app)
        let delivered = try delivered(app: app, thread: nil)
        let bytes =
            pending.reduce(0) { $0 + RecordCodec.encode($1.request).count }
            + delivered.reduce(0) { $0 + RecordCodec.encode($1).count }
        return StorageUsage(pending: pending.count, delivered: delivered.count, bytes: bytes)
    }

    /// The app's pending requests with a sequence above `sequence`, in sequence order, at most `limit`.
    public func pending(app: String, after sequence: Int64, limit: Int) throws -> [PendingRequest] {
        Array(try pending(app: app).lazy.filter { $0.sequence > sequence }.prefix(max(0, limit)))
    }

    /// The app's delivered notifications after `cursor` (newest first), at most `limit`.
    public func delivered(app: String, thread: String?, after cursor: DeliveredCursor?, limit: Int) throws
        -> [DeliveredNotification]
    {
        let all = try delivered(app: app, thread: thread)
        guard let cursor else { return Array(all.prefix(max(0, limit))) }
        return Array(all.lazy.filter { ($0.date, $0.sequence) < (cursor.date, cursor.sequence) }.prefix(max(0, limit)))
    }

    /// The app's outbox after response `id`, oldest first, at most `limit`.
    public func responses(app: String, after id: Int64, limit: Int) throws -> [NotificationResponse] {
        Array(try responses(app: app).lazy.filter { $0.id > id }.prefix(max(0, limit)))
    }

    /// Apps after `bundleIdentifier` (all when nil), by bundle identifier, at most `limit`.
    public func apps(after bundleIdentifier: String?, limit: Int) throws -> [AppRecord] {
        Array(
            try apps().lazy.filter { bundleIdentifier == nil || $0.bundleIdentifier > bundleIdentifier! }.prefix(
                max(0, limit)))
    }

    /// Keeps the newest events within `retention`'s count, bytes and age (`now` - age); a store
    /// that does not record sizes and dates applies the count alone.
    public func pruneEvents(_ retention: EventRetention, now: Date) throws {
        try pruneEvents(keeping: retention.count)
    }

    /// For a store only one process writes: a read and a write in one transaction.
    public func takeValue(forKey key: String) throws -> String? {
        try transaction {
            let value = try self.value(forKey: key)
            if value != nil { try setValue(nil, forKey: key) }
            return value
        }
    }

    /// For a store only one process writes: a read and a write in one transaction.
    public func insertValue(_ value: String, forKey key: String) throws -> String {
        try transaction {
            if let existing = try self.value(forKey: key) { return existing }
            try setValue(value, forKey: key)
            return value
        }
    }
}

extension PendingRequest {
    /// The trigger's kind as the durable stores keep it in a column (`kind = 3` finds location
    /// triggers): 0 none, 1 time interval, 2 calendar, 3 location, 4 push, 5 recurrence rule.
    package static func storedKind(_ trigger: NotificationTrigger?) -> Int64 {
        switch trigger {
        case nil: 0
        case .timeInterval?: 1
        case .calendar?: 2
        case .location?: 3
        case .push?: 4
        case .recurrence?: 5
        }
    }
}
