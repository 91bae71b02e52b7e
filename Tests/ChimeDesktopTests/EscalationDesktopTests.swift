import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeDesktop

/// Escalation (repeat until acknowledged, a Chime addition) on the desktop, end to end: an engine
/// alerting again on the real clock, the desktop surface, and dunst on a private session bus, with
/// rules that put each pop-up's urgency in the text dunst keeps.
@Suite("Escalation on dunst", .testThreads)
struct EscalationDesktopTests {
    /// The pop-ups shown for `identifier` so far, in order.
    static func shown(_ identifier: String, in events: SurfaceEvents) -> [(id: UInt32, request: NotifyRequest)] {
        events.all.compactMap { event in
            if case .shown(_, identifier, let id, let request) = event { return (id, request) }
            return nil
        }
    }

    @Test(
        "each alert again replaces the pop-up with urgency critical, as dunst shows it; closing it there answers it, on the desktop"
    )
    func realertIsCritical() async throws {
        try await withTestDesktop { desktop in
            try await desktop.startDunst(markUrgency: true)
            // Alerts a second apart (the default shortest is 10 s), for an hour unless answered.
            var configuration = NotificationEngine.Configuration()
            configuration.escalationLimits = EscalationLimits(minimumInterval: 1, maximumDuration: 3600)
            let fixture = try await DesktopFixture.make(on: desktop, engineConfiguration: configuration)
            _ = try await fixture.events.connected()
            fixture.engine.startScheduler()
            try await fixture.run {
                var content = NotificationContent(title: "Wake up", body: "The alarm rings until you answer")
                content.categoryIdentifier = "alarm"
                content.sound = .default
                let request = NotificationRequest(
                    identifier: "wake", content: content, escalation: NotificationEscalation(every: 1, for: 3600))
                _ = try await fixture.engine.add([request], app: DesktopFixture.app)

                // The first alert at its level's urgency (active: normal); each alert again
                // critical, in place of the pop-up on screen.
                try await waitUntil("two alerts again") { Self.shown("wake", in: fixture.events).count >= 3 }
                let popUps = Self.shown("wake", in: fixture.events)
                #expect(popUps[0].request.hints["urgency"] == .byte(1) && popUps[0].request.replacesID == 0)
                for again in popUps.dropFirst() {
                    #expect(again.request.hints["urgency"] == .byte(2))
                    #expect(again.id == popUps[0].id && again.request.replacesID == popUps[0].id)
                }
                #expect(try await desktop.dunstCount().displayed == 1)

                // Closed on the desktop, as a user closes it: dunst keeps what it showed, critical
                // (an alert again may come between the close and the answer: it is critical too);
                // the dismissal is the answer (the receipt says where), and the app hears of it
                // (its category asks for dismissals).
                _ = try await desktop.dunstctl("close")
                let (answer, response) = try await fixture.events.answered()
                #expect(answer.notification == "wake" && answer.action == UNNotificationDismissActionIdentifier)
                #expect(response?.actionIdentifier == UNNotificationDismissActionIdentifier)
                let receipt = try #require(
                    try await fixture.engine.receipt(app: DesktopFixture.app, notification: "wake"))
                #expect(
                    receipt.acknowledged && receipt.surface == "desktop"
                        && receipt.actionIdentifier == UNNotificationDismissActionIdentifier)
                #expect(receipt.alerts >= 3 && receipt.nextAlertAt == nil && !receipt.expired, "\(receipt)")
                await fixture.engine.hub.settle()
                try await waitUntil("no pop-up left") { try await desktop.dunstCount().displayed == 0 }
                #expect(Self.shown("wake", in: fixture.events).count == receipt.alerts, "one pop-up for each alert")
                let history = try await desktop.dunstHistory().compactMap { $0["message"] as? String }
                #expect(!history.isEmpty && history.allSatisfy { $0 == "CRITICAL: Wake up" }, "\(history)")
            }
        }
    }
}
