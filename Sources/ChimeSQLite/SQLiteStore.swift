import CSQLite
import ChimeCore
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The embedded durable store: one SQLite file in WAL mode.
///
/// ```swift
/// let store = try SQLiteStore(path: "/var/lib/chime/store.sqlite")
/// try store.transaction { try store.putPending(pending, app: "com.example.app") }
/// ```
///
/// Like every ``NotificationStore`` it is used from one queue at a time (the engine's); it keeps
/// one connection and a cache of prepared statements. Beside it, ``readers`` hands out read-only
/// connections to the same file (``SQLiteReaders``), which read the last commit while it writes. Opening checks that the file is a Chime store
/// (`PRAGMA application_id`), that none of its tables or indexes is missing and that
/// `PRAGMA quick_check` finds it sound, then upgrades an older one (`PRAGMA user_version`); a file
/// that is not a Chime store, is empty, damaged, or was written by a newer Chime is refused without
/// being touched, with a message naming it and how to recover. A new store is made beside its
/// path and renamed into place; store files are 0600.
public final class SQLiteStore: NotificationStore {
    /// How much a committed transaction survives.
    public enum Durability: Sendable, Hashable {
        /// WAL with `synchronous=NORMAL`: a commit survives a killed process (not a power loss).
        case normal
        /// `synchronous=FULL`: a commit survives a power loss too, at the cost of an fsync each.
        case full
    }

    /// The store file's path.
    public let path: String
    public let durability: Durability
    private let connection: SQLiteConnection
    private var depth = 0
    /// The next pending/delivered sequence; saved in `meta` when a transaction that used it commits.
    private var nextSequence: Int64 = 1
    /// Checkpoints the write-ahead log off the engine's path.
    private var checkpointer: WALCheckpointer?
    /// Whether opening read the whole file (`PRAGMA quick_check`); `false` when it was unchanged
    /// since Chime last closed it cleanly (see `CleanClose`).
    public private(set) var verifiedAtOpen = true
    /// A reader's connection is read-only: its transactions are plain `BEGIN` (a snapshot).
    private let isReader: Bool
    /// The read-only connections beside this one (none on a reader).
    private var readerPool: SQLiteReaders?
    /// How many write transactions (`BEGIN IMMEDIATE`) this store has opened.
    package let writeTransactions = Atomic<Int>(0)

    public var readers: (any NotificationStoreReaders)? { readerPool }

    /// Opens the store at `path`, creating the file (and its directory) if needed.
    ///
    /// - Throws: ``ChimeError`` with code `notAStore` (not a Chime store, or corrupt), `storeTooNew`
    ///   (written by a newer Chime), or `storeFailure` (not writable, locked, other I/O failures).
    public convenience init(path: String, durability: Durability = .normal) throws {
        try self.init(path: path, durability: durability, schema: .current)
    }

    init(path: String, durability: Durability, schema: Schema, checkpointRestartFrames: Int32 = 4096) throws {
        self.path = path
        self.durability = durability
        isReader = false
        try Self.checkLocation(path)
        if try Self.fileSize(path) == nil { try Self.create(path, schema: schema) }
        // Before the connection: a file unchanged since Chime closed it cleanly need not be read
        // whole again (CleanClose); the marker is gone from here on, so a crash means a full check.
        let unchanged = CleanClose.take(path)
        connection = try SQLiteConnection(path: path)
        guard let handle = connection.handle else { throw ChimeError(.storeFailure, "cannot open \(path)") }
        SQLiteConnection.waitForLocks(handle, seconds: 5)
        _ = chime_sqlite_defensive(handle, 1)
        Self.restrictPermissions(path)

        // Identify the file and check it whole before anything writes to it.
        let applicationID = try connection.integer("PRAGMA application_id")
        let version = try connection.integer("PRAGMA user_version")
        let objects = try connection.integer("SELECT count(*) FROM sqlite_schema")
        if applicationID != Int64(Schema.applicationID) {
            throw ChimeError(
                .notAStore,
                "\(path) is an SQLite database but not a Chime store (application_id \(applicationID), \(objects) schema objects); it was left untouched — point Chime at another file"
            )
        }
        if version > Int64(schema.version) {
            throw ChimeError(
                .storeTooNew,
                "the Chime store at \(path) has schema version \(version), but this Chime knows versions up to \(schema.version); it was left untouched — use a newer Chime"
            )
        }
        try checkIntegrity(version: Int(version), schema: schema, readEveryPage: !unchanged)
        verifiedAtOpen = !unchanged
        if sqlite3_db_readonly(handle, "main") == 1 {
            throw ChimeError(
                .storeFailure,
                "the Chime store at \(path) is not writable (opened read-only); fix the file's permissions or choose another path"
            )
        }

        // Configure (these write to the file).
        try Self.configure(connection, durability: durability)

        if version < Int64(schema.version) {
            try Self.migrate(connection, from: Int(version), schema: schema, durability: durability)
        }
        nextSequence = try connection.integer("SELECT value FROM meta WHERE key = 'next_sequence'")
        if nextSequence < 1 { nextSequence = 1 }
        // No checkpoint inside a commit (wal_autocheckpoint=0 above): the background checkpointer
        // copies the log into the file as it grows and restarts it once copied, so the log (and its
        // index in shared memory) stays bounded while commits never wait for a copy.
        checkpointer = WALCheckpointer(path: path, restartFrames: checkpointRestartFrames)
        readerPool = SQLiteReaders(path: path)
    }

    /// The schema version this Chime writes (`PRAGMA user_version` of its stores).
    public static var schemaVersion: Int { Schema.current.version }

    /// What opening the Chime store at `path` will do first when it copies whole tables: a
    /// sentence naming the upgrade and the rows it copies, for a service to print before opening
    /// (the upgrade takes about 15 s per GB of store on a 2-core machine). `nil` when there is no
    /// such upgrade to run: no file, not a Chime store, or a version that needs no copy.
    ///
    /// ```swift
    /// if let notice = SQLiteStore.upgradeNotice(path: path) { print(notice) }
    /// let store = try SQLiteStore(path: path)
    /// ```
    public static func upgradeNotice(path: String) -> String? {
        // Chime's stores keep a rollback journal only while an upgrade copies tables: one left
        // means that upgrade was stopped (a read-only peek cannot read past it).
        if FileManager.default.fileExists(atPath: path + "-journal") {
            return
                "the Chime store at \(path) has the journal of an upgrade that was stopped midway (\(path)-journal restores the file: never delete it); opening rolls it back and runs the upgrade again (about 15 s per GB on a 2-core machine)"
        }
        guard let size = try? fileSize(path), let connection = try? SQLiteConnection(path: path, readOnly: true) else {
            return nil
        }
        defer { connection.close() }
        guard (try? connection.integer("PRAGMA application_id")) == Int64(Schema.applicationID),
            let version = try? connection.integer("PRAGMA user_version"),
            Schema.current.rebuilds(from: Int(version)),
            let pending = try? connection.integer("SELECT count(*) FROM pending"),
            let delivered = try? connection.integer("SELECT count(*) FROM delivered")
        else { return nil }
        return
            "upgrading the Chime store at \(path) from schema version \(version) to \(Schema.current.version): copying its \(pending.formatted()) pending requests and \(delivered.formatted()) delivered notifications into the new layout (a \((Double(size) / 1e6).formatted(.number.precision(.fractionLength(0)))) MB file: about 15 s per GB on a 2-core machine; the file grows by about the size of those tables, and the pages they leave are reused)"
    }

