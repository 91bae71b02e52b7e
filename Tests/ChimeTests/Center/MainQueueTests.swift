import Chime
import ChimeTesting
import Dispatch
import Foundation
import TestThreads
import Testing

/// App code hops to the main queue from completion handlers to update its state, as on iOS; the
/// main queue must be served while Swift Testing runs tests (the issue saw such a hop not run
/// within 5 s while a test polled for it).
@Suite("Completion handlers that hop to DispatchQueue.main", .testThreads, .timeLimit(.minutes(1)))
struct MainQueueTests {
    /// (Where it runs is not asserted: a process whose main thread called `dispatch_main()` — as
    /// an async `main` and the test runner do — has libdispatch serve the main queue from another
    /// thread on Linux, so `Thread.isMainThread` is false there, unlike on iOS.)
    @Test("getNotificationSettings → DispatchQueue.main.async runs, from a test that is not on the main actor")
    func settingsThenMain() async throws {
        let simulator = try await authorizedSimulator([.alert])
        let center = simulator.center
        let status = await withCheckedContinuation {
            (continuation: CheckedContinuation<UNAuthorizationStatus, Never>) in
            center.getNotificationSettings { settings in
                DispatchQueue.main.async { continuation.resume(returning: settings.authorizationStatus) }
            }
        }
        #expect(status == .authorized)
    }

    @Test("a delegate-style state object updated on the main queue is seen by a main-actor test", arguments: 0..<8)
    @MainActor func mainActorTestSeesMainQueueUpdate(round: Int) async throws {
        let simulator = try await authorizedSimulator([.alert])
        let center = simulator.center
        try await center.add(
            UNNotificationRequest(identifier: "r\(round)", content: UNMutableNotificationContent(), trigger: nil))
        let count = await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
            center.getDeliveredNotifications { delivered in
                DispatchQueue.main.async { continuation.resume(returning: delivered.count) }
            }
        }
        #expect(count == 1)
    }
}
