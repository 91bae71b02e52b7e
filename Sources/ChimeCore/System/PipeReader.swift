import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Reads a pipe to the end of its stream on a thread of its own, handing each chunk to `onData`,
/// and holds the `Pipe` — so its descriptors — until then. It is the one owner of the reading end:
/// the descriptor is closed once, when the reader lets the `Pipe` go after its last read.
///
/// Why not `FileHandle.readabilityHandler`: it watches the descriptor with a dispatch source, and
/// releasing or closing the handle while that source is still armed leaves libdispatch watching a
/// closed (or reused) descriptor — a crash on its manager thread (`_dispatch_event_loop_drain`),
/// seen in the test suite's teardown.
///
/// Start it after the program that writes the pipe has started (``ChildProcess`` closes the
/// parent's copy of the writing end then); the stream ends when every writer has closed it.
///
/// ```swift
/// let output = Pipe()
/// let child = try ChildProcess(executable: "/usr/bin/printf", arguments: ["hi"], stdout: .pipe(output))
/// let reader = PipeReader(output) { chunk in print(String(decoding: chunk, as: UTF8.self)) }
/// _ = reader.waitForEnd(timeout: 10)
/// ```
package final class PipeReader: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let finished = Atomic<Bool>(false)

    package init(_ pipe: Pipe, name: String = "chime.read", onData: @escaping @Sendable (Data) -> Void) {
        let thread = Thread { [self] in
            // read(2) itself: FileHandle's reads wait for a full buffer or the end.
            let descriptor = pipe.fileHandleForReading.fileDescriptor
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                onData(Data(buffer[..<count]))
            }
            // The last use of `pipe`: it is released (and its descriptors closed) with this closure.
            withExtendedLifetime(pipe) {}
            finished.store(true, ordering: .releasing)
            done.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Whether the stream has ended (every writer closed it).
    package var isFinished: Bool { finished.load(ordering: .acquiring) }

    /// Waits until the stream ends, at most `timeout` seconds; whether it did.
    package func waitForEnd(timeout: TimeInterval) -> Bool {
        if isFinished { return true }
        guard done.wait(timeout: .now() + timeout) == .success else { return false }
        done.signal()  // for the next waiter
        return true
    }
}
