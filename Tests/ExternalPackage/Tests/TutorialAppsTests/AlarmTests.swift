import Chime
import ChimeTesting
import Foundation
import Testing
import TutorialApps

/// Loads the alarm as its view controller would and waits until it has the user's answer. On the main
/// actor: a class that adopts UNUserNotificationCenterDelegate in its declaration is main-actor
/// isolated in Chime (see docs/differences-from-apple.md).
@MainActor
func loadedAlarm() async -> AlarmController {
    let alarm = AlarmController()
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in alarm.viewDidLoad { done.resume() } }
    return alarm
}

@Suite("The alarm, each test with the trait's simulator", .notificationSimulator(bundleIdentifier: "com.example.alarm"))
@MainActor
struct AlarmTests {
    @Test("Start rings the alarm 10 s later, with its sound and category")
    func rings() async throws {
        let simulator = NotificationSimulator.current
        let alarm = await loadedAlarm()
        #expect(alarm.isGrantedAccess)
        alarm.startButton()
        await simulator.advance(by: 9.9)
        #expect(await simulator.deliveredNotifications.isEmpty)
        await simulator.advance(by: 0.1)
        let alarmNotification = try #require(await simulator.deliveredNotifications.first)
        #expect(alarmNotification.request.content.title == "Alarm")
        #expect(alarmNotification.request.content.sound == .default)
        #expect(alarmNotification.request.content.categoryIdentifier == "alarm.category")
    }

    @Test("Snooze brings it back 5 s later, as often as asked")
    func snooze() async throws {
        let simulator = NotificationSimulator.current
        let alarm = await loadedAlarm()
        alarm.startButton()
        await simulator.advance(by: 10)
        for _ in 1...3 {
            try await simulator.perform("snooze", on: "Alarm")
            await simulator.advance(by: 5)
            #expect(await simulator.deliveredNotifications.map(\.request.content.body) == ["Snooze 5 Seconds"])
        }
    }

    @Test("a typed comment shows on the label and becomes the next alarm's body")
    func comment() async throws {
        let simulator = NotificationSimulator.current
        let alarm = await loadedAlarm()
        alarm.startButton()
        await simulator.advance(by: 10)
        try await simulator.reply("Bring the cake", with: "comment", on: "Alarm")
        #expect(alarm.commentsLabelText == "Bring the cake")
        await simulator.advance(by: 10)
        #expect(await simulator.deliveredNotifications.first?.request.content.body == "Bring the cake")
    }

    @Test("without permission Start does nothing")
    func denied() async throws {
        let simulator = NotificationSimulator.current
        simulator.authorizationAnswer = .deny
        let alarm = await loadedAlarm()
        #expect(!alarm.isGrantedAccess)
        alarm.startButton()
        #expect(await simulator.pendingRequests.isEmpty)
    }

    @Test("in front, willPresent shows it as a banner in the list, with sound")
    func inFront() async throws {
        let simulator = NotificationSimulator.current
        simulator.appState = .foreground
        let alarm = await loadedAlarm()
        alarm.startButton()
        await simulator.advance(by: 10)
        #expect(await simulator.presented.map(\.options) == [[.banner, .list, .sound]])
    }
}

/// The README's way: a simulator made and installed at the top of each test, no trait.
@Suite("The alarm, each test installing its own simulator")
@MainActor
struct AlarmWithInstallTests {
    func installed() -> NotificationSimulator {
        let simulator = NotificationSimulator(bundleIdentifier: "com.example.alarm")
        simulator.install()
        return simulator
    }

    @Test("the alarm is delivered dated exactly 10 s after Start")
    func dated() async throws {
        let simulator = installed()
        let start = simulator.now
        let alarm = await loadedAlarm()
        alarm.startButton()
        await simulator.advance(by: 60)
        #expect(await simulator.deliveredNotifications.first?.date == start.addingTimeInterval(10))
    }

    @Test("a pending alarm's nextTriggerDate is now + 10 s, as iOS answers; scheduledDate is its real fire date")
    func nextTriggerDate() async throws {
        let simulator = installed()
        let alarm = await loadedAlarm()
        alarm.startButton()
        let start = simulator.now
        await simulator.advance(by: 4)
        let trigger = try #require(await simulator.pendingRequests.first?.trigger as? UNTimeIntervalNotificationTrigger)
        #expect(
            trigger.nextTriggerDate() == start.addingTimeInterval(4 + 10),
            "iOS's quirk: whenever asked, now + the interval")
        #expect(trigger.scheduledDate == start.addingTimeInterval(10), "when it will really fire")
    }

    @Test("snooze then comment: the comment keeps the snoozed alarm's trigger")
    func snoozeThenComment() async throws {
        let simulator = installed()
        let alarm = await loadedAlarm()
        alarm.startButton()
        await simulator.advance(by: 10)
        try await simulator.perform("snooze", on: "Alarm")
        await simulator.advance(by: 5)
        try await simulator.reply("Later", with: "comment", on: "Alarm")
        let pending = try #require(await simulator.pendingRequests.first)
        #expect((pending.trigger as? UNTimeIntervalNotificationTrigger)?.timeInterval == 5)
        #expect(pending.content.body == "Later")
    }

    @Test("Start twice keeps one alarm: the same identifier replaces the pending one")
    func startTwice() async throws {
        let simulator = installed()
        let alarm = await loadedAlarm()
        alarm.startButton()
        await simulator.advance(by: 5)
        alarm.startButton()
        #expect(await simulator.pendingRequests.count == 1)
        await simulator.advance(by: 5)
        #expect(await simulator.deliveredNotifications.isEmpty, "restarted: 10 s from the second press")
        await simulator.advance(by: 5)
        #expect(await simulator.deliveredNotifications.count == 1)
    }

    @Test("dismissing the alarm goes unheard: its category has no custom dismiss action")
    func dismiss() async throws {
        let simulator = installed()
        let alarm = await loadedAlarm()
        alarm.startButton()
        await simulator.advance(by: 10)
        try await simulator.dismiss("Alarm")
        #expect(await simulator.deliveredNotifications.isEmpty)
        #expect(await simulator.pendingRequests.isEmpty)
        #expect(alarm.commentsLabelText.isEmpty)
    }
}
