import Foundation

/// The engine's source of time. Engine code never calls `Date()` or `Task.sleep` itself: it asks
/// its clock, so tests can move time by hand (`ManualClock` in `ChimeTesting`).
public protocol NotificationClock: Sendable {
    /// The current date.
    var now: Date { get }
    /// Suspends until `deadline` has passed on this clock. Throws `CancellationError` when the task
    /// is cancelled.
    func sleep(until deadline: Date) async throws
}

/// The wall clock: `Date()` and real sleeping.
///
/// Sleeps are cut into slices of at most 30 s and re-checked against the wall clock, so a clock
/// step (NTP, suspend/resume) delays a notification by no more than a slice. A timer wakes late by
/// a share of its length (about 0.5% on Linux, measured: a 37 s sleep ends 185 ms late), so each
/// slice stops short of the deadline by a twentieth of what is left, and the last few are short:
/// the wake-up lands within a fraction of a millisecond of the deadline, not 0.5% after it.
public struct SystemClock: NotificationClock {
    public init() {}

    public var now: Date { Date() }

    public func sleep(until deadline: Date) async throws {
        while true {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { return }
            let slice = remaining > 0.002 ? min(remaining * 0.95, 30) : remaining
            try await Sleep.seconds(slice)
        }
    }
}
