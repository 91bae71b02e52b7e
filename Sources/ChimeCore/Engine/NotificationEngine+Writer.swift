import Foundation
import Synchronization

// The writer: one serial queue, group commit, reads beside it, and the types it hands work with.

extension NotificationEngine {
    // MARK: - The writer

    /// Runs `body` on the writer inside a transaction and hands its result to `completion` after
    /// the transaction commits. Calls are processed in the order they are made.
    ///
    /// `body` must check before it writes: a ``ChimeError`` or ``UNError`` thrown by `body` fails
    /// only this operation (its writes, if any, would stay), while any other error (a store failure)
    /// rolls back the whole transaction and fails every operation in it.
    /// - Parameter alone: run `body` in a transaction of its own, rolled back by any error it
    ///   throws (then `body` may write before it knows it will fail).
    func submit<T: Sendable>(
        alone: Bool = false, _ body: @escaping @Sendable (EngineCore) throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let box = ResultBox<T>()
        let job = Job(
            run: { core in
                do { box.result = .success(try body(core)) } catch let error
                    where !alone && Self.isOperationError(error)
                {
                    box.result = .failure(error)
                }
            },
            finish: { failure in
                completion(failure.map { .failure($0) } ?? box.result ?? .failure(ChimeError(.shutDown, "no result")))
            },
            alone: alone
        )
        // What the writer finished last is let go here, on the caller's thread, after the lock.
        var done: [Job] = []
        let schedule = inbox.withLock { inbox -> Bool? in
            swap(&done, &inbox.done)
            if inbox.closed { return nil }
            inbox.jobs.append(job)
            if inbox.draining { return false }
            inbox.draining = true
            return true
        }
        done = []
        switch schedule {
        case nil: completion(.failure(ChimeError(.shutDown, "the notification engine has shut down")))
        case true?: queue.async { self.drain() }
        case false?: break
        }
    }

