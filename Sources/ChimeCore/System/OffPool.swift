import Foundation

/// Blocking work awaited from async code without holding a thread of Swift's concurrency pool:
/// the pool has as many threads as the machine has cores (two here), so a blocking wait on one —
/// a child process, `poll`, libcurl, `initdb` — stalls every task behind it. This runs `body` on a
/// thread of its own and resumes the caller with its result.
///
/// ```swift
/// let output = try await OffPool.run("chime.openssl") {
///     try ChildProcess.run("/usr/bin/openssl", arguments: ["version"], timeout: 30)
/// }
/// ```
package enum OffPool {
    package static func run<T: Sendable>(_ name: String = "chime.blocking", _ body: @escaping @Sendable () throws -> T)
        async throws -> T
    {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.name = name
            thread.start()
        }
    }
}
