import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

@MainActor
final class SnoozeDelegate: UNUserNotificationCenterDelegate {
    var comments: [String] = []
    func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void
    ) {
        completionHandler([.banner, .sound])
    }
    func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping () -> Void
    ) {
        let request = response.notification.request
        if response.actionIdentifier == "snooze" {
            let content = request.content.mutableCopy() as! UNMutableNotificationContent
            content.body = "Snooze 5 Seconds"
            center.add(
                UNNotificationRequest(
                    identifier: request.identifier, content: content,
                    trigger: UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false)))
        }
        if let text = response as? UNTextInputNotificationResponse {
            comments.append(text.userText)
        }
        completionHandler()
    }
}

@Suite("Alarm flow through the simulator", .testThreads)
struct AlarmFlowTests {
    @Test("snooze brings the alarm back 5 s later")
    @MainActor
    func snooze() async throws {
        let simulator = NotificationSimulator(bundleIdentifier: "com.example.alarm")
        let center = simulator.center
        let delegate = SnoozeDelegate()
        center.delegate = delegate
        simulator.appState = .foreground
        #expect(try await center.requestAuthorization(options: [.alert, .sound]))
        let snooze = UNNotificationAction(identifier: "snooze", title: "Snooze 5 Sec", options: [])
        let comment = UNTextInputNotificationAction(
            identifier: "comment", title: "Add Comment", options: [],
            textInputButtonTitle: "Add", textInputPlaceholder: "Add Comment Here")
        center.setNotificationCategories([
            UNNotificationCategory(
                identifier: "alarm.category", actions: [snooze, comment],
                intentIdentifiers: [], options: [])
        ])
        let content = UNMutableNotificationContent()
        content.title = "Alarm"
        content.body = "First Alarm"
        content.sound = UNNotificationSound.default()
        content.categoryIdentifier = "alarm.category"
        try await center.add(
            UNNotificationRequest(
                identifier: "Alarm", content: content,
                trigger: UNTimeIntervalNotificationTrigger(timeInterval: 10, repeats: false)))
        await simulator.advance(by: 9)
        #expect(await simulator.deliveredNotifications.isEmpty)
        await simulator.advance(by: 1)
        #expect(await simulator.deliveredNotifications.map(\.request.identifier) == ["Alarm"])
        #expect(await simulator.presented.count == 1)
        try await simulator.perform("snooze", on: "Alarm")
        #expect(await simulator.pendingRequests.map(\.content.body) == ["Snooze 5 Seconds"])
        await simulator.advance(by: 5)
        let delivered = await simulator.deliveredNotifications
        #expect(delivered.first?.request.content.body == "Snooze 5 Seconds")
        try await simulator.reply("Call me", with: "comment", on: "Alarm")
        #expect(delegate.comments == ["Call me"])
        await #expect(throws: ChimeError.self) { try await simulator.tap("Alarm") }
    }
}
