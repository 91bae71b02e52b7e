import Synchronization

/// Work run in the order it was queued, off the caller's thread: a task of the lane's own runs
/// while there is work, taking everything queued at once (never a prefix of a long queue, which
/// would move the rest on every turn) and handing it to `run` as one batch; the next batch waits
/// until `run` returns. The one serial queue of ``NotificationHub``: each surface has one, and each
/// app with a presenter.
///
/// ```swift
/// let lane = SerialLane<String> { lines in for line in lines { print(line) } }
/// lane.enqueue("first")
/// lane.enqueue("second")   // printed after "first"
/// ```
final class SerialLane<Item: Sendable>: Sendable {
    private let queue = Mutex<(items: [Item], running: Bool)>(([], false))
    private let run: @Sendable ([Item]) async -> Void

    init(run: @escaping @Sendable ([Item]) async -> Void) {
        self.run = run
    }

    /// Queues `item`, or lets `merge` fold it into the last item still waiting (answering whether
    /// it did), and starts the lane's task when none is running.
    func enqueue(_ item: Item, merge: ((inout Item) -> Bool)? = nil) {
        let start = queue.withLock { queue -> Bool in
            if let merge, let last = queue.items.indices.last, merge(&queue.items[last]) {
                // Folded into the last waiting item.
            } else {
                queue.items.append(item)
            }
            if queue.running { return false }
            queue.running = true
            return true
        }
        if start { Task { await self.drain() } }
    }

    private func drain() async {
        while true {
            let batch = queue.withLock { queue -> [Item] in
                defer { queue.items.removeAll(keepingCapacity: true) }
                if queue.items.isEmpty { queue.running = false }
                return queue.items
            }
            if batch.isEmpty { return }
            await run(batch)
        }
    }
}
