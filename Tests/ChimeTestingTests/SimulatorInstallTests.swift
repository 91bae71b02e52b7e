import Chime
import Foundation
import TestThreads
import Testing

@testable import ChimeTesting

/// Asks the center for its pending identifiers through a completion handler, as app code does.
private func pendingIdentifiers(_ center: UNUserNotificationCenter) async -> [String] {
    await withCheckedContinuation { continuation in
        center.getPendingNotificationRequests { requests in continuation.resume(returning: requests.map(\.identifier)) }
    }
}

/// Adds a request through `current()` from wherever it is called.
private func addThroughCurrent(_ identifier: String, after seconds: TimeInterval) async throws {
    try await UNUserNotificationCenter.current().add(timed(identifier, after: seconds))
}

/// A delegate that schedules a follow-up through `current()` from its callback, and from a `Task`
/// the callback starts.
@MainActor
private final class FollowUp: UNUserNotificationCenterDelegate {
    var centers: [ObjectIdentifier] = []
    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
        centers.append(ObjectIdentifier(UNUserNotificationCenter.current()))
        let id = response.notification.request.identifier
        await Task { try? await addThroughCurrent("\(id)-again", after: 5) }.value
    }
}

/// `install()` and `current()`: each test's `current()` is its own simulator's center, wherever the
/// test's code runs. These tests run in parallel with every other simulator test in the process.
@Suite("NotificationSimulator.install", .testThreads)
struct SimulatorInstallTests {
    @Test("install makes current() return the simulator's center; a later install replaces it")
    func installReplaces() {
        let first = NotificationSimulator(bundleIdentifier: "com.example.first")
        first.install()
        #expect(UNUserNotificationCenter.current() === first.center)
        let second = NotificationSimulator(bundleIdentifier: "com.example.second")
        second.install()
        #expect(UNUserNotificationCenter.current() === second.center)
        #expect(UNUserNotificationCenter.current().bundleIdentifier == "com.example.second")
        #expect(NotificationSimulator.current === second)
        second.uninstall()
        first.install()
        #expect(UNUserNotificationCenter.current() === first.center)
    }

    @Test("app code using current() talks to the installed simulator")
    func appCodeUsesCurrent() async throws {
        let simulator = NotificationSimulator(bundleIdentifier: "com.example.app-code")
        simulator.install()
        let center = UNUserNotificationCenter.current()
        #expect(try await center.requestAuthorization(options: [.alert]))
        try await center.add(timed("from-app", after: 5))
        #expect(await simulator.pendingRequests.map(\.identifier) == ["from-app"])
        await simulator.advance(by: 5)
        #expect(await simulator.deliveredNotifications.map(\.request.identifier) == ["from-app"])
    }

