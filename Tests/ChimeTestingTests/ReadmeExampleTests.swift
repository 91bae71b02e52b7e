import Chime
import ChimeTesting
import TestThreads
import Testing

// The README's porting example and its test, kept compiling and passing here.

final class ReadmeAlarm: UNUserNotificationCenterDelegate {
    let center = UNUserNotificationCenter.current()

    func start() async throws {
        center.delegate = self
        guard try await center.requestAuthorization(options: [.alert, .sound]) else { return }
        let snooze = UNNotificationAction(identifier: "snooze", title: "Snooze 5 Sec", options: [])
        center.setNotificationCategories([
            UNNotificationCategory(
                identifier: "alarm.category", actions: [snooze],
                intentIdentifiers: [], options: [])
        ])
        let content = UNMutableNotificationContent()
        content.title = "Alarm"
        content.sound = .default
        content.categoryIdentifier = "alarm.category"
        try await center.add(
            UNNotificationRequest(
                identifier: "Alarm", content: content,
                trigger: UNTimeIntervalNotificationTrigger(timeInterval: 10, repeats: false)))
    }

    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
        guard response.actionIdentifier == "snooze" else { return }
        let again = response.notification.request.content.mutableCopy() as! UNMutableNotificationContent
        try? await center.add(
            UNNotificationRequest(
                identifier: "Alarm", content: again,
                trigger: UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false)))
    }
}

@Suite("The README's example", .testThreads, .notificationSimulator(bundleIdentifier: "com.example.alarm"))
struct ReadmeExampleTests {
    @Test("snooze brings the alarm back, as the README says")
    @MainActor
    func snoozeBringsTheAlarmBack() async throws {
        let simulator = NotificationSimulator.current
        let alarm = ReadmeAlarm()
        try await alarm.start()
        await simulator.advance(by: 10)
        try await simulator.perform("snooze", on: "Alarm")
        #expect(await simulator.deliveredNotifications.isEmpty)
        await simulator.advance(by: 5)
        #expect(await simulator.deliveredNotifications.count == 1)
    }

    @Test("the same without the trait: install() at the top of the test")
    @MainActor
    func withInstall() async throws {
        let simulator = NotificationSimulator(bundleIdentifier: "com.example.alarm")
        simulator.install()
        let alarm = ReadmeAlarm()
        try await alarm.start()
        await simulator.advance(by: 10)
        try await simulator.perform("snooze", on: "Alarm")
        await simulator.advance(by: 5)
        #expect(await simulator.deliveredNotifications.count == 1)
    }
}
