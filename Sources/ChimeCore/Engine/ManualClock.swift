import Foundation
import Synchronization

/// A clock that moves only when told to. Sleepers wake when the clock passes their deadline.
///
/// ```swift
/// let clock = ManualClock(now: Date(timeIntervalSince1970: 1_780_000_000))
/// clock.advance(by: 10)
/// ```
///
public final class ManualClock: NotificationClock, Sendable {
    private struct State {
        var now: Date
        var sleepers: [(deadline: Date, id: UUID, continuation: CheckedContinuation<Void, any Error>)] = []
    }

    private let state: Mutex<State>

    public init(now: Date) { state = Mutex(State(now: now)) }

    public var now: Date { state.withLock { $0.now } }

    /// How many tasks are sleeping on the clock (lets a test wait until code is really asleep).
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The deadlines the sleeping tasks wait for, soonest first (lets a test see what code waits for).
    public var sleeperDeadlines: [Date] { state.withLock { $0.sleepers.map(\.deadline).sorted() } }

    /// Moves the clock to `date` (never backwards) and wakes the sleepers whose deadline passed.
    public func set(_ date: Date) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            if date > state.now { state.now = date }
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return due.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Moves the clock forward by `seconds`.
    public func advance(by seconds: TimeInterval) { set(now.addingTimeInterval(seconds)) }

    public func sleep(until deadline: Date) async throws {
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow = state.withLock { state -> Bool in
                    if deadline <= state.now || Task.isCancelled { return true }
                    state.sleepers.append((deadline, id, continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index).continuation
            }
            cancelled?.resume(throwing: CancellationError())
        }
        try Task.checkCancellation()
    }
}
