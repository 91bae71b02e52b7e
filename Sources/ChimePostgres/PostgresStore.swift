import ChimeCore
import Foundation
import Synchronization

/// The shared durable store: PostgreSQL, for several `chime serve` nodes on one database.
///
/// ```swift
/// let store = try PostgresStore(url: "postgresql://chime@db.internal:5432/chime?sslmode=require")
/// try store.transaction { try store.putPending(pending, app: "com.example.app") }
/// ```
///
/// Like every ``NotificationStore`` it is used from one queue at a time (the engine's writer), with
/// one connection and its prepared statements; the feed (``startFeed(_:)``) has a connection of its
/// own. Opening migrates the schema (``PostgresSchema``) or refuses a newer one untouched.
///
/// What makes it safe to share (see ``SharedNotificationStore``):
/// - `due(before:limit:)` is `SELECT … FOR UPDATE SKIP LOCKED`: a due request is claimed by one
///   transaction, delivered and removed (or moved on) in it; if the node dies, the transaction rolls
///   back and another node claims it.
/// - App records carry a version; a write compares it with the version this transaction read
///   (compare-and-set), and a read that finds a different version than an earlier read in the same
///   transaction fails too. Either is ``ChimeError/Code/storeConflict``, and the engine retries.
/// - Event numbers are given at commit from one counter row (`chime_meta.event_seq`), updated as
///   the transaction's last write: the row lock orders committers, so numbers follow commit order
///   and a reader never sees number *n* before every number below it.
/// - Every commit that changed something others cache or wait for sends a `NOTIFY` on the
///   channel `chime_<schema>`: events appended, apps, categories and pending requests changed,
///   the earliest new fire date, device state.
public final class PostgresStore: SharedNotificationStore {
    /// `user@host:port/database`, for messages (never the password).
    public let described: String
    /// This store's identity in notifications (random, per process).
    public let node: String
    let url: String
    /// The notification channel: one per schema, so clusters in other schemas do not hear this one.
    let channel: String
    private let connection: PostgresConnection
    private var depth = 0
    /// Whether the open transaction has begun in the database (at its first write or lock).
    private var begun = false
    /// Whether that BEGIN is still to be sent (with the next statement).
    private var beginPending = false
    /// Events of the open transaction, numbered at commit.
    private var buffered: [(app: String, kind: String, body: [UInt8], at: Double)] = []
    /// Delivered notifications written in the open transaction and not yet sent: all go in one
    /// statement, before anything else reads or writes the delivered list, and at commit.
    private var deliveries: [DeliveredRow] = []
    /// Numbers drawn from `chime_item_seq` in a block and not used yet (for delivered rows, whose
    /// number is returned before the row is written).
    private var sequencePool: ArraySlice<Int64> = []
    /// Pending requests written in the open transaction and not yet sent: as for deliveries, one
    /// statement, before anything else reads or writes pending requests, and at commit.
    private var pendingWrites: [PendingRow] = []
    /// The number given to the last event of the last commit.
    private var lastEventSequence: Int64 = 0
    /// What the open transaction changed, for the commit's notification.
    private var changes = PostgresChanges()
    /// App record versions this transaction read or wrote (`nil`: read, and there was none).
    private var versions: [String: Int64?] = [:]
    /// Apps whose records lately conflicted, with how many more transactions read them `FOR
    /// UPDATE`: after a conflict the retry locks what it reads, so two nodes writing one record in
    /// turn cannot make each other retry for ever.
    private var contended: [String: Int] = [:]
    private let feed = Mutex<PostgresChangeFeed?>(nil)

    /// Connects to the database at `url` and brings its schema up to date.
    ///
    /// - Parameter url: a libpq connection URI, `postgresql://USER@HOST:PORT/DB`, with libpq's
    ///   parameters (`sslmode`, `connect_timeout`, `options`, …) in its query, or a `key=value`
    ///   string. libpq's environment variables (`PGPASSWORD`, …) and `~/.pgpass` apply.
    /// - Throws: ``ChimeError`` `storeFailure` (cannot connect, an upgrade failed), `storeTooNew`
    ///   (the database was written by a newer Chime), `notAStore`.
    public init(url: String) throws {
        self.url = url
        connection = try PostgresConnection(url: url)
        described = connection.described
        node = String(UInt64.random(in: 1...UInt64.max), radix: 36)
        try PostgresSchema.current.migrate(connection)
        let schema = try connection.query("SELECT coalesce(current_schema()::text, 'public')").string(0, 0)
        channel = "chime_" + schema
    }

    deinit { close() }

    /// Stops the feed and closes the connection; any later call throws `storeFailure`.
    public func close() {
        stopFeed()
        connection.close()
    }

    // MARK: Transactions

