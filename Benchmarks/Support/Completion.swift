import ChimeCore
import Foundation
import Synchronization

/// A one-time event a benchmark waits for (every expected delivery arrived), with a deadline: a run
/// that lost deliveries stops and says so instead of waiting for ever.
///
/// ```swift
/// let allArrived = Completion()
/// // wherever the last expected arrival is counted:
/// allArrived.complete()
/// // in the measurement:
/// guard await allArrived.wait(until: Date().addingTimeInterval(60)) else { fail("…") }
/// ```
public final class Completion: Sendable {
    private let state = Mutex<(done: Bool, waiter: CheckedContinuation<Bool, Never>?)>((false, nil))

    public init() {}

    /// Marks it done and wakes the waiter; later calls do nothing.
    public func complete() {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard !state.done else { return nil }
            state.done = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: true)
    }

    /// Waits until ``complete()`` is called (`true`) or `deadline` passes first (`false`), calling
    /// `tick` every 100 ms meanwhile (for progress).
    public func wait(until deadline: Date, tick: @escaping @Sendable () -> Void = {}) async -> Bool {
        let watchdog = Task {
            while !Task.isCancelled {
                tick()
                if Date() > deadline {
                    // Taken under the lock, so `complete()` cannot resume it too.
                    let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                        defer { state.waiter = nil }
                        return state.waiter
                    }
                    if let waiter {
                        waiter.resume(returning: false)
                        return
                    }
                }
                try? await Sleep.for(.milliseconds(100))
            }
        }
        defer { watchdog.cancel() }
        return await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.done { return true }
                state.waiter = continuation
                return false
            }
            if done { continuation.resume(returning: true) }
        }
    }
}
