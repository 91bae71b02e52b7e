import Chime
import ChimeTesting
import Dispatch
import Foundation
import Testing

/// App code hops to the main queue from completion handlers to update its state, as on iOS; the
/// main queue must be served while Swift Testing runs tests (the issue saw such a hop not run
/// within 5 s while a test polled for it).
@Suite("Completion handlers that hop to DispatchQueue.main", .timeLimit(.minutes(1)))
struct MainQueueTests {
    @Test("getNotificationSettings → DispatchQueue.main.async runs on the main thread, from a test that is not on the main actor")
    func settingsThenMain() async throws {
        let simulator = try await authorizedSimulator([.alert])
        let center = simulator.center
        let (status, onMain) = await withCheckedContinuation { (continuation: CheckedContinuation<(UNAuthorizationStatus, Bool), Never>) in
            center.getNotificationSettings { settings in
                DispatchQueue.main.async { continuation.resume(returning: (settings.authorizationStatus, Thread.isMainThread)) }
            }
        }
        #expect(status == .authorized)
        #expect(onMain)
    }

    @Test("a delegate-style state object updated on the main queue is seen by a main-actor test", arguments: 0..<8)
    @MainActor func mainActorTestSeesMainQueueUpdate(round: Int) async throws {
        let simulator = try await authorizedSimulator([.alert])
        let center = simulator.center
        try await center.add(UNNotificationRequest(identifier: "r\(round)", content: UNMutableNotificationContent(), trigger: nil))
        let count = await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
            center.getDeliveredNotifications { delivered in
                DispatchQueue.main.async { continuation.resume(returning: delivered.count) }
            }
        }
        #expect(count == 1)
    }
}
