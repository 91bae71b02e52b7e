import ChimeCore
import Foundation

/// The store's schema, as a list of migrations: `steps[n]` takes a store from version `n` to
/// `n + 1`. A new file runs every step; an older store runs the steps it is missing, all in one
/// transaction, so a failed upgrade leaves the file as it was.
///
/// To change the schema: append a step (never edit a released one), and add a fixture written by
/// the previous version to `Tests/ChimeSQLiteTests/Fixtures` (see `StoreFixtureTests`).
struct Schema: Sendable {
    /// One migration step. Most are plain SQL; `run` may do more with the connection.
    struct Step: Sendable {
        var run: @Sendable (SQLiteConnection) throws -> Void
        /// Whether the step copies whole tables: an upgrade through it runs with a rollback journal
        /// instead of the log (`SQLiteStore.migrate`), and `chime serve` says so before it starts.
        var rebuilds = false
        init(rebuilds: Bool = false, sql: String) {
            run = { try $0.execute(sql) }
            self.rebuilds = rebuilds
        }
        init(run: @escaping @Sendable (SQLiteConnection) throws -> Void) { self.run = run }
    }

    /// Whether upgrading a store of `version` copies whole tables.
    func rebuilds(from version: Int) -> Bool {
        version > 0 && version < self.version && steps[version...].contains { $0.rebuilds }
    }

    /// `PRAGMA application_id` of every Chime store: "Chim" in ASCII.
    static let applicationID: Int32 = 0x4368_696D

    var steps: [Step]
    var version: Int { steps.count }

    static let current = Schema(steps: [v1, v2, v3, v4, v5, v6, v7, v8])

    /// The tables and indexes a store of `version` has (each version's steps add to them).
    static func objects(atVersion version: Int) -> [String] {
        guard version >= 1 else { return [] }
        let first = [
            "apps", "categories", "pending", "pending_due", "pending_location", "pending_floating", "delivered",
            "delivered_order",
            "responses", "responses_app", "events", "events_app", "kv", "meta",
        ]
        let third = version >= 3 ? first + ["pending_order", "events_retention"] : first
        let fourth = version >= 4 ? third + ["quarantine", "quarantine_app"] : third
        let fifth =
            version >= 5
            ? fourth + [
                "web_push_subscriptions", "web_push_messages", "web_push_queue", "web_push_queue_due",
                "web_push_queue_subscription",
            ] : fourth
        let sixth = version >= 6 ? fifth + ["delivered_dismiss"] : fifth
        let seventh = version >= 7 ? sixth + ["receipts", "receipts_next", "receipts_ended"] : sixth
        return version >= 8 ? seventh + ["pending_key", "delivered_key"] : seventh
    }

    /// Version 1.
    static let v1 = Step(
        sql: """
            CREATE TABLE apps (bundle_id TEXT PRIMARY KEY NOT NULL, record BLOB NOT NULL) WITHOUT ROWID;
            CREATE TABLE categories (app TEXT PRIMARY KEY NOT NULL, body BLOB NOT NULL) WITHOUT ROWID;
            CREATE TABLE pending (
              app TEXT NOT NULL, identifier TEXT NOT NULL, seq INTEGER NOT NULL,
              next_fire REAL, kind INTEGER NOT NULL, floating INTEGER NOT NULL DEFAULT 0,
              anchor REAL NOT NULL, inside INTEGER, request BLOB NOT NULL,
              PRIMARY KEY (app, identifier)) WITHOUT ROWID;
            CREATE INDEX pending_due ON pending(next_fire, seq) WHERE next_fire IS NOT NULL;
            CREATE INDEX pending_location ON pending(seq) WHERE kind = 3;
            CREATE INDEX pending_floating ON pending(seq) WHERE floating = 1;
            CREATE TABLE delivered (
              app TEXT NOT NULL, identifier TEXT NOT NULL, seq INTEGER NOT NULL, date REAL NOT NULL,
              thread TEXT NOT NULL, body BLOB NOT NULL,
              PRIMARY KEY (app, identifier)) WITHOUT ROWID;
            CREATE INDEX delivered_order ON delivered(app, date DESC, seq DESC);
            CREATE TABLE responses (id INTEGER PRIMARY KEY AUTOINCREMENT, app TEXT NOT NULL, body BLOB NOT NULL);
            CREATE INDEX responses_app ON responses(app, id);
            CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, app TEXT NOT NULL, kind TEXT NOT NULL, body BLOB NOT NULL);
            CREATE INDEX events_app ON events(app, seq);
            CREATE TABLE kv (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID;
            CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID;
            INSERT INTO meta (key, value) VALUES ('next_sequence', 1);
            """)

