import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension ChildProcess {
    /// Where a program that ``run(_:arguments:environment:directory:stdin:errors:timeout:)`` runs
    /// writes its standard error.
    package enum ErrorOutput: Sendable {
        /// Collected apart, in ``Output/standardError``.
        case captured
        /// Into standard output's pipe, interleaved as written.
        case merged
        /// Elsewhere (`.null`, `.inherit`, a file), not collected.
        case stream(Stream)
    }

    /// What a program run to its end wrote, and how it ended.
    package struct Output: Sendable {
        package var termination: Termination
        package var standardOutput: Data
        /// Empty unless standard error was ``ErrorOutput/captured``.
        package var standardError: Data

        /// Standard output as UTF-8 text.
        package var text: String { String(decoding: standardOutput, as: UTF8.self) }
        /// Standard error as UTF-8 text.
        package var errorText: String { String(decoding: standardError, as: UTF8.self) }
    }

    /// A program that did not finish within its time: it was killed (`SIGKILL`) and reaped.
    package struct TimeoutError: Error, CustomStringConvertible {
        /// The program's path.
        package var program: String
        /// The time it had, in seconds.
        package var timeout: TimeInterval
        /// What it had written to standard output and (when captured) standard error by then.
        package var partialOutput: String

        package var description: String {
            "\(program) did not finish within \(timeout.formatted()) s"
                + (partialOutput.isEmpty ? "" : "; it wrote: \(partialOutput.suffix(1500))")
        }
    }

    /// Runs a program to its end, at most `timeout` seconds, collecting its standard output (and
    /// error); blocks the calling thread. Output is read as it comes, so a chatty program never
    /// blocks on a full pipe; the wait ends when the program has exited and closed its output (a
    /// program it left behind holding the output keeps it open, within the same time limit).
    ///
    /// - Throws: ``StartError`` when it cannot be started; ``TimeoutError`` when it runs longer
    ///   (it is then killed and reaped) or its output stays open longer.
    ///
    /// ```swift
    /// let result = try ChildProcess.run("/usr/bin/openssl", arguments: ["version"], timeout: 30)
    /// guard result.termination.succeeded else { throw … result.errorText … }
    /// print(result.text)
    /// ```
    package static func run(
        _ executable: String, arguments: [String] = [], environment: [String: String]? = nil,
        directory: String? = nil, stdin: Stream = .null, errors: ErrorOutput = .captured,
        timeout: TimeInterval
    ) throws -> Output {
        let deadline = Date().addingTimeInterval(timeout)
        let output = Pipe()
        let errorPipe = Pipe()
        let stderr: Stream =
            switch errors {
            case .captured: .pipe(errorPipe)
            case .merged: .pipe(output)
            case .stream(let stream): stream
            }
        let child = try ChildProcess(
            executable: executable, arguments: arguments, environment: environment, directory: directory,
            stdin: stdin, stdout: .pipe(output), stderr: stderr)
        let outputReader = PipeCollector(output)
        let errorReader: PipeCollector? = if case .captured = errors { PipeCollector(errorPipe) } else { nil }
        let end = child.wait(timeout: max(0, deadline.timeIntervalSinceNow))
        let standardOutput = outputReader.finish(timeout: max(0, deadline.timeIntervalSinceNow))
        let standardError =
            errorReader?.finish(timeout: max(0, deadline.timeIntervalSinceNow)) ?? (data: Data(), complete: true)
        guard let end, standardOutput.complete, standardError.complete else {
            child.signal(SIGKILL)
            child.wait(timeout: 5)
            let partial = String(decoding: standardOutput.data + standardError.data, as: UTF8.self)
            throw TimeoutError(program: executable, timeout: timeout, partialOutput: partial)
        }
        return Output(termination: end, standardOutput: standardOutput.data, standardError: standardError.data)
    }

    /// ``run(_:arguments:environment:directory:stdin:errors:timeout:)`` on a thread of its own, so
    /// the waiting blocks no thread of Swift's concurrency pool.
    ///
    /// ```swift
    /// let listed = try await ChildProcess.run("/usr/bin/dunstctl", arguments: ["history"], timeout: 60).text
    /// ```
    package static func run(
        _ executable: String, arguments: [String] = [], environment: [String: String]? = nil,
        directory: String? = nil, stdin: Stream = .null, errors: ErrorOutput = .captured,
        timeout: TimeInterval
    ) async throws -> Output {
        try await OffPool.run("chime.run") {
            try run(
                executable, arguments: arguments, environment: environment, directory: directory, stdin: stdin,
                errors: errors, timeout: timeout)
        }
    }
}

/// A pipe read to its end: what ``ChildProcess/run(_:arguments:environment:directory:stdin:errors:timeout:)`` collects.
private final class PipeCollector: Sendable {
    private let data = Mutex(Data())
    private let reader = Mutex<PipeReader?>(nil)

    init(_ pipe: Pipe) {
        let started = PipeReader(pipe) { [self] chunk in data.withLock { $0.append(chunk) } }
        reader.withLock { $0 = started }
    }

    /// What was read, and whether the pipe reached its end within `timeout` seconds.
    func finish(timeout: TimeInterval) -> (data: Data, complete: Bool) {
        let complete = reader.withLock { $0 }?.waitForEnd(timeout: timeout) ?? true
        return (data.withLock { $0 }, complete)
    }
}
