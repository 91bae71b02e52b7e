import Chime
import ChimeTesting
import Foundation
import OrganizerPlus
import Testing
import XCTest

private let utc = TimeZone(identifier: "UTC")!
private let start = Date(timeIntervalSince1970: 1_780_000_000)

/// OrganizerPlus's app delegate with its own task list, permission granted.
@MainActor
func launchedOrganizer() async throws -> OrganizerAppDelegate {
    #expect(try await UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .sound, .badge]))
    let delegate = OrganizerAppDelegate(taskManager: TaskManager())
    delegate.configureUserNotifications()
    return delegate
}

@Suite("OrganizerPlus", .notificationSimulator(bundleIdentifier: "com.example.organizer", now: start, timeZone: utc))
@MainActor
struct OrganizerTests {
    @Test("a time reminder fires in the time thread, with the task in userInfo")
    func time() async throws {
        let simulator = NotificationSimulator.current
        let app = try await launchedOrganizer()
        let task = OrganizerPlus.Task(name: "Buy milk", reminder: Reminder(timeInterval: 60))
        app.taskManager.save(task: task)
        await simulator.advance(by: 60)
        let notification = try #require(await simulator.deliveredNotifications.first)
        #expect(notification.request.content.threadIdentifier == "TimeBasedNotificationThreadId")
        let data = try #require(notification.request.content.userInfo["Task"] as? Data)
        #expect(try JSONDecoder().decode(OrganizerPlus.Task.self, from: data) == task)
    }

    @Test("a calendar reminder fires at its date, in the calendar thread")
    func calendar() async throws {
        let simulator = NotificationSimulator.current
        let app = try await launchedOrganizer()
        let due = Date(timeIntervalSince1970: 1_780_007_220)  // 22:27 UTC: the reminder has minutes, not seconds
        app.taskManager.save(task: OrganizerPlus.Task(name: "Call Bob", reminder: Reminder(date: due)))
        await simulator.advance(to: due.addingTimeInterval(-1))
        #expect(await simulator.deliveredNotifications.isEmpty)
        await simulator.advance(by: 1)
        let notification = try #require(await simulator.deliveredNotifications.first)
        #expect(notification.date == due)
        #expect(notification.request.content.threadIdentifier == "CalendarBasedNotificationThreadId")
    }

    @Test("a location reminder fires on arrival, in the location thread")
    func location() async throws {
        let simulator = NotificationSimulator.current
        let app = try await launchedOrganizer()
        app.taskManager.save(
            task: OrganizerPlus.Task(
                name: "Pick up parcel",
                reminder: Reminder(location: LocationReminder(latitude: 48.8566, longitude: 2.3522, radius: 200))))
        await simulator.move(to: CLLocationCoordinate2D(latitude: 48.8570, longitude: 2.3525))
        #expect(
            await simulator.deliveredNotifications.first?.request.content.threadIdentifier
                == "LocationBasedNotificationThreadId")
    }

    @Test("Mark As Done removes the task without opening the app")
    func markAsDone() async throws {
        let simulator = NotificationSimulator.current
        let app = try await launchedOrganizer()
        let task = OrganizerPlus.Task(name: "Water plants", reminder: Reminder(timeInterval: 60, repeats: true))
        app.taskManager.save(task: task)
        await simulator.advance(by: 60)
        try await simulator.perform("markAsDone", on: task.id)
        #expect(app.taskManager.tasks.isEmpty)
        #expect(await simulator.pendingRequests.isEmpty, "the repeating reminder is gone too")
        #expect(app.opened.isEmpty)
    }

    @Test("Dismiss keeps the task; tapping opens it")
    func dismissAndOpen() async throws {
        let simulator = NotificationSimulator.current
        let app = try await launchedOrganizer()
        let first = OrganizerPlus.Task(name: "Read", reminder: Reminder(timeInterval: 10))
        let second = OrganizerPlus.Task(name: "Write", reminder: Reminder(timeInterval: 20))
        app.taskManager.save(task: first)
        app.taskManager.save(task: second)
        await simulator.advance(by: 20)
        try await simulator.perform("dismiss", on: first.id)
        try await simulator.tap(second.id)
        #expect(app.taskManager.tasks.map(\.name) == ["Read", "Write"])
        #expect(app.opened == ["Write"])
    }

    @Test("notifications group by trigger kind")
    func threads() async throws {
        let simulator = NotificationSimulator.current
        let app = try await launchedOrganizer()
        app.taskManager.save(task: OrganizerPlus.Task(name: "a", reminder: Reminder(timeInterval: 5)))
        app.taskManager.save(task: OrganizerPlus.Task(name: "b", reminder: Reminder(timeInterval: 6)))
        app.taskManager.save(
            task: OrganizerPlus.Task(name: "c", reminder: Reminder(date: start.addingTimeInterval(60))))
        await simulator.advance(by: 60)
        let threads = Dictionary(
            grouping: await simulator.deliveredNotifications, by: \.request.content.threadIdentifier)
        #expect(threads["TimeBasedNotificationThreadId"]?.count == 2)
        #expect(threads["CalendarBasedNotificationThreadId"]?.count == 1)
    }
}

/// The same app under XCTest: a simulator from setUp, as XCTest suites have it.
final class OrganizerXCTests: XCTestCase {
    var simulator: NotificationSimulator!

    override func setUp() {
        super.setUp()
        simulator = installNotificationSimulator(bundleIdentifier: "com.example.organizer", now: start, timeZone: utc)
    }

    @MainActor func testTimeReminderFires() async throws {
        let app = try await launchedOrganizer()
        app.taskManager.save(task: OrganizerPlus.Task(name: "Stretch", reminder: Reminder(timeInterval: 30)))
        await simulator.advance(by: 30)
        let titles = await simulator.deliveredNotifications.map(\.request.content.title)
        XCTAssertEqual(titles, ["Stretch"])
    }

    @MainActor func testRemovingATaskRemovesItsReminder() async throws {
        let app = try await launchedOrganizer()
        let task = OrganizerPlus.Task(name: "Cancel me", reminder: Reminder(timeInterval: 30))
        app.taskManager.save(task: task)
        app.taskManager.remove(task: task)
        let pending = await simulator.pendingRequests
        XCTAssertTrue(pending.isEmpty)
    }

    @MainActor func testMarkAsDone() async throws {
        let app = try await launchedOrganizer()
        let task = OrganizerPlus.Task(name: "Done soon", reminder: Reminder(timeInterval: 5))
        app.taskManager.save(task: task)
        await simulator.advance(by: 5)
        try await simulator.perform("markAsDone", on: task.id)
        XCTAssertTrue(app.taskManager.tasks.isEmpty)
    }

    @MainActor func testCurrentFromADispatchQueueIsTheSimulator() async {
        // XCTest runs one test at a time: a DispatchQueue block finds the simulator too.
        let center: UNUserNotificationCenter = await withCheckedContinuation { continuation in
            DispatchQueue.main.async { continuation.resume(returning: UNUserNotificationCenter.current()) }
        }
        XCTAssertTrue(center === simulator.center)
    }

    @MainActor func testEachTestStartsEmpty() async {
        let pending = await simulator.pendingRequests
        let delivered = await simulator.deliveredNotifications
        XCTAssertTrue(pending.isEmpty && delivered.isEmpty)
    }
}
