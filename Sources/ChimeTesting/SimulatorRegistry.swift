import Chime
import Foundation
import Synchronization
import Testing

/// Which simulator `UNUserNotificationCenter.current()` means, test by test.
///
/// Swift Testing runs tests in parallel, in one process, across suites and test targets. Each
/// simulator is therefore installed *for a test*: the `.notificationSimulator` trait binds its
/// simulator to the test's task (a task-local, inherited by `async let`, task groups and `Task {}`),
/// and `install()` called in a test records the simulator under that test (Swift Testing's own
/// task-local `Test.current`). Callbacks from a center (completion handlers, delegate methods) are
/// bound to that center by Chime itself.
///
/// Code that runs outside every test's task (a `DispatchQueue` block, a `Thread`, `Task.detached`)
/// gets the simulator only when one is installed in the whole process; with more, it cannot be told
/// which test it belongs to, and `current()` stops the program with a message naming the fix.
///
final class SimulatorRegistry: Sendable {
    static let shared: SimulatorRegistry = {
        let registry = SimulatorRegistry()
        UNUserNotificationCenter.setLookup { registry.lookup() }
        return registry
    }()

    /// The simulator the `.notificationSimulator` trait made for the running test.
    @TaskLocal static var bound: NotificationSimulator?

    /// Who installed a simulator.
    enum Owner: Hashable {
        /// A Swift Testing test (with its case, for parameterized tests), by `install()`.
        case test(TestKey)
        /// The trait, for a test (found through ``bound``; listed so the fallback counts it).
        case trait(TestKey)
        /// Code outside any Swift Testing test: an XCTest `setUp`, a program.
        case process
    }

    /// One Swift Testing test case.
    struct TestKey: Hashable {
        var test: Test.ID
        /// For a parameterized test, which of its cases (they run in parallel).
        var testCase: String?
        /// The test's name, for messages.
        var name: String

        static func == (a: TestKey, b: TestKey) -> Bool { a.test == b.test && a.testCase == b.testCase }
        func hash(into hasher: inout Hasher) {
            hasher.combine(test)
            hasher.combine(testCase)
        }

        /// The running test case, if this task belongs to one.
        static var current: TestKey? {
            guard let test = Test.current else { return nil }
            var key = TestKey(test: test.id, testCase: nil, name: test.displayName ?? test.name)
            // `Test.Case` has no public identity; its description names its arguments and
            // discriminator, which tell the cases of one test apart.
            if let testCase = Test.Case.current, testCase.isParameterized {
                key.testCase = String(describing: testCase)
            }
            return key
        }
    }

    private struct Entry {
        weak var simulator: NotificationSimulator?
        var owner: Owner
    }

    private let entries = Mutex<[Entry]>([])

    /// Records `simulator` for the running test (or the process, outside any test), replacing what
    /// that owner installed before.
    func install(_ simulator: NotificationSimulator) {
        let owner: Owner = TestKey.current.map { .test($0) } ?? .process
        entries.withLock { entries in
            entries.removeAll { $0.owner == owner || $0.simulator == nil }
            entries.append(Entry(simulator: simulator, owner: owner))
        }
    }

    /// Records the trait's simulator while its test runs.
    func add(_ simulator: NotificationSimulator, trait key: TestKey?) {
        entries.withLock { entries in
            entries.removeAll { $0.simulator == nil }
            entries.append(Entry(simulator: simulator, owner: key.map { .trait($0) } ?? .process))
        }
    }

    /// Forgets `simulator` wherever it was installed.
    func remove(_ simulator: NotificationSimulator) {
        entries.withLock { $0.removeAll { $0.simulator == nil || $0.simulator === simulator } }
    }

    /// The simulator of the running test: the one it installed last, else the trait's.
    func simulatorOfRunningTest() -> NotificationSimulator? {
        if let key = TestKey.current,
            let installed = entries.withLock({ $0.last { $0.owner == .test(key) }?.simulator })
        {
            return installed
        }
        return Self.bound
    }

