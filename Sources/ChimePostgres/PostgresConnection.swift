import CLibPQ
import ChimeCore
import Foundation

/// One libpq connection with its cache of prepared statements. Not thread-safe: like the store that
/// owns it, it is used from one thread at a time.
///
/// Parameters go in binary (``PostgresValue``) and results come back in binary, so numbers, dates
/// (seconds as `float8`) and `RecordCodec` bytes (`bytea`) cross without text conversion.
final class PostgresConnection {
    private(set) var handle: OpaquePointer?
    /// The connection string as given (may hold a password: never shown).
    private let url: String
    /// `user@host:port/database`, for messages.
    let described: String
    private var prepared: [String: String] = [:]
    private var nextName = 0

    /// Connects. `url` is a libpq connection URI (`postgresql://user@host:port/db?sslmode=require`)
    /// or `key=value` string; libpq's own parameters and environment variables (`PGPASSWORD`,
    /// `PGSSLMODE`, …) apply. The client encoding is always UTF-8.
    init(url: String, applicationName: String = "chime") throws {
        self.url = url
        handle = Self.connect(url, applicationName: applicationName)
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            let message = handle.map { Self.text(PQerrorMessage($0)) } ?? "out of memory"
            let where_ = handle.map(Self.describe) ?? "the database"
            PQfinish(handle)
            self.handle = nil
            described = where_
            throw ChimeError(
                .storeFailure,
                "cannot connect to PostgreSQL at \(where_): \(message.trimmingCharacters(in: .whitespacesAndNewlines)); check --database (postgresql://USER@HOST:PORT/DB) and that the server runs"
            )
        }
        described = Self.describe(handle)
    }

    deinit { close() }

    private static func connect(_ url: String, applicationName: String) -> OpaquePointer? {
        // `dbname` first with expand_dbname, so the URL's parameters apply and the ones after it
        // override: the encoding must be UTF-8 whatever the environment says.
        let keywords = ["dbname", "fallback_application_name", "client_encoding"]
        let values = [url, applicationName, "UTF8"]
        return withCStrings(keywords) { keys in
            withCStrings(values) { vals in PQconnectdbParams(keys, vals, 1) }
        }
    }

    private static func describe(_ handle: OpaquePointer) -> String {
        let user = text(PQuser(handle))
        let host = text(PQhost(handle))
        let port = text(PQport(handle))
        let db = text(PQdb(handle))
        return "\(user)@\(host):\(port)/\(db)"
    }

    static func text(_ pointer: UnsafePointer<CChar>?) -> String {
        pointer.map { String(cString: $0) } ?? ""
    }

    func close() {
        guard let handle else { return }
        PQfinish(handle)
        self.handle = nil
        prepared = [:]
    }

    /// Whether the connection is usable.
    var isOK: Bool { handle.map { PQstatus($0) == CONNECTION_OK } ?? false }

    /// Reconnects after the connection was lost (prepared statements are gone with it).
    func reset() throws {
        guard let handle else { throw ChimeError(.storeFailure, "the PostgreSQL connection to \(described) is closed") }
        prepared = [:]
        PQreset(handle)
        guard PQstatus(handle) == CONNECTION_OK else {
            throw ChimeError(
                .storeFailure,
                "lost the connection to PostgreSQL at \(described) and cannot reconnect: \(Self.text(PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines))"
            )
        }
    }

    /// The server's socket, for waiting on notifications.
    var socket: Int32 { handle.map { PQsocket($0) } ?? -1 }

    // MARK: Running

    /// Runs SQL text without parameters (one or more statements; only fixed SQL, never input).
    func execute(_ sql: String) throws {
        let result = try checked(PQexec(try live(), sql), doing: sql)
        _ = result
    }

    /// Runs a statement (prepared on first use, then reused) with binary parameters.
    @discardableResult
    func query(_ sql: String, _ parameters: [PostgresValue] = []) throws -> PostgresResult {
        try pipeline([(sql, parameters)])[0]
    }

    /// A statement for ``pipeline(_:)``: SQL (prepared on first use) and its binary parameters.
    typealias Statement = (sql: String, parameters: [PostgresValue])

    /// Sends the statements one after the other without waiting (libpq's pipeline mode), then waits
    /// once: one round trip for all. Returns each statement's result; the first failure is thrown
    /// (the statements after it did not run).
    func pipeline(_ statements: [Statement]) throws -> [PostgresResult] {
        let handle = try live()
        if statements.count == 1 && prepared[statements[0].sql] != nil {
            return [try checked(send(statements[0], handle: handle, piped: false), doing: statements[0].sql)]
        }
        guard PQenterPipelineMode(handle) == 1 else {
            throw ChimeError(
                .storeFailure,
                "PostgreSQL at \(described): cannot enter pipeline mode: \(Self.text(PQerrorMessage(handle)))")
        }
        defer { PQexitPipelineMode(handle) }
        enum Step { case prepare(String), execute(String) }
        var steps: [Step] = []
        for statement in statements {
            if prepared[statement.sql] == nil {
                nextName += 1
                let name = "chime_\(nextName)"
                let types = statement.parameters.map(\.type)
                let sent = types.withUnsafeBufferPointer {
                    PQsendPrepare(handle, name, statement.sql, Int32(types.count), $0.baseAddress)
                }
                guard sent == 1 else { throw sendFailure(handle) }
                prepared[statement.sql] = name
                steps.append(.prepare(statement.sql))
            }
            guard send(statement, handle: handle, piped: true) != nil else { throw sendFailure(handle) }
            steps.append(.execute(statement.sql))
        }
        guard PQpipelineSync(handle) == 1 else { throw sendFailure(handle) }
        // Read every result up to the sync point; report the first failure. A preparation that
        // did not succeed is forgotten, so the statement is prepared again next time.
        var results: [PostgresResult] = []
        var failure: (any Error)?
        for step in steps {
            guard let result = PQgetResult(handle) else { continue }
            while let extra = PQgetResult(handle) { PQclear(extra) }  // up to the NULL that ends the step
            let skipped = failure != nil || PQresultStatus(result) == PGRES_PIPELINE_ABORTED
            switch step {
            case .prepare(let sql):
                if skipped || PQresultStatus(result) != PGRES_COMMAND_OK { prepared[sql] = nil }
                if skipped {
                    PQclear(result)
                } else if let error = Self.failure(of: result, connection: self, doing: "preparing \(sql.prefix(60))") {
                    failure = error
                }
            case .execute(let sql):
                if skipped {
                    PQclear(result)
                } else {
                    do { results.append(try checked(result, doing: sql)) } catch { failure = error }
                }
            }
        }
        while let rest = PQgetResult(handle) {
            let status = PQresultStatus(rest)
            PQclear(rest)
            if status == PGRES_PIPELINE_SYNC { break }
        }
        if let failure { throw failure }
        return results
    }

    /// The error of a failed result (which it clears), or `nil` for a good one (left to the caller).
    private static func failure(of result: OpaquePointer, connection: PostgresConnection, doing: String) -> (any Error)?
    {
        let status = PQresultStatus(result)
        if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK {
            PQclear(result)
            return nil
        }
        do { _ = try connection.checked(result, doing: doing) } catch { return error }
        return nil
    }

    private func sendFailure(_ handle: OpaquePointer) -> ChimeError {
        ChimeError(
            .storeFailure,
            "PostgreSQL at \(described) could not be sent a statement: \(Self.text(PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines))"
        )
    }

    /// Sends (piped) or runs (not piped) one prepared statement with binary parameters and results.
    private func send(_ statement: Statement, handle: OpaquePointer, piped: Bool) -> OpaquePointer? {
        let name = prepared[statement.sql]!
        let parameters = statement.parameters
        let count = parameters.count
        // Every parameter's bytes in one buffer, pinned while libpq reads them.
        var blob: [UInt8] = [0]
        var offsets = [Int](repeating: -1, count: count)
        var lengths = [Int32](repeating: 0, count: count)
        for (index, parameter) in parameters.enumerated() {
            guard let bytes = parameter.bytes else { continue }
            offsets[index] = blob.count
            lengths[index] = Int32(bytes.count)
            blob += bytes
        }
        let formats = [Int32](repeating: 1, count: count)
        return blob.withUnsafeBytes { raw -> OpaquePointer? in
            let base = raw.baseAddress!.assumingMemoryBound(to: CChar.self)
            let pointers: [UnsafePointer<CChar>?] = offsets.map { $0 < 0 ? nil : base + $0 }
            if piped {
                // A non-nil marker for "sent"; the results come from PQgetResult.
                return PQsendQueryPrepared(handle, name, Int32(count), pointers, lengths, formats, 1) == 1
                    ? handle : nil
            }
            return PQexecPrepared(handle, name, Int32(count), pointers, lengths, formats, 1)
        }
    }

    private func live() throws -> OpaquePointer {
        guard let handle else {
            throw ChimeError(.storeFailure, "the PostgreSQL connection to \(described) is closed; open the store again")
        }
        return handle
    }

    /// Turns a result into a ``PostgresResult``, or its error into a ``ChimeError``: serialization
    /// failures, deadlocks and lock timeouts are `storeConflict` (the engine runs the batch again),
    /// everything else `storeFailure`, with the server's message.
    private func checked(_ result: OpaquePointer?, doing sql: String) throws -> PostgresResult {
        guard let result else {
            throw ChimeError(
                .storeFailure,
                "PostgreSQL at \(described) failed: \(Self.text(PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines))"
            )
        }
        let status = PQresultStatus(result)
        if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK { return PostgresResult(result) }
        let state = Self.text(PQresultErrorField(result, Int32(UInt8(ascii: "C"))))
        let message = Self.text(PQresultErrorMessage(result)).trimmingCharacters(in: .whitespacesAndNewlines)
        PQclear(result)
        if state.isEmpty, let handle, PQstatus(handle) != CONNECTION_OK {
            throw ChimeError(.storeFailure, "lost the connection to PostgreSQL at \(described): \(message)")
        }
        if Self.conflictStates.contains(state) {
            throw ChimeError(.storeConflict, "another node changed the same rows (PostgreSQL \(state): \(message))")
        }
        let statement = sql.split(separator: "\n").first.map { String($0.prefix(80)) } ?? ""
        throw ChimeError(
            .storeFailure, "PostgreSQL at \(described) refused \"\(statement)\": \(message) (SQLSTATE \(state))")
    }

    /// serialization_failure, deadlock_detected, lock_not_available.
    static let conflictStates: Set<String> = ["40001", "40P01", "55P03"]

    // MARK: Notifications

    /// Reads what arrived on the socket and returns the notifications received, oldest first.
    func notifications() throws -> [(channel: String, payload: String)] {
        let handle = try live()
        guard PQconsumeInput(handle) == 1 else {
            throw ChimeError(
                .storeFailure,
                "lost the connection to PostgreSQL at \(described): \(Self.text(PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines))"
            )
        }
        var out: [(channel: String, payload: String)] = []
        while let notification = PQnotifies(handle) {
            out.append((Self.text(notification.pointee.relname), Self.text(notification.pointee.extra)))
            PQfreemem(notification)
        }
        return out
    }

    /// Quotes text as a SQL literal for this connection (libpq's escaping).
    func literal(_ text: String) throws -> String {
        guard let escaped = PQescapeLiteral(try live(), text, text.utf8.count) else {
            throw ChimeError(
                .storeFailure,
                "PostgreSQL at \(described) could not quote a value: \(Self.text(PQerrorMessage(handle)))")
        }
        defer { PQfreemem(escaped) }
        return String(cString: escaped)
    }

    /// Quotes an identifier for SQL text.
    static func quoteIdentifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// A result set, read in binary. Cleared when released.
