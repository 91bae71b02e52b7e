import ChimeCore
import Foundation

/// A clock that moves only when told to. Sleepers wake when the clock passes their deadline.
///
/// ```swift
/// let clock = ManualClock(now: Date(timeIntervalSince1970: 1_780_000_000))
/// clock.advance(by: 10)
/// ```
///
/// `@unchecked Sendable`: its state is guarded by `lock`.
public final class ManualClock: NotificationClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date
    private var sleepers: [(deadline: Date, id: UUID, continuation: CheckedContinuation<Void, any Error>)] = []

    public init(now: Date) { current = now }

    public var now: Date { lock.withLock { current } }

    /// How many tasks are sleeping on the clock (lets a test wait until code is really asleep).
    public var sleeperCount: Int { lock.withLock { sleepers.count } }

    /// The deadlines the sleeping tasks wait for, soonest first (lets a test see what code waits for).
    public var sleeperDeadlines: [Date] { lock.withLock { sleepers.map(\.deadline).sorted() } }

    /// Moves the clock to `date` (never backwards) and wakes the sleepers whose deadline passed.
    public func set(_ date: Date) {
        let woken = lock.withLock { () -> [CheckedContinuation<Void, any Error>] in
            if date > current { current = date }
            let due = sleepers.filter { $0.deadline <= current }
            sleepers.removeAll { $0.deadline <= current }
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
                let resumeNow = lock.withLock { () -> Bool in
                    if deadline <= current || Task.isCancelled { return true }
                    sleepers.append((deadline, id, continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let cancelled = lock.withLock { () -> CheckedContinuation<Void, any Error>? in
                guard let index = sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return sleepers.remove(at: index).continuation
            }
            cancelled?.resume(throwing: CancellationError())
        }
        try Task.checkCancellation()
    }
}
