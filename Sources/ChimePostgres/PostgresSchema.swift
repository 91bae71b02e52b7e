import ChimeCore
import Foundation

/// The PostgreSQL schema as a list of migrations: `steps[n]` takes a database from version `n` to
/// `n + 1`. Opening runs the missing steps in one transaction under an advisory lock, so nodes
/// that start at once migrate once, and a failed upgrade leaves the database as it was; a database
/// of a newer version is refused untouched.
///
/// Tables are prefixed `chime_`, in the connection's current schema (choose another with the
/// URL's `options=-csearch_path%3Dname`), so Chime can share a database with other software.
///
/// To change the schema: append a step (never edit a released one) and test the upgrade from the
/// previous version in `PostgresStoreTests`.
struct PostgresSchema: Sendable {
    var steps: [String]
    var version: Int { steps.count }

    static let current = PostgresSchema(steps: [v1, v2, v3, v4, v5])

    /// The advisory lock's first key ("Chim"); the second is the schema name's hash.
    static let lockKey: Int32 = 0x4368_696D

    /// Version 1. Records are `RecordCodec` bytes (as in SQLite) with the queried columns beside
    /// them; dates are seconds since 1970 as `float8`, which holds a `Date` exactly.
    ///
    /// - `chime_item_seq` orders pending and delivered items, `chime_response_seq` numbers the
    ///   outbox: sequences, so nodes never wait for each other's counters (a rolled-back number is
    ///   not handed out again).
    /// - The event log's numbers come from `chime_meta.event_seq`, a row updated at commit: the
    ///   row lock makes concurrent committers take their numbers one after the other, so numbers
    ///   follow commit order (see `PostgresStore`).
    /// - `chime_apps.version` grows with every write, for the compare-and-set of app records.
    /// - `chime_events.size` and `.at` (the record's bytes, the event's date) bound the log by
    ///   bytes and age as well as count, from the `chime_events_retention` index alone.
    static let v1 = """
        CREATE TABLE chime_meta (key text PRIMARY KEY, value bigint NOT NULL);
        INSERT INTO chime_meta (key, value) VALUES ('schema_version', 0), ('event_seq', 0);
        CREATE SEQUENCE chime_item_seq;
        CREATE SEQUENCE chime_response_seq;
        CREATE TABLE chime_apps (bundle_id text PRIMARY KEY, version bigint NOT NULL, record bytea NOT NULL);
        CREATE TABLE chime_categories (app text PRIMARY KEY, body bytea NOT NULL);
        CREATE TABLE chime_pending (
          app text NOT NULL, identifier text NOT NULL, seq bigint NOT NULL,
          next_fire float8, kind smallint NOT NULL, floating boolean NOT NULL DEFAULT false,
          anchor float8 NOT NULL, inside boolean, request bytea NOT NULL,
          PRIMARY KEY (app, identifier));
        CREATE INDEX chime_pending_due ON chime_pending (next_fire, seq) WHERE next_fire IS NOT NULL;
        CREATE INDEX chime_pending_app ON chime_pending (app, seq);
        CREATE INDEX chime_pending_location ON chime_pending (seq) WHERE kind = 3;
        CREATE INDEX chime_pending_floating ON chime_pending (seq) WHERE floating;
        CREATE TABLE chime_delivered (
          app text NOT NULL, identifier text NOT NULL, seq bigint NOT NULL, date float8 NOT NULL,
          thread text NOT NULL, body bytea NOT NULL,
          PRIMARY KEY (app, identifier));
        CREATE INDEX chime_delivered_order ON chime_delivered (app, date DESC, seq DESC);
        CREATE TABLE chime_responses (id bigint PRIMARY KEY, app text NOT NULL, body bytea NOT NULL);
        CREATE INDEX chime_responses_app ON chime_responses (app, id);
        CREATE TABLE chime_events (
          seq bigint PRIMARY KEY, app text NOT NULL, kind text NOT NULL, node text NOT NULL, body bytea NOT NULL,
          size integer NOT NULL, at float8 NOT NULL);
        CREATE INDEX chime_events_app ON chime_events (app, seq);
        CREATE INDEX chime_events_retention ON chime_events (seq, size, at);
        CREATE TABLE chime_kv (key text PRIMARY KEY, value text NOT NULL);
        """

    /// Version 2: the quarantine, where a node's scheduler sets aside a due request it cannot
    /// deliver (an app that is not a valid bundle identifier, a record it cannot read), so the
    /// rest fires. Entries are numbered by `chime_quarantine_seq`; the record is kept as it was.
    static let v2 = """
        CREATE SEQUENCE chime_quarantine_seq;
        CREATE TABLE chime_quarantine (
          id bigint PRIMARY KEY, app text NOT NULL, identifier text NOT NULL,
          reason text NOT NULL, at float8 NOT NULL, request bytea NOT NULL);
        CREATE INDEX chime_quarantine_app ON chime_quarantine (app);
        """