final class PostgresResult {
    private let handle: OpaquePointer

    init(_ handle: OpaquePointer) { self.handle = handle }
    deinit { PQclear(handle) }

    var count: Int { Int(PQntuples(handle)) }

    func isNull(_ row: Int, _ column: Int) -> Bool { PQgetisnull(handle, Int32(row), Int32(column)) == 1 }

    /// The value's bytes, valid while the result lives.
    func bytes(_ row: Int, _ column: Int) -> UnsafeRawBufferPointer {
        let length = Int(PQgetlength(handle, Int32(row), Int32(column)))
        guard length > 0, let pointer = PQgetvalue(handle, Int32(row), Int32(column)) else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return UnsafeRawBufferPointer(start: pointer, count: length)
    }

    func int64(_ row: Int, _ column: Int) -> Int64 {
        let raw = bytes(row, column)
        switch raw.count {
        case 8: return Int64(bigEndian: raw.loadUnaligned(as: Int64.self))
        case 4: return Int64(Int32(bigEndian: raw.loadUnaligned(as: Int32.self)))
        case 2: return Int64(Int16(bigEndian: raw.loadUnaligned(as: Int16.self)))
        default: return 0
        }
    }

    func double(_ row: Int, _ column: Int) -> Double {
        let raw = bytes(row, column)
        guard raw.count == 8 else { return 0 }
        return Double(bitPattern: UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self)))
    }

    func optionalDouble(_ row: Int, _ column: Int) -> Double? { isNull(row, column) ? nil : double(row, column) }

    func bool(_ row: Int, _ column: Int) -> Bool { bytes(row, column).first == 1 }

    func optionalBool(_ row: Int, _ column: Int) -> Bool? { isNull(row, column) ? nil : bool(row, column) }

    func string(_ row: Int, _ column: Int) -> String {
        String(decoding: bytes(row, column), as: UTF8.self)
    }
}

