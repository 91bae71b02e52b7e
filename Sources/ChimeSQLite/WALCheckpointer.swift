import CSQLite
import ChimeCore
import Foundation

/// Copies the write-ahead log back into the database file on a background thread, with a connection
/// of its own, so the engine's commits never wait for a checkpoint (SQLite's automatic checkpoint
/// runs inside the committing transaction and stalls it for tens of milliseconds on a big log).
///
/// PASSIVE checkpoints never block the writer. They rarely finish while commits keep coming, so
/// the store keeps SQLite's automatic checkpoint too (every 8,192 frames, about 32 MB, inside a commit): by then
/// this thread has copied most frames, so that checkpoint is short, and when it finishes the log
/// restarts from its beginning. With `synchronous=NORMAL` the database file is flushed here, off
/// the engine's path.
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

    init?(path: String, interval: TimeInterval = 0.25) {
        self.interval = interval
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            sqlite3_close_v2(handle)
            return nil
        }
        sqlite3_busy_timeout(handle, 1_000)
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
            _ = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &logFrames, &copied)
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