    @Test(
        "each of 24 parallel cases sees only its own simulator: in Task {}, async let, task groups, completion handlers and delegate callbacks",
        arguments: 0..<24)
    @MainActor
    func parallelCases(index: Int) async throws {
        let simulator = NotificationSimulator(bundleIdentifier: "com.example.parallel-\(index)")
        simulator.install()
        #expect(try await UNUserNotificationCenter.current().requestAuthorization(options: [.alert]))
        let delegate = FollowUp()
        UNUserNotificationCenter.current().delegate = delegate

        try await Task { try await addThroughCurrent("task-\(index)", after: 1) }.value
        async let child: Void = addThroughCurrent("async-let-\(index)", after: 2)
        try await child
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await addThroughCurrent("group-\(index)", after: 3) }
            try await group.waitForAll()
        }
        let viaHandler = await withCheckedContinuation { continuation in
            UNUserNotificationCenter.current().getNotificationSettings { _ in
                continuation.resume(returning: UNUserNotificationCenter.current())
            }
        }
        #expect(viaHandler === simulator.center)
        #expect(
            await pendingIdentifiers(UNUserNotificationCenter.current())
                == ["task-\(index)", "async-let-\(index)", "group-\(index)"])

        await simulator.advance(by: 3)
        try await simulator.tap("task-\(index)")
        #expect(delegate.centers == [ObjectIdentifier(simulator.center)])
        #expect(await simulator.pendingRequests.map(\.identifier) == ["task-\(index)-again"])
        #expect(
            await simulator.deliveredNotifications.map(\.request.identifier).sorted() == [
                "async-let-\(index)", "group-\(index)",
            ])
    }

    @Test("nextTriggerDate answers from the installed simulator's clock and time zone")
    func nextTriggerDate() async throws {
        let simulator = NotificationSimulator(
            bundleIdentifier: "com.example.next", now: try simulatorDate("2026-06-01T10:00:00Z"),
            timeZone: TimeZone(identifier: "Europe/Berlin")!)
        simulator.install()
        var components = DateComponents()
        components.hour = 8
        components.minute = 30
        let daily = UNCalendarNotificationTrigger(dateMatching: components, repeats: true)
        #expect(daily.nextTriggerDate() == (try simulatorDate("2026-06-02T06:30:00Z")))
        #expect(
            UNTimeIntervalNotificationTrigger(timeInterval: 90, repeats: false).nextTriggerDate()
                == simulator.now.addingTimeInterval(90))
        await simulator.advance(by: 86_400)
        #expect(daily.nextTriggerDate() == (try simulatorDate("2026-06-03T06:30:00Z")))
        await simulator.setTimeZone(TimeZone(identifier: "America/New_York")!)
        #expect(
            daily.nextTriggerDate() == (try simulatorDate("2026-06-02T12:30:00Z")),
            "a floating trigger follows the new zone")
        var zoned = components
        zoned.timeZone = TimeZone(identifier: "Asia/Tokyo")!
        #expect(
            UNCalendarNotificationTrigger(dateMatching: zoned, repeats: false).nextTriggerDate()
                == (try simulatorDate("2026-06-02T23:30:00Z")))
    }

    @Test("outside every test's task, current() is the simulator while it is the only one installed")
    func detachedWithOneInstalled() async {
        // In a process of its own, so no other test's simulator is installed meanwhile.
        await #expect(processExitsWith: .success) {
            let simulator = NotificationSimulator(bundleIdentifier: "com.example.alone")
            simulator.install()
            let found = await Task.detached { UNUserNotificationCenter.current() }.value
            let onQueue = await withCheckedContinuation { continuation in
                DispatchQueue.global().async { continuation.resume(returning: UNUserNotificationCenter.current()) }
            }
            guard found === simulator.center, onQueue === simulator.center else { exit(1) }
        }
    }

    @Test("outside every test's task with two simulators installed, current() stops with a message naming the fixes")
    func ambiguous() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let mine = NotificationSimulator(bundleIdentifier: "com.example.mine")
            mine.install()
            // The exit test's process runs no other test: stand in for a second test running in
            // parallel with its own simulator, as the trait records one.
            let other = NotificationSimulator(bundleIdentifier: "com.example.other")
            SimulatorRegistry.shared.add(other, trait: nil)
            // A DispatchQueue block belongs to no test's task: it cannot be told which center is meant.
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async {
                    _ = UNUserNotificationCenter.current()
                    continuation.resume()
                }
            }
            _ = (mine, other)
        }
        let message = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(
            message.contains("UNUserNotificationCenter.current() was called outside every test's task"), "\(message)")
        #expect(message.contains("com.example.mine"), "\(message)")
        #expect(message.contains("com.example.other"), "\(message)")
        #expect(message.contains("let center = UNUserNotificationCenter.current()"), "\(message)")
        #expect(message.contains("Task { @MainActor in … }"), "\(message)")
        #expect(message.contains("exclusive: true"), "\(message)")
    }
}

/// The trait gives every test a fresh simulator that `current()` returns.
@Suite("The notificationSimulator trait", .testThreads, .notificationSimulator(bundleIdentifier: "com.example.trait"))
struct SimulatorTraitTests {
    @Test("current() is the trait's simulator, fresh for each test", arguments: ["a", "b", "c", "d"])
    func fresh(identifier: String) async throws {
        let simulator = NotificationSimulator.current
        #expect(UNUserNotificationCenter.current() === simulator.center)
        #expect(simulator.bundleIdentifier == "com.example.trait")
        #expect(await simulator.pendingRequests.isEmpty, "nothing left from another test")
        #expect(try await UNUserNotificationCenter.current().requestAuthorization(options: [.alert]))
        try await Task { try await addThroughCurrent(identifier, after: 1) }.value
        await simulator.advance(by: 1)
        #expect(await simulator.deliveredNotifications.map(\.request.identifier) == [identifier])
    }

    @Test(
        "an exclusive test runs while no other test with the trait does",
        .notificationSimulator(bundleIdentifier: "com.example.exclusive", exclusive: true))
    func exclusive() async throws {
        let simulator = NotificationSimulator.current
        #expect(simulator.bundleIdentifier == "com.example.exclusive", "the test's own trait wins over the suite's")
        #expect(try await UNUserNotificationCenter.current().requestAuthorization(options: [.alert]))
    }
}
