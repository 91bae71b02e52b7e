import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// Request expiry (a Chime addition) from app code, in virtual time: a request due after its
/// expiration is never shown and is listed by the simulator as expired; one due in time is shown.
@Suite("Request expiry in the simulator", .testThreads)
struct ExpiryTests {
    static func request(
        _ identifier: String, after seconds: TimeInterval, repeats: Bool = false,
        expiration: NotificationDeadline?
    ) -> UNNotificationRequest {
        let content = UNMutableNotificationContent()
        content.title = identifier
        return UNNotificationRequest(
            identifier: identifier, content: content,
            trigger: UNTimeIntervalNotificationTrigger(timeInterval: seconds, repeats: repeats), expiration: expiration)
    }

    @Test(
        "a ride that cannot come within ten minutes expires; one that can is shown; an hourly reminder stops at its expiration"
    )
    func expiresInVirtualTime() async throws {
        let start = try simulatorDate("2027-06-01T12:00:00Z")
        let simulator = try await grantedSimulator(now: start)
        let center = simulator.center
        try await center.add(Self.request("late-ride", after: 900, expiration: .after(600)))
        try await center.add(Self.request("ride", after: 300, expiration: .after(600)))
        try await center.add(
            Self.request("hourly", after: 3600, repeats: true, expiration: .at(start.addingTimeInterval(2.5 * 3600))))
        try await center.add(Self.request("plain", after: 60, expiration: nil))

        // Read back, a duration is the date it made at the add.
        let pending = await simulator.pendingRequests
        #expect(pending.first { $0.identifier == "late-ride" }?.expiration == .at(start.addingTimeInterval(600)))
        #expect(pending.first { $0.identifier == "plain" }?.expiration == nil)

        await simulator.advance(by: 4 * 3600)
        #expect(
            await simulator.presented.map(\.notification.request.identifier) == ["plain", "ride", "hourly", "hourly"])
        let expired = await simulator.expired
        #expect(expired.map(\.request.identifier) == ["late-ride", "hourly"])
        #expect(expired.map(\.dueDate) == [start.addingTimeInterval(900), start.addingTimeInterval(3 * 3600)])
        #expect(expired.first?.request.expiration == .at(start.addingTimeInterval(600)))
        #expect(await simulator.pendingRequests.isEmpty)
        #expect(
            await simulator.deliveredNotifications.map(\.request.identifier).sorted() == ["hourly", "plain", "ride"])
        // The delivered notification keeps its request's expiration.
        #expect(
            await simulator.deliveredNotifications.first { $0.request.identifier == "ride" }?.request.expiration
                == .at(start.addingTimeInterval(600)))
    }

    @Test("a bad expiration is refused naming it")
    func refused() async throws {
        let simulator = try await grantedSimulator()
        await #expect(throws: ChimeError.self) {
            try await simulator.center.add(Self.request("neg", after: 60, expiration: .after(-1)))
        }
        do {
            try await simulator.center.add(Self.request("nan", after: 60, expiration: .after(.nan)))
            Issue.record("a NaN expiration was accepted")
        } catch let error as ChimeError {
            #expect(error.field == "expiresIn")
            #expect(error.message.contains("give 0 or more seconds"))
        }
        #expect(await simulator.pendingRequests.isEmpty)
    }
}
