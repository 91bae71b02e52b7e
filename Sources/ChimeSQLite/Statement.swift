import CSQLite
import ChimeCore
import Foundation

/// A prepared statement, prepared once per connection and reused (reset between uses).
final class Statement {
    let handle: OpaquePointer
    unowned let connection: SQLiteConnection
    let sql: String

    init(connection: SQLiteConnection, sql: String) throws {
        var handle: OpaquePointer?
        let code = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard code == SQLITE_OK, let handle else {
            throw connection.error(code, "preparing a statement")
        }
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    func finalize() { sqlite3_finalize(handle) }

    // MARK: Binding (1-based indexes)

    @inline(__always) func bind(_ index: Int32, _ value: String) {
        sqlite3_bind_text(handle, index, value, Int32(value.utf8.count), chime_sqlite_transient())
    }
    @inline(__always) func bind(_ index: Int32, _ value: String?) {
        if let value { bind(index, value) } else { sqlite3_bind_null(handle, index) }
    }
    @inline(__always) func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(handle, index, value) }
    @inline(__always) func bind(_ index: Int32, _ value: Int) { sqlite3_bind_int64(handle, index, Int64(value)) }
    @inline(__always) func bind(_ index: Int32, _ value: Double) { sqlite3_bind_double(handle, index, value) }
    @inline(__always) func bind(_ index: Int32, _ value: Double?) {
        if let value { sqlite3_bind_double(handle, index, value) } else { sqlite3_bind_null(handle, index) }
    }
    @inline(__always) func bind(_ index: Int32, _ value: Bool?) {
        if let value { sqlite3_bind_int64(handle, index, value ? 1 : 0) } else { sqlite3_bind_null(handle, index) }
    }
    @inline(__always) func bind(_ index: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            _ = sqlite3_bind_blob(
                handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count),
                chime_sqlite_transient())
        }
    }

    // MARK: Stepping

    /// Steps once: `true` when a row is available, `false` when done. Throws on failure.
    @inline(__always) func step() throws -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        let error = connection.error(code, "running a statement")
        sqlite3_reset(handle)
        throw error
    }

    /// Resets the statement and clears its bindings, ready for the next use.
    @inline(__always) func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Runs a statement that returns no rows.
    func run() throws {
        defer { reset() }
        _ = try step()
    }

    /// Runs the statement and calls `row` for every result row.
    func rows(_ row: () throws -> Void) throws {
        defer { reset() }
        while try step() { try row() }
    }

    // MARK: Columns (0-based indexes)

    @inline(__always) func isNull(_ index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }
    @inline(__always) func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }
    @inline(__always) func double(_ index: Int32) -> Double { sqlite3_column_double(handle, index) }
    @inline(__always) func optionalDouble(_ index: Int32) -> Double? { isNull(index) ? nil : double(index) }

    func string(_ index: Int32) -> String {
        guard let text = sqlite3_column_text(handle, index) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }
    func optionalString(_ index: Int32) -> String? { isNull(index) ? nil : string(index) }

    /// The blob in this column, valid only until the next step or reset.
    func blob(_ index: Int32) -> UnsafeRawBufferPointer {
        let pointer = sqlite3_column_blob(handle, index)
        let count = Int(sqlite3_column_bytes(handle, index))
        guard let pointer, count > 0 else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: pointer, count: count)
    }
}