/// A statement parameter in PostgreSQL's binary format, with its type.
struct PostgresValue {
    /// The type's OID (0: let the server infer it, for NULL).
    var type: UInt32
    /// The binary value; `nil` is SQL NULL.
    var bytes: [UInt8]?

    static let null = PostgresValue(type: 0, bytes: nil)

    static func int8(_ value: Int64) -> PostgresValue { PostgresValue(type: OID.int8, bytes: bigEndian(value)) }
    static func float8(_ value: Double) -> PostgresValue {
        PostgresValue(type: OID.float8, bytes: bigEndian(value.bitPattern))
    }
    static func float8(_ value: Double?) -> PostgresValue {
        value.map { float8($0) } ?? PostgresValue(type: OID.float8, bytes: nil)
    }
    static func bool(_ value: Bool) -> PostgresValue { PostgresValue(type: OID.bool, bytes: [value ? 1 : 0]) }
    static func text(_ value: String) -> PostgresValue { PostgresValue(type: OID.text, bytes: Array(value.utf8)) }
    static func text(_ value: String?) -> PostgresValue {
        value.map { text($0) } ?? PostgresValue(type: OID.text, bytes: nil)
    }
    static func bytea(_ value: [UInt8]) -> PostgresValue { PostgresValue(type: OID.bytea, bytes: value) }

