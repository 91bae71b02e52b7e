import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Log lines gathered in memory and written to a file descriptor together: at most `interval`
/// after the first line of a batch, at once when the batch reaches `capacity` bytes, and on
/// ``flush()`` (a clean stop calls it). Every request writes an access-log line; one `write(2)` per
/// line was 6% of a `/healthz` request's CPU.
///
/// Lines are written in the order they were appended. What is still in memory when the process
/// dies without a flush (a crash, `SIGKILL`) is lost: at most `interval` of lines.
///
/// ```swift
/// let buffer = LineBuffer(descriptor: 2)
/// buffer.append { $0.append(contentsOf: "one line".utf8) }
/// buffer.flush()
/// ```
final class LineBuffer: Sendable {
    private struct Pending {
        var bytes: [UInt8] = []
        var flushScheduled = false
    }

    let descriptor: Int32
    let capacity: Int
    let interval: Duration
    private let pending = Mutex(Pending())
    /// Held while a batch is taken and written, so batches reach the descriptor in order.
    private let writing = Mutex(())

    init(descriptor: Int32, capacity: Int = 64 * 1024, interval: Duration = .milliseconds(50)) {
        self.descriptor = descriptor
        self.capacity = capacity
        self.interval = interval
    }

    /// Adds the line `render` appends (without its newline: the buffer adds it); writes the batch
    /// now when it is full, or schedules its write.
    func append(_ render: (inout [UInt8]) -> Void) {
        let (full, schedule) = pending.withLock { pending -> (Bool, Bool) in
            if pending.bytes.isEmpty { pending.bytes.reserveCapacity(capacity + 1024) }
            render(&pending.bytes)
            pending.bytes.append(UInt8(ascii: "\n"))
            if pending.bytes.count >= capacity { return (true, false) }
            if pending.flushScheduled { return (false, false) }
            pending.flushScheduled = true
            return (false, true)
        }
        if full {
            flush()
        } else if schedule {
            let nanoseconds =
                interval.components.seconds * 1_000_000_000 + interval.components.attoseconds
                / 1_000_000_000
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) { [self] in
                flush()
            }
        }
    }

    /// Writes what is gathered, now (the caller waits for the write).
    func flush() {
        writing.withLock { _ in
            let bytes = pending.withLock { pending -> [UInt8] in
                pending.flushScheduled = false
                defer { pending.bytes = [] }
                return pending.bytes
            }
            Self.write(bytes, to: descriptor)
        }
    }

    /// Writes all the bytes with `write(2)`, again after a partial write or `EINTR`; bytes that
    /// cannot be written (a closed descriptor) are dropped.
    static func write(_ bytes: [UInt8], to descriptor: Int32) {
        bytes.withUnsafeBytes { buffer in
            guard var next = buffer.baseAddress else { return }
            var left = buffer.count
            while left > 0 {
                let written = Glibc.write(descriptor, next, left)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                next += written
                left -= written
            }
        }
    }
}
