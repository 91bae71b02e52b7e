import Chime
import ChimeTesting
import Foundation
import Testing
import TutorialApps

@Suite("The drinking reminder", .notificationSimulator(bundleIdentifier: "com.example.drinking"))
@MainActor
struct DrinkReminderTests {
    func launched() async throws -> (NotificationSimulator, DrinkReminder) {
        let simulator = NotificationSimulator.current
        #expect(try await UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .sound]))
        let app = DrinkReminder()
        app.applicationDidFinishLaunching()
        return (simulator, app)
    }

    @Test("Done is written down")
    func done() async throws {
        let (simulator, app) = try await launched()
        app.remind(in: 60, identifier: "morning")
        await simulator.advance(by: 60)
        try await simulator.perform(DrinkAction.done.id, on: "morning")
        #expect(app.journal == ["done"])
    }

    @Test("Not thirsty is written down")
    func notThirsty() async throws {
        let (simulator, app) = try await launched()
        app.remind(in: 60, identifier: "noon")
        await simulator.advance(by: 60)
        try await simulator.perform(DrinkAction.notThirsty.id, on: "noon")
        #expect(app.journal == ["notThirsty"])
    }

    @Test("swiping it away reaches the app: the category has the custom dismiss action")
    func dismissed() async throws {
        let (simulator, app) = try await launched()
        app.remind(in: 30, identifier: "swiped")
        await simulator.advance(by: 30)
        try await simulator.dismiss("swiped")
        #expect(app.journal == ["dismissed"])
    }

    @Test("the server's payload arrives with the category's buttons")
    func remote() async throws {
        let (simulator, app) = try await launched()
        try await simulator.push(Data(DrinkReminder.remotePayload.utf8), identifier: "server")
        let notification = try #require(await simulator.deliveredNotifications.first)
        #expect(notification.request.content.title == "Stay hydrated")
        #expect(notification.request.content.sound == .default)
        #expect(notification.request.content.categoryIdentifier == DrinkReminder.category)
        try await simulator.perform(DrinkAction.done.id, on: "server")
        #expect(app.journal == ["done"])
    }

    @Test("answers given while the device is locked wait, and arrive in order once it is unlocked")
    func locked() async throws {
        let (simulator, app) = try await launched()
        app.remind(in: 10, identifier: "one")
        app.remind(in: 20, identifier: "two")
        await simulator.advance(by: 20)
        app.deviceLocked()
        try await simulator.perform(DrinkAction.done.id, on: "one")
        try await simulator.tap("two")
        #expect(app.journal.isEmpty)
        app.deviceUnlocked()
        await simulator.advance(by: 1)  // the simulator hands over what waits in the outbox
        #expect(app.journal == ["done", "opened"])
    }
}
