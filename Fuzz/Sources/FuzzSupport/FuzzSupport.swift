import CFuzzerDriver
import Foundation

/// A target's `LLVMFuzzerTestOneInput`: the input's bytes and their count; returns 0.
public typealias FuzzTarget = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

/// Hands the command line (corpus directories, -max_total_time=…, a crash file to replay) to
/// libFuzzer, which calls `target` with each input. A SwiftPM executable's entry point is linked as
/// `main`, so libFuzzer's own `main` is never used.
public func runFuzzer(_ target: FuzzTarget) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, target))
}

/// The input as an array (libFuzzer passes a nil start for an empty input).
public func fuzzBytes(_ start: UnsafePointer<UInt8>?, _ count: Int) -> [UInt8] {
    Array(UnsafeBufferPointer(start: start, count: count))
}

/// The input cut at each `separator` byte, as text (bytes that are not UTF-8 become U+FFFD): how a
/// target turns one input into several values (arguments, query pairs, route parameters).
public func fuzzStrings(_ bytes: some Collection<UInt8>, separator: UInt8 = 0) -> [String] {
    bytes.split(separator: separator, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
}

/// A finding unless `condition` holds: stops the run with `message`, so libFuzzer saves the input.
public func require(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    // fatalError, not precondition: a release build drops precondition's message, and the message is the finding.
    guard condition() else { fatalError(message(), file: file, line: line) }
}

/// Runs async `body` to its end from the synchronous fuzz callback (for code that is async, such as
/// the server's provider-token check): one task, waited for on a semaphore.
public func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let outcome = BlockingOutcome<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        outcome.value = await body()
        done.signal()
    }
    done.wait()
    guard let value = outcome.value else { fatalError("the task ended without a value") }
    return value
}

/// The value of `blocking`'s task: written by the task before the signal, read after the wait.
private final class BlockingOutcome<T>: @unchecked Sendable {
    var value: T?
}