    /// Version 2: no table changes. Records written from this version on may be newer kinds
    /// (`RecordCodec`): events with their payloads (a delivery's category, settings and
    /// presentation) and app records with a background-launch command. Version 1 records are still
    /// read; the version number keeps an older Chime from opening a store it could not read.
    static let v2 = Step(sql: "SELECT 1")
}

extension Schema {
    /// Version 3: pages of pending requests in sequence order from an index, and an event log
    /// bounded by bytes and age as well as count: each event's stored size and date, in an index
    /// that the pruning queries read without touching the events' bodies. Events logged before
    /// version 3 are dated by the upgrade.
    static let v3 = Step(
        sql: """
            CREATE INDEX pending_order ON pending(app, seq);
            ALTER TABLE events ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE events ADD COLUMN at REAL NOT NULL DEFAULT 0;
            UPDATE events SET size = length(body), at = CAST(strftime('%s', 'now') AS REAL);
            CREATE INDEX events_retention ON events(seq, size, at);
            """)
}

extension Schema {
    /// Version 4: the quarantine, where the scheduler sets aside a due request it cannot deliver
    /// (an app that is not a valid bundle identifier, a record it cannot read), so the rest fires.
    /// The request's record is kept as it was in `pending`.
    static let v4 = Step(
        sql: """
            CREATE TABLE quarantine (
              id INTEGER PRIMARY KEY AUTOINCREMENT, app TEXT NOT NULL, identifier TEXT NOT NULL,
              reason TEXT NOT NULL, at REAL NOT NULL, request BLOB NOT NULL);
            CREATE INDEX quarantine_app ON quarantine(app);
            """)
}

extension Schema {
    /// Version 5: Web Push. Subscriptions (the record is ``WebPushSubscription/storedRecord``'s
    /// JSON, the endpoint unique beside it); the queue of pushes not yet sent: one row per message
    /// (its body once, whatever the number of subscribers) and one per message and subscriber, due
    /// at `not_before` (a claim by the sender moves it ahead).
    static let v5 = Step(
        sql: """
            CREATE TABLE web_push_subscriptions (id TEXT PRIMARY KEY NOT NULL, endpoint TEXT NOT NULL UNIQUE, created REAL NOT NULL, record TEXT NOT NULL) WITHOUT ROWID;
            CREATE TABLE web_push_messages (id INTEGER PRIMARY KEY AUTOINCREMENT, app TEXT NOT NULL, body TEXT NOT NULL);
            CREATE TABLE web_push_queue (
              message INTEGER NOT NULL, subscription TEXT NOT NULL, attempts INTEGER NOT NULL, not_before REAL NOT NULL,
              PRIMARY KEY (message, subscription)) WITHOUT ROWID;
            CREATE INDEX web_push_queue_due ON web_push_queue(not_before, message);
            CREATE INDEX web_push_queue_subscription ON web_push_queue(subscription);
            """)
}

extension Schema {
    /// Version 6: auto-dismissal. A delivered notification's end of relevance
    /// (`NotificationRequest.autoDismiss` as a date) in a column, with an index of only the rows
    /// that have one, so the scheduler finds the next removal without reading the others (and a
    /// notification without one costs no index entry). Rows from before have none.
    static let v6 = Step(
        sql: """
            ALTER TABLE delivered ADD COLUMN dismiss_at REAL;
            CREATE INDEX delivered_dismiss ON delivered(dismiss_at, seq) WHERE dismiss_at IS NOT NULL;
            """)
}

