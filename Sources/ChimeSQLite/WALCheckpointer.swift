import CSQLite
import ChimeCore
import Foundation
import Synchronization

/// Copies the write-ahead log back into the database file on a background thread, with a connection
/// of its own, so the engine's commits never run a checkpoint (the store turns SQLite's automatic
/// checkpoint off: it runs inside the committing transaction and stalls it for tens of
/// milliseconds on a big log).
///
/// Every 50 ms while commits come in (every second when none did) it runs a PASSIVE checkpoint,
/// which never blocks the writer and with `synchronous=NORMAL` flushes the database file here, off
/// the engine's path; short passes often take the second core in small bites rather than in one
/// long copy that the writer has to share it with. (It keeps the process's priority: at nice 10 a
/// busy machine starved it and the log outgrew its bound; lateness was no better for it.) A
/// log can only start again from its beginning when a checkpoint finishes with no commit beside
/// it, so once the log holds ``restartFrames`` frames it runs passive passes back to back — each
/// copies what came in during the one before, so they shrink — until one finds at most
/// ``restartRemainder`` new frames, then a RESTART checkpoint: that one holds the writer lock while
/// it copies those few frames and flushes them, and lets the next commit reuse the log from its
/// start. Writing pages costs more in the flush than in the copy (about 15–20 µs a page on this
/// machine kind's disk), so the writer's wait stays well under a millisecond instead of the tens
/// of milliseconds a restart after one long pass cost.
/// Should passive passes keep falling behind (a long reader), a RESTART at ``forceFrames`` copies
/// the rest with the lock held, so the log stays bounded.
///
/// `@unchecked Sendable`: the connection is used only by the checkpointer's thread; `stopped`,
/// `idleWait` and `commits` are atomic; the round counts are guarded by `rounds`.
final class WALCheckpointer: @unchecked Sendable {
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)
    /// Whether the thread waits the idle interval (nothing was committed for a round).
    private let idleWait = Atomic<Bool>(false)
    /// Commits so far.
    private let commits = Atomic<Int>(0)
    private var handle: OpaquePointer?
    /// Guards `roundsStarted` and `roundsFinished`, and wakes ``waitForRound(timeout:)``.
    private let rounds = NSCondition()
    private var roundsStarted = 0
    private var roundsFinished = 0
    /// Between passes while the log grows, and while it does not.
    private let interval: TimeInterval
    private let idleInterval: TimeInterval
    /// A log this long (frames of one page each, 4 KiB) is restarted once the passive pass has
    /// copied all of it.
    let restartFrames: Int32
    /// A log this long is restarted even when passive passes did not copy all of it.
    let forceFrames: Int32

    init?(
        path: String, interval: TimeInterval = 0.05, idleInterval: TimeInterval = 1, restartFrames: Int32 = 4096,
        forceFrames: Int32 = 65_536
    ) {
        self.interval = interval
        self.idleInterval = idleInterval
        self.restartFrames = restartFrames
        self.forceFrames = forceFrames
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            sqlite3_close_v2(handle)
            return nil
        }
        SQLiteConnection.waitForLocks(handle!, seconds: 1)
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
        // The commit count when the previous round began: unchanged after a round, nothing came in
        // for two rounds (the last commits were copied, and the log restarted if it was long).
        var previousStart = -1
        var idle = false
        while true {
            if idle {
                // Flag first, then look: a commit after the look finds the flag and wakes the thread.
                idleWait.store(true, ordering: .sequentiallyConsistent)
                if commits.load(ordering: .sequentiallyConsistent) != previousStart {
                    idleWait.store(false, ordering: .relaxed)
                    idle = false
                }
            }
            _ = wake.wait(timeout: .now() + (idle ? idleInterval : interval))
            idleWait.store(false, ordering: .relaxed)
            if stopped.load(ordering: .acquiring) { break }
            rounds.withLock { roundsStarted += 1 }
            let start = commits.load(ordering: .sequentiallyConsistent)
            checkpoint()
            rounds.withLock {
                roundsFinished += 1
                rounds.broadcast()
            }
            idle = start == previousStart && commits.load(ordering: .sequentiallyConsistent) == start
            previousStart = start
        }
        sqlite3_close_v2(handle)
        handle = nil
        rounds.withLock { rounds.broadcast() }
        finished.signal()
    }

    /// One round: a passive pass; once the log is long, more passes while each finds fewer new
    /// frames, then the restart, with only what the last pass left (the commits of a millisecond
    /// or so) to copy while the writer waits.
    private func checkpoint() {
        var logFrames: Int32 = 0
        var copied: Int32 = 0
        var previousLog: Int32 = 0
        for pass in 0..<Self.convergingPasses {
            // SQLITE_BUSY: a reader kept some frames from being copied; the counts are still set.
            let code = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &logFrames, &copied)
            guard code == SQLITE_OK || code == SQLITE_BUSY else { return }
            if logFrames >= forceFrames { break }
            guard logFrames >= restartFrames, copied == logFrames else { return }
            // Few frames came in during the last pass: what the restart copies will be as few.
            if pass > 0 && logFrames - previousLog <= Self.restartRemainder { break }
            previousLog = logFrames
            if pass == Self.convergingPasses - 1 { return }
        }
        // The next commit writes the log from its start.
        _ = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_RESTART, &logFrames, &copied)
    }

    /// The most passive passes in a row before a restart (they stop early once one finds few new frames).
    static let convergingPasses = 6
    /// Few enough frames for the writer to wait while the restart copies them.
    static let restartRemainder: Int32 = 64

    /// Called after each commit: ends an idle wait, so the first commits after a quiet spell are
    /// copied within ``interval`` rather than a second later, in one long pass.
    func committed() {
        commits.add(1, ordering: .sequentiallyConsistent)
        if idleWait.load(ordering: .sequentiallyConsistent), idleWait.exchange(false, ordering: .sequentiallyConsistent)
        {
            wake.signal()
        }
    }

    /// Waits (at most `timeout`) until a round that began after this call has finished, and wakes
    /// the thread so it need not wait out its interval: the commits made before the call have been
    /// copied into the file, and the log restarted if they made it long (unless a reader held
    /// frames back). How a test knows a pass came, rather than sleeping for longer than the
    /// interval.
    ///
    /// - Returns: false when the time passed or the checkpointer stopped first.
    func waitForRound(timeout: TimeInterval) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        return rounds.withLock {
            let target = roundsStarted + 1
            wake.signal()
            while roundsFinished < target {
                if stopped.load(ordering: .acquiring) || !rounds.wait(until: deadline) {
                    return roundsFinished >= target
                }
            }
            return true
        }
    }

    /// Stops the thread and closes its connection; returns when it has.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wake.signal()
        finished.wait()
    }
}
