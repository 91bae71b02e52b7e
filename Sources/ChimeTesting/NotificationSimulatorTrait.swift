import Chime
import Foundation
import Testing

/// Gives each test (each case of a parameterized test) a fresh ``NotificationSimulator`` that
/// `UNUserNotificationCenter.current()` returns while it runs — in the test, in everything it
/// starts (`async let`, task groups, `Task {}`) and in the center's callbacks. Tests with the trait
/// run in parallel, as Swift Testing runs them, and never see each other's notifications.
///
/// ```swift
/// @Suite(.notificationSimulator(bundleIdentifier: "com.example.alarm"))
/// struct AlarmTests {
///     @Test func snoozeBringsTheAlarmBack() async throws {
///         let simulator = NotificationSimulator.current
///         try await Alarm().start()               // uses UNUserNotificationCenter.current()
///         await simulator.advance(by: 10)
///         try await simulator.perform("snooze", on: "Alarm")
///         await simulator.advance(by: 5)
///         #expect(await simulator.deliveredNotifications.count == 1)
///     }
/// }
/// ```
///
/// Use it on a suite (every test in it, and in nested suites) or on one `@Test`.
public struct NotificationSimulatorTrait: SuiteTrait, TestTrait, TestScoping {
    public let bundleIdentifier: String
    public let now: Date
    public let timeZone: TimeZone
    public let exclusive: Bool
    /// Tells this trait apart from an equal one applied elsewhere (the nearest one wins).
    private let id = UUID()

    /// Applies to every test in the suite, each with its own simulator.
    public var isRecursive: Bool { true }

    /// A scope for each test case; none for a suite itself (its tests get theirs). When a test has
    /// the trait itself and from its suite, its own (the last) wins.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        guard !test.isSuite, testCase != nil,
            let nearest = test.traits.last(where: { $0 is NotificationSimulatorTrait }) as? NotificationSimulatorTrait,
            nearest.id == id
        else { return nil }
        return self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        // Applied twice to one test (the same trait value on a suite and a test): one scope.
        if Self.inScope { return try await function() }
        try await SimulatorGate.shared.run(exclusive: exclusive) {
            let simulator = NotificationSimulator(bundleIdentifier: bundleIdentifier, now: now, timeZone: timeZone)
            let registry = SimulatorRegistry.shared
            registry.add(simulator, trait: SimulatorRegistry.TestKey.current)
            defer { registry.remove(simulator) }
            try await SimulatorRegistry.$bound.withValue(simulator) {
                try await Self.$inScope.withValue(true) { try await function() }
            }
        }
    }
}

extension NotificationSimulatorTrait {
    @TaskLocal private static var inScope = false
}

extension Trait where Self == NotificationSimulatorTrait {
    /// A fresh ``NotificationSimulator`` for each test; read it with ``NotificationSimulator/current``.
    ///
    /// - Parameters:
    ///   - bundleIdentifier: the app under test.
    ///   - now: the simulator's virtual date when the test starts.
    ///   - timeZone: the device's time zone.
    ///   - exclusive: run each test while no other test with this trait runs. Only for code that
    ///     calls `UNUserNotificationCenter.current()` outside the test's task (a
    ///     `DispatchQueue.main.async` block, a `Thread`, `Task.detached`), which cannot be told apart
    ///     from another test's code otherwise. Other tests keep running in parallel among themselves.
    public static func notificationSimulator(
        bundleIdentifier: String = "com.example.app",
        now: Date = Date(timeIntervalSince1970: 1_780_000_000),
        timeZone: TimeZone = TimeZone(identifier: "UTC")!,
        exclusive: Bool = false
    ) -> Self {
        NotificationSimulatorTrait(
            bundleIdentifier: bundleIdentifier, now: now, timeZone: timeZone, exclusive: exclusive)
    }
}
