import ChimeCore
import ChimeSQLite
import ChimeTesting
import Foundation
import StoreTestSupport
import Synchronization
import TestThreads
import Testing

/// The writer hands the jobs of a finished batch to the next caller to submit, which lets them go
/// (what an operation carried is freed on that caller's thread, not the writer's). Whoever lets
/// them go, nothing an operation carried may outlive it: once the writer has run out of jobs, every
/// finished operation's captures are gone, including those of the last batch, which no caller
/// submitted after.
@Suite("Finished operations are let go", .testThreads)
struct FinishedJobsTests {
    static let app = "com.example.finished"

    /// How many `Token`s are alive.
    final class Live: Sendable {
        let count = Atomic<Int>(0)
    }

    /// Held by an operation's completion (so by its job) until the job is let go.
    final class Token: Sendable {
        let live: Live
        init(_ live: Live) {
            self.live = live
            live.count.add(1, ordering: .relaxed)
        }
        deinit { live.count.subtract(1, ordering: .relaxed) }
    }

    @Test("64 callers adding one after another: every add committed, and every job let go once the writer is idle")
    func everyJobLetGo() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore(path: directory.path("store.sqlite"))
        let engine = NotificationEngine(
            store: store, clock: ManualClock(now: Date(timeIntervalSince1970: 1_780_000_000)),
            timeZone: TimeZone(identifier: "UTC")!)
        _ = try await engine.requestAuthorization(app: Self.app, options: [.alert])
        let live = Live()
        let callers = 64
        let each = 20
        try await withThrowingTaskGroup(of: Void.self) { group in
            for caller in 0..<callers {
                group.addTask {
                    for index in 0..<each {
                        let request = NotificationRequest(
                            identifier: "c\(caller)-\(index)", content: NotificationContent(title: "Add \(index)"),
                            trigger: .timeInterval(3600, repeats: false))
                        let token = Token(live)
                        let dates = try await withCheckedThrowingContinuation { continuation in
                            engine.add([request], app: Self.app) { result in
                                withExtendedLifetime(token) { continuation.resume(with: result) }
                            }
                        }
                        #expect(dates.count == 1)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await engine.pendingCount(app: Self.app) == callers * each)
        // The count above ran beside the writer; the writer lets the last batch go after its
        // completions were called, so wait for it (at most 30 s).
        try await waitWhile { live.count.load(ordering: .relaxed) > 0 }
        #expect(live.count.load(ordering: .relaxed) == 0, "tokens still held by finished jobs")
        await engine.shutdown()
        store.close()
    }
}