    /// A one-dimensional array (binary array format), for bulk statements with `unnest`.
    static func array(_ elements: [[UInt8]?], of element: UInt32, arrayType: UInt32) -> PostgresValue {
        var out: [UInt8] = []
        out.reserveCapacity(20 + elements.reduce(0) { $0 + 4 + ($1?.count ?? 0) })
        let hasNull = elements.contains { $0 == nil }
        out += bigEndian(Int32(elements.isEmpty ? 0 : 1))
        out += bigEndian(Int32(hasNull ? 1 : 0))
        out += bigEndian(element)
        if !elements.isEmpty {
            out += bigEndian(Int32(elements.count))
            out += bigEndian(Int32(1))
        }
        for element in elements {
            if let element {
                out += bigEndian(Int32(element.count))
                out += element
            } else {
                out += bigEndian(Int32(-1))
            }
        }
        return PostgresValue(type: arrayType, bytes: out)
    }

    static func texts(_ values: [String]) -> PostgresValue {
        array(values.map { Array($0.utf8) }, of: OID.text, arrayType: OID.textArray)
    }
    static func int8s(_ values: [Int64]) -> PostgresValue {
        array(values.map { bigEndian($0) }, of: OID.int8, arrayType: OID.int8Array)
    }
    static func float8s(_ values: [Double?]) -> PostgresValue {
        array(values.map { $0.map { bigEndian($0.bitPattern) } }, of: OID.float8, arrayType: OID.float8Array)
    }
    static func bools(_ values: [Bool?]) -> PostgresValue {
        array(values.map { $0.map { [$0 ? 1 : 0] } }, of: OID.bool, arrayType: OID.boolArray)
    }
    static func byteas(_ values: [[UInt8]]) -> PostgresValue {
        array(values, of: OID.bytea, arrayType: OID.byteaArray)
    }

    private static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }
}

/// The type OIDs Chime sends (fixed in PostgreSQL's catalog).
enum OID {
    static let bool: UInt32 = 16
    static let bytea: UInt32 = 17
    static let int8: UInt32 = 20
    static let text: UInt32 = 25
    static let float8: UInt32 = 701
    static let boolArray: UInt32 = 1000
    static let byteaArray: UInt32 = 1001
    static let textArray: UInt32 = 1009
    static let int8Array: UInt32 = 1016
    static let float8Array: UInt32 = 1022
}

/// Calls `body` with C strings for `strings`, NULL-terminated (libpq's keyword/value arrays).
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let duplicates = strings.map { strdup($0) }
    defer { for pointer in duplicates { free(pointer) } }
    let pointers = duplicates.map { UnsafePointer<CChar>($0) } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
