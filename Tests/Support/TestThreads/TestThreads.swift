import Foundation
import Synchronization
import Testing

/// The threads every test body runs on, instead of Swift's cooperative pool.
///
/// On Linux the cooperative pool that runs every task has as many threads as the machine has
/// cores — two on the machines this suite is held to. A test body that computes for seconds
/// (100,000 adds, random rules against an oracle) or waits synchronously (`psql`, a child process,
/// a semaphore) holds one of them, and two such bodies at once stop every other task in the
/// process: the services other tests started in-process stop answering ("did not answer within
/// 15 s"). With ``TestThreadsTrait`` on a suite, its test bodies — and everything they await that is
/// not isolated to an actor of its own — run here instead: threads started as needed (at most
/// ``limit``), scheduled by the kernel beside the pool, so a busy test slows others down but
/// never stops them. What the services start with `Task {}` stays on the pool.
///
/// ```swift
/// @Suite("Something heavy", .testThreads)
/// struct HeavyTests { … }
/// ```
public final class TestThreads: TaskExecutor, Sendable {
    /// The one executor of the test process.
    public static let shared = TestThreads(limit: 512)

    private struct State: ~Copyable {
        var jobs: [UnownedJob] = []
        var next = 0
        var idle = 0
        var threads = 0
        /// The threads started so far, to tell them apart (``isCurrent``).
        var started = Set<pthread_t>()
    }

    /// At most this many threads are started; past it, jobs wait for one to come free.
    public let limit: Int

    /// Whether the caller runs on one of these threads.
    ///
    /// Told by the thread's identity, not its name: a thread's name on Linux starts as its
    /// creator's (here a thread of Swift's pool, "com.apple.root.default-qos", of which the
    /// kernel keeps 15 bytes), and `Thread.current.name` was seen to read that old name on a
    /// test thread now and then (issue 20: TestThreadsCheckTests failed so in 3 runs of the
    /// whole suite while every job ran here).
    public static var isCurrent: Bool {
        let me = pthread_self()
        return shared.state.withLock { $0.started.contains(me) }
    }
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    init(limit: Int) {
        self.limit = limit
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        enum Then { case nothing, wakeOne, startOne }
        let then = state.withLock { state -> Then in
            state.jobs.append(job)
            if state.idle > 0 {
                state.idle -= 1
                return .wakeOne
            }
            guard state.threads < limit else { return .nothing }
            state.threads += 1
            return .startOne
        }
        switch then {
        case .nothing: break
        case .wakeOne: wake.signal()
        case .startOne:
            Thread { [self] in
                state.withLock { _ = $0.started.insert(pthread_self()) }
                Thread.current.name = "chime.test"  // for debuggers and `top -H`
                work()
            }.start()
        }
    }

    /// A thread's life: the oldest job waiting, or wait for one.
    private func work() {
        let executor = asUnownedTaskExecutor()
        while true {
            let job = state.withLock { state -> UnownedJob? in
                guard state.next < state.jobs.count else {
                    state.jobs.removeAll(keepingCapacity: true)
                    state.next = 0
                    state.idle += 1
                    return nil
                }
                defer { state.next += 1 }
                return state.jobs[state.next]
            }
            if let job {
                job.runSynchronously(on: executor)
            } else {
                wake.wait()
            }
        }
    }
}

/// Runs a suite's tests (recursively) on ``TestThreads``. Every suite in `Tests/` carries it
/// (`TestThreadsCheckTests` holds the tree to it).
public struct TestThreadsTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        // A test case takes one of the running slots; a suite's own scope does not (its cases
        // each take one, and a suite holding a slot while its cases wait could deadlock).
        guard testCase != nil else {
            return try await withTaskExecutorPreference(TestThreads.shared) { try await function() }
        }
        await TestSlots.shared.take()
        defer { TestSlots.shared.give() }
        try await withTaskExecutorPreference(TestThreads.shared) { try await function() }
    }
}

/// At most ``width`` test cases run at once, however `swift test` was started.
///
/// Swift Testing runs every test case at once unless `SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH`
/// says otherwise (the Makefile sets 12). Started without it, ~790 cases started together on two
/// cores, and the services they start in-process — whose tasks run on Swift's two-thread pool
/// beside hundreds of busy test threads — were starved for seconds: the same three tests failed in
/// two such runs of a fresh clone and passed with the setting (issue 20). Waiting for a slot
/// suspends the test's task; it holds no thread.
final class TestSlots: Sendable {
    static let shared = TestSlots(width: 12)

    private struct State: ~Copyable {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    let width: Int
    private let state: Mutex<State>

    init(width: Int) {
        self.width = width
        state = Mutex(State(free: width))
    }

    func take() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.free > 0 {
                    state.free -= 1
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    func give() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiting.isEmpty {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}

extension Trait where Self == TestThreadsTrait {
    /// The suite's test bodies run on ``TestThreads``, off Swift's cooperative pool.
    public static var testThreads: Self { TestThreadsTrait() }
}
