import CSQLite
import Foundation
import StoreTestSupport
import TestThreads
import Testing

@testable import ChimeCore
@testable import ChimeSQLite

/// The writer's log goes through `LogWriteVFS`, which gathers a commit's frames and writes them
/// with one call: what a commit acknowledges must be in the log file when it returns, for another
/// connection (another process) to read, whatever the commit's size.
@Suite("SQLite store: the log written a commit at a time", .testThreads)
struct LogWriteVFSTests {
    static let app = "com.example.log"

    /// The rows another connection (SQLite's own VFS, as another process would open the file) sees.
    static func countFromOutside(_ path: String) throws -> Int {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let handle else {
            sqlite3_close_v2(handle)
            throw ChimeError(.storeFailure, "cannot open \(path) from outside")
        }
        defer { sqlite3_close_v2(handle) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, "SELECT count(*) FROM pending", -1, &statement, nil) == SQLITE_OK else {
            throw ChimeError(.storeFailure, String(cString: sqlite3_errmsg(handle)))
        }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else {
            throw ChimeError(.storeFailure, String(cString: sqlite3_errmsg(handle)))
        }
        return Int(sqlite3_column_int64(statement, 0))
    }

    static func records(_ range: Range<Int>) -> [PendingRequest] {
        range.map { index in
            var content = NotificationContent(title: "Request \(index)")
            // Large enough that a few hundred fill more than one gathered write (128 KiB).
            content.body = String(repeating: "body \(index) ", count: 40)
            let request = NotificationRequest(
                identifier: "r\(index)", content: content,
                trigger: .timeInterval(Double(60 + index % 977), repeats: false))
            return PendingRequest(
                request: request, nextFireDate: Date(timeIntervalSince1970: 1_750_000_000 + Double(index % 977)),
                anchor: Date(timeIntervalSince1970: 1_750_000_000))
        }
    }

