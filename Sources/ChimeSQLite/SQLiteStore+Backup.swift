import CSQLite
import ChimeCore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension SQLiteStore {
    /// What a backup copied.
    public struct BackupSummary: Sendable {
        public var pages: Int
        public var bytes: Int
        public var apps: Int
        public var pending: Int
        public var delivered: Int
    }

    /// Copies a Chime store to `destination` with SQLite's online backup API, while the service
    /// that owns it keeps running: the copy is one consistent snapshot (a read transaction is held
    /// for the whole copy, so the service's commits go on beside it, into its log). The copy is
    /// then opened and checked (`PRAGMA quick_check`) before this returns.
    ///
    /// ```swift
    /// let summary = try SQLiteStore.backup(from: "/var/lib/chime/chime.sqlite", to: "/backups/chime.sqlite") { done, total in
    ///     print("\(done) of \(total) pages")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - progress: called after each step with the pages copied and the pages in all.
    /// - Throws: ``ChimeError`` `storeFailure` naming the file when the source is not a Chime store,
    ///   the destination exists or cannot be written, or the copy fails its check (then it is removed).
    @discardableResult
    public static func backup(
        from source: String, to destination: String,
        progress: (_ copied: Int, _ total: Int) -> Void = { _, _ in }
    ) throws -> BackupSummary {
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw ChimeError(
                .storeFailure, "\(destination) exists; choose a new file for the backup (it is never overwritten)")
        }
        var from: OpaquePointer?
        guard sqlite3_open_v2(source, &from, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let from
        else {
            let message = from.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open it"
            sqlite3_close_v2(from)
            throw ChimeError(.storeFailure, "cannot read the Chime store \(source): \(message)")
        }
        defer { sqlite3_close_v2(from) }
        sqlite3_busy_timeout(from, 5_000)
        guard try integer(from, "PRAGMA application_id") == Int64(Schema.applicationID) else {
            throw ChimeError(.notAStore, "\(source) is not a Chime store; nothing was copied")
        }
        // A read transaction for the whole copy: one snapshot, and the steps never restart.
        guard sqlite3_exec(from, "BEGIN; SELECT count(*) FROM sqlite_schema", nil, nil, nil) == SQLITE_OK else {
            throw ChimeError(
                .storeFailure, "cannot read the Chime store \(source): \(String(cString: sqlite3_errmsg(from)))")
        }
        defer { sqlite3_exec(from, "COMMIT", nil, nil, nil) }

        let descriptor = Glibc.open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw ChimeError(
                .storeFailure, "cannot create the backup \(destination): \(String(cString: strerror(errno)))")
        }
        Glibc.close(descriptor)
        var to: OpaquePointer?
        guard sqlite3_open_v2(destination, &to, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let to
        else {
            sqlite3_close_v2(to)
            unlink(destination)
            throw ChimeError(.storeFailure, "cannot write the backup \(destination)")
        }
        var finished = false
        defer {
            sqlite3_close_v2(to)
            if !finished { unlink(destination) }
        }
        guard let backup = sqlite3_backup_init(to, "main", from, "main") else {
            throw ChimeError(
                .storeFailure, "cannot start the backup to \(destination): \(String(cString: sqlite3_errmsg(to)))")
        }
        var result: Int32
        repeat {
            result = sqlite3_backup_step(backup, 1024)
            let total = Int(sqlite3_backup_pagecount(backup))
            progress(total - Int(sqlite3_backup_remaining(backup)), total)
        } while result == SQLITE_OK || result == SQLITE_BUSY || result == SQLITE_LOCKED
        let pages = Int(sqlite3_backup_pagecount(backup))
        sqlite3_backup_finish(backup)
        guard result == SQLITE_DONE else {
            throw ChimeError(
                .storeFailure, "the backup to \(destination) failed: \(String(cString: sqlite3_errstr(result)))")
        }
        // A backup is a plain file (no log beside it), checked before it is called a backup.
        _ = sqlite3_exec(to, "PRAGMA journal_mode=DELETE", nil, nil, nil)
        guard (try? text(to, "PRAGMA quick_check")) == "ok" else {
            throw ChimeError(
                .storeFailure, "the backup \(destination) did not pass its check and was removed; try again")
        }
        let summary = BackupSummary(
            pages: pages, bytes: pages * Int(try integer(to, "PRAGMA page_size")),
            apps: Int(try integer(to, "SELECT count(*) FROM apps")),
            pending: Int(try integer(to, "SELECT count(*) FROM pending")),
            delivered: Int(try integer(to, "SELECT count(*) FROM delivered")))
        finished = true
        return summary
    }

    private static func integer(_ handle: OpaquePointer, _ sql: String) throws -> Int64 {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw ChimeError(.storeFailure, "reading the store failed: \(String(cString: sqlite3_errmsg(handle)))")
        }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { return 0 }
        return sqlite3_column_int64(statement, 0)
    }

    private static func text(_ handle: OpaquePointer, _ sql: String) throws -> String {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw ChimeError(.storeFailure, "reading the store failed: \(String(cString: sqlite3_errmsg(handle)))")
        }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW, let bytes = sqlite3_column_text(statement, 0) else { return "" }
        return String(cString: bytes)
    }
}
