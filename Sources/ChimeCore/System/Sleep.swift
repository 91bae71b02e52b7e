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
/// zero length returns at once (after checking for cancellation).
package enum Sleep {
    /// Suspends the current task for `duration`.
    package static func `for`(_ duration: Duration) async throws {
        try await nanoseconds(nanoseconds(in: duration))
    }

    /// Suspends the current task for `seconds` (fractions allowed).
    package static func seconds(_ seconds: Double) async throws {
        guard seconds.isFinite else {
            if seconds > 0 { try await nanoseconds(.max) } else { try Task.checkCancellation() }
            return
        }
        try await nanoseconds(seconds <= 0 ? 0 : seconds >= 1.8e10 ? .max : UInt64(seconds * 1e9))
    }

    /// Suspends the current task until `deadline` on the continuous clock (at once when it has passed).
    package static func until(_ deadline: ContinuousClock.Instant) async throws {
        try await self.for(ContinuousClock.now.duration(to: deadline))
    }

    /// Whole nanoseconds in `duration`, 0 for a negative one, saturating at `UInt64.max`.
    package static func nanoseconds(in duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max }
        let (sum, carry) = whole.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
        return carry ? .max : sum
    }

    private static func nanoseconds(_ count: UInt64) async throws {
        if count == 0 {
            try Task.checkCancellation()
            return
        }
        try await Task.sleep(nanoseconds: count)
    }
}
