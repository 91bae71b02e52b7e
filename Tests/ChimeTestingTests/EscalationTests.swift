import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// Escalation — repeat until acknowledged, a Chime addition — from app code, in virtual time: the
/// notification is presented again every interval until the user answers it or the window ends;
/// the receipt says which.
@Suite("Escalation in the simulator", .testThreads)
struct EscalationTests {
    static func request(_ identifier: String, every: TimeInterval, for duration: TimeInterval) -> UNNotificationRequest
    {
        let content = UNMutableNotificationContent()
        content.title = identifier
        content.sound = .default
        return UNNotificationRequest(
            identifier: identifier, content: content, trigger: nil,
            escalation: NotificationEscalation(every: every, for: duration))
    }

    @Test(
        "'ring every minute until I answer, for half an hour': presented again each minute, answered at 4.5 min; the other expires"
    )
    func ringsUntilAnswered() async throws {
        let start = try simulatorDate("2027-06-01T07:00:00Z")
        let simulator = try await grantedSimulator(now: start)
        let center = simulator.center
        try await center.add(Self.request("alarm", every: 60, for: 1800))
        try await center.add(Self.request("nag", every: 600, for: 1800))
        #expect(await simulator.pendingRequests.isEmpty)
        #expect(
            await simulator.deliveredNotifications.first { $0.request.identifier == "alarm" }?.request.escalation
                == NotificationEscalation(every: 60, for: 1800))

        await simulator.advance(by: 270)
        #expect(await simulator.realerted.filter { $0.identifier == "alarm" }.map(\.alert) == [2, 3, 4, 5])
        try await simulator.tap("alarm")
        let receipt = try #require(try await simulator.receipt(for: "alarm"))
        #expect(receipt.acknowledged && receipt.acknowledgedAt == start.addingTimeInterval(270))
        #expect(receipt.actionIdentifier == UNNotificationDefaultActionIdentifier && receipt.surface == "simulator")
        #expect(receipt.alerts == 5 && receipt.lastAlertedAt == start.addingTimeInterval(240) && !receipt.expired)

        await simulator.advance(by: 3600)
        #expect(await simulator.realerted.filter { $0.identifier == "alarm" }.count == 4, "nothing after the answer")
        #expect(
            await simulator.realerted.filter { $0.identifier == "nag" }.map { $0.date.timeIntervalSince(start) } == [
                600, 1200,
            ])
        let nag = try #require(try await simulator.receipt(for: "nag"))
        #expect(nag.expired && !nag.acknowledged && nag.alerts == 3 && nag.nextAlertAt == nil)
        // Every alert was presented: two deliveries, four plus two again.
        #expect(await simulator.presented.count == 8)
        #expect(await simulator.deliveredNotifications.map(\.request.identifier) == ["nag"])
    }

    @Test("an escalation the service's limits do not allow is refused naming the field")
    func refused() async throws {
        let simulator = try await grantedSimulator()
        for (every, duration, field) in [
            (5.0, 600.0, "escalateEvery"), (60, 100_000, "escalateFor"), (60, 30, "escalateFor"),
        ] {
            do {
                try await simulator.center.add(Self.request("bad", every: every, for: duration))
                Issue.record("every \(every) for \(duration) was accepted")
            } catch let error as ChimeError {
                #expect(error.field == field, "\(error.message)")
            }
        }
        #expect(await simulator.deliveredNotifications.isEmpty)
    }
}