extension Schema {
    /// Version 7: escalation (repeat until acknowledged). One row per escalating notification
    /// (app and identifier; a later delivery replaces it): its schedule — the next step in
    /// `next_at`, indexed for only the rows still escalating, which the scheduler reads alone —
    /// and its receipt, kept after the delivered row goes, until `ended_at` is older than the
    /// retention age (an index of only the ended rows finds them). Notifications that do not
    /// escalate have no row. Stores from before have none.
    static let v7 = Step(
        sql: """
            CREATE TABLE receipts (
              app TEXT NOT NULL, identifier TEXT NOT NULL, seq INTEGER NOT NULL, delivered_at REAL NOT NULL,
              every REAL NOT NULL, duration REAL NOT NULL, alerts INTEGER NOT NULL, last_alerted REAL NOT NULL,
              next_at REAL, acknowledged_at REAL, action TEXT, surface TEXT, expired INTEGER NOT NULL DEFAULT 0,
              removed_at REAL, ended_at REAL,
              PRIMARY KEY (app, identifier)) WITHOUT ROWID;
            CREATE INDEX receipts_next ON receipts(next_at, seq) WHERE next_at IS NOT NULL;
            CREATE INDEX receipts_ended ON receipts(ended_at) WHERE ended_at IS NOT NULL;
            """)
}

extension Schema {
    /// Version 8: `pending` and `delivered` become rowid tables, with their key `(app, identifier)`
    /// in a unique index. As `WITHOUT ROWID` tables each row (a request or notification record of
    /// several hundred bytes) sat in the b-tree of its key, so an add rewrote a page wherever its
    /// identifier sorts, and every index entry carried the whole key; now rows are appended in the
    /// order they are written, the key index holds only the key, and `pending_due`'s entries are a
    /// third of their size. Same columns, same indexes, same queries; the rows are copied in key
    /// order (no sort: every read has its own `ORDER BY`), in the one transaction every upgrade runs in,
    /// with a rollback journal rather than the log (`rebuilds`): the log would have to hold the
    /// new tables whole before a checkpoint could copy them.
    static let v8 = Step(
        rebuilds: true,
        sql: """
            CREATE TABLE pending_v8 (
              app TEXT NOT NULL, identifier TEXT NOT NULL, seq INTEGER NOT NULL,
              next_fire REAL, kind INTEGER NOT NULL, floating INTEGER NOT NULL DEFAULT 0,
              anchor REAL NOT NULL, inside INTEGER, request BLOB NOT NULL);
            INSERT INTO pending_v8 (app, identifier, seq, next_fire, kind, floating, anchor, inside, request)
              SELECT app, identifier, seq, next_fire, kind, floating, anchor, inside, request FROM pending;
            DROP TABLE pending;
            ALTER TABLE pending_v8 RENAME TO pending;
            CREATE UNIQUE INDEX pending_key ON pending(app, identifier);
            CREATE INDEX pending_due ON pending(next_fire, seq) WHERE next_fire IS NOT NULL;
            CREATE INDEX pending_location ON pending(seq) WHERE kind = 3;
            CREATE INDEX pending_floating ON pending(seq) WHERE floating = 1;
            CREATE INDEX pending_order ON pending(app, seq);
            CREATE TABLE delivered_v8 (
              app TEXT NOT NULL, identifier TEXT NOT NULL, seq INTEGER NOT NULL, date REAL NOT NULL,
              thread TEXT NOT NULL, body BLOB NOT NULL, dismiss_at REAL);
            INSERT INTO delivered_v8 (app, identifier, seq, date, thread, body, dismiss_at)
              SELECT app, identifier, seq, date, thread, body, dismiss_at FROM delivered;
            DROP TABLE delivered;
            ALTER TABLE delivered_v8 RENAME TO delivered;
            CREATE UNIQUE INDEX delivered_key ON delivered(app, identifier);
            CREATE INDEX delivered_order ON delivered(app, date DESC, seq DESC);
            CREATE INDEX delivered_dismiss ON delivered(dismiss_at, seq) WHERE dismiss_at IS NOT NULL;
            """)
}
