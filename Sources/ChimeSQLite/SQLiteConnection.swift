import CSQLite
import ChimeCore
import Foundation
import Synchronization

/// One SQLite connection and its cache of prepared statements. Not thread-safe: like the store
/// that owns it, it is used from one queue at a time.
final class SQLiteConnection {
    private(set) var handle: OpaquePointer?
    let path: String
    private var statements: [String: Statement] = [:]
    /// The statements of the hot paths, by ``StatementKey/index``: found without hashing their text.
    private var keyed: [Statement?] = []

    /// Opens (creating if needed) the database file, read-write, without a mutex (the store is
    /// used from one queue), writing its log through ``LogWriteVFS``; or, `readOnly`, an existing
    /// file for reading only.
    init(path: String, readOnly: Bool = false) throws {
        _ = Self.configured
        self.path = path
        var handle: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        // A writing connection writes the log through LogWriteVFS (a commit's frames in one call).
        let vfs = !readOnly && LogWriteVFS.registered ? LogWriteVFS.name : nil
        let code = sqlite3_open_v2(path, &handle, flags, vfs)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close_v2(handle)
            if code == SQLITE_CANTOPEN || code == SQLITE_PERM || code == SQLITE_READONLY {
                throw ChimeError(
                    .storeFailure,
                    "cannot open the Chime store at \(path): the location is not writable (\(message)); choose a writable path or fix the permissions"
                )
            }
            throw ChimeError(.storeFailure, "cannot open the Chime store at \(path): \(message)")
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
    }

    deinit { close() }

    /// SQLite's process-wide settings, made once before the first connection opens.
    private static let configured: Bool = chime_sqlite_no_memory_statistics() == SQLITE_OK

    /// Waits for another connection's lock for up to about `seconds`, retrying every 100 µs for
    /// the first tenth of a second and every millisecond after that. SQLite's own
    /// `sqlite3_busy_timeout` sleeps 1, 2, 5, 10 … 100 ms between tries, so a lock held for half a
    /// millisecond (the checkpointer restarting the log) could cost a waiter 5 ms or more.
    static func waitForLocks(_ handle: OpaquePointer, seconds: Int) {
        // 1,000 tries of 100 µs, then one a millisecond for the rest.
        let limit = 1000 + max(0, seconds * 1000 - 100)
        sqlite3_busy_handler(
            handle,
            { context, tries in
                guard Int(tries) < Int(bitPattern: context) else { return 0 }
                usleep(tries < 1000 ? 100 : 1000)
                return 1
            }, UnsafeMutableRawPointer(bitPattern: limit))
    }

    /// Finalizes every statement and closes the connection (a WAL checkpoint happens here).
    func close() {
        guard let handle else { return }
        for statement in statements.values { statement.finalize() }
        statements = [:]
        for statement in keyed { statement?.finalize() }
        keyed = []
        sqlite3_close_v2(handle)
        self.handle = nil
    }

    /// The error for a use after `close()`.
    private var closedError: ChimeError {
        ChimeError(.storeFailure, "the Chime store at \(path) is closed; open it again")
    }

    /// The cached prepared statement for this SQL text (prepared on first use).
    func statement(_ sql: String) throws -> Statement {
        if let statement = statements[sql] { return statement }
        guard handle != nil else { throw closedError }
        let statement = try Statement(connection: self, sql: sql)
        statements[sql] = statement
        return statement
    }

    /// The cached prepared statement for a hot path's key (prepared on first use): an array index
    /// instead of hashing the SQL text on every call.
    @inline(__always) func statement(_ key: StatementKey) throws -> Statement {
        if key.index < keyed.count, let statement = keyed[key.index] { return statement }
        return try prepare(key)
    }

    private func prepare(_ key: StatementKey) throws -> Statement {
        guard handle != nil else { throw closedError }
        let statement = try Statement(connection: self, sql: key.sql)
        if key.index >= keyed.count { keyed += Array(repeating: nil, count: key.index + 1 - keyed.count) }
        keyed[key.index] = statement
        return statement
    }

    /// Runs SQL text (one or more statements, no parameters). Only for fixed SQL, never user data.
    func execute(_ sql: String) throws {
        guard let handle else { throw closedError }
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        if code != SQLITE_OK {
            let text = message.map { String(cString: $0) }
            sqlite3_free(message)
            throw error(code, "running \(sql.prefix(60))", message: text)
        }
    }

    /// The single integer a `PRAGMA` or `SELECT` returns (0 when none).
    func integer(_ sql: String) throws -> Int64 {
        let statement = try statement(sql)
        defer { statement.reset() }
        return try statement.step() ? statement.int64(0) : 0
    }

    /// A ``ChimeError`` for a SQLite result code: corrupt and not-a-database files are `notAStore`,
    /// everything else `storeFailure`; the message names the file and says what to do.
    func error(_ code: Int32, _ doing: String, message: String? = nil) -> ChimeError {
        let detail =
            message ?? handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        switch code & 0xFF {
        case SQLITE_NOTADB:
            return ChimeError(
                .notAStore,
                "\(path) is not a Chime store (it is not an SQLite database: \(detail)); point Chime at another file, or move this one away"
            )
        case SQLITE_CORRUPT:
            return ChimeError(
                .notAStore,
                "the Chime store at \(path) is corrupt (\(detail)); restore it from a backup, or move it away to start with an empty store"
            )
        case SQLITE_READONLY, SQLITE_PERM, SQLITE_CANTOPEN:
            return ChimeError(
                .storeFailure,
                "the Chime store at \(path) cannot be written: the location is not writable (\(detail)); fix the permissions or choose another path"
            )
        case SQLITE_FULL:
            return ChimeError(
                .storageFull,
                "the Chime store at \(path) cannot be written: the disk is full (\(detail)); free some space and retry")
        case SQLITE_BUSY, SQLITE_LOCKED:
            return ChimeError(
                .storeFailure,
                "the Chime store at \(path) is locked by another process (\(detail)); only one Chime may use a store file at a time"
            )
        default:
            return ChimeError(
                .storeFailure, "the Chime store at \(path) failed while \(doing): \(detail) (SQLite code \(code))")
        }
    }
}

/// The SQL of a statement a hot path runs on every transaction or row, with a number of its own
/// (given once, as the `static let` holding it is made), by which ``SQLiteConnection`` finds its
/// prepared statement without hashing the text.
///
/// ```swift
/// static let begin = StatementKey("BEGIN IMMEDIATE")
/// try connection.statement(Self.begin).run()
/// ```
struct StatementKey: Sendable {
    private static let count = Atomic<Int>(0)
    let index: Int
    let sql: String
    init(_ sql: String) {
        self.sql = sql
        index = Self.count.add(1, ordering: .relaxed).oldValue
    }
}
