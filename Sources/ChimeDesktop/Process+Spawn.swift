import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension Process {
    /// Starts the process from a thread of its own whose signal mask is empty.
    ///
    /// `Process.run()` hands the calling thread's signal mask to the child, and Swift's
    /// concurrency and Dispatch threads block nearly every signal: a program started from one
    /// ignores `SIGTERM` (and `terminate()`) for its whole life. Starting it here gives it the
    /// default mask.
    ///
    /// ```swift
    /// let dialog = Process()
    /// dialog.executableURL = URL(fileURLWithPath: "/usr/bin/zenity")
    /// try dialog.runWithDefaultSignalMask()
    /// ```
    package func runWithDefaultSignalMask() throws {
        let result = Mutex<Result<Void, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in
            var empty = sigset_t()
            sigemptyset(&empty)
            pthread_sigmask(SIG_SETMASK, &empty, nil)
            let outcome = Result { try self.run() }
            result.withLock { $0 = outcome }
            done.signal()
        }
        thread.name = "chime.spawn"
        thread.start()
        done.wait()
        try result.withLock { $0 }?.get()
    }
}