    /// Version 3: Web Push, as in SQLite: subscriptions (the record is
    /// `WebPushSubscription.storedRecord`'s JSON), and the queue of pushes not yet sent — a
    /// message's body once, and a row per message and subscriber due at `not_before`, which a node's
    /// sender moves ahead when it claims the row (`FOR UPDATE SKIP LOCKED`: nodes never take the same
    /// push at once; one that stopped mid-send leaves it to be taken again after the claim ends).
    static let v3 = """
        CREATE TABLE chime_web_push_subscriptions (id text PRIMARY KEY, endpoint text NOT NULL UNIQUE, created float8 NOT NULL, record text NOT NULL);
        CREATE SEQUENCE chime_web_push_message_seq;
        CREATE TABLE chime_web_push_messages (id bigint PRIMARY KEY, app text NOT NULL, body text NOT NULL);
        CREATE TABLE chime_web_push_queue (
          message bigint NOT NULL, subscription text NOT NULL, attempts integer NOT NULL, not_before float8 NOT NULL,
          PRIMARY KEY (message, subscription));
        CREATE INDEX chime_web_push_queue_due ON chime_web_push_queue (not_before, message);
        CREATE INDEX chime_web_push_queue_subscription ON chime_web_push_queue (subscription);
        """

    /// Version 4: auto-dismissal, as in SQLite: a delivered notification's end of relevance in
    /// `dismiss_at`, with an index of only the rows that have one (the scheduler's next removal,
    /// and the claim of due ones, `FOR UPDATE SKIP LOCKED`, read it alone). Rows from before have
    /// none.
    static let v4 = """
        ALTER TABLE chime_delivered ADD COLUMN dismiss_at float8;
        CREATE INDEX chime_delivered_dismiss ON chime_delivered (dismiss_at, seq) WHERE dismiss_at IS NOT NULL;
        """

    /// Version 5: escalation, as in SQLite: one row per escalating notification with its schedule
    /// (`next_at`, indexed for only the rows still escalating; the claim of due steps,
    /// `FOR UPDATE SKIP LOCKED`, reads it alone) and its receipt, kept after the delivered row
    /// until `ended_at` is older than the retention age.
    static let v5 = """
        CREATE TABLE chime_receipts (
          app text NOT NULL, identifier text NOT NULL, seq bigint NOT NULL, delivered_at float8 NOT NULL,
          every float8 NOT NULL, duration float8 NOT NULL, alerts bigint NOT NULL, last_alerted float8 NOT NULL,
          next_at float8, acknowledged_at float8, action text, surface text, expired boolean NOT NULL DEFAULT false,
          removed_at float8, ended_at float8,
          PRIMARY KEY (app, identifier));
        CREATE INDEX chime_receipts_next ON chime_receipts (next_at, seq) WHERE next_at IS NOT NULL;
        CREATE INDEX chime_receipts_ended ON chime_receipts (ended_at) WHERE ended_at IS NOT NULL;
        """

    /// Brings the database to this schema's version, or refuses it.
    ///
    /// - Throws: `storeTooNew` for a database of a newer version, `notAStore` for a `chime_meta`
    ///   table that is not Chime's, `storeFailure` when a step fails (nothing is changed then).
    func migrate(_ connection: PostgresConnection) throws {
        try connection.execute("BEGIN")
        do {
            try connection.query(
                "SELECT pg_advisory_xact_lock($1::int4, hashtext(current_schema()))",
                [PostgresValue(type: 23, bytes: withUnsafeBytes(of: Self.lockKey.bigEndian) { Array($0) })])
            let where_ = try connection.query("SELECT current_database()::text, coalesce(current_schema()::text, '')")
            let database = "\(where_.string(0, 0)) (schema \(where_.string(0, 1)))"
            let exists = try connection.query("SELECT to_regclass('chime_meta') IS NOT NULL").bool(0, 0)
            var found = 0
            if exists {
                let rows = try connection.query("SELECT value FROM chime_meta WHERE key = 'schema_version'")
                guard rows.count == 1 else {
                    throw ChimeError(
                        .notAStore,
                        "the database \(database) at \(connection.described) has a chime_meta table without a schema version; it is not a Chime store and was left untouched — point --database at another database or schema"
                    )
                }
                found = Int(rows.int64(0, 0))
            }
            if found > version {
                throw ChimeError(
                    .storeTooNew,
                    "the Chime database \(database) at \(connection.described) has schema version \(found), but this Chime knows versions up to \(version); it was left untouched — use a newer Chime"
                )
            }
            if found < version {
                for (index, step) in steps.enumerated().dropFirst(found) {
                    do {
                        try connection.execute(step)
                    } catch let error as ChimeError {
                        throw ChimeError(
                            .storeFailure,
                            "upgrading the Chime database \(database) from version \(found) to \(version) failed at step \(index + 1): \(error.message); the database was left as it was"
                        )
                    }
                }
                try connection.query(
                    "UPDATE chime_meta SET value = $1 WHERE key = 'schema_version'", [.int8(Int64(version))])
            }
            try connection.execute("COMMIT")
        } catch {
            if connection.isOK { try? connection.execute("ROLLBACK") }
            throw error
        }
    }
}
