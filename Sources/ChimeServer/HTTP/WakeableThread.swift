import CMicroHTTPD
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A thread of Chime's own that other threads wake through an eventfd: the I/O loop's and each
/// ``StreamWriter``'s. Its body polls ``wake`` beside its sockets, calls ``clear()`` when it is
/// readable, and returns when its owner's stop flag says so; ``join()`` wakes it and waits.
final class WakeableThread: @unchecked Sendable {
    /// The eventfd to poll (readable once ``signal()`` was called).
    let wake: Int32
    // Set once by `start` before the thread runs; read by `join` on the owner's thread.
    private var thread: Thread?
    private let done = DispatchSemaphore(value: 0)

    init() { wake = chime_eventfd() }

    deinit { close(wake) }

    /// Runs `body` on a new thread named `name`.
    func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread { [done] in
            body()
            done.signal()
        }
        thread.name = name
        thread.stackSize = 1 << 20
        self.thread = thread
        thread.start()
    }

    /// Makes ``wake`` readable (any thread).
    func signal() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(wake, $0.baseAddress, 8) }
    }

    /// Reads ``wake`` back to not readable (on the thread, after a wake-up).
    func clear() {
        var value: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &value) { read(wake, $0.baseAddress, 8) }
    }

    /// Wakes the thread and waits for its body to return (the body must see why: its owner's stop
    /// flag is set first). Returns at once when it was never started.
    func join() {
        guard thread != nil else { return }
        signal()
        done.wait()
    }
}