    /// What `UNUserNotificationCenter.current()` means here.
    func lookup() -> UNUserNotificationCenter.Lookup {
        if let simulator = simulatorOfRunningTest() { return .center(simulator.center) }
        // In a test that installed none: the default center, whatever other tests do.
        if TestKey.current != nil { return .none }
        let live = entries.withLock { entries -> [(NotificationSimulator, Owner)] in
            entries.removeAll { $0.simulator == nil }
            return entries.compactMap { entry in entry.simulator.map { ($0, entry.owner) } }
        }
        let distinct = live.reduce(into: [(NotificationSimulator, Owner)]()) { result, entry in
            if !result.contains(where: { $0.0 === entry.0 }) { result.append(entry) }
        }
        switch distinct.count {
        case 0: return .none
        case 1: return .center(distinct[0].0.center)
        default: return .ambiguous(Self.ambiguityMessage(distinct.map { ($0.0.bundleIdentifier, $0.1) }))
        }
    }

    /// Why `current()` cannot answer outside a test's task, and the ways out.
    static func ambiguityMessage(_ installed: [(app: String, owner: Owner)]) -> String {
        let names = installed.prefix(4).map { app, owner -> String in
            switch owner {
            case .test(let key), .trait(let key): "\(app) in test \"\(key.name)\""
            case .process: "\(app) installed outside any test"
            }
        }
        let more = installed.count > 4 ? " and \(installed.count - 4) more" : ""
        return """
            Chime: UNUserNotificationCenter.current() was called outside every test's task (in a \
            DispatchQueue block, a Thread or Task.detached) while \(installed.count) tests have a \
            NotificationSimulator installed (\(names.joined(separator: "; "))\(more)), so it cannot tell \
            which test's center is meant; returning one would mix one test's notifications into \
            another's. Fix it in one of these ways: (1) take the center while still in the test's task \
            (`let center = UNUserNotificationCenter.current()`) and use that in the callback; (2) hop \
            with `Task { @MainActor in … }` instead of `DispatchQueue.main.async { … }`: a Task carries \
            the test's simulator along; (3) run such tests alone: \
            `@Suite(.notificationSimulator(bundleIdentifier: "…", exclusive: true))`.
            """
    }
}

/// Lets tests that use the `.notificationSimulator` trait run side by side (shared) and an
/// `exclusive` one run while no other such test does. First come, first served, so an exclusive
/// test is not starved.
actor SimulatorGate {
    static let shared = SimulatorGate()

    private var sharedHolders = 0
    private var exclusiveHeld = false
    private var waiting: [(exclusive: Bool, continuation: CheckedContinuation<Void, Never>)] = []

    func acquire(exclusive: Bool) async {
        if waiting.isEmpty && canGrant(exclusive: exclusive) {
            grant(exclusive: exclusive)
            return
        }
        await withCheckedContinuation { waiting.append((exclusive, $0)) }
    }

    func release(exclusive: Bool) {
        if exclusive { exclusiveHeld = false } else { sharedHolders -= 1 }
        while let next = waiting.first, canGrant(exclusive: next.exclusive) {
            waiting.removeFirst()
            grant(exclusive: next.exclusive)
            next.continuation.resume()
        }
    }

    private func canGrant(exclusive: Bool) -> Bool {
        exclusive ? !exclusiveHeld && sharedHolders == 0 : !exclusiveHeld
    }

    private func grant(exclusive: Bool) {
        if exclusive { exclusiveHeld = true } else { sharedHolders += 1 }
    }

    /// Runs `body` holding the gate.
    nonisolated func run(exclusive: Bool, _ body: @Sendable () async throws -> Void) async rethrows {
        await acquire(exclusive: exclusive)
        do {
            try await body()
        } catch {
            await release(exclusive: exclusive)
            throw error
        }
        await release(exclusive: exclusive)
    }
}
