import ChimeCore
import Foundation
import Synchronization

/// The read-only connections beside an ``SQLiteStore``'s writer (GRDB's `DatabasePool` shape: one
/// writer, concurrent readers). In WAL mode each read transaction sees the last commit as a
/// snapshot while the writer keeps writing, so reads neither wait for the writer's batch nor open a
/// write transaction (`BEGIN IMMEDIATE`), nor wake the checkpointer.
///
/// A connection is opened on first need and kept for the next read, at most ``idleLimit`` of them;
/// more reads than that at once each open one of their own for the moment.
///
/// ```swift
/// let pending = try store.readers!.read { try $0.pending(app: "com.example.alarm") }
/// ```
final class SQLiteReaders: NotificationStoreReaders {
    /// How many idle connections are kept.
    static let idleLimit = 4

    private struct State {
        var idle: [Reader] = []
        var closed = false
    }

    private let path: String
    private let state = Mutex(State())

    init(path: String) { self.path = path }

    func read<T>(_ body: (any NotificationStore) throws -> T) throws -> T {
        let taken = try state.withLock { state throws(ChimeError) -> Reader? in
            if state.closed { throw ChimeError(.storeFailure, "the Chime store at \(path) is closed; open it again") }
            return state.idle.popLast()
        }
        let reader = try taken ?? Reader(try SQLiteStore(readerOf: path))
        defer { give(back: reader) }
        return try reader.store.transaction { try body(reader.store) }
    }

    private func give(back reader: Reader) {
        let kept = state.withLock { state -> Bool in
            guard !state.closed, state.idle.count < Self.idleLimit else { return false }
            state.idle.append(reader)
            return true
        }
        if !kept { reader.store.close() }
    }

    /// Closes the idle connections; those in use close when their read ends. Reads from now on fail.
    func close() {
        let idle = state.withLock { state -> [Reader] in
            state.closed = true
            defer { state.idle = [] }
            return state.idle
        }
        for reader in idle { reader.store.close() }
    }
}

/// One reader connection. `@unchecked Sendable`: the pool hands it to one read at a time (it is
/// either in the idle list, behind the pool's mutex, or held by the one `read` that took it).
private final class Reader: @unchecked Sendable {
    let store: SQLiteStore
    init(_ store: SQLiteStore) { self.store = store }
}
