import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// Auto-dismissal (a Chime addition) from app code, in virtual time: a delivered notification is
/// gone from the delivered list at its end of relevance, and the simulator lists it as
/// auto-dismissed.
@Suite("Auto-dismissal in the simulator", .testThreads)
struct AutoDismissTests {
    static func request(
        _ identifier: String, after seconds: TimeInterval, repeats: Bool = false,
        autoDismiss: NotificationDeadline?
    ) -> UNNotificationRequest {
        let content = UNMutableNotificationContent()
        content.title = identifier
        return UNNotificationRequest(
            identifier: identifier, content: content,
            trigger: UNTimeIntervalNotificationTrigger(timeInterval: seconds, repeats: repeats),
            autoDismiss: autoDismiss)
    }

    @Test(
        "the bus notification is shown at +5 min and gone at +15 min; a plain one stays; each hourly occurrence lasts half an hour"
    )
    func dismissesInVirtualTime() async throws {
        let start = try simulatorDate("2027-06-01T12:00:00Z")
        let simulator = try await grantedSimulator(now: start)
        let center = simulator.center
        try await center.add(Self.request("bus", after: 300, autoDismiss: .after(600)))
        try await center.add(Self.request("plain", after: 60, autoDismiss: nil))
        try await center.add(Self.request("hourly", after: 3600, repeats: true, autoDismiss: .after(1800)))
        #expect(await simulator.pendingRequests.first { $0.identifier == "bus" }?.autoDismiss == .after(600))

        await simulator.advance(by: 600)
        let shown = await simulator.deliveredNotifications
        #expect(shown.map(\.request.identifier) == ["bus", "plain"])
        #expect(
            shown.first?.request.autoDismiss == .at(start.addingTimeInterval(900)), "the date it made at the delivery")
        #expect(await simulator.autoDismissed.isEmpty)

        await simulator.advance(by: 300)
        #expect(await simulator.deliveredNotifications.map(\.request.identifier) == ["plain"])
        #expect(await simulator.autoDismissed.map(\.identifier) == ["bus"])
        #expect(await simulator.autoDismissed.map(\.date) == [start.addingTimeInterval(900)])

        await simulator.advance(to: start.addingTimeInterval(3600 + 1799))
        #expect(await simulator.deliveredNotifications.map(\.request.identifier) == ["hourly", "plain"])
        await simulator.advance(to: start.addingTimeInterval(2 * 3600 + 60))
        #expect(await simulator.autoDismissed.map(\.identifier) == ["bus", "hourly"])
        #expect(
            await simulator.deliveredNotifications.map(\.request.identifier) == ["hourly", "plain"],
            "the second occurrence")
        #expect(
            await simulator.presented.map(\.notification.request.identifier) == ["plain", "bus", "hourly", "hourly"])
    }

    @Test("a bad auto-dismissal is refused naming it")
    func refused() async throws {
        let simulator = try await grantedSimulator()
        for (deadline, field, says) in [
            (NotificationDeadline.after(0), "dismissIn", "more than 0 seconds"), (.after(-5), "dismissIn", "0 or more"),
            (.at(Date(timeIntervalSince1970: -70_000_000_000)), "dismissAt", "years 0001-9999"),
        ] {
            do {
                try await simulator.center.add(Self.request("bad", after: 60, autoDismiss: deadline))
                Issue.record("\(deadline) was accepted")
            } catch let error as ChimeError {
                #expect(error.field == field)
                #expect(error.message.contains(says), "\(error.message)")
            }
        }
        #expect(await simulator.pendingRequests.isEmpty)
    }
}
