import Chime
import ChimeTesting
import ExampleApps
import Foundation
import TestThreads
import Testing

/// The four tutorial apps, driven through the simulator. They call `UNUserNotificationCenter.current()`,
/// so every test installs a simulator (for itself: the tests run in parallel).
@Suite("Tutorial apps through the simulator", .testThreads)
@MainActor
struct ExampleFlowTests {
    static let start = Date(timeIntervalSince1970: 1_780_000_000)

    func makeSimulator(_ app: String, timeZone: TimeZone = TimeZone(identifier: "Europe/Berlin")!)
        -> NotificationSimulator
    {
        let simulator = NotificationSimulator(bundleIdentifier: app, now: Self.start, timeZone: timeZone)
        simulator.install()
        return simulator
    }

    // MARK: - Alarm

    func loadedAlarm(_ simulator: NotificationSimulator) async -> AlarmApp {
        let app = AlarmApp()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in app.load { done.resume() } }
        return app
    }

    @Test("the alarm rings after 10 s with sound, and snooze brings it back 5 s later, every time")
    func snoozeLoop() async throws {
        let simulator = makeSimulator("com.example.alarm")
        simulator.appState = .foreground
        let app = await loadedAlarm(simulator)
        #expect(app.isGrantedAccess)
        app.start()

        await simulator.advance(by: 9)
        #expect(await simulator.deliveredNotifications.isEmpty)
        await simulator.advance(by: 1)
        let first = try #require(await simulator.presented.last)
        #expect(first.notification.request.content.title == "Alarm")
        #expect(first.notification.request.content.body == "First Alarm")
        #expect(first.options.contains(.sound) && first.options.contains(.banner))

        for round in 1...3 {
            try await simulator.perform("snooze", on: "Alarm")
            #expect(await simulator.deliveredNotifications.isEmpty, "round \(round): snoozing takes the alarm away")
            await simulator.advance(by: 4)
            #expect(await simulator.deliveredNotifications.isEmpty, "round \(round): not back before 5 s")
            await simulator.advance(by: 1)
            let again = try #require(await simulator.deliveredNotifications.first)
            #expect(again.request.identifier == "Alarm")
            #expect(again.request.content.body == "Snooze 5 Seconds")
            #expect(again.request.content.title == "Alarm")
            #expect(again.date == Self.start.addingTimeInterval(10 + 5 * Double(round)))
        }
        #expect(await simulator.presented.count == 4)
    }

    @Test("a typed comment becomes the body of the next alarm and the label's text")
    func commentBecomesBody() async throws {
        let simulator = makeSimulator("com.example.alarm")
        simulator.appState = .foreground
        let app = await loadedAlarm(simulator)
        app.start()
        await simulator.advance(by: 10)

        try await simulator.reply("Take the cake out", with: "comment", on: "Alarm")
        #expect(app.commentsLabelText == "Take the cake out")
        let pending = try #require(await simulator.pendingRequests.first)
        #expect(pending.content.body == "Take the cake out")
        #expect((pending.trigger as? UNTimeIntervalNotificationTrigger)?.timeInterval == 10)

        await simulator.advance(by: 10)
        #expect(await simulator.deliveredNotifications.first?.request.content.body == "Take the cake out")
    }

    @Test("without permission the Start button schedules nothing")
    func denied() async {
        let simulator = makeSimulator("com.example.alarm")
        simulator.authorizationAnswer = .deny
        let app = await loadedAlarm(simulator)
        #expect(!app.isGrantedAccess)
        app.start()
        #expect(await simulator.pendingRequests.isEmpty)
    }

    // MARK: - Drinking reminder

    @Test("Done and Not thirsty are counted")
    func drinkingActions() async throws {
        let simulator = makeSimulator("com.example.drinking")
        let app = DrinkingReminderApp()
        app.launch()
        app.scheduleReminder(in: 60, identifier: "morning")
        app.scheduleReminder(in: 120, identifier: "noon")
        await simulator.advance(by: 120)
        let shown = await simulator.presented.map(\.notification.request.content.title)
        #expect(shown == ["Stay hydrated", "Stay hydrated"])

        try await simulator.perform("drinkingReminder.doneAction", on: "morning")
        try await simulator.perform("drinkingReminder.notThirstyAction", on: "noon")
        #expect(app.glassesDrunk == 1)
        #expect(app.timesNotThirsty == 1)
        #expect(app.log.map(\.kind) == [.drank, .notThirsty])
        #expect(await simulator.deliveredNotifications.isEmpty)
    }

    @Test("dismissing reaches the app only because the category has customDismissAction")
    func dismissNeedsCustomDismissAction() async throws {
        let simulator = makeSimulator("com.example.drinking")
        let app = DrinkingReminderApp()
        app.launch()
        app.scheduleReminder(in: 60, identifier: "one")
        await simulator.advance(by: 60)
        try await simulator.dismiss("one")
        #expect(app.timesDismissed == 1)

        // The same category without the option: the dismissal goes unheard.
        let done = UNNotificationAction(identifier: "drinkingReminder.doneAction", title: "Done", options: [])
        simulator.center.setNotificationCategories([
            UNNotificationCategory(
                identifier: DrinkingReminderApp.categoryIdentifier, actions: [done], intentIdentifiers: [], options: [])
        ])
        app.scheduleReminder(in: 60, identifier: "two")
        await simulator.advance(by: 60)
        try await simulator.dismiss("two")
        #expect(app.timesDismissed == 1)
        #expect(app.log.count == 1)
        #expect(await simulator.deliveredNotifications.isEmpty, "the notification is gone all the same")
    }

    @Test("the reminder sent as an APNs payload shows and its buttons work")
    func drinkingFromPush() async throws {
        let simulator = makeSimulator("com.example.drinking")
        simulator.appState = .foreground
        let app = DrinkingReminderApp()
        app.launch()
        try await simulator.push(DrinkingReminderApp.remotePayload, identifier: "remote")

        let delivered = try #require(await simulator.deliveredNotifications.first)
        #expect(delivered.request.content.title == "Stay hydrated")
        #expect(delivered.request.content.body == "It's time for a glass of water")
        #expect(delivered.request.content.categoryIdentifier == "drinkingReminderCategory")
        #expect(delivered.request.content.sound != nil)
        #expect(delivered.request.content.userInfo["glasses"] as? Int == 8)
        #expect(delivered.request.trigger is UNPushNotificationTrigger)
        #expect(await simulator.presented.first?.options.contains(.sound) == true)

        try await simulator.perform("drinkingReminder.doneAction", on: "remote")
        #expect(app.glassesDrunk == 1)
        await #expect(throws: (any Error).self) { try await simulator.perform("snooze", on: "remote") }
    }

    @Test("answers given while the log cannot be written wait in the outbox and arrive in order")
    func answersWaitWhileLocked() async throws {
        let simulator = makeSimulator("com.example.drinking")
        let app = DrinkingReminderApp()
        app.launch()
        app.protectedDataWillBecomeUnavailable()
        try await simulator.push(DrinkingReminderApp.remotePayload, identifier: "a")
        try await simulator.push(DrinkingReminderApp.remotePayload, identifier: "b")
        try await simulator.perform("drinkingReminder.notThirstyAction", on: "a")
        try await simulator.perform("drinkingReminder.doneAction", on: "b")
        #expect(app.log.isEmpty)

        app.protectedDataDidBecomeAvailable()
        await simulator.advance(by: 0)
        #expect(app.log.map(\.kind) == [.notThirsty, .drank])
        // Handled once: nothing comes twice.
        await simulator.advance(by: 60)
        #expect(app.log.count == 2)
    }

    @Test("a new app instance with the same log file continues the count")
    func logSurvivesRestart() async throws {
        let simulator = makeSimulator("com.example.drinking")
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("drink-log-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        let app = DrinkingReminderApp(logURL: url)
        app.launch()
        try await simulator.push(DrinkingReminderApp.remotePayload, identifier: "a")
        try await simulator.perform("drinkingReminder.doneAction", on: "a")
        #expect(DrinkingReminderApp(logURL: url).glassesDrunk == 1)
    }

    // MARK: - Show me

    @Test("Show me reveals the hidden text from userInfo 3 s later, without the button")
    func showMeReveal() async throws {
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        let simulator = makeSimulator("com.example.showme", timeZone: berlin)
        simulator.appState = .foreground
        let app = ShowMeApp()
        app.now = { simulator.now }
        app.calendar.timeZone = berlin
        var scheduled: [(String, Date?)] = []
        app.onScheduled = { scheduled.append(($0, $1)) }

        app.showNotification(
            with: ("Capital of Australia?", "Canberra"), showBody: false, withAction: true,
            atDate: Self.start.addingTimeInterval(90))
        let pending = try #require(await simulator.pendingRequests.first)
        #expect(
            (pending.trigger as? UNCalendarNotificationTrigger)?.nextTriggerDate() == Self.start.addingTimeInterval(90))

        await simulator.advance(by: 90)
        let question = try #require(await simulator.deliveredNotifications.first)
        #expect(question.request.content.title == "Capital of Australia?")
        #expect(question.request.content.body.isEmpty, "the answer is hidden")
        #expect(question.request.content.categoryIdentifier == "showMe")

        try await simulator.perform("showMe", on: "Capital of Australia?")
        await simulator.advance(by: 2)
        #expect(await simulator.deliveredNotifications.isEmpty)
        await simulator.advance(by: 1)
        let answer = try #require(await simulator.deliveredNotifications.first)
        #expect(answer.request.content.title == "Capital of Australia?")
        #expect(answer.request.content.body == "Canberra")
        #expect(answer.request.content.categoryIdentifier.isEmpty)
        #expect(answer.date == Self.start.addingTimeInterval(93))
        await #expect(throws: (any Error).self) { try await simulator.perform("showMe", on: "Capital of Australia?") }

        #expect(scheduled.map(\.1) == [Self.start.addingTimeInterval(90), Self.start.addingTimeInterval(93)])
    }

    // MARK: - Organizer

    func organizer(_ simulator: NotificationSimulator) -> (OrganizerApp, TaskManager) {
        let tasks = TaskManager()
        let app = OrganizerApp(taskManager: tasks)
        app.configureUserNotifications()
        return (app, tasks)
    }

    @Test("Mark As Done removes the task carried as JSON in userInfo, without opening the app")
    func markAsDone() async throws {
        let simulator = makeSimulator("com.example.organizer")
        simulator.appState = .background
        let (app, tasks) = organizer(simulator)
        defer { withExtendedLifetime(app) {} }
        let groceries = Task(name: "Buy groceries", reminder: .time(30))
        let call = Task(name: "Call mum", reminder: .time(600))
        tasks.save(task: groceries)
        tasks.save(task: call)
        await simulator.advance(by: 30)

        let delivered = try #require(await simulator.deliveredNotifications.first)
        let data = try #require(delivered.request.content.userInfo["Task"] as? Data)
        #expect(try JSONDecoder().decode(Task.self, from: data) == groceries)
        #expect(await simulator.presented.first?.options.contains(.banner) == true)

        try await simulator.perform("markAsDone", on: groceries.id)
        #expect(tasks.tasks == [call])
        #expect(await simulator.deliveredNotifications.isEmpty)
        #expect(await simulator.pendingRequests.map(\.identifier) == [call.id])
    }

    @Test("Dismiss keeps the task")
    func dismissKeepsTask() async throws {
        let simulator = makeSimulator("com.example.organizer")
        let (app, tasks) = organizer(simulator)
        defer { withExtendedLifetime(app) {} }
        let task = Task(name: "Water plants", reminder: .time(5))
        tasks.save(task: task)
        await simulator.advance(by: 5)
        try await simulator.perform("dismiss", on: task.id)
        #expect(tasks.tasks == [task])
    }

    @Test("notifications are grouped by trigger type")
    func grouping() async throws {
        let simulator = makeSimulator("com.example.organizer")
        let (app, tasks) = organizer(simulator)
        defer { withExtendedLifetime(app) {} }
        let office = (latitude: 52.5200, longitude: 13.4050)
        await simulator.move(to: CLLocationCoordinate2D(latitude: 48.137, longitude: 11.575))
        tasks.save(task: Task(name: "Stretch", reminder: .time(60)))
        tasks.save(task: Task(name: "Drink water", reminder: .time(120)))
        tasks.save(task: Task(name: "Pay rent", reminder: .calendar(Self.start.addingTimeInterval(3600))))
        tasks.save(
            task: Task(
                name: "Print slides",
                reminder: .location(latitude: office.latitude, longitude: office.longitude, radius: 200)))
        await simulator.advance(by: 3600)
        await simulator.move(to: CLLocationCoordinate2D(latitude: office.latitude, longitude: office.longitude))

        let delivered = await simulator.deliveredNotifications
        let threads = Dictionary(grouping: delivered, by: \.request.content.threadIdentifier)
            .mapValues { Set($0.map(\.request.content.title)) }
        #expect(
            threads == [
                NotificationManager.timeThread: ["Stretch", "Drink water"],
                NotificationManager.calendarThread: ["Pay rent"],
                NotificationManager.locationThread: ["Print slides"],
            ])
    }

    @Test("a location reminder fires on entering the place, not before, and once")
    func locationOnEntry() async throws {
        let simulator = makeSimulator("com.example.organizer")
        let (app, tasks) = organizer(simulator)
        defer { withExtendedLifetime(app) {} }
        let station = CLLocationCoordinate2D(latitude: 52.5251, longitude: 13.3694)
        let task = Task(
            name: "Buy a ticket",
            reminder: .location(latitude: station.latitude, longitude: station.longitude, radius: 150))
        await simulator.move(to: CLLocationCoordinate2D(latitude: 52.5163, longitude: 13.3777))  // about 1 km away
        tasks.save(task: task)
        await simulator.advance(by: 3600)
        #expect(await simulator.deliveredNotifications.isEmpty)

        await simulator.move(to: CLLocationCoordinate2D(latitude: 52.5255, longitude: 13.3690))  // inside the 150 m
        let delivered = try #require(await simulator.deliveredNotifications.first)
        #expect(delivered.request.content.title == "Buy a ticket")
        #expect(delivered.request.trigger is UNLocationNotificationTrigger)

        try await simulator.perform("markAsDone", on: task.id)
        #expect(tasks.tasks.isEmpty)
        await simulator.move(to: CLLocationCoordinate2D(latitude: 52.5163, longitude: 13.3777))
        await simulator.move(to: station)
        #expect(await simulator.deliveredNotifications.isEmpty, "a non-repeating reminder fires once")
    }
}