    public func transaction<T>(_ body: () throws -> T) throws -> T {
        if depth > 0 {
            depth += 1
            defer { depth -= 1 }
            return try body()
        }
        if !connection.isOK { try connection.reset() }
        depth = 1
        do {
            let result = try body()
            if begun { try commit() }
            depth = 0
            endTransaction()
            contended = contended.compactMapValues { $0 > 1 ? $0 - 1 : nil }
            return result
        } catch {
            depth = 0
            let rollback = begun && !beginPending
            endTransaction()
            if rollback && connection.isOK { try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    /// Opens the database transaction at the first write or lock: a transaction that only reads
    /// (most of the scheduler's looks, token lookups, lists) costs one round trip per read and no
    /// BEGIN or COMMIT — in READ COMMITTED each statement reads what is committed either way. The
    /// BEGIN itself travels with the next statement (see `query`).
    private func begin() {
        guard depth > 0, !begun else { return }
        begun = true
        beginPending = true
    }

    /// Runs a statement; the first after `begin()` goes together with the BEGIN, in one round trip.
    @discardableResult
    private func query(_ sql: String, _ parameters: [PostgresValue] = []) throws -> PostgresResult {
        guard beginPending else { return try connection.query(sql, parameters) }
        beginPending = false
        return try connection.pipeline([("BEGIN", []), (sql, parameters)])[1]
    }

    private func query(_ statement: PostgresConnection.Statement) throws {
        try query(statement.sql, statement.parameters)
    }

    /// The commit, in one round trip: the waiting pending and delivered rows, the events numbered
    /// from the counter row, the notifications and COMMIT.
    private func commit() throws {
        var statements: [PostgresConnection.Statement] = beginPending ? [("BEGIN", [])] : []
        beginPending = false
        if let pending = pendingStatement() { statements.append(pending) }
        if let delivered = deliveriesStatement() { statements.append(delivered) }
        let eventsAt = statements.count
        let events = eventsStatement()
        if let events { statements.append(events) }
        for payload in changes.payloads(node: node) {
            statements.append(("SELECT pg_notify($1, $2)", [.text(channel), .text(payload)]))
        }
        statements.append(("COMMIT", []))
        let results: [PostgresResult]
        do {
            results = try connection.pipeline(statements)
        } catch let error as ChimeError {
            throw ChimeError(error.code, "committing to the Chime database failed: \(error.message)")
        }
        if events != nil { lastEventSequence = results[eventsAt].int64(0, 0) }
    }

    private func endTransaction() {
        begun = false
        beginPending = false
        buffered.removeAll()
        deliveries.removeAll()
        pendingWrites.removeAll()
        changes = PostgresChanges()
        versions.removeAll()
    }

    /// The statement that numbers and inserts the transaction's events: the counter row's update
    /// is the last lock the transaction takes, held only until the COMMIT that follows it.
    private func eventsStatement() -> PostgresConnection.Statement? {
        guard !buffered.isEmpty else { return nil }
        let count = Int64(buffered.count)
        changes.events = true
        defer { buffered.removeAll() }
        return (
            """
            WITH counter AS (UPDATE chime_meta SET value = value + $1 WHERE key = 'event_seq' RETURNING value),
            inserted AS (
              INSERT INTO chime_events (seq, app, kind, node, body, size, at)
              SELECT (SELECT value FROM counter) - $1 + u.ord, u.app, u.kind, $2, u.body, length(u.body), u.at
              FROM unnest($3::text[], $4::text[], $5::bytea[], $6::float8[]) WITH ORDINALITY AS u(app, kind, body, at, ord)
              RETURNING 1)
            SELECT value, (SELECT count(*) FROM inserted) FROM counter
            """,
            [
                .int8(count), .text(node), .texts(buffered.map(\.app)), .texts(buffered.map(\.kind)),
                .byteas(buffered.map(\.body)),
                .float8s(buffered.map(\.at)),
            ]
        )
    }

    /// Runs `body` in a transaction unless one is open (writes outside one commit on their own).
    private func write<T>(_ body: () throws -> T) throws -> T {
        if depth == 0 { return try transaction { try write(body) } }
        begin()
        return try body()
    }

    private static func date(_ seconds: Double) -> Date { Date(timeIntervalSince1970: seconds) }

    // MARK: Apps

    /// Remembers the version read, and refuses a version that differs from an earlier read in the
    /// same transaction (another node committed in between: the transaction's view is mixed).
    private func saw(_ app: String, version: Int64?) throws {
        guard depth > 0 else { return }
        if let known = versions[app], known != version {
            versions[app] = nil
            contended[app] = Self.contendedTransactions
            throw ChimeError(.storeConflict, "the app \(app) was changed by another node during this transaction")
        }
        versions[app] = .some(version)
    }

    private static let contendedTransactions = 64

    public func app(_ bundleIdentifier: String) throws -> AppRecord? {
        let locks = depth > 0 && contended[bundleIdentifier] != nil
        if locks { begin() }
        let rows = try query(
            "SELECT version, record FROM chime_apps WHERE bundle_id = $1" + (locks ? " FOR UPDATE" : ""),
            [.text(bundleIdentifier)])
        guard rows.count > 0 else {
            try saw(bundleIdentifier, version: nil)
            return nil
        }
        try saw(bundleIdentifier, version: rows.int64(0, 0))
        return try RecordCodec.decodeApp(rows.bytes(0, 1))
    }

    public func apps() throws -> [AppRecord] {
        try apps(after: nil, limit: Int(Int64.max))
    }

    public func putApp(_ record: AppRecord) throws {
        try write {
            let app = record.bundleIdentifier
            let body = PostgresValue.bytea(RecordCodec.encode(record))
            let rows: PostgresResult
            switch versions[app] {
            case .some(.some(let version)):
                rows = try query(
                    """
                    UPDATE chime_apps SET record = $2, version = version + 1 WHERE bundle_id = $1 AND version = $3 RETURNING version
                    """, [.text(app), body, .int8(version)])
            case .some(.none):
                rows = try query(
                    """
                    INSERT INTO chime_apps (bundle_id, version, record) VALUES ($1, 1, $2) ON CONFLICT (bundle_id) DO NOTHING RETURNING version
                    """, [.text(app), body])
            case .none:
                // Not read in this transaction: a plain replacement.
                rows = try query(
                    """
                    INSERT INTO chime_apps (bundle_id, version, record) VALUES ($1, 1, $2)
                    ON CONFLICT (bundle_id) DO UPDATE SET record = excluded.record, version = chime_apps.version + 1 RETURNING version
                    """, [.text(app), body])
            }
            guard rows.count == 1 else {
                versions[app] = nil
                contended[app] = Self.contendedTransactions
                throw ChimeError(
                    .storeConflict, "the app \(app) was changed by another node since this transaction read it")
            }
            versions[app] = .some(rows.int64(0, 0))
            changes.apps.insert(app)
        }
    }

    public func removeApp(_ bundleIdentifier: String) throws {
        try write {
            try writePending()
            try writeDeliveries()
            // Pending first: a node firing the app's requests holds them, and this waits for it
            // before touching what that node writes next (its delivered list, the app record).
            for table in [
                "chime_pending", "chime_delivered", "chime_responses", "chime_events", "chime_categories",
                "chime_quarantine",
                "chime_receipts",
            ] {
                try query("DELETE FROM \(table) WHERE app = $1", [.text(bundleIdentifier)])
            }
            try query(
                "DELETE FROM chime_web_push_queue WHERE message IN (SELECT id FROM chime_web_push_messages WHERE app = $1)",
                [.text(bundleIdentifier)])
            try query("DELETE FROM chime_web_push_messages WHERE app = $1", [.text(bundleIdentifier)])
            try query("DELETE FROM chime_apps WHERE bundle_id = $1", [.text(bundleIdentifier)])
            buffered.removeAll { $0.app.isLiterally(bundleIdentifier) }
            versions[bundleIdentifier] = .some(nil)
            changes.removed.insert(bundleIdentifier)
        }
    }

    // MARK: Categories

    public func categories(app: String) throws -> [NotificationCategory] {
        let rows = try query("SELECT body FROM chime_categories WHERE app = $1", [.text(app)])
        return rows.count == 0 ? [] : try RecordCodec.decodeCategories(rows.bytes(0, 0))
    }

    public func setCategories(_ categories: [NotificationCategory], app: String) throws {
        try write {
            try query(
                """
                INSERT INTO chime_categories (app, body) VALUES ($1, $2) ON CONFLICT (app) DO UPDATE SET body = excluded.body
                """, [.text(app), .bytea(RecordCodec.encode(categories))])
            changes.categories.insert(app)
        }
    }

    // MARK: Pending

    private static let pendingColumns = "app, seq, next_fire, anchor, inside, request"

    /// Reads rows selected with `pendingColumns` and then `identifier`. A record that cannot be
    /// read is an ``UndeliverableRequest`` for the engine to set aside (then it reads again).
    private func pendingRows(_ rows: PostgresResult) throws -> [(app: String, pending: PendingRequest)] {
        var result: [(app: String, pending: PendingRequest)] = []
        result.reserveCapacity(rows.count)
        for row in 0..<rows.count { result.append(try pendingRow(rows, row)) }
        return result
    }

    /// `pendingRows`' row `row`.
    private func pendingRow(_ rows: PostgresResult, _ row: Int) throws -> (app: String, pending: PendingRequest) {
        let request: NotificationRequest
        do { request = try RecordCodec.decodeRequest(rows.bytes(row, 5)) } catch {
            throw UndeliverableRequest(
                app: rows.string(row, 0), identifier: rows.string(row, 6),
                reason: "its stored record cannot be read: \(ChimeError.message(of: error))")
        }
        let pending = PendingRequest(
            request: request, nextFireDate: rows.optionalDouble(row, 2).map(Self.date),
            anchor: Self.date(rows.double(row, 3)), inside: rows.optionalBool(row, 4),
            sequence: rows.int64(row, 1))
        return (rows.string(row, 0), pending)
    }

    public func putPending(_ record: PendingRequest, app: String) throws {
        try putPending([record], app: app)
    }

    public func putPending(_ records: [PendingRequest], app: String) throws {
        try putPending(records, encodedRequests: [], app: app)
    }

    /// One row per key, at the place of the key's first, made by `merge(earlier, later)` from all
    /// of the key's rows in order (a statement's `ON CONFLICT DO UPDATE` may touch a row once).
    /// Keys are compared literally, as PostgreSQL compares the columns (see ``LiteralKey``).
    private static func collapse<Row>(_ rows: [Row], key: (Row) -> String, merge: (Row, Row) -> Row) -> [Row] {
        var position: [LiteralKey: Int] = [:]
        var out: [Row] = []
        out.reserveCapacity(rows.count)
        for row in rows {
            let name = LiteralKey(key(row))
            if let index = position[name] {
                out[index] = merge(out[index], row)
            } else {
                position[name] = out.count
                out.append(row)
            }
        }
        return out
    }

    /// A pending row waiting to be written.
    struct PendingRow {
        var app: String
        var record: PendingRequest
        var sequence: Int64
        var body: [UInt8]
    }

    /// `encodedRequests`, when it has one entry per record, holds their `RecordCodec` bytes (the
    /// engine encodes on the caller's thread); an empty entry is encoded here. The rows are written
    /// with every other pending write of the transaction in one statement (see `writePending`).
    public func putPending(_ records: [PendingRequest], encodedRequests: [[UInt8]], app: String) throws {
        guard !records.isEmpty else { return }
        let given = encodedRequests.count == records.count
        try write {
            for (index, record) in records.enumerated() {
                let body =
                    given && !encodedRequests[index].isEmpty
                    ? encodedRequests[index] : RecordCodec.encode(record.request)
                pendingWrites.append(PendingRow(app: app, record: record, sequence: record.sequence, body: body))
            }
            changes.pending.insert(app)
            if let earliest = records.compactMap({ $0.nextFireDate?.timeIntervalSince1970 }).min() {
                changes.earliest = min(changes.earliest ?? earliest, earliest)
            }
            if pendingWrites.count >= 8192 { try writePending() }
        }
    }

    /// Writes the waiting pending rows in one statement, as binary arrays. One row per app and
    /// identifier, as the last record for it says, at the place of its first; its sequence is the
    /// last one a record gave, else the stored one, else a new one — drawn in order, and only for
    /// identifiers not stored yet, so sequences stay dense.
    private func writePending() throws {
        if let statement = pendingStatement() { try query(statement) }
    }

    private func pendingStatement() -> PostgresConnection.Statement? {
        guard !pendingWrites.isEmpty else { return nil }
        let rows = Self.collapse(pendingWrites, key: { $0.app + "\u{0}" + $0.record.request.identifier }) {
            earlier, later in
            PendingRow(
                app: later.app, record: later.record, sequence: later.sequence != 0 ? later.sequence : earlier.sequence,
                body: later.body)
        }
        pendingWrites.removeAll(keepingCapacity: true)
        return (
            """
            INSERT INTO chime_pending AS p (app, identifier, seq, next_fire, kind, floating, anchor, inside, request)
            SELECT u.app, u.identifier,
                   CASE WHEN u.seq <> 0 THEN u.seq
                        ELSE coalesce((SELECT e.seq FROM chime_pending e WHERE e.app = u.app AND e.identifier = u.identifier),
                                      nextval('chime_item_seq')) END,
                   u.next_fire, u.kind, u.floating, u.anchor, u.inside, u.request
            FROM (SELECT * FROM unnest($1::text[], $2::text[], $3::int8[], $4::float8[], $5::int8[], $6::bool[], $7::float8[], $8::bool[], $9::bytea[])
                  WITH ORDINALITY AS t(app, identifier, seq, next_fire, kind, floating, anchor, inside, request, ord)
                  ORDER BY ord) u
            ON CONFLICT (app, identifier) DO UPDATE SET
              seq = excluded.seq, next_fire = excluded.next_fire, kind = excluded.kind, floating = excluded.floating,
              anchor = excluded.anchor, inside = excluded.inside, request = excluded.request
            """,
            [
                .texts(rows.map(\.app)), .texts(rows.map(\.record.request.identifier)), .int8s(rows.map(\.sequence)),
                .float8s(rows.map { $0.record.nextFireDate?.timeIntervalSince1970 }),
                .int8s(rows.map { PendingRequest.storedKind($0.record.request.trigger) }),
                .bools(rows.map { $0.record.request.trigger?.isFloating == true }),
                .float8s(rows.map { $0.record.anchor.timeIntervalSince1970 }),
                .bools(rows.map(\.record.inside)),
                .byteas(rows.map(\.body)),
            ]
        )
    }

    public func pending(app: String) throws -> [PendingRequest] {
        try writePending()
        return try pendingRows(
            try query(
                "SELECT \(Self.pendingColumns), identifier FROM chime_pending WHERE app = $1 ORDER BY seq", [.text(app)]
            )
        )
        .map(\.pending)
    }

    public func pending(app: String, identifier: String) throws -> PendingRequest? {
        try writePending()
        return try pendingRows(
            try query(
                "SELECT \(Self.pendingColumns), identifier FROM chime_pending WHERE app = $1 AND identifier = $2",
                [.text(app), .text(identifier)])
        ).first?.pending
    }

    /// Deletes by identifier; returns those that existed, in the order asked, each once.
    private func remove(from table: String, app: String, identifiers: [String]) throws -> [String] {
        guard !identifiers.isEmpty else { return [] }
        return try write {
            let rows = try query(
                "DELETE FROM \(table) WHERE app = $1 AND identifier = ANY($2::text[]) RETURNING identifier",
                [.text(app), .texts(identifiers)])
            if rows.count > 0 && table == "chime_pending" { changes.pending.insert(app) }
            var found = Set((0..<rows.count).map { LiteralKey(rows.string($0, 0)) })
            return identifiers.filter { found.remove(LiteralKey($0)) != nil }
        }
    }

    public func removePending(app: String, identifiers: [String]) throws -> [String] {
        try writePending()
        return try remove(from: "chime_pending", app: app, identifiers: identifiers)
    }

    public func removeAllPending(app: String) throws -> [String] {
        try writePending()
        return try write {
            let rows = try query("DELETE FROM chime_pending WHERE app = $1 RETURNING identifier, seq", [.text(app)])
            if rows.count > 0 { changes.pending.insert(app) }
            return (0..<rows.count).map { (rows.int64($0, 1), rows.string($0, 0)) }.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    public func due(before date: Date, limit: Int) throws -> [(app: String, pending: PendingRequest)] {
        guard let rows = try claimDue(before: date, limit: limit) else { return [] }
        return try pendingRows(rows)
    }

    /// `due`, each row with its request's record as stored: firing builds the delivered record from
    /// it (``putDelivered(_:app:encodedRequest:)``) instead of encoding the request again.
    public func dueEncoded(before date: Date, limit: Int) throws -> [(
        app: String, pending: PendingRequest, encoded: [UInt8]?
    )] {
        guard let rows = try claimDue(before: date, limit: limit) else { return [] }
        var result: [(app: String, pending: PendingRequest, encoded: [UInt8]?)] = []
        result.reserveCapacity(rows.count)
        for row in 0..<rows.count {
            let (app, pending) = try pendingRow(rows, row)
            result.append((app, pending, Array(rows.bytes(row, 5))))
        }
        return result
    }

    /// The due rows, claimed: locked until the transaction ends, and what another node holds is
    /// skipped (`nil` for a limit of 0).
    private func claimDue(before date: Date, limit: Int) throws -> PostgresResult? {
        try writePending()
        guard limit > 0 else { return nil }
        begin()
        return try query(
            """
            SELECT \(Self.pendingColumns), identifier FROM chime_pending
            WHERE next_fire IS NOT NULL AND next_fire <= $1 ORDER BY next_fire, seq LIMIT $2
            FOR UPDATE SKIP LOCKED
            """, [.float8(date.timeIntervalSince1970), .int8(Int64(limit))])
    }

    /// The soonest fire date, read without a lock (a row lock would cost a flushed commit each
    /// time the scheduler looks): it may belong to a request another node is firing at this moment,
    /// in which case the claim finds nothing and the engine looks again a moment later.
    public func soonestFireDate() throws -> Date? {
        try writePending()
        try writeDeliveries()
        // Each from its partial index; LEAST ignores a NULL (nothing of that kind).
        let rows = try query(
            """
            SELECT LEAST((SELECT next_fire FROM chime_pending WHERE next_fire IS NOT NULL ORDER BY next_fire, seq LIMIT 1),
                         (SELECT dismiss_at FROM chime_delivered WHERE dismiss_at IS NOT NULL ORDER BY dismiss_at, seq LIMIT 1),
                         (SELECT next_at FROM chime_receipts WHERE next_at IS NOT NULL ORDER BY next_at, seq LIMIT 1))
            """)
        return rows.count == 0 || rows.isNull(0, 0) ? nil : Self.date(rows.double(0, 0))
    }

    public func soonest(limit: Int) throws -> [(app: String, identifier: String, date: Date, sequence: Int64)] {
        try writePending()
        return try soonest(column: "next_fire", of: "chime_pending", limit: limit)
    }

    /// The `limit` rows of `table` with the soonest `column` (a date), in `(column, seq)` order:
    /// the windows' refills (fire dates, ends of relevance, escalation steps).
    private func soonest(column: String, of table: String, limit: Int) throws -> [(
        app: String, identifier: String, date: Date, sequence: Int64
    )] {
        let rows = try query(
            """
            SELECT app, identifier, \(column), seq FROM \(table) WHERE \(column) IS NOT NULL ORDER BY \(column), seq LIMIT $1
            """, [.int8(Int64(max(limit, 0)))])
        return (0..<rows.count).map {
            (rows.string($0, 0), rows.string($0, 1), Self.date(rows.double($0, 2)), rows.int64($0, 3))
        }
    }

    public func locationPending() throws -> [(app: String, pending: PendingRequest)] {
        try writePending()
        return try pendingRows(
            try query("SELECT \(Self.pendingColumns), identifier FROM chime_pending WHERE kind = 3 ORDER BY seq"))
    }

    public func floatingPending() throws -> [(app: String, pending: PendingRequest)] {
        try writePending()
        return try pendingRows(
            try query("SELECT \(Self.pendingColumns), identifier FROM chime_pending WHERE floating ORDER BY seq"))
    }

    public func pendingCount(app: String?) throws -> Int {
        try writePending()
        return try count(table: "chime_pending", app: app)
    }

    private func count(table: String, app: String?) throws -> Int {
        guard let app else { return Int(try query("SELECT count(*) FROM \(table)").int64(0, 0)) }
        return Int(try query("SELECT count(*) FROM \(table) WHERE app = $1", [.text(app)]).int64(0, 0))
    }

    // MARK: Delivered

    /// A delivered row waiting to be written.
    struct DeliveredRow {
        var app: String
        var identifier: String
        var sequence: Int64
        var date: Double
        var thread: String
        var body: [UInt8]
        /// The end of relevance (`nil` for most: then the statement leaves the column out).
        var dismissAt: Double?
    }

    /// Returns the row's sequence at once (from a block drawn ahead); the row itself is written
    /// with the others of the transaction in one statement (see `writeDeliveries`).
    @discardableResult
    public func putDelivered(_ notification: DeliveredNotification, app: String) throws -> Int64 {
        try putDelivered(notification, app: app, encodedRequest: nil)
    }

    /// `putDelivered`, the record built from the request's as ``dueEncoded(before:limit:)`` gave it
    /// (the request is copied, not encoded again).
    @discardableResult
    public func putDelivered(_ notification: DeliveredNotification, app: String, encodedRequest: [UInt8]?) throws
        -> Int64
    {
        try write {
            var notification = notification
            if notification.sequence == 0 { notification.sequence = try takeSequence() }
            let body =
                encodedRequest.map { RecordCodec.encode(notification, encodedRequest: $0) }
                ?? RecordCodec.encode(notification)
            deliveries.append(
                DeliveredRow(
                    app: app, identifier: notification.request.identifier, sequence: notification.sequence,
                    date: notification.date.timeIntervalSince1970,
                    thread: notification.request.content.threadIdentifier,
                    body: body,
                    dismissAt: notification.dismissDate?.timeIntervalSince1970))
            if deliveries.count >= 8192 { try writeDeliveries() }
            return notification.sequence
        }
    }

    private func takeSequence() throws -> Int64 {
        if sequencePool.isEmpty {
            let rows = try query("SELECT nextval('chime_item_seq') FROM generate_series(1, 256)")
            sequencePool = ArraySlice((0..<rows.count).map { rows.int64($0, 0) })
        }
        return sequencePool.removeFirst()
    }

    /// Writes the waiting delivered rows in one statement; of two for one identifier the later wins.
    private func writeDeliveries() throws {
        if let statement = deliveriesStatement() { try query(statement) }
    }

    private func deliveriesStatement() -> PostgresConnection.Statement? {
        guard !deliveries.isEmpty else { return nil }
        let rows = Self.collapse(deliveries, key: { $0.app + "\u{0}" + $0.identifier }) { _, later in later }
        deliveries.removeAll(keepingCapacity: true)
        var parameters: [PostgresValue] = [
            .texts(rows.map(\.app)), .texts(rows.map(\.identifier)), .int8s(rows.map(\.sequence)),
            .float8s(rows.map(\.date)), .texts(rows.map(\.thread)), .byteas(rows.map(\.body)),
        ]
        // The end of relevance only when some row has one; otherwise the column's default (none),
        // which also clears it from a replaced row.
        let dismissals = rows.contains { $0.dismissAt != nil }
        if dismissals { parameters.append(.float8s(rows.map(\.dismissAt))) }
        return (
            """
            INSERT INTO chime_delivered (app, identifier, seq, date, thread, body\(dismissals ? ", dismiss_at" : ""))
            SELECT * FROM unnest($1::text[], $2::text[], $3::int8[], $4::float8[], $5::text[], $6::bytea[]\(dismissals ? ", $7::float8[]" : ""))
            ON CONFLICT (app, identifier) DO UPDATE SET seq = excluded.seq, date = excluded.date, thread = excluded.thread, body = excluded.body,
              dismiss_at = excluded.dismiss_at
            """, parameters
        )
    }

    public func dueDismissals(before date: Date, limit: Int) throws -> [(app: String, identifier: String)] {
        try writeDeliveries()
        guard limit > 0 else { return [] }
        // The claim, as `due(before:limit:)`'s: one node removes each.
        begin()
        let rows = try query(
            """
            SELECT app, identifier FROM chime_delivered WHERE dismiss_at IS NOT NULL AND dismiss_at <= $1 ORDER BY dismiss_at, seq LIMIT $2
            FOR UPDATE SKIP LOCKED
            """, [.float8(date.timeIntervalSince1970), .int8(Int64(limit))])
        return (0..<rows.count).map { (rows.string($0, 0), rows.string($0, 1)) }
    }

    public func soonestDismissals(limit: Int) throws -> [(app: String, identifier: String, date: Date, sequence: Int64)]
    {
        try writeDeliveries()
        return try soonest(column: "dismiss_at", of: "chime_delivered", limit: limit)
    }

    /// Rows of `seq, body` (the sequence is drawn in the statement, so the column has it).
    private func deliveredRows(_ rows: PostgresResult) throws -> [DeliveredNotification] {
        try (0..<rows.count).map { row in
            var notification = try RecordCodec.decodeDelivered(rows.bytes(row, 1))
            notification.sequence = rows.int64(row, 0)
            return notification
        }
    }

    public func delivered(app: String, thread: String?) throws -> [DeliveredNotification] {
        try writeDeliveries()
        if let thread {
            return try deliveredRows(
                try query(
                    "SELECT seq, body FROM chime_delivered WHERE app = $1 AND thread = $2 ORDER BY date DESC, seq DESC",
                    [.text(app), .text(thread)]))
        }
        return try deliveredRows(
            try query(
                "SELECT seq, body FROM chime_delivered WHERE app = $1 ORDER BY date DESC, seq DESC",
                [.text(app)]))
    }

    // MARK: Escalation receipts

    private static let receiptColumns = """
        app, identifier, seq, delivered_at, every, duration, alerts, last_alerted, next_at, acknowledged_at, action, surface,
        expired, removed_at
        """

    public func putReceipt(_ receipt: EscalationReceipt) throws {
        _ = try write {
            try query(
                """
                INSERT INTO chime_receipts (\(Self.receiptColumns), ended_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
                ON CONFLICT (app, identifier) DO UPDATE SET seq = excluded.seq, delivered_at = excluded.delivered_at, every = excluded.every,
                  duration = excluded.duration, alerts = excluded.alerts, last_alerted = excluded.last_alerted, next_at = excluded.next_at,
                  acknowledged_at = excluded.acknowledged_at, action = excluded.action, surface = excluded.surface,
                  expired = excluded.expired, removed_at = excluded.removed_at, ended_at = excluded.ended_at
                """,
                [
                    .text(receipt.app), .text(receipt.identifier), .int8(receipt.sequence),
                    .float8(receipt.deliveredAt.timeIntervalSince1970),
                    .float8(receipt.escalation.interval), .float8(receipt.escalation.duration),
                    .int8(Int64(receipt.alerts)),
                    .float8(receipt.lastAlertedAt.timeIntervalSince1970),
                    .float8(receipt.nextAlertAt?.timeIntervalSince1970),
                    .float8(receipt.acknowledgedAt?.timeIntervalSince1970), .text(receipt.actionIdentifier),
                    .text(receipt.surface),
                    .bool(receipt.expired), .float8(receipt.removedAt?.timeIntervalSince1970),
                    .float8(receipt.endedAt?.timeIntervalSince1970),
                ])
        }
    }

    private static func receipts(_ rows: PostgresResult) -> [EscalationReceipt] {
        (0..<rows.count).map { row in
            EscalationReceipt(
                app: rows.string(row, 0), identifier: rows.string(row, 1), sequence: rows.int64(row, 2),
                deliveredAt: date(rows.double(row, 3)),
                escalation: NotificationEscalation(every: rows.double(row, 4), for: rows.double(row, 5)),
                alerts: Int(rows.int64(row, 6)), lastAlertedAt: date(rows.double(row, 7)),
                nextAlertAt: rows.optionalDouble(row, 8).map(date),
                acknowledgedAt: rows.optionalDouble(row, 9).map(date),
                actionIdentifier: rows.isNull(row, 10) ? nil : rows.string(row, 10),
                surface: rows.isNull(row, 11) ? nil : rows.string(row, 11),
                expired: rows.bool(row, 12), removedAt: rows.optionalDouble(row, 13).map(date))
        }
    }

    public func receipt(app: String, identifier: String) throws -> EscalationReceipt? {
        Self.receipts(
            try query(
                "SELECT \(Self.receiptColumns) FROM chime_receipts WHERE app = $1 AND identifier = $2",
                [.text(app), .text(identifier)])
        ).first
    }

    public func dueEscalations(before date: Date, limit: Int) throws -> [EscalationReceipt] {
        guard limit > 0 else { return [] }
        // The claim, as `due(before:limit:)`'s: one node takes each step.
        begin()
        return Self.receipts(
            try query(
                """
                SELECT \(Self.receiptColumns) FROM chime_receipts WHERE next_at IS NOT NULL AND next_at <= $1 ORDER BY next_at, seq LIMIT $2
                FOR UPDATE SKIP LOCKED
                """, [.float8(date.timeIntervalSince1970), .int8(Int64(limit))]))
    }

    public func soonestEscalations(limit: Int) throws -> [(
        app: String, identifier: String, date: Date, sequence: Int64
    )] {
        try soonest(column: "next_at", of: "chime_receipts", limit: limit)
    }

    public func pruneReceipts(endedBefore date: Date) throws {
        _ = try write {
            try query(
                "DELETE FROM chime_receipts WHERE ended_at IS NOT NULL AND ended_at < $1",
                [.float8(date.timeIntervalSince1970)])
        }
    }

    public func delivered(app: String, identifier: String) throws -> DeliveredNotification? {
        try writeDeliveries()
        return try deliveredRows(
            try query(
                "SELECT seq, body FROM chime_delivered WHERE app = $1 AND identifier = $2",
                [.text(app), .text(identifier)])
        ).first
    }

    public func removeDelivered(app: String, identifiers: [String]) throws -> [String] {
        try writeDeliveries()
        return try remove(from: "chime_delivered", app: app, identifiers: identifiers)
    }

    public func removeAllDelivered(app: String, thread: String?) throws -> [String] {
        try write {
            try writeDeliveries()
            let rows: PostgresResult
            if let thread {
                rows = try query(
                    "DELETE FROM chime_delivered WHERE app = $1 AND thread = $2 RETURNING identifier, date, seq",
                    [.text(app), .text(thread)])
            } else {
                rows = try query(
                    "DELETE FROM chime_delivered WHERE app = $1 RETURNING identifier, date, seq", [.text(app)])
            }
            return (0..<rows.count).map { (rows.double($0, 1), rows.int64($0, 2), rows.string($0, 0)) }
                .sorted { ($0.0, $0.1) > ($1.0, $1.1) }.map(\.2)
        }
    }

    public func deliveredCount(app: String?) throws -> Int {
        try writeDeliveries()
        return try count(table: "chime_delivered", app: app)
    }

    public func oldestDelivered(app: String, limit: Int) throws -> [String] {
        try writeDeliveries()
        let rows = try query(
            "SELECT identifier FROM chime_delivered WHERE app = $1 ORDER BY date, seq LIMIT $2",
            [.text(app), .int8(Int64(max(limit, 0)))])
        return (0..<rows.count).map { rows.string($0, 0) }
    }

    public func usage(app: String) throws -> StorageUsage {
        try writePending()
        try writeDeliveries()
        let rows = try query(
            """
            SELECT (SELECT count(*) FROM chime_pending WHERE app = $1), (SELECT coalesce(sum(octet_length(request)), 0) FROM chime_pending WHERE app = $1),
                   (SELECT count(*) FROM chime_delivered WHERE app = $1), (SELECT coalesce(sum(octet_length(body)), 0) FROM chime_delivered WHERE app = $1)
            """, [.text(app)])
        return StorageUsage(
            pending: Int(rows.int64(0, 0)), delivered: Int(rows.int64(0, 2)),
            bytes: Int(rows.int64(0, 1) + rows.int64(0, 3)))
    }

    // MARK: Quarantine

    public func quarantinePending(app: String, identifier: String, reason: String, date: Date) throws
        -> QuarantinedRequest?
    {
        try writePending()
        return try write {
            let rows = try query(
                """
                WITH moved AS (DELETE FROM chime_pending WHERE app = $1 AND identifier = $2 RETURNING request)
                INSERT INTO chime_quarantine (id, app, identifier, reason, at, request)
                SELECT nextval('chime_quarantine_seq'), $1, $2, $3, $4, request FROM moved
                RETURNING id, request
                """, [.text(app), .text(identifier), .text(reason), .float8(date.timeIntervalSince1970)])
            guard rows.count == 1 else { return nil }
            changes.pending.insert(app)
            return QuarantinedRequest(
                id: rows.int64(0, 0), app: app, identifier: identifier, reason: reason, date: date,
                request: try? RecordCodec.decodeRequest(rows.bytes(0, 1)))
        }
    }

    public func quarantined(after id: Int64, limit: Int) throws -> [QuarantinedRequest] {
        let rows = try query(
            """
            SELECT id, app, identifier, reason, at, request FROM chime_quarantine WHERE id > $1 ORDER BY id LIMIT $2
            """, [.int8(id), .int8(Int64(max(limit, 0)))])
        return (0..<rows.count).map { row in
            QuarantinedRequest(
                id: rows.int64(row, 0), app: rows.string(row, 1), identifier: rows.string(row, 2),
                reason: rows.string(row, 3), date: Self.date(rows.double(row, 4)),
                request: try? RecordCodec.decodeRequest(rows.bytes(row, 5)))
        }
    }

    public func removeQuarantined(id: Int64) throws -> Bool {
        try write { try query("DELETE FROM chime_quarantine WHERE id = $1 RETURNING id", [.int8(id)]).count > 0 }
    }

    public func quarantinedCount() throws -> Int {
        try count(table: "chime_quarantine", app: nil)
    }

    // MARK: Outbox

    public func appendResponse(_ response: NotificationResponse, app: String) throws -> Int64 {
        try write {
            var response = response
            response.id = 0
            return try query(
                "INSERT INTO chime_responses (id, app, body) VALUES (nextval('chime_response_seq'), $1, $2) RETURNING id",
                [.text(app), .bytea(RecordCodec.encode(response))]
            ).int64(0, 0)
        }
    }

    public func responses(app: String) throws -> [NotificationResponse] {
        let rows = try query("SELECT id, body FROM chime_responses WHERE app = $1 ORDER BY id", [.text(app)])
        return try (0..<rows.count).map { row in
            var response = try RecordCodec.decodeResponse(rows.bytes(row, 1))
            response.id = rows.int64(row, 0)
            return response
        }
    }

    public func removeResponse(app: String, id: Int64) throws -> Bool {
        try write {
            try query("DELETE FROM chime_responses WHERE app = $1 AND id = $2 RETURNING id", [.text(app), .int8(id)])
                .count > 0
        }
    }

    // MARK: Events

    /// Inside a transaction the event is numbered at commit, and this returns a provisional
    /// (negative) number; outside one it commits at once and returns the event's number.
    public func appendEvent(_ event: EngineEvent) throws -> Int64 {
        var event = event
        event.sequence = 0
        return try appendEvent(event, encoded: RecordCodec.encode(event))
    }

    public func appendEvent(_ event: EngineEvent, encoded body: [UInt8]) throws -> Int64 {
        let row = (app: event.app, kind: event.kind.rawValue, body: body, at: event.date.timeIntervalSince1970)
        if depth == 0 {
            try transaction { _ = try appendEvent(event, encoded: body) }
            return lastEventSequence
        }
        begin()
        buffered.append(row)
        return -Int64(buffered.count)
    }

    public func events(after sequence: Int64, app: String?, limit: Int) throws -> [EngineEvent] {
        let rows: PostgresResult
        if let app {
            rows = try query(
                "SELECT seq, body FROM chime_events WHERE app = $1 AND seq > $2 ORDER BY seq LIMIT $3",
                [.text(app), .int8(sequence), .int8(Int64(max(limit, 0)))])
        } else {
            rows = try query(
                "SELECT seq, body FROM chime_events WHERE seq > $1 ORDER BY seq LIMIT $2",
                [.int8(sequence), .int8(Int64(max(limit, 0)))])
        }
        return try Self.events(rows)
    }

    /// Events from rows of `seq, body`.
    static func events(_ rows: PostgresResult) throws -> [EngineEvent] {
        try (0..<rows.count).map { row in
            var event = try RecordCodec.decodeEvent(rows.bytes(row, 1))
            event.sequence = rows.int64(row, 0)
            return event
        }
    }

    public func oldestEventSequence() throws -> Int64 {
        try query("SELECT coalesce(min(seq), 0) FROM chime_events").int64(0, 0)
    }

    public func newestEventSequence() throws -> Int64 {
        try query("SELECT coalesce(max(seq), 0) FROM chime_events").int64(0, 0)
    }

    public func pruneEvents(keeping: Int) throws {
        try write {
            if keeping <= 0 {
                try query("DELETE FROM chime_events")
                return
            }
            try query(
                "DELETE FROM chime_events WHERE seq < (SELECT seq FROM chime_events ORDER BY seq DESC LIMIT 1 OFFSET $1)",
                [.int8(Int64(keeping - 1))])
        }
    }

    /// Count, then bytes (the newest events whose sizes add up to at most `retention.bytes`), then
    /// age (events before the first one dated at or after `now - age`), from the retention index.
    public func pruneEvents(_ retention: EventRetention, now: Date) throws {
        try write {
            try pruneEvents(keeping: retention.count)
            try query(
                """
                DELETE FROM chime_events WHERE seq <= (
                  SELECT seq FROM (SELECT seq, sum(size) OVER (ORDER BY seq DESC) AS total FROM chime_events) AS running
                  WHERE total > $1 ORDER BY seq DESC LIMIT 1)
                """, [.int8(Int64(max(0, retention.bytes)))])
            try query(
                """
                DELETE FROM chime_events WHERE seq < coalesce((SELECT min(seq) FROM chime_events WHERE at >= $1),
                                                              (SELECT max(seq) + 1 FROM chime_events))
                """, [.float8(now.addingTimeInterval(-retention.age).timeIntervalSince1970)])
        }
    }

    // MARK: Pages

    public func pending(app: String, after sequence: Int64, limit: Int) throws -> [PendingRequest] {
        try writePending()
        return try pendingRows(
            try query(
                "SELECT \(Self.pendingColumns), identifier FROM chime_pending WHERE app = $1 AND seq > $2 ORDER BY seq LIMIT $3",
                [.text(app), .int8(sequence), .int8(Int64(max(0, limit)))])
        ).map(\.pending)
    }

    public func delivered(app: String, thread: String?, after cursor: DeliveredCursor?, limit: Int) throws
        -> [DeliveredNotification]
    {
        try writeDeliveries()
        var sql = "SELECT seq, body FROM chime_delivered WHERE app = $1"
        var parameters: [PostgresValue] = [.text(app)]
        if let thread {
            parameters.append(.text(thread))
            sql += " AND thread = $\(parameters.count)"
        }
        if let cursor {
            parameters += [.float8(cursor.date.timeIntervalSince1970), .int8(cursor.sequence)]
            sql += " AND (date, seq) < ($\(parameters.count - 1), $\(parameters.count))"
        }
        parameters.append(.int8(Int64(max(0, limit))))
        sql += " ORDER BY date DESC, seq DESC LIMIT $\(parameters.count)"
        return try deliveredRows(try query(sql, parameters))
    }

    public func responses(app: String, after id: Int64, limit: Int) throws -> [NotificationResponse] {
        let rows = try query(
            "SELECT id, body FROM chime_responses WHERE app = $1 AND id > $2 ORDER BY id LIMIT $3",
            [.text(app), .int8(id), .int8(Int64(max(0, limit)))])
        return try (0..<rows.count).map { row in
            var response = try RecordCodec.decodeResponse(rows.bytes(row, 1))
            response.id = rows.int64(row, 0)
            return response
        }
    }

    /// By bundle identifier in code-point order (`COLLATE "C"`), as Swift compares them.
    public func apps(after bundleIdentifier: String?, limit: Int) throws -> [AppRecord] {
        let rows = try query(
            """
            SELECT version, record, bundle_id FROM chime_apps WHERE $1::text IS NULL OR bundle_id COLLATE "C" > $1::text
            ORDER BY bundle_id COLLATE "C" LIMIT $2
            """, [bundleIdentifier.map { .text($0) } ?? .null, .int8(Int64(max(0, limit)))])
        var result: [AppRecord] = []
        for row in 0..<rows.count {
            try saw(rows.string(row, 2), version: rows.int64(row, 0))
            result.append(try RecordCodec.decodeApp(rows.bytes(row, 1)))
        }
        return result
    }

    // MARK: Web Push

    public func webPushSubscriptions() throws -> [WebPushSubscription] {
        let rows = try query("SELECT record FROM chime_web_push_subscriptions ORDER BY created, id")
        return try (0..<rows.count).map { try WebPushSubscription(storedRecord: rows.string($0, 0)) }
    }

    public func webPushSubscription(id: String) throws -> WebPushSubscription? {
        let rows = try query("SELECT record FROM chime_web_push_subscriptions WHERE id = $1", [.text(id)])
        return rows.count > 0 ? try WebPushSubscription(storedRecord: rows.string(0, 0)) : nil
    }

    public func webPushSubscription(endpoint: String) throws -> WebPushSubscription? {
        let rows = try query("SELECT record FROM chime_web_push_subscriptions WHERE endpoint = $1", [.text(endpoint)])
        return rows.count > 0 ? try WebPushSubscription(storedRecord: rows.string(0, 0)) : nil
    }

    public func putWebPushSubscription(_ subscription: WebPushSubscription) throws {
        try write {
            let taken = try query(
                "SELECT id FROM chime_web_push_subscriptions WHERE endpoint = $1 AND id <> $2",
                [.text(subscription.endpoint), .text(subscription.id)])
            if taken.count > 0 {
                throw ChimeError(.invalidValue, field: "endpoint", "another subscription has this endpoint")
            }
            try query(
                """
                INSERT INTO chime_web_push_subscriptions (id, endpoint, created, record) VALUES ($1, $2, $3, $4)
                ON CONFLICT (id) DO UPDATE SET endpoint = excluded.endpoint, created = excluded.created, record = excluded.record
                """,
                [
                    .text(subscription.id), .text(subscription.endpoint),
                    .float8(subscription.created.timeIntervalSince1970), .text(subscription.storedRecord),
                ])
        }
    }

    public func removeWebPushSubscription(id: String) throws -> Bool {
        try write {
            guard
                try query("DELETE FROM chime_web_push_subscriptions WHERE id = $1 RETURNING id", [.text(id)]).count > 0
            else { return false }
            let messages = try query(
                "DELETE FROM chime_web_push_queue WHERE subscription = $1 RETURNING message", [.text(id)])
            let ids = (0..<messages.count).map { messages.int64($0, 0) }
            if !ids.isEmpty {
                try query(
                    """
                    DELETE FROM chime_web_push_messages m WHERE m.id = ANY($1) AND NOT EXISTS (SELECT 1 FROM chime_web_push_queue q WHERE q.message = m.id)
                    """, [.int8s(ids)])
            }
            return true
        }
    }

    public func hasWebPushSubscriptions() throws -> Bool {
        try query("SELECT EXISTS (SELECT 1 FROM chime_web_push_subscriptions)").bool(0, 0)
    }

    public func queueWebPush(_ message: String, app: String, subscriptions: [String], claimedUntil: Date) throws
        -> Int64
    {
        try write {
            let id = try query(
                "INSERT INTO chime_web_push_messages (id, app, body) VALUES (nextval('chime_web_push_message_seq'), $1, $2) RETURNING id",
                [.text(app), .text(message)]
            ).int64(0, 0)
            try query(
                """
                INSERT INTO chime_web_push_queue (message, subscription, attempts, not_before)
                SELECT $1, s, 0, $3 FROM unnest($2::text[]) AS s ON CONFLICT DO NOTHING
                """, [.int8(id), .texts(subscriptions), .float8(claimedUntil.timeIntervalSince1970)])
            return id
        }
    }

    public func claimWebPushes(before date: Date, claimUntil: Date, limit: Int) throws -> [QueuedWebPush] {
        try write {
            let rows = try query(
                """
                WITH due AS (
                  SELECT message, subscription, not_before FROM chime_web_push_queue WHERE not_before <= $1
                  ORDER BY not_before, message, subscription LIMIT $2 FOR UPDATE SKIP LOCKED),
                claimed AS (
                  UPDATE chime_web_push_queue q SET not_before = $3 FROM due
                  WHERE q.message = due.message AND q.subscription = due.subscription
                  RETURNING q.message, q.subscription, q.attempts, due.not_before AS was)
                SELECT c.message, c.subscription, m.app, m.body, c.attempts, c.was FROM claimed c JOIN chime_web_push_messages m ON m.id = c.message
                ORDER BY c.was, c.message, c.subscription
                """,
                [
                    .float8(date.timeIntervalSince1970), .int8(Int64(max(0, limit))),
                    .float8(claimUntil.timeIntervalSince1970),
                ])
            return (0..<rows.count).map { row in
                QueuedWebPush(
                    message: rows.int64(row, 0), subscription: rows.string(row, 1), app: rows.string(row, 2),
                    body: rows.string(row, 3),
                    attempts: Int(rows.int64(row, 4)), notBefore: Self.date(rows.double(row, 5)))
            }
        }
    }

    public func retryWebPush(message: Int64, subscription: String, attempts: Int, notBefore: Date) throws {
        try write {
            _ = try query(
                "UPDATE chime_web_push_queue SET attempts = $3, not_before = $4 WHERE message = $1 AND subscription = $2",
                [.int8(message), .text(subscription), .int8(Int64(attempts)), .float8(notBefore.timeIntervalSince1970)])
        }
    }

    public func finishWebPush(message: Int64, subscription: String) throws {
        try write {
            try query(
                "DELETE FROM chime_web_push_queue WHERE message = $1 AND subscription = $2",
                [.int8(message), .text(subscription)])
            try query(
                "DELETE FROM chime_web_push_messages m WHERE m.id = $1 AND NOT EXISTS (SELECT 1 FROM chime_web_push_queue q WHERE q.message = $1)",
                [.int8(message)])
        }
    }

    /// Tells the other nodes at commit (`w` in the notification), whose feeds wake their senders.
    public func releaseWebPushes(_ pushes: [QueuedWebPushID], at date: Date) throws {
        guard !pushes.isEmpty else { return }
        try write {
            try query(
                """
                UPDATE chime_web_push_queue q SET not_before = $1 FROM unnest($2::int8[], $3::text[]) AS r(message, subscription)
                WHERE q.message = r.message AND q.subscription = r.subscription
                """,
                [
                    .float8(date.timeIntervalSince1970), .int8s(pushes.map(\.message)),
                    .texts(pushes.map(\.subscription)),
                ])
            changes.webPush = true
        }
    }

    public func queuedWebPushCount() throws -> Int { try count(table: "chime_web_push_queue", app: nil) }

    // MARK: Values

    private func noteValue(_ key: String) {
        if key.hasPrefix("device.") { changes.device = true }
    }

    public func value(forKey key: String) throws -> String? {
        let rows = try query("SELECT value FROM chime_kv WHERE key = $1", [.text(key)])
        return rows.count == 0 ? nil : rows.string(0, 0)
    }

    public func setValue(_ value: String?, forKey key: String) throws {
        try write {
            if let value {
                try query(
                    "INSERT INTO chime_kv (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    [.text(key), .text(value)])
            } else {
                try query("DELETE FROM chime_kv WHERE key = $1", [.text(key)])
            }
            noteValue(key)
        }
    }

    public func takeValue(forKey key: String) throws -> String? {
        try write {
            let rows = try query("DELETE FROM chime_kv WHERE key = $1 RETURNING value", [.text(key)])
            guard rows.count > 0 else { return nil }
            noteValue(key)
            return rows.string(0, 0)
        }
    }

    public func insertValue(_ value: String, forKey key: String) throws -> String {
        try write {
            let rows = try query(
                """
                INSERT INTO chime_kv (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = chime_kv.value RETURNING value
                """, [.text(key), .text(value)])
            noteValue(key)
            return rows.string(0, 0)
        }
    }

    // MARK: The feed

    /// The server process of the change feed's connection, for tests that cut it.
    var feedBackendPID: Int32? { feed.withLock { $0?.backendPID } }

    public func startFeed(_ handlers: SharedStoreFeed) {
        feed.withLock { feed in
            feed?.stop()
            let started = PostgresChangeFeed(url: url, channel: channel, node: node, handlers: handlers)
            started.start()
            feed = started
        }
    }

    public func stopFeed() {
        let running = feed.withLock { feed -> PostgresChangeFeed? in
            defer { feed = nil }
            return feed
        }
        running?.stop()
    }
}

/// What a transaction changed that other nodes cache or wait for, and its notification payloads.
///
/// A payload is lines: `chime1 NODE`, then `e` (events were logged), `s SECONDS` (the earliest fire
/// date written), `d` (device state), `w` (Web Push claims given back), and `a APP` (app record written), `r APP` (app removed),
/// `c APP` (categories), `p APP` (pending requests), with app names percent-encoded. Payloads stay
/// under PostgreSQL's 8,000-byte limit: a long list is cut into several.
struct PostgresChanges {
    var events = false
    var earliest: Double?
    var device = false
    /// Claimed Web Push pushes were given back (a node stopping): other senders take them now.
    var webPush = false
    var apps: Set<String> = []
    var removed: Set<String> = []
    var categories: Set<String> = []
    var pending: Set<String> = []

    static let limit = 7_600

    func payloads(node: String) -> [String] {
        var first: [String] = []
        if events { first.append("e") }
        if let earliest { first.append("s \(earliest)") }
        if device { first.append("d") }
        if webPush { first.append("w") }
        let lists = [("a", apps), ("r", removed), ("c", categories), ("p", pending)]
            .flatMap { tag, names in names.sorted().map { "\(tag) \(PercentEncoding.encode($0))" } }
        if first.isEmpty && lists.isEmpty { return [] }
        let header = "chime1 \(node)"
        var payloads: [String] = []
        var current = ([header] + first).joined(separator: "\n")
        for line in lists {
            if current.utf8.count + line.utf8.count + 1 > Self.limit {
                payloads.append(current)
                current = header
            }
            current += "\n" + line
        }
        payloads.append(current)
        return payloads
    }

    /// Reads a payload: the sending node and what it changed (nil for a payload that is not Chime's).
    static func parse(_ payload: String) -> (node: String, changes: PostgresChanges)? {
        let lines = payload.split(separator: "\n", omittingEmptySubsequences: true)
        guard let header = lines.first, header.hasPrefix("chime1 ") else { return nil }
        var changes = PostgresChanges()
        for line in lines.dropFirst() {
            let tag = line.prefix(while: { $0 != " " })
            let rest = line.dropFirst(tag.count + 1)
            let name = { (try? PercentEncoding.decode(rest)) ?? String(rest) }
            switch tag {
            case "e": changes.events = true
            case "s": if let value = Double(rest) { changes.earliest = min(changes.earliest ?? value, value) }
            case "d": changes.device = true
            case "w": changes.webPush = true
            case "a": changes.apps.insert(name())
            case "r": changes.removed.insert(name())
            case "c": changes.categories.insert(name())
            case "p": changes.pending.insert(name())
            default: break
            }
        }
        return (String(header.dropFirst("chime1 ".count)), changes)
    }
}
