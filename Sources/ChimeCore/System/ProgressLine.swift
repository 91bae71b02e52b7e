import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A progress line on standard error for the tools a person watches (the benchmarks): on a
/// terminal it is redrawn in place at most ten times a second; into a file or a pipe (a CI log,
/// `make bench 2>log`) it is written as plain lines, at most one every five seconds, so a log holds
/// readable progress and no terminal control codes.
///
/// ```swift
/// let progress = ProgressLine()
/// progress.update("adds: 12,000 of 200,000")
/// progress.done("adds: 200,000 in 6.1 s")
/// ```
package final class ProgressLine: Sendable {
    private let last = Mutex(Date.distantPast)
    private let isTerminal: Bool
    private let plainInterval: TimeInterval

    /// - Parameters:
    ///   - isTerminal: whether standard error is a terminal (asked of the system by default).
    ///   - plainInterval: the least time between two plain lines when it is not.
    package init(isTerminal: Bool = isatty(2) == 1, plainInterval: TimeInterval = 5) {
        self.isTerminal = isTerminal
        self.plainInterval = plainInterval
    }

    /// Shows `text` as the current progress (`force`: even if one was shown a moment ago).
    package func update(_ text: String, force: Bool = false) {
        last.withLock { last in
            let now = Date()
            guard force || now.timeIntervalSince(last) >= (isTerminal ? 0.1 : plainInterval) else { return }
            last = now
            Self.write(isTerminal ? "\r\u{1B}[2K\(text)" : "\(text)\n")
        }
    }

    /// Ends the progress with `text` on a line of its own.
    package func done(_ text: String) {
        last.withLock { last in
            last = .distantPast
            Self.write(isTerminal ? "\r\u{1B}[2K\(text)\n" : "\(text)\n")
        }
    }

    private static func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