    /// A reader of the store at `path`, which its writer opened and checked: a read-only connection.
    init(readerOf path: String) throws {
        self.path = path
        durability = .normal
        isReader = true
        connection = try SQLiteConnection(path: path, readOnly: true)
        guard let handle = connection.handle else { throw ChimeError(.storeFailure, "cannot open \(path)") }
        SQLiteConnection.waitForLocks(handle, seconds: 5)
        _ = chime_sqlite_defensive(handle, 1)
        try connection.execute("PRAGMA cache_size=-8192; PRAGMA temp_store=MEMORY;")
    }

    /// The writer's page cache, in KiB (`PRAGMA cache_size` takes it negative).
    ///
    /// Not larger: SQLite scans its whole page cache at every commit of a transaction that split or
    /// merged b-tree pages out of page-number order. Such a balance renumbers pages through a spare
    /// number (the page after the 1 GiB lock byte), the cache then holds a page past the end of
    /// the file, and the commit's truncation of the cache to the file's size visits every slot of
    /// the cache's hash table (`pcache1TruncateUnsafe`) to find it. Random due dates make such a
    /// balance likely in most commits, so the scan costs in proportion to the cache: with 64 MiB
    /// (up to 16,384 pages) it was 11% of the writer's time under 64 adds in flight (about 70 µs a
    /// commit; docs/benchmarks.md, "The page cache's scan at every commit").
    /// 16 MiB holds what the hot paths touch (the leaves of `pending_due` and the ends of the
    /// tables and `pending_order`); the rest comes from the system's file cache.
    static let writerCacheKiB = 16_384

    /// WAL, the durability level and the cache; these write to the file.
    private static func configure(_ connection: SQLiteConnection, durability: Durability) throws {
        let mode = try connection.statement("PRAGMA journal_mode=WAL")
        let journal = try mode.step() ? mode.string(0) : ""
        mode.reset()
        guard journal.lowercased() == "wal" else {
            throw ChimeError(
                .storeFailure,
                "the Chime store at \(connection.path) could not be switched to WAL mode (got \"\(journal)\"); put it on a local file system that supports shared memory"
            )
        }
        try connection.execute(
            """
            PRAGMA synchronous=\(durability == .full ? "FULL" : "NORMAL");
            PRAGMA foreign_keys=ON;
            PRAGMA cache_size=-\(writerCacheKiB);
            PRAGMA wal_autocheckpoint=0;
            PRAGMA temp_store=MEMORY;
            """)
    }

    /// A new store is made whole beside its final path and renamed into place, so a file at the
    /// store's path is always a complete store: an empty file there was damaged (truncated), not
    /// left half-made by Chime, and is refused.
    private static func create(_ path: String, schema: Schema) throws {
        let temporary = path + ".new"
        for suffix in ["", "-wal", "-shm"] { unlink(temporary + suffix) }
        do {
            let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                throw ChimeError(
                    .storeFailure, "the Chime store at \(path) cannot be created: \(String(cString: strerror(errno)))")
            }
            Glibc.close(fd)
            let connection = try SQLiteConnection(path: temporary)
            try configure(connection, durability: .full)
            try migrate(connection, from: 0, schema: schema)
            connection.close()
            guard rename(temporary, path) == 0 else {
                throw ChimeError(
                    .storeFailure, "the Chime store at \(path) cannot be created: \(String(cString: strerror(errno)))")
            }
            let directory = open(
                URL(fileURLWithPath: path).deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if directory >= 0 {
                fsync(directory)
                Glibc.close(directory)
            }
        } catch {
            for suffix in ["", "-wal", "-shm"] { unlink(temporary + suffix) }
            throw error
        }
    }