    @Test("the writer's connection uses the VFS, and readers SQLite's own")
    func writerUsesVFS() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let connection = try SQLiteConnection(path: directory.path("vfs.sqlite"))
        var vfs: UnsafeMutablePointer<sqlite3_vfs>?
        #expect(sqlite3_file_control(connection.handle, "main", SQLITE_FCNTL_VFS_POINTER, &vfs) == SQLITE_OK)
        #expect(vfs.map { String(cString: $0.pointee.zName) } == LogWriteVFS.name)
        connection.close()
        let reader = try SQLiteConnection(path: directory.path("vfs.sqlite"), readOnly: true)
        var readerVFS: UnsafeMutablePointer<sqlite3_vfs>?
        #expect(sqlite3_file_control(reader.handle, "main", SQLITE_FCNTL_VFS_POINTER, &readerVFS) == SQLITE_OK)
        #expect(readerVFS.map { String(cString: $0.pointee.zName) } != LogWriteVFS.name)
        reader.close()
    }

    @Test(
        "every commit, small or larger than one gathered write, is readable from outside as it returns",
        arguments: [SQLiteStore.Durability.normal, .full])
    func commitsReadableFromOutside(durability: SQLiteStore.Durability) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("log.sqlite")
        let store = try SQLiteStore(path: path, durability: durability)
        defer { store.close() }
        var expected = 0
        // One request, then commits of growing size up to thousands of frames' worth (written in
        // many parts), each checked from outside before the next.
        for size in [1, 2, 30, 64, 300, 1000, 3000] {
            try store.putPending(Self.records(expected..<(expected + size)), app: Self.app)
            expected += size
            #expect(try Self.countFromOutside(path) == expected, "after a commit of \(size)")
        }
        // Replacing (the UPDATE path) and removing are committed through the log as well.
        try store.putPending(Self.records(0..<500), app: Self.app)
        _ = try store.removePending(app: Self.app, identifiers: (0..<250).map { "r\($0)" })
        expected -= 250
        #expect(try Self.countFromOutside(path) == expected)
        #expect(try store.pendingCount(app: Self.app) == expected)
        // A rolled-back transaction leaves nothing behind.
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try store.transaction {
                try store.putPending(Self.records(10_000..<10_400), app: Self.app)
                throw Refused()
            }
        }
        #expect(try Self.countFromOutside(path) == expected)
        #expect(try store.pendingCount(app: Self.app) == expected)
    }

    @Test(
        "a commit of 1 to 90 pages is whole in the log when it returns, wherever its last frame falls in a gathered write"
    )
    func commitFrameAtEveryPlace() throws {
        #expect(LogWriteVFS.registered)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("frames.sqlite")
        let writer = try RawConnection(path: path, vfs: LogWriteVFS.name)
        defer { writer.close() }
        try writer.run("PRAGMA journal_mode=WAL")
        try writer.run("PRAGMA wal_autocheckpoint=0")
        // As the store runs by default: no sync of the log at a commit (a sync would write what is
        // gathered first, and hide a commit left half in memory).
        try writer.run("PRAGMA synchronous=NORMAL")
        try writer.run("CREATE TABLE t(n INTEGER PRIMARY KEY, b BLOB)")
        let outside = try RawConnection(path: path, vfs: nil)
        defer { outside.close() }
        var rows = 0
        // A row of 3,000 bytes fills most of a page: k rows are about k + 1 frames, so the commit's
        // last frame lands at every place in a 128 KiB gathered write (31 frames and a header fit).
        for k in 1...90 {
            try writer.run("BEGIN IMMEDIATE")
            for _ in 0..<k {
                rows += 1
                try writer.run("INSERT INTO t(n, b) VALUES (\(rows), zeroblob(3000))")
            }
            try writer.run("COMMIT")
            #expect(try outside.text("SELECT count(*) || ',' || sum(length(b)) FROM t") == "\(rows),\(rows * 3000)")
            if k % 10 == 0 { try outside.run("PRAGMA wal_checkpoint(PASSIVE)") }
        }
        try outside.run("PRAGMA wal_checkpoint(TRUNCATE)")
        #expect(try outside.text("PRAGMA integrity_check") == "ok")
    }

    @Test("a store written through the VFS reopens whole, its log replayed or checkpointed")
    func reopens() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("reopen.sqlite")
        do {
            let store = try SQLiteStore(path: path)
            for start in stride(from: 0, to: 2000, by: 100) {
                try store.putPending(Self.records(start..<(start + 100)), app: Self.app)
            }
            store.close()
        }
        let store = try SQLiteStore(path: path)
        defer { store.close() }
        let pending = try store.pending(app: Self.app)
        #expect(pending.count == 2000)
        #expect(pending.first?.request.content.body == String(repeating: "body 0 ", count: 40))
        #expect(Set(pending.map(\.sequence)).count == 2000)
    }
}

/// A bare SQLite connection, through a named VFS or SQLite's default, for the VFS's own tests.
private final class RawConnection {
    let handle: OpaquePointer

    init(path: String, vfs: String?) throws {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        guard sqlite3_open_v2(path, &handle, flags, vfs) == SQLITE_OK, let handle else {
            sqlite3_close_v2(handle)
            throw ChimeError(.storeFailure, "cannot open \(path)")
        }
        self.handle = handle
    }

    func close() { sqlite3_close_v2(handle) }

    func run(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(handle, sql, nil, nil, &message) == SQLITE_OK else {
            defer { sqlite3_free(message) }
            throw ChimeError(.storeFailure, "\(sql): " + (message.map { String(cString: $0) } ?? "failed"))
        }
    }

    /// The first column of the first row, as text.
    func text(_ sql: String) throws -> String {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else {
            throw ChimeError(.storeFailure, String(cString: sqlite3_errmsg(handle)))
        }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else {
            throw ChimeError(.storeFailure, "\(sql): " + String(cString: sqlite3_errmsg(handle)))
        }
        return String(cString: text)
    }
}