    /// `submit`, awaited.
    func perform<T: Sendable>(_ body: @escaping @Sendable (EngineCore) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            submit(body) { continuation.resume(with: $0) }
        }
    }

    /// Runs a read-only `body` beside the writer, on one of the store's reader connections (a
    /// snapshot of the last commit: every operation that completed before this call is in it), or
    /// on the writer when the store has no readers. Never opens a write transaction.
    ///
    /// A pending record that cannot be read stops no listing: the writer sets it aside (the
    /// quarantine, with a `quarantined` event) and the read runs again, at most a batch of times.
    func read<T: Sendable>(_ body: @escaping @Sendable (any NotificationStore) throws -> T) async throws -> T {
        guard configuration.readsBesideWriter, let readers else { return try await perform { try body($0.store) } }
        var setAside = 0
        while true {
            if inbox.withLock({ $0.closed }) { throw ChimeError(.shutDown, "the notification engine has shut down") }
            do {
                return try await withCheckedThrowingContinuation { continuation in
                    readQueue.async { continuation.resume(with: Result { try readers.read(body) }) }
                }
            } catch let row as UndeliverableRequest where setAside < configuration.fireBatch {
                setAside += 1
                try await perform { core in
                    core.toQuarantine.append(row)
                    try core.quarantineQueued(now: core.clock.now)
                }
            }
        }
    }

    /// Whether `error` fails only the operation that threw it (an input or rule error), not the
    /// transaction it ran in (a store failure, or anything else): the error table's kind.
    package static func isOperationError(_ error: any Error) -> Bool {
        ErrorTable.entry(for: error).kind == .operation
    }

    /// Runs the queued jobs, a batch at a time, until none is left.
    ///
    /// A finished job still holds what its operation carried (an add's requests, their encodings
    /// and first dates, the result): letting it go frees all of that, tens of blocks an add. While
    /// more jobs wait, callers are submitting, so a finished batch is handed to the next of them
    /// (`Inbox.done`), which lets it go on its own thread: the writer, the one thread every
    /// operation waits for, does not spend its time freeing. What no caller took by the writer's
    /// next turn (or when it runs out of jobs) the writer lets go itself, so at most one batch
    /// waits and nothing outlives the drain.
    private func drain() {
        var finished: [Job] = []
        while true {
            var unclaimed: [Job] = []
            let jobs = inbox.withLock { inbox -> [Job] in
                swap(&unclaimed, &inbox.done)
                // Up to `maxBatch` jobs, stopping before one that runs alone (or taking it alone).
                let limit = min(inbox.jobs.count, configuration.maxBatch)
                var end = 0
                while end < limit {
                    if inbox.jobs[end].alone {
                        if end == 0 { end = 1 }
                        break
                    }
                    end += 1
                }
                let batch = Array(inbox.jobs[..<end])
                inbox.jobs.removeFirst(end)
                if batch.isEmpty {
                    inbox.draining = false
                } else {
                    swap(&finished, &inbox.done)
                }
                return batch
            }
            // Here, on the writer: last turn's batch if no caller took it, and the batch just
            // finished when no job followed it.
            unclaimed = []
            finished = []
            if jobs.isEmpty { return }
            run(jobs)
            finished = jobs
        }
    }

    /// How often a batch runs again after a shared store's conflict before its jobs fail.
    private static let conflictRetries = 8

    private func run(_ jobs: [Job]) {
        let core = self.core.value
        let before = core.windowFirstDate
        var attempt = 0
        var setAside = 0
        while true {
            do {
                let deviceChanged = isStoreShared && deviceChangedElsewhere.exchange(false, ordering: .acquiring)
                try core.store.transaction {
                    core.beginTransaction(deviceChanged: deviceChanged)
                    // Rows met unreadable by an earlier try (any job's, not only a firing's).
                    try core.quarantineQueued(now: core.clock.now)
                    for job in jobs { try job.run(core) }
                }
                if deviceChanged { deviceZone.withLock { $0 = core.timeZone } }
                break
            } catch let error as ChimeError where error.code == .storeConflict && attempt < Self.conflictRetries {
                // Another engine changed what this batch read: nothing was written; run it again.
                core.abandon()
                attempt += 1
            } catch let row as UndeliverableRequest where setAside <= configuration.fireBatch {
                // A due request firing cannot deliver, or a record a job read cannot be read:
                // nothing of the transaction stays. Run it again with that request set aside first
                // (one more each time, at most a batch).
                core.abandon()
                core.toQuarantine.append(row)
                setAside += 1
            } catch {
                core.abandon()
                for job in jobs { job.finish(error) }
                return
            }
        }
        core.committed()
        // Published before the scheduler hears of a change (`scheduleChanged` below), so it never
        // reads an older date after being told.
        if !isStoreShared {
            let next = core.windowNextDate()
            nextDate.withLock { $0 = next }
        }
        // Events go out before completions, so whoever awaits an operation finds its events
        // already handed to subscribers.
        hub.publish(core.takeEvents())
        for job in jobs { job.finish(nil) }
        let after = core.windowFirstDate
        if after != before { scheduleChanged(next: after) }
        if core.moreDue { wakeScheduler() }
    }
}

/// Holds the writer-confined core, and checks at run time that it is used on the writer's queue:
/// ``value`` stops the program (`dispatchPrecondition`) when called anywhere else, so the
/// confinement rests on a check, not a comment. `@unchecked Sendable` for that reason: the core is
/// reached only through ``value`` on the writer, or through ``beforeShared`` in the engine's `init`,
/// before the engine exists for any other thread; ``shared`` is immutable.
final class EngineCoreBox: @unchecked Sendable {
    private let core: EngineCore
    private let queue: DispatchQueue
    /// The core's shared store (immutable, so readable from any thread: the feed is stopped off the
    /// writer).
    let shared: (any SharedNotificationStore)?

    init(queue: DispatchQueue, _ core: EngineCore) {
        self.core = core
        self.queue = queue
        shared = core.shared
    }

    /// The core, on the writer's queue only.
    var value: EngineCore {
        dispatchPrecondition(condition: .onQueue(queue))
        return core
    }

    /// The core while the engine is being made (no other thread can reach it yet).
    var beforeShared: EngineCore { core }
}

/// A queued operation. `@unchecked Sendable`: created on the caller's thread, then only touched on
/// the writer queue.
final class Job: @unchecked Sendable {
    let run: (EngineCore) throws -> Void
    let finish: ((any Error)?) -> Void
    /// Runs in a transaction of its own, which any error it throws rolls back (a streamed add,
    /// whose later slices can fail after earlier ones were written).
    let alone: Bool
    init(run: @escaping (EngineCore) throws -> Void, finish: @escaping ((any Error)?) -> Void, alone: Bool = false) {
        self.run = run
        self.finish = finish
        self.alone = alone
    }
}

/// An operation's result between running and committing. `@unchecked Sendable`: written and read on
/// the writer queue only.
final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
