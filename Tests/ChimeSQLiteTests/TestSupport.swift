import ChimeCore
import ChimeSQLite
import ChimeTesting
import Foundation
import TestThreads

#if canImport(Glibc)
    import Glibc
#endif

extension FileHandle {
    /// What can be read after waiting at most `timeout` seconds for something to read; empty when
    /// nothing came in time or the other end is closed.
    func available(within timeout: TimeInterval) -> Data {
        var ready = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, Int32(max(0, timeout) * 1000)) > 0 else { return Data() }
        return availableData
    }
}

/// An engine on the SQLite file at `path` on a manual clock standing at `date` (UTC), its scheduler
/// started when `scheduler`, for `body`; shut down and closed after it, as a service restarting.
func withSQLiteEngine(
    path: String, at date: Date, scheduler: Bool = false, _ body: (NotificationEngine) async throws -> Void
) async throws {
    let store = try SQLiteStore(path: path)
    let engine = NotificationEngine(store: store, clock: ManualClock(now: date), timeZone: TimeZone(identifier: "UTC")!)
    if scheduler { engine.startScheduler() }
    try await body(engine)
    await engine.shutdown()
    store.close()
}

/// Waits (at most 60 s) until `condition` no longer holds.
func waitWhile(_ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while try await condition(), ContinuousClock.now < deadline {
        try await Sleep.for(.milliseconds(20))
    }
}

/// A helper process that did not end in time (it was killed).
struct HelperTimeout: Error, CustomStringConvertible {
    var description: String
}
