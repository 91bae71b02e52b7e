import Foundation
import TestThreads
import Testing

@testable import ChimeCore

/// ``Sleep``: its arithmetic, cancellation, and that it is the only sleep in the tree.
@Suite("One way to sleep", .testThreads)
struct SleepTests {
    @Test("durations become whole nanoseconds, negatives none, huge ones the longest sleep (about 95 years)")
    func nanoseconds() {
        #expect(Sleep.nanoseconds(in: .milliseconds(250)) == 250_000_000)
        #expect(Sleep.nanoseconds(in: .seconds(3) + .nanoseconds(7)) == 3_000_000_007)
        #expect(Sleep.nanoseconds(in: .zero) == 0)
        #expect(Sleep.nanoseconds(in: .milliseconds(-5)) == 0)
        #expect(Sleep.nanoseconds(in: .seconds(Int64.max)) == Sleep.longest)
        #expect(Sleep.nanoseconds(in: .seconds(3_000_000_000)) == Sleep.longest)
        #expect(Sleep.nanoseconds(in: .seconds(2_999_999_999)) == 2_999_999_999_000_000_000)
    }

    @Test("a sleep ends when it is cancelled, with CancellationError, long before its time")
    func cancelled() async {
        let sleeper = Task { try await Sleep.seconds(3600) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        let already = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await Sleep.for(.zero)
        }
        await #expect(throws: CancellationError.self) { try await already.value }
    }

    @Test("a sleep lasts at least as long as asked")
    func lastsAtLeast() async throws {
        let start = ContinuousClock.now
        try await Sleep.for(.milliseconds(20))
        #expect(ContinuousClock.now - start >= .milliseconds(20))
        let deadline = ContinuousClock.now + .milliseconds(10)
        try await Sleep.until(deadline)
        #expect(ContinuousClock.now >= deadline)
        try await Sleep.seconds(-1)
        try await Sleep.until(deadline)
        try await Sleep.for(.zero)  // suspends once, and returns
    }

    /// The generic clock sleeps (see ``Sleep``) are kept out of the product, the tests, the
    /// benchmarks and the examples.
    @Test("nothing sleeps through the generic clock sleeps", arguments: ["Sources", "Tests", "Benchmarks", "Examples"])
    func onlyOneSleep(folder: String) throws {
        let forbidden = [
            "Task.sleep(for", "Task.sleep(until", "Task.sleep(nanoseconds", ".sleep(for:", "clock: .continuous)",
            "ContinuousClock().sleep", "SuspendingClock().sleep",
        ]
        for file in try SourceTree.swiftFiles(in: folder)
        where file.lastPathComponent != "Sleep.swift" && file.lastPathComponent != "SleepTests.swift" {
            for line in try SourceTree.codeLines(of: file) {
                for pattern in forbidden where line.text.contains(pattern) {
                    Issue.record("\(folder)/…/\(line.place) sleeps with \(pattern): use Sleep (ChimeCore)")
                }
            }
        }
    }
}
