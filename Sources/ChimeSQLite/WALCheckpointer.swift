import CSQLite
import ChimeCore
import Foundation

/// Copies the write-ahead log back into the database file on a background thread, with a connection
/// of its own, so the engine's commits never run a checkpoint (the store turns SQLite's automatic
/// checkpoint off: it runs inside the committing transaction and stalls it for tens of
/// milliseconds on a big log).
///
/// Every quarter of a second (and when woken) it runs a PASSIVE checkpoint, which never blocks the
/// writer and with `synchronous=NORMAL` flushes the database file here, off the engine's path. A
/// log can only start again from its beginning when a checkpoint finishes with no commit beside
/// it, so once the log holds ``restartFrames`` frames and the passive pass has copied all of them,
/// it runs a RESTART checkpoint: that one waits for the writer lock, finds nothing left to copy, and
/// lets the next commit reuse the log from its start — the writer waits only for that last step.
/// Should passive passes keep falling behind (a long reader), a RESTART at ``forceFrames`` copies
/// the rest with the lock held, so the log stays bounded.
///
/// `@unchecked Sendable`: the connection is used only by the checkpointer's thread; `stopped` is
/// guarded by `lock`.
final class WALCheckpointer: @unchecked Sendable {
    private let lock = NSLock()
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private var stopped = false
    private var handle: OpaquePointer?
    private let interval: TimeInterval
    /// A log this long (frames of one page each, 4 KiB) is restarted once the passive pass has
    /// copied all of it.
    let restartFrames: Int32
    /// A log this long is restarted even when passive passes did not copy all of it.
    let forceFrames: Int32

    init?(path: String, interval: TimeInterval = 0.25, restartFrames: Int32 = 4096, forceFrames: Int32 = 65_536) {
        self.interval = interval
        self.restartFrames = restartFrames
        self.forceFrames = forceFrames
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            sqlite3_close_v2(handle)
            return nil
        }
        sqlite3_busy_timeout(handle, 1_000)
        // A connection learns that the file is in WAL mode when it first reads it; until then a
        // checkpoint does nothing (it answers -1 frames).
        guard sqlite3_exec(handle, "PRAGMA journal_mode", nil, nil, nil) == SQLITE_OK else {
            sqlite3_close_v2(handle)
            return nil
        }
        self.handle = handle
        let thread = Thread { [self] in run() }
        thread.name = "chime.sqlite.checkpoint"
        thread.qualityOfService = .utility
        thread.start()
    }

    private func run() {
        while true {
            _ = wake.wait(timeout: .now() + interval)
            if lock.withLock({ stopped }) { break }
            var logFrames: Int32 = 0
            var copied: Int32 = 0
            guard sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &logFrames, &copied) == SQLITE_OK else { continue }
            if (logFrames >= restartFrames && copied == logFrames) || logFrames >= forceFrames {
                _ = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_RESTART, &logFrames, &copied)
            }
        }
        sqlite3_close_v2(handle)
        handle = nil
        finished.signal()
    }

    /// Stops the thread and closes its connection; returns when it has.
    func stop() {
        let first = lock.withLock { () -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        wake.signal()
        finished.wait()
    }
}
