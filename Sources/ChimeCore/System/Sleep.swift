/// The one way Chime's code (product, tests and benchmarks) suspends a task for a while.
///
/// It sleeps through `Task.sleep(nanoseconds:)`, a plain function of the runtime, and never through
/// the generic `Task.sleep(for:)` / `Clock.sleep(until:)`, whose `@_alwaysEmitIntoClient` bodies are
/// compiled into every caller. Swift 6.3's concurrency runtime has been seen, here and in other
/// projects, to corrupt a suspended task's async frame around cancelled generic clock sleeps (the
/// test process crashed resuming a task whose frame read as zero, 20–30 s into a busy run);
/// Chime cancels sleeps all the time (the scheduler's sleeper, retry and timeout tasks).
/// `SleepTests` keeps every other sleep out of the tree.
///
/// ```swift
/// try await Sleep.for(.milliseconds(250))
/// try await Sleep.seconds(1.5)
/// ```
///
/// Each throws `CancellationError` when the task is cancelled, as `Task.sleep` does; a negative or
/// zero length suspends once and returns as soon as the task is run again.
package enum Sleep {
    /// The longest sleep, in nanoseconds (about 95 years): longer ones are cut to it, so the wake-up
    /// time the runtime computes (now plus this, in signed nanoseconds) cannot overflow into the past.
    package static let longest: UInt64 = 3_000_000_000 * 1_000_000_000

    /// Suspends the current task for `duration`.
    package static func `for`(_ duration: Duration) async throws {
        try await nanoseconds(nanoseconds(in: duration))
    }

    /// Suspends the current task for `seconds` (fractions allowed).
    package static func seconds(_ seconds: Double) async throws {
        guard seconds.isFinite else {
            try await nanoseconds(seconds > 0 ? longest : 0)
            return
        }
        try await nanoseconds(seconds <= 0 ? 0 : seconds >= Double(longest) / 1e9 ? longest : UInt64(seconds * 1e9))
    }

    /// Suspends the current task until `deadline` on the continuous clock (at once when it has passed).
    package static func until(_ deadline: ContinuousClock.Instant) async throws {
        try await self.for(ContinuousClock.now.duration(to: deadline))
    }

    /// Whole nanoseconds in `duration`: 0 for a negative one, at most ``longest``.
    package static func nanoseconds(in duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        guard seconds < Int64(longest / 1_000_000_000) else { return longest }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    /// Even a sleep of no length suspends (as `Task.sleep` does), so a loop that sleeps for
    /// what is left of a wait never spins on a thread of the cooperative pool.
    private static func nanoseconds(_ count: UInt64) async throws {
        try await Task.sleep(nanoseconds: count)
    }
}
