import Chime
import ChimeTesting
import Foundation
import Testing
import TutorialApps

private let berlin = TimeZone(identifier: "Europe/Berlin")!
/// 2026-05-28 22:26:40 in Berlin.
private let start = Date(timeIntervalSince1970: 1_780_000_000)

@Suite("Show me", .notificationSimulator(bundleIdentifier: "com.example.showme", now: start, timeZone: berlin))
@MainActor
struct ShowMeTests {
    func app() async throws -> ShowMeNotifications {
        #expect(try await UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .sound]))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = berlin
        return ShowMeNotifications(calendar: calendar)
    }

    @Test("the notification shows only its main text, at the time given")
    func titleOnly() async throws {
        let simulator = NotificationSimulator.current
        let app = try await app()
        app.showNotification(
            with: ("Capital of Australia?", "Canberra"), showBody: false, withAction: true,
            atDate: start.addingTimeInterval(60))
        await simulator.advance(by: 60)
        let shown = try #require(await simulator.deliveredNotifications.first)
        #expect(shown.request.content.title == "Capital of Australia?")
        #expect(shown.request.content.body.isEmpty)
        #expect(shown.date == start.addingTimeInterval(60))
    }

    @Test("Show me brings it back 3 s later with the hidden text and without the button")
    func showMe() async throws {
        let simulator = NotificationSimulator.current
        let app = try await app()
        app.showNotification(
            with: ("Capital of Australia?", "Canberra"), showBody: false, withAction: true,
            atDate: start.addingTimeInterval(60))
        await simulator.advance(by: 60)
        try await simulator.perform("showMe", on: "Capital of Australia?")
        await simulator.advance(by: 2)
        #expect(await simulator.deliveredNotifications.isEmpty)
        await simulator.advance(by: 1)
        let again = try #require(await simulator.deliveredNotifications.first)
        #expect(again.request.content.body == "Canberra")
        #expect(again.request.content.categoryIdentifier.isEmpty)
    }

    @Test("the subtext travels in userInfo")
    func userInfo() async throws {
        let simulator = NotificationSimulator.current
        let app = try await app()
        app.showNotification(
            with: ("Largest planet?", "Jupiter"), showBody: false, withAction: true, atDate: start.addingTimeInterval(5)
        )
        let pending = try #require(await simulator.pendingRequests.first)
        #expect(pending.content.userInfo["Largest planet?"] as? String == "Jupiter")
    }

    @Test("nextTriggerDate says when it will be shown, in the device's time zone")
    func nextTriggerDate() async throws {
        let simulator = NotificationSimulator.current
        let app = try await app()
        app.showNotification(
            with: ("Q", "A"), showBody: false, withAction: true, atDate: start.addingTimeInterval(3_600))
        _ = await simulator.pendingRequests
        #expect(app.scheduledFor["Q"] == start.addingTimeInterval(3_600))
    }

    @Test("a time already past today is shown tomorrow")
    func tomorrow() async throws {
        let simulator = NotificationSimulator.current
        let app = try await app()
        app.showNotification(
            with: ("Late", "x"), showBody: true, withAction: false, atDate: start.addingTimeInterval(-60))
        await simulator.advance(by: 86_400 - 61)
        #expect(await simulator.deliveredNotifications.isEmpty)
        await simulator.advance(by: 1)
        #expect(await simulator.deliveredNotifications.map(\.request.identifier) == ["Late"])
    }
}