    /// The file's size, or nil when there is no file.
    private static func fileSize(_ path: String) throws -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        if info.st_size == 0 {
            throw ChimeError(
                .notAStore,
                "the Chime store at \(path) is empty (0 bytes): it was truncated or damaged, and Chime never leaves an empty store; it was left untouched — restore it from a backup, or delete it to start with an empty store"
            )
        }
        return Int64(info.st_size)
    }

    /// Store files are the user's alone (0600): what was scheduled and answered is private.
    /// SQLite gives its -wal and -shm files the mode of the store.
    private static func restrictPermissions(_ path: String) {
        for suffix in ["", "-wal", "-shm"] {
            var info = stat()
            if stat(path + suffix, &info) == 0, info.st_mode & 0o077 != 0 { chmod(path + suffix, 0o600) }
        }
    }

    /// Refuses a damaged store before anything is written to it: every table and index of the
    /// schema must be there, and `PRAGMA quick_check` (every page of every b-tree read and its
    /// structure checked; about 0.3 s per million pending requests, see docs/benchmarks.md) must
    /// find nothing wrong — skipped when the file is unchanged since Chime closed it cleanly.
    private func checkIntegrity(version: Int, schema: Schema, readEveryPage: Bool) throws {
        let recover =
            "it was left untouched — restore it from a backup (or recover what is readable with `sqlite3 \(path) .recover | sqlite3 recovered.sqlite`), or move it away to start with an empty store"
        var present: Set<String> = []
        let objects = try connection.statement("SELECT name FROM sqlite_schema WHERE type IN ('table', 'index')")
        defer { objects.reset() }
        try objects.rows { present.insert(objects.string(0)) }
        let missing = Schema.objects(atVersion: version).filter { !present.contains($0) }
        if !missing.isEmpty {
            throw ChimeError(
                .notAStore,
                "the Chime store at \(path) is damaged: it lacks \(missing.joined(separator: ", ")); \(recover)")
        }
        guard readEveryPage else { return }
        var problems: [String] = []
        do {
            let check = try connection.statement("PRAGMA quick_check(10)")
            defer { check.reset() }
            try check.rows { problems.append(check.string(0)) }
        } catch let error as ChimeError {
            throw ChimeError(.notAStore, "the Chime store at \(path) is damaged (\(error.message)); \(recover)")
        }
        if problems != ["ok"] {
            throw ChimeError(
                .notAStore,
                "the Chime store at \(path) is damaged (\(problems.prefix(3).joined(separator: "; "))); \(recover)")
        }
    }

    deinit { close() }

    /// Waits (at most `timeout`) until the background checkpointer has finished a round begun
    /// after this call: what the commits so far wrote to the write-ahead log is in the file, and
    /// the log starts again from its beginning if they made it long. For tests, which wait for
    /// this rather than for longer than the checkpointer's interval.
    ///
    /// ```swift
    /// try store.transaction { try store.putPending(record, app: "com.example.wal") }
    /// #expect(store.waitForCheckpoint())
    /// ```
    ///
    /// - Returns: false when the time passed first, or the store has no checkpointer (a reader, or closed).
    package func waitForCheckpoint(timeout: TimeInterval = 60) -> Bool {
        checkpointer?.waitForRound(timeout: timeout) ?? false
    }

    /// Closes the store; any later call throws `storeFailure`. Called by `deinit` too.
    public func close() {
        let wasOpen = connection.handle != nil
        // Readers first: the last connection's close is the one that copies the log in.
        readerPool?.close()
        if isReader {
            connection.close()
            return
        }
        checkpointer?.stop()
        checkpointer = nil
        connection.close()
        // The last connection's close copies the log in and removes it; then the file is final.
        if wasOpen { CleanClose.record(path) }
    }

    /// Makes sure the store's directory exists and the file and directory are writable, with a
    /// clear message when not (SQLite's own is "unable to open database file").
    private static func checkLocation(_ path: String) throws {
        let fileManager = FileManager.default
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        if fileManager.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw ChimeError(
                    .storeFailure,
                    "the Chime store at \(path) cannot be created: \(directory) is not a directory, so the location is not writable; choose another path"
                )
            }
        } else {
            do {
                try fileManager.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw ChimeError(
                    .storeFailure,
                    "the Chime store at \(path) cannot be created: its directory \(directory) could not be made, so the location is not writable (\(error.localizedDescription)); choose another path or fix the permissions"
                )
            }
        }
        guard access(directory, W_OK | X_OK) == 0 else {
            throw ChimeError(
                .storeFailure,
                "the Chime store at \(path) cannot be used: the directory \(directory) is not writable (SQLite keeps its -wal and -shm files next to the store); fix the permissions or choose another path"
            )
        }
        if fileManager.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard !isDirectory.boolValue else {
                throw ChimeError(.storeFailure, "the Chime store path \(path) is a directory; give the path of a file")
            }
            guard access(path, R_OK | W_OK) == 0 else {
                throw ChimeError(
                    .storeFailure,
                    "the Chime store at \(path) is not writable; fix the file's permissions or choose another path")
            }
        }
    }

    /// Runs the missing migration steps and stamps the file, all in one transaction.
    ///
    /// Steps that copy whole tables (``Schema/Step/rebuilds``) run with a rollback journal
    /// (``switchToRollbackJournal(_:)``): it keeps only the few pages the copy changes in place (the
    /// new tables go to fresh pages), where the log would hold both tables whole until a checkpoint.
    /// The store is back in WAL mode, as `configure` set it, before anything else uses it; a crash
    /// meanwhile leaves a journal that SQLite rolls back at the next open, which upgrades again.
    private static func migrate(
        _ connection: SQLiteConnection, from version: Int, schema: Schema, durability: Durability = .full
    ) throws {
        // A copy with a rollback journal, when the mode can change: another connection on the file
        // (a backup, a shell) keeps it in WAL, and the upgrade then runs in the log as any other.
        let secureDelete = schema.rebuilds(from: version) ? switchToRollbackJournal(connection) : nil
        var failure: ChimeError?
        do {
            try connection.execute("BEGIN IMMEDIATE")
            for step in schema.steps[version...] { try step.run(connection) }
            try connection.execute(
                "PRAGMA application_id=\(Schema.applicationID); PRAGMA user_version=\(schema.version)")
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            failure =
                error as? ChimeError
                ?? ChimeError(
                    .storeFailure,
                    "upgrading the Chime store at \(connection.path) from version \(version) to \(schema.version) failed: \(error); the file was left as it was"
                )
        }
        if let secureDelete {
            // Back to the log and the configured durability whether the upgrade committed or not;
            // when it did not, its own error is the one to report.
            _ = try? connection.execute("PRAGMA secure_delete=\(secureDelete)")
            do { try configure(connection, durability: durability) } catch { if failure == nil { throw error } }
        }
        if let failure { throw failure }
    }

    /// Leaves WAL for a rollback journal (`synchronous=EXTRA`: the journal's removal is synced too)
    /// for an upgrade that copies whole tables. `secure_delete` goes to `FAST` meanwhile: the pages
    /// the old tables leave hold rows that live on in the new ones, and zeroing them (Debian's SQLite
    /// is built to) would first journal every one of them; the sorter spills to files (the indexes
    /// are built anew). Returns the `secure_delete` setting to restore, or nil, changing nothing,
    /// when the mode cannot change (another connection has the file open).
    private static func switchToRollbackJournal(_ connection: SQLiteConnection) -> Int64? {
        guard let mode = try? connection.statement("PRAGMA journal_mode=DELETE") else { return nil }
        let changed = ((try? mode.step()) == true) && mode.string(0).lowercased() == "delete"
        mode.reset()
        guard changed else { return nil }
        let secureDelete = (try? connection.integer("PRAGMA secure_delete")) ?? 1
        _ = try? connection.execute("PRAGMA synchronous=EXTRA; PRAGMA secure_delete=FAST; PRAGMA temp_store=FILE;")
        return secureDelete
    }

    // MARK: Transactions

    public func transaction<T>(_ body: () throws -> T) throws -> T {
        if depth > 0 {
            depth += 1
            defer { depth -= 1 }
            return try body()
        }
        if isReader {
            // One snapshot for the whole read; nothing to commit, so the checkpointer is not woken.
            try connection.statement(Self.beginRead).run()
            defer { try? connection.statement(Self.commit).run() }
            depth = 1
            defer { depth = 0 }
            return try body()
        }
        try connection.statement(Self.beginWrite).run()
        writeTransactions.add(1, ordering: .relaxed)
        depth = 1
        let startSequence = nextSequence
        do {
            let result = try body()
            if nextSequence != startSequence {
                let save = try connection.statement(Self.saveSequence)
                save.bind(1, nextSequence)
                try save.run()
            }
            do {
                try connection.statement(Self.commit).run()
            } catch let error as ChimeError {
                throw ChimeError(error.code, "committing to the Chime store failed: \(error.message)")
            }
            checkpointer?.committed()
            depth = 0
            return result
        } catch {
            depth = 0
            nextSequence = startSequence
            if let handle = connection.handle, sqlite3_get_autocommit(handle) == 0 {
                try? connection.statement(Self.rollback).run()
            }
            throw error
        }
    }

    private static let beginRead = StatementKey("BEGIN")
    private static let beginWrite = StatementKey("BEGIN IMMEDIATE")
    private static let commit = StatementKey("COMMIT")
    private static let rollback = StatementKey("ROLLBACK")
    private static let saveSequence = StatementKey("UPDATE meta SET value = ? WHERE key = 'next_sequence'")

    private func takeSequence() -> Int64 {
        defer { nextSequence += 1 }
        return nextSequence
    }

    private static func date(_ seconds: Double) -> Date { Date(timeIntervalSince1970: seconds) }

    // MARK: Apps

    public func app(_ bundleIdentifier: String) throws -> AppRecord? {
        let statement = try connection.statement("SELECT record FROM apps WHERE bundle_id = ?")
        statement.bind(1, bundleIdentifier)
        var result: AppRecord?
        try statement.rows { result = try RecordCodec.decodeApp(statement.blob(0)) }
        return result
    }

    public func apps() throws -> [AppRecord] {
        let statement = try connection.statement("SELECT record FROM apps")
        var result: [AppRecord] = []
        try statement.rows { result.append(try RecordCodec.decodeApp(statement.blob(0))) }
        return result.sorted { $0.bundleIdentifier < $1.bundleIdentifier }
    }

    public func putApp(_ record: AppRecord) throws {
        try transaction {
            let statement = try connection.statement("INSERT OR REPLACE INTO apps (bundle_id, record) VALUES (?, ?)")
            statement.bind(1, record.bundleIdentifier)
            statement.bind(2, RecordCodec.encode(record))
            try statement.run()
        }
    }

    public func removeApp(_ bundleIdentifier: String) throws {
        try transaction {
            for sql in [
                "DELETE FROM apps WHERE bundle_id = ?", "DELETE FROM categories WHERE app = ?",
                "DELETE FROM pending WHERE app = ?", "DELETE FROM delivered WHERE app = ?",
                "DELETE FROM responses WHERE app = ?", "DELETE FROM events WHERE app = ?",
                "DELETE FROM quarantine WHERE app = ?",
                "DELETE FROM web_push_queue WHERE message IN (SELECT id FROM web_push_messages WHERE app = ?)",
                "DELETE FROM web_push_messages WHERE app = ?", "DELETE FROM receipts WHERE app = ?",
            ] {
                let statement = try connection.statement(sql)
                statement.bind(1, bundleIdentifier)
                try statement.run()
            }
        }
    }

    // MARK: Categories

    public func categories(app: String) throws -> [NotificationCategory] {
        let statement = try connection.statement("SELECT body FROM categories WHERE app = ?")
        statement.bind(1, app)
        var result: [NotificationCategory] = []
        try statement.rows { result = try RecordCodec.decodeCategories(statement.blob(0)) }
        return result
    }

    public func setCategories(_ categories: [NotificationCategory], app: String) throws {
        try transaction {
            let statement = try connection.statement("INSERT OR REPLACE INTO categories (app, body) VALUES (?, ?)")
            statement.bind(1, app)
            statement.bind(2, RecordCodec.encode(categories))
            try statement.run()
        }
    }

    // MARK: Pending

    private static let pendingColumns = "app, seq, next_fire, anchor, inside, request"

    /// Reads a row selected with `pendingColumns` and then `identifier`; a damaged record throws
    /// ``UndeliverableRequest`` naming it (the engine sets it aside and reads again).
    private func pendingRow(_ statement: Statement) throws -> (app: String, pending: PendingRequest) {
        pendingRow(statement, request: try readableRequest(statement))
    }

    private func pendingRow(_ statement: Statement, request: NotificationRequest) -> (
        app: String, pending: PendingRequest
    ) {
        let pending = PendingRequest(
            request: request, nextFireDate: statement.optionalDouble(2).map(Self.date),
            anchor: Self.date(statement.double(3)), inside: statement.isNull(4) ? nil : statement.int64(4) != 0,
            sequence: statement.int64(1))
        return (statement.string(0), pending)
    }

    public func putPending(_ record: PendingRequest, app: String) throws {
        try putPending([record], app: app)
    }

    public func putPending(_ records: [PendingRequest], app: String) throws {
        try putPending(records, encodedRequests: [], app: app)
    }

    /// The fast path of `putPending`: a new row with a fresh sequence; the insert changes nothing
    /// when the identifier exists. (An upsert with RETURNING would say which happened in one
    /// statement, but costs about 40% of the bulk throughput.)
    private static let insertPending = StatementKey(
        """
        INSERT INTO pending (app, identifier, seq, next_fire, kind, floating, anchor, inside, request)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
        ON CONFLICT (app, identifier) DO NOTHING
        """)
    /// `putPending` of an identifier that exists: keeps the old sequence when the record carries none.
    private static let updatePending = StatementKey(
        """
        UPDATE pending SET seq = CASE WHEN ?10 THEN seq ELSE ?3 END, next_fire = ?4, kind = ?5, floating = ?6,
          anchor = ?7, inside = ?8, request = ?9
        WHERE app = ?1 AND identifier = ?2
        """)

    public func putPending(_ records: [PendingRequest], encodedRequests: [[UInt8]], app: String) throws {
        let given = encodedRequests.count == records.count
        try transaction {
            // Only when the insert changed nothing does the UPDATE follow (looked up then).
            let insert = try connection.statement(Self.insertPending)
            for index in records.indices {
                let keep = records[index].sequence == 0
                let sequence = keep ? nextSequence : records[index].sequence
                // Encoded once: the update after an insert that found the identifier binds the same bytes.
                let body =
                    given && !encodedRequests[index].isEmpty
                    ? encodedRequests[index] : RecordCodec.encode(records[index].request)
                func bind(_ statement: Statement) {
                    statement.bind(1, app)
                    statement.bind(2, records[index].request.identifier)
                    statement.bind(3, sequence)
                    statement.bind(4, records[index].nextFireDate?.timeIntervalSince1970)
                    statement.bind(5, PendingRequest.storedKind(records[index].request.trigger))
                    statement.bind(6, Int64(records[index].request.trigger?.isFloating == true ? 1 : 0))
                    statement.bind(7, records[index].anchor.timeIntervalSince1970)
                    statement.bind(8, records[index].inside)
                    statement.bind(9, body)
                }
                bind(insert)
                try insert.run()
                if sqlite3_changes(connection.handle) > 0 {
                    if keep { nextSequence += 1 }
                    continue
                }
                let update = try connection.statement(Self.updatePending)
                bind(update)
                update.bind(10, Int64(keep ? 1 : 0))
                try update.run()
            }
        }
    }

    public func pending(app: String) throws -> [PendingRequest] {
        let statement = try connection.statement(
            "SELECT \(Self.pendingColumns), identifier FROM pending WHERE app = ? ORDER BY seq")
        statement.bind(1, app)
        var result: [PendingRequest] = []
        try statement.rows { result.append(try pendingRow(statement).pending) }
        return result
    }

    public func pending(app: String, identifier: String) throws -> PendingRequest? {
        let statement = try connection.statement(
            "SELECT \(Self.pendingColumns), identifier FROM pending WHERE app = ? AND identifier = ?")
        statement.bind(1, app)
        statement.bind(2, identifier)
        var result: PendingRequest?
        try statement.rows { result = try pendingRow(statement).pending }
        return result
    }

    private func remove(from sql: String, app: String, identifiers: [String]) throws -> [String] {
        try transaction {
            let statement = try connection.statement(sql)
            var removed: [String] = []
            for identifier in identifiers {
                statement.bind(1, app)
                statement.bind(2, identifier)
                try statement.run()
                if sqlite3_changes(connection.handle) > 0 { removed.append(identifier) }
            }
            return removed
        }
    }

    public func removePending(app: String, identifiers: [String]) throws -> [String] {
        try remove(from: "DELETE FROM pending WHERE app = ? AND identifier = ?", app: app, identifiers: identifiers)
    }

    public func removeAllPending(app: String) throws -> [String] {
        try transaction {
            let select = try connection.statement("SELECT identifier FROM pending WHERE app = ? ORDER BY seq")
            select.bind(1, app)
            var removed: [String] = []
            try select.rows { removed.append(select.string(0)) }
            let delete = try connection.statement("DELETE FROM pending WHERE app = ?")
            delete.bind(1, app)
            try delete.run()
            return removed
        }
    }

    public func due(before date: Date, limit: Int) throws -> [(app: String, pending: PendingRequest)] {
        try dueEncoded(before: date, limit: limit).map { ($0.app, $0.pending) }
    }

    public func dueEncoded(before date: Date, limit: Int) throws -> [(
        app: String, pending: PendingRequest, encoded: [UInt8]?
    )] {
        let statement = try connection.statement(
            """
            SELECT \(Self.pendingColumns), identifier FROM pending
            WHERE next_fire IS NOT NULL AND next_fire <= ? ORDER BY next_fire, seq LIMIT ?
            """)
        statement.bind(1, date.timeIntervalSince1970)
        statement.bind(2, Int64(max(limit, 0)))
        var result: [(app: String, pending: PendingRequest, encoded: [UInt8]?)] = []
        try statement.rows {
            let encoded = Array(statement.blob(5))
            let (app, pending) = pendingRow(statement, request: try readableRequest(statement))
            result.append((app, pending, encoded))
        }
        return result
    }

    public func soonest(limit: Int) throws -> [(app: String, identifier: String, date: Date, sequence: Int64)] {
        try soonest(column: "next_fire", of: "pending", limit: limit)
    }

    public func locationPending() throws -> [(app: String, pending: PendingRequest)] {
        try readablePending(where: "kind = 3")
    }

    public func floatingPending() throws -> [(app: String, pending: PendingRequest)] {
        try readablePending(where: "floating = 1")
    }

    /// The pending rows matching `condition`, in sequence order; a row whose record cannot be read
    /// throws ``UndeliverableRequest`` naming it, so the engine sets it aside and carries on.
    private func readablePending(where condition: String) throws -> [(app: String, pending: PendingRequest)] {
        let statement = try connection.statement(
            "SELECT \(Self.pendingColumns), identifier FROM pending WHERE \(condition) ORDER BY seq")
        var result: [(app: String, pending: PendingRequest)] = []
        try statement.rows { result.append(pendingRow(statement, request: try readableRequest(statement))) }
        return result
    }

    /// The request of a row selected with `pendingColumns` and then `identifier`. A damaged row
    /// stops nothing: it throws ``UndeliverableRequest`` naming it, and the engine sets it aside.
    private func readableRequest(_ statement: Statement) throws -> NotificationRequest {
        do { return try RecordCodec.decodeRequest(statement.blob(5)) } catch {
            throw UndeliverableRequest(
                app: statement.string(0), identifier: statement.string(6),
                reason: "its stored record cannot be read: \(ChimeError.message(of: error))")
        }
    }

    public func pendingCount(app: String?) throws -> Int {
        try count(table: "pending", app: app)
    }

    private func count(table: String, app: String?) throws -> Int {
        guard let app else { return Int(try connection.integer("SELECT count(*) FROM \(table)")) }
        let statement = try connection.statement("SELECT count(*) FROM \(table) WHERE app = ?")
        statement.bind(1, app)
        defer { statement.reset() }
        return try statement.step() ? Int(statement.int64(0)) : 0
    }

    // MARK: Delivered

    @discardableResult
    public func putDelivered(_ notification: DeliveredNotification, app: String) throws -> Int64 {
        try putDelivered(notification, app: app, encodedRequest: nil)
    }

    public func putDelivered(_ notification: DeliveredNotification, app: String, encodedRequest: [UInt8]?) throws
        -> Int64
    {
        try transaction {
            var notification = notification
            if notification.sequence == 0 { notification.sequence = takeSequence() }
            let statement = try connection.statement(
                """
                INSERT OR REPLACE INTO delivered (app, identifier, seq, date, thread, body, dismiss_at) VALUES (?, ?, ?, ?, ?, ?, ?)
                """)
            statement.bind(1, app)
            statement.bind(2, notification.request.identifier)
            statement.bind(3, notification.sequence)
            statement.bind(4, notification.date.timeIntervalSince1970)
            statement.bind(5, notification.request.content.threadIdentifier)
            statement.bind(
                6,
                encodedRequest.map { RecordCodec.encode(notification, encodedRequest: $0) }
                    ?? RecordCodec.encode(notification))
            statement.bind(7, notification.dismissDate?.timeIntervalSince1970)
            try statement.run()
            return notification.sequence
        }
    }

    private func deliveredRows(_ statement: Statement) throws -> [DeliveredNotification] {
        var result: [DeliveredNotification] = []
        try statement.rows { result.append(try RecordCodec.decodeDelivered(statement.blob(0))) }
        return result
    }

    public func delivered(app: String, thread: String?) throws -> [DeliveredNotification] {
        let statement: Statement
        if let thread {
            statement = try connection.statement(
                "SELECT body FROM delivered WHERE app = ? AND thread = ? ORDER BY date DESC, seq DESC")
            statement.bind(2, thread)
        } else {
            statement = try connection.statement(
                "SELECT body FROM delivered WHERE app = ? ORDER BY date DESC, seq DESC")
        }
        statement.bind(1, app)
        return try deliveredRows(statement)
    }

    public func delivered(app: String, identifier: String) throws -> DeliveredNotification? {
        let statement = try connection.statement("SELECT body FROM delivered WHERE app = ? AND identifier = ?")
        statement.bind(1, app)
        statement.bind(2, identifier)
        return try deliveredRows(statement).first
    }

    public func removeDelivered(app: String, identifiers: [String]) throws -> [String] {
        try remove(from: "DELETE FROM delivered WHERE app = ? AND identifier = ?", app: app, identifiers: identifiers)
    }

    public func removeAllDelivered(app: String, thread: String?) throws -> [String] {
        try transaction {
            let removed = try delivered(app: app, thread: thread).map(\.request.identifier)
            let statement: Statement
            if let thread {
                statement = try connection.statement("DELETE FROM delivered WHERE app = ? AND thread = ?")
                statement.bind(2, thread)
            } else {
                statement = try connection.statement("DELETE FROM delivered WHERE app = ?")
            }
            statement.bind(1, app)
            try statement.run()
            return removed
        }
    }

    public func dueDismissals(before date: Date, limit: Int) throws -> [(app: String, identifier: String)] {
        let statement = try connection.statement(
            """
            SELECT app, identifier FROM delivered WHERE dismiss_at IS NOT NULL AND dismiss_at <= ? ORDER BY dismiss_at, seq LIMIT ?
            """)
        statement.bind(1, date.timeIntervalSince1970)
        statement.bind(2, Int64(max(limit, 0)))
        var result: [(app: String, identifier: String)] = []
        try statement.rows { result.append((statement.string(0), statement.string(1))) }
        return result
    }

    public func soonestDismissals(limit: Int) throws -> [(app: String, identifier: String, date: Date, sequence: Int64)]
    {
        try soonest(column: "dismiss_at", of: "delivered", limit: limit)
    }

    /// The rows of `table` with the soonest dates in `column` (from its partial index), for a
    /// schedule window: keys, dates and sequences.
    private func soonest(column: String, of table: String, limit: Int) throws -> [(
        app: String, identifier: String, date: Date, sequence: Int64
    )] {
        let statement = try connection.statement(
            """
            SELECT app, identifier, \(column), seq FROM \(table) WHERE \(column) IS NOT NULL ORDER BY \(column), seq LIMIT ?
            """)
        statement.bind(1, Int64(max(limit, 0)))
        var result: [(app: String, identifier: String, date: Date, sequence: Int64)] = []
        try statement.rows {
            result.append(
                (statement.string(0), statement.string(1), Self.date(statement.double(2)), statement.int64(3)))
        }
        return result
    }

    // MARK: Escalation receipts

    private static let receiptColumns = """
        app, identifier, seq, delivered_at, every, duration, alerts, last_alerted, next_at, acknowledged_at, action, surface,
        expired, removed_at
        """

    public func putReceipt(_ receipt: EscalationReceipt) throws {
        let statement = try connection.statement(
            """
            INSERT OR REPLACE INTO receipts (\(Self.receiptColumns), ended_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        statement.bind(1, receipt.app)
        statement.bind(2, receipt.identifier)
        statement.bind(3, receipt.sequence)
        statement.bind(4, receipt.deliveredAt.timeIntervalSince1970)
        statement.bind(5, receipt.escalation.interval)
        statement.bind(6, receipt.escalation.duration)
        statement.bind(7, Int64(receipt.alerts))
        statement.bind(8, receipt.lastAlertedAt.timeIntervalSince1970)
        statement.bind(9, receipt.nextAlertAt?.timeIntervalSince1970)
        statement.bind(10, receipt.acknowledgedAt?.timeIntervalSince1970)
        statement.bind(11, receipt.actionIdentifier)
        statement.bind(12, receipt.surface)
        statement.bind(13, Int64(receipt.expired ? 1 : 0))
        statement.bind(14, receipt.removedAt?.timeIntervalSince1970)
        statement.bind(15, receipt.endedAt?.timeIntervalSince1970)
        try statement.run()
    }

    /// A receipt from a row of `receiptColumns`.
    private static func receipt(_ statement: Statement) -> EscalationReceipt {
        EscalationReceipt(
            app: statement.string(0), identifier: statement.string(1), sequence: statement.int64(2),
            deliveredAt: date(statement.double(3)),
            escalation: NotificationEscalation(every: statement.double(4), for: statement.double(5)),
            alerts: Int(statement.int64(6)), lastAlertedAt: date(statement.double(7)),
            nextAlertAt: statement.optionalDouble(8).map(date), acknowledgedAt: statement.optionalDouble(9).map(date),
            actionIdentifier: statement.optionalString(10), surface: statement.optionalString(11),
            expired: statement.int64(12) != 0, removedAt: statement.optionalDouble(13).map(date))
    }

    public func receipt(app: String, identifier: String) throws -> EscalationReceipt? {
        let statement = try connection.statement(
            "SELECT \(Self.receiptColumns) FROM receipts WHERE app = ? AND identifier = ?")
        statement.bind(1, app)
        statement.bind(2, identifier)
        var result: EscalationReceipt?
        try statement.rows { result = Self.receipt(statement) }
        return result
    }

    public func dueEscalations(before date: Date, limit: Int) throws -> [EscalationReceipt] {
        let statement = try connection.statement(
            """
            SELECT \(Self.receiptColumns) FROM receipts WHERE next_at IS NOT NULL AND next_at <= ? ORDER BY next_at, seq LIMIT ?
            """)
        statement.bind(1, date.timeIntervalSince1970)
        statement.bind(2, Int64(max(limit, 0)))
        var result: [EscalationReceipt] = []
        try statement.rows { result.append(Self.receipt(statement)) }
        return result
    }

    public func soonestEscalations(limit: Int) throws -> [(
        app: String, identifier: String, date: Date, sequence: Int64
    )] {
        try soonest(column: "next_at", of: "receipts", limit: limit)
    }

    public func pruneReceipts(endedBefore date: Date) throws {
        let statement = try connection.statement("DELETE FROM receipts WHERE ended_at IS NOT NULL AND ended_at < ?")
        statement.bind(1, date.timeIntervalSince1970)
        try statement.run()
    }

    public func deliveredCount(app: String?) throws -> Int {
        try count(table: "delivered", app: app)
    }

    public func oldestDelivered(app: String, limit: Int) throws -> [String] {
        let statement = try connection.statement(
            "SELECT identifier FROM delivered WHERE app = ? ORDER BY date, seq LIMIT ?")
        statement.bind(1, app)
        statement.bind(2, Int64(max(limit, 0)))
        defer { statement.reset() }
        var identifiers: [String] = []
        try statement.rows { identifiers.append(statement.string(0)) }
        return identifiers
    }

    public func usage(app: String) throws -> StorageUsage {
        let statement = try connection.statement(
            """
            SELECT (SELECT count(*) FROM pending WHERE app = ?1), (SELECT coalesce(sum(length(request)), 0) FROM pending WHERE app = ?1),
                   (SELECT count(*) FROM delivered WHERE app = ?1), (SELECT coalesce(sum(length(body)), 0) FROM delivered WHERE app = ?1)
            """)
        statement.bind(1, app)
        defer { statement.reset() }
        guard try statement.step() else { return StorageUsage() }
        return StorageUsage(
            pending: Int(statement.int64(0)), delivered: Int(statement.int64(2)),
            bytes: Int(statement.int64(1) + statement.int64(3)))
    }

    // MARK: Quarantine

    public func quarantinePending(app: String, identifier: String, reason: String, date: Date) throws
        -> QuarantinedRequest?
    {
        try transaction {
            let select = try connection.statement("SELECT request FROM pending WHERE app = ? AND identifier = ?")
            select.bind(1, app)
            select.bind(2, identifier)
            var record: [UInt8]?
            try select.rows { record = Array(select.blob(0)) }
            guard let record else { return nil }
            let insert = try connection.statement(
                "INSERT INTO quarantine (app, identifier, reason, at, request) VALUES (?, ?, ?, ?, ?)")
            insert.bind(1, app)
            insert.bind(2, identifier)
            insert.bind(3, reason)
            insert.bind(4, date.timeIntervalSince1970)
            insert.bind(5, record)
            try insert.run()
            let id = sqlite3_last_insert_rowid(connection.handle)
            _ = try removePending(app: app, identifiers: [identifier])
            return QuarantinedRequest(
                id: id, app: app, identifier: identifier, reason: reason, date: date,
                request: try? RecordCodec.decodeRequest(record))
        }
    }

    public func quarantined(after id: Int64, limit: Int) throws -> [QuarantinedRequest] {
        let statement = try connection.statement(
            """
            SELECT id, app, identifier, reason, at, request FROM quarantine WHERE id > ? ORDER BY id LIMIT ?
            """)
        statement.bind(1, id)
        statement.bind(2, Int64(max(limit, 0)))
        var result: [QuarantinedRequest] = []
        try statement.rows {
            result.append(
                QuarantinedRequest(
                    id: statement.int64(0), app: statement.string(1), identifier: statement.string(2),
                    reason: statement.string(3),
                    date: Self.date(statement.double(4)), request: try? RecordCodec.decodeRequest(statement.blob(5))))
        }
        return result
    }

    public func removeQuarantined(id: Int64) throws -> Bool {
        try transaction {
            let statement = try connection.statement("DELETE FROM quarantine WHERE id = ?")
            statement.bind(1, id)
            try statement.run()
            return sqlite3_changes(connection.handle) > 0
        }
    }

    public func quarantinedCount() throws -> Int {
        Int(try connection.integer("SELECT count(*) FROM quarantine"))
    }

    // MARK: Web Push

    public func webPushSubscriptions() throws -> [WebPushSubscription] {
        let statement = try connection.statement("SELECT record FROM web_push_subscriptions ORDER BY created, id")
        var result: [WebPushSubscription] = []
        try statement.rows { result.append(try WebPushSubscription(storedRecord: statement.string(0))) }
        return result
    }

    public func webPushSubscription(id: String) throws -> WebPushSubscription? {
        try webPushSubscription(where: "id", is: id)
    }

    public func webPushSubscription(endpoint: String) throws -> WebPushSubscription? {
        try webPushSubscription(where: "endpoint", is: endpoint)
    }

    /// One subscription by a unique column (`id`, the key, or `endpoint`, a unique index).
    private func webPushSubscription(where column: StaticString, is value: String) throws -> WebPushSubscription? {
        let statement = try connection.statement("SELECT record FROM web_push_subscriptions WHERE \(column) = ?")
        statement.bind(1, value)
        var found: WebPushSubscription?
        try statement.rows { found = try WebPushSubscription(storedRecord: statement.string(0)) }
        return found
    }

    public func putWebPushSubscription(_ subscription: WebPushSubscription) throws {
        try transaction {
            let taken = try connection.statement("SELECT id FROM web_push_subscriptions WHERE endpoint = ? AND id <> ?")
            taken.bind(1, subscription.endpoint)
            taken.bind(2, subscription.id)
            var other = false
            try taken.rows { other = true }
            if other { throw ChimeError(.invalidValue, field: "endpoint", "another subscription has this endpoint") }
            let statement = try connection.statement(
                "INSERT OR REPLACE INTO web_push_subscriptions (id, endpoint, created, record) VALUES (?, ?, ?, ?)")
            statement.bind(1, subscription.id)
            statement.bind(2, subscription.endpoint)
            statement.bind(3, subscription.created.timeIntervalSince1970)
            statement.bind(4, subscription.storedRecord)
            try statement.run()
        }
    }

    public func removeWebPushSubscription(id: String) throws -> Bool {
        try transaction {
            let statement = try connection.statement("DELETE FROM web_push_subscriptions WHERE id = ?")
            statement.bind(1, id)
            try statement.run()
            guard sqlite3_changes(connection.handle) > 0 else { return false }
            let queued = try connection.statement("DELETE FROM web_push_queue WHERE subscription = ?")
            queued.bind(1, id)
            try queued.run()
            try connection.execute("DELETE FROM web_push_messages WHERE id NOT IN (SELECT message FROM web_push_queue)")
            return true
        }
    }

    public func hasWebPushSubscriptions() throws -> Bool {
        try connection.integer("SELECT EXISTS (SELECT 1 FROM web_push_subscriptions)") != 0
    }

    public func queueWebPush(_ message: String, app: String, subscriptions: [String], claimedUntil: Date) throws
        -> Int64
    {
        try transaction {
            let insert = try connection.statement("INSERT INTO web_push_messages (app, body) VALUES (?, ?)")
            insert.bind(1, app)
            insert.bind(2, message)
            try insert.run()
            let id = sqlite3_last_insert_rowid(connection.handle)
            let queue = try connection.statement(
                "INSERT OR IGNORE INTO web_push_queue (message, subscription, attempts, not_before) VALUES (?, ?, 0, ?)"
            )
            for subscription in subscriptions {
                queue.reset()
                queue.bind(1, id)
                queue.bind(2, subscription)
                queue.bind(3, claimedUntil.timeIntervalSince1970)
                try queue.run()
            }
            return id
        }
    }

    public func claimWebPushes(before date: Date, claimUntil: Date, limit: Int) throws -> [QueuedWebPush] {
        try transaction {
            let select = try connection.statement(
                """
                SELECT q.message, q.subscription, m.app, m.body, q.attempts, q.not_before FROM web_push_queue q
                JOIN web_push_messages m ON m.id = q.message WHERE q.not_before <= ? ORDER BY q.not_before, q.message, q.subscription LIMIT ?
                """)
            select.bind(1, date.timeIntervalSince1970)
            select.bind(2, Int64(max(0, limit)))
            var result: [QueuedWebPush] = []
            try select.rows {
                result.append(
                    QueuedWebPush(
                        message: select.int64(0), subscription: select.string(1), app: select.string(2),
                        body: select.string(3),
                        attempts: Int(select.int64(4)), notBefore: Self.date(select.double(5))))
            }
            try setNotBefore(claimUntil, of: result.map(\.id))
            return result
        }
    }

    public func retryWebPush(message: Int64, subscription: String, attempts: Int, notBefore: Date) throws {
        try transaction {
            let statement = try connection.statement(
                "UPDATE web_push_queue SET attempts = ?, not_before = ? WHERE message = ? AND subscription = ?")
            statement.bind(1, Int64(attempts))
            statement.bind(2, notBefore.timeIntervalSince1970)
            statement.bind(3, message)
            statement.bind(4, subscription)
            try statement.run()
        }
    }

    public func finishWebPush(message: Int64, subscription: String) throws {
        try transaction {
            let statement = try connection.statement(
                "DELETE FROM web_push_queue WHERE message = ? AND subscription = ?")
            statement.bind(1, message)
            statement.bind(2, subscription)
            try statement.run()
            let drop = try connection.statement(
                "DELETE FROM web_push_messages WHERE id = ? AND NOT EXISTS (SELECT 1 FROM web_push_queue WHERE message = ?)"
            )
            drop.bind(1, message)
            drop.bind(2, message)
            try drop.run()
        }
    }

    public func releaseWebPushes(_ pushes: [QueuedWebPushID], at date: Date) throws {
        guard !pushes.isEmpty else { return }
        try transaction { try setNotBefore(date, of: pushes) }
    }

    /// Moves pushes' `not_before` (a claim, or a claim given back).
    private func setNotBefore(_ date: Date, of pushes: [QueuedWebPushID]) throws {
        let statement = try connection.statement(
            "UPDATE web_push_queue SET not_before = ? WHERE message = ? AND subscription = ?")
        for push in pushes {
            statement.reset()
            statement.bind(1, date.timeIntervalSince1970)
            statement.bind(2, push.message)
            statement.bind(3, push.subscription)
            try statement.run()
        }
    }

    public func queuedWebPushCount() throws -> Int {
        Int(try connection.integer("SELECT count(*) FROM web_push_queue"))
    }

    // MARK: Outbox

    public func appendResponse(_ response: NotificationResponse, app: String) throws -> Int64 {
        try transaction {
            var response = response
            response.id = 0
            let statement = try connection.statement("INSERT INTO responses (app, body) VALUES (?, ?)")
            statement.bind(1, app)
            statement.bind(2, RecordCodec.encode(response))
            try statement.run()
            return sqlite3_last_insert_rowid(connection.handle)
        }
    }

    public func responses(app: String) throws -> [NotificationResponse] {
        let statement = try connection.statement("SELECT id, body FROM responses WHERE app = ? ORDER BY id")
        statement.bind(1, app)
        return try responseRows(statement)
    }

    /// Reads rows of `id, body` from the outbox.
    private func responseRows(_ statement: Statement) throws -> [NotificationResponse] {
        var result: [NotificationResponse] = []
        try statement.rows {
            var response = try RecordCodec.decodeResponse(statement.blob(1))
            response.id = statement.int64(0)
            result.append(response)
        }
        return result
    }

    public func removeResponse(app: String, id: Int64) throws -> Bool {
        try transaction {
            let statement = try connection.statement("DELETE FROM responses WHERE app = ? AND id = ?")
            statement.bind(1, app)
            statement.bind(2, id)
            try statement.run()
            return sqlite3_changes(connection.handle) > 0
        }
    }

    // MARK: Events

    public func appendEvent(_ event: EngineEvent) throws -> Int64 {
        var event = event
        event.sequence = 0
        return try appendEvent(event, encoded: RecordCodec.encode(event))
    }

    public func appendEvent(_ event: EngineEvent, encoded body: [UInt8]) throws -> Int64 {
        try transaction {
            let statement = try connection.statement(
                "INSERT INTO events (app, kind, body, size, at) VALUES (?, ?, ?, ?, ?)")
            statement.bind(1, event.app)
            statement.bind(2, event.kind.rawValue)
            statement.bind(3, body)
            statement.bind(4, Int64(body.count))
            statement.bind(5, event.date.timeIntervalSince1970)
            try statement.run()
            return sqlite3_last_insert_rowid(connection.handle)
        }
    }

    public func events(after sequence: Int64, app: String?, limit: Int) throws -> [EngineEvent] {
        let statement: Statement
        if let app {
            statement = try connection.statement(
                "SELECT seq, body FROM events WHERE app = ? AND seq > ? ORDER BY seq LIMIT ?")
            statement.bind(1, app)
        } else {
            statement = try connection.statement(
                "SELECT seq, body FROM events WHERE ?1 IS NULL AND seq > ?2 ORDER BY seq LIMIT ?3")
        }
        statement.bind(2, sequence)
        statement.bind(3, Int64(max(limit, 0)))
        var result: [EngineEvent] = []
        try statement.rows {
            var event = try RecordCodec.decodeEvent(statement.blob(1))
            event.sequence = statement.int64(0)
            result.append(event)
        }
        return result
    }

    public func oldestEventSequence() throws -> Int64 {
        try connection.integer("SELECT coalesce(min(seq), 0) FROM events")
    }

    public func newestEventSequence() throws -> Int64 {
        try connection.integer("SELECT coalesce(max(seq), 0) FROM events")
    }

    public func pruneEvents(keeping: Int) throws {
        try transaction {
            if keeping <= 0 {
                try connection.statement("DELETE FROM events").run()
                return
            }
            let statement = try connection.statement(
                "DELETE FROM events WHERE seq < (SELECT seq FROM events ORDER BY seq DESC LIMIT 1 OFFSET ?)")
            statement.bind(1, Int64(keeping - 1))
            try statement.run()
        }
    }

    /// Count, then bytes (the newest events whose sizes add up to at most `retention.bytes`), then
    /// age (events dated before `now - age`), each from the `events_retention` index alone.
    public func pruneEvents(_ retention: EventRetention, now: Date) throws {
        try transaction {
            try pruneEvents(keeping: retention.count)
            let overBytes = try connection.statement(
                """
                SELECT seq FROM (SELECT seq, sum(size) OVER (ORDER BY seq DESC) AS total FROM events)
                WHERE total > ? ORDER BY seq DESC LIMIT 1
                """)
            overBytes.bind(1, Int64(max(0, retention.bytes)))
            var cut: Int64?
            try overBytes.rows { cut = overBytes.int64(0) }
            if let cut {
                let delete = try connection.statement("DELETE FROM events WHERE seq <= ?")
                delete.bind(1, cut)
                try delete.run()
            }
            let old = try connection.statement(
                """
                DELETE FROM events WHERE seq < coalesce((SELECT seq FROM events WHERE at >= ?1 ORDER BY seq LIMIT 1),
                                                        (SELECT max(seq) + 1 FROM events))
                """)
            old.bind(1, now.addingTimeInterval(-retention.age).timeIntervalSince1970)
            try old.run()
        }
    }

    // MARK: Pages

    public func pending(app: String, after sequence: Int64, limit: Int) throws -> [PendingRequest] {
        let statement = try connection.statement(
            "SELECT \(Self.pendingColumns), identifier FROM pending WHERE app = ? AND seq > ? ORDER BY seq LIMIT ?")
        statement.bind(1, app)
        statement.bind(2, sequence)
        statement.bind(3, Int64(max(0, limit)))
        var result: [PendingRequest] = []
        try statement.rows { result.append(try pendingRow(statement).pending) }
        return result
    }

    public func delivered(app: String, thread: String?, after cursor: DeliveredCursor?, limit: Int) throws
        -> [DeliveredNotification]
    {
        let statement = try connection.statement(
            """
            SELECT body FROM delivered WHERE app = ?1 AND (?2 IS NULL OR thread = ?2) AND (?3 IS NULL OR (date, seq) < (?3, ?4))
            ORDER BY date DESC, seq DESC LIMIT ?5
            """)
        statement.bind(1, app)
        statement.bind(2, thread)
        statement.bind(3, cursor?.date.timeIntervalSince1970)
        statement.bind(4, cursor?.sequence ?? 0)
        statement.bind(5, Int64(max(0, limit)))
        return try deliveredRows(statement)
    }

    public func responses(app: String, after id: Int64, limit: Int) throws -> [NotificationResponse] {
        let statement = try connection.statement(
            "SELECT id, body FROM responses WHERE app = ? AND id > ? ORDER BY id LIMIT ?")
        statement.bind(1, app)
        statement.bind(2, id)
        statement.bind(3, Int64(max(0, limit)))
        return try responseRows(statement)
    }

    public func apps(after bundleIdentifier: String?, limit: Int) throws -> [AppRecord] {
        let statement = try connection.statement(
            "SELECT record FROM apps WHERE bundle_id > ? ORDER BY bundle_id LIMIT ?")
        statement.bind(1, bundleIdentifier ?? "")
        statement.bind(2, Int64(max(0, limit)))
        var result: [AppRecord] = []
        try statement.rows { result.append(try RecordCodec.decodeApp(statement.blob(0))) }
        return result
    }

    // MARK: Values

    public func value(forKey key: String) throws -> String? {
        let statement = try connection.statement("SELECT value FROM kv WHERE key = ?")
        statement.bind(1, key)
        var result: String?
        try statement.rows { result = statement.string(0) }
        return result
    }

    public func setValue(_ value: String?, forKey key: String) throws {
        try transaction {
            let statement: Statement
            if let value {
                statement = try connection.statement(
                    "INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
                statement.bind(2, value)
            } else {
                statement = try connection.statement("DELETE FROM kv WHERE key = ?")
            }
            statement.bind(1, key)
            try statement.run()
        }
    }
}
