import Foundation
import Synchronization

extension NotificationEngine {
    // MARK: - Scheduler

    /// Starts firing notifications on the clock: the engine sleeps until the next fire date and
    /// delivers what is due, including what fell due while nothing ran (once, dated when due).
    public func startScheduler() {
        schedulerState.withLock { state in
            guard state.task == nil else { return }
            state.task = Task.detached(priority: .userInitiated) { [weak self] in
                await self?.schedulerLoop()
            }
        }
    }

    /// Stops the scheduler started by ``startScheduler()``.
    public func stopScheduler() {
        schedulerState.withLock { state in
            state.task?.cancel()
            state.sleeper?.cancel()
            state.task = nil
            state.sleeper = nil
        }
    }

    private func schedulerLoop() async {
        // When the last firing transaction started: the next one waits for `firingInterval` after it.
        var lastFiring = Date.distantPast
        // Whether memory was tidied since the last firing (once per quiet spell).
        var tidied = false
        while !Task.isCancelled {
            // Anything that changes the schedule from here on sets `changed`, so a change that
            // commits while the next date is being read is never slept through.
            schedulerState.withLock { $0.changed = false }
            let now = clock.now
            do {
                let next = try await nextFireDate()
                let floor = lastFiring.addingTimeInterval(configuration.firingInterval)
                if let next, next <= now, now >= floor {
                    lastFiring = now
                    tidied = false
                    // With a shared store the next date may belong to a request another engine is
                    // firing right now: when there was nothing to claim, give it a moment.
                    if try await fireDue(now: now, collect: nil) == 0 && isStoreShared {
                        try? await Sleep.for(.milliseconds(5))
                    }
                    continue
                }
                // A quiet spell before `next`: wake `memoryTidyLead` ahead of it to tidy memory first.
                var tidyLead: TimeInterval?
                if !tidied, let next, next.timeIntervalSince(now) > 1 { tidyLead = configuration.memoryTidyLead }
                if let sleeper = sleeper(next: next, now: now, floor: floor, lead: tidyLead) {
                    let slept = await sleeper.result
                    if tidyLead != nil, case .success = slept {
                        MemoryTidy.settle()
                        tidied = true
                    }
                }
            } catch {
                // A store failure: retry after a pause rather than spinning.
                try? await Sleep.for(.milliseconds(200))
            }
        }
    }

    /// The scheduler's sleep until `next` (an hour without one), or `nil` when the schedule changed
    /// since the loop looked: until `floor` while coalescing, `lead` earlier when memory is to be
    /// tidied first, at most ``Configuration/sharedStoreRecheck`` with a shared store.
    private func sleeper(next: Date?, now: Date, floor: Date, lead: TimeInterval?) -> Task<Void, any Error>? {
        schedulerState.withLock { state -> Task<Void, any Error>? in
            // Stopped (``stopScheduler()`` cancels the loop under this lock): no new sleep, which
            // nothing would cancel (a task made here does not inherit the loop's cancellation).
            if state.changed || Task.isCancelled { return nil }
            let clock = self.clock
            var deadline = next ?? now.addingTimeInterval(3600)
            // Due, but the last firing was under `firingInterval` ago: a short wait that
            // no schedule change shortens (nothing can be due sooner than now).
            let coalescing = deadline < floor
            if coalescing { deadline = floor }
            state.target = coalescing ? .distantPast : next
            if let lead { deadline = deadline.addingTimeInterval(-lead) }
            if self.isStoreShared {
                deadline = min(deadline, now.addingTimeInterval(self.configuration.sharedStoreRecheck))
            }
            let task = Task { try await clock.sleep(until: deadline) }
            state.sleeper = task
            return task
        }
    }

    func scheduleChanged(next: Date?) {
        schedulerState.withLock { state in
            state.changed = true
            guard let next, let sleeper = state.sleeper else { return }
            if state.target.map({ next < $0 }) ?? true { sleeper.cancel() }
        }
    }

    /// Another engine on a shared store scheduled a request for `date` (`nil`: anything may have
    /// changed).
    func scheduleChangedElsewhere(_ date: Date?) {
        if let date { scheduleChanged(next: date) } else { wakeScheduler() }
    }

    func wakeScheduler() {
        schedulerState.withLock { state in
            state.changed = true
            state.sleeper?.cancel()
        }
    }
}
