import Chime
import ChimeTesting
import Foundation
import Testing
import TutorialApps

@Suite("Reminders at places", .notificationSimulator(bundleIdentifier: "com.example.places"))
struct PlaceReminderTests {
    let bakery = PlaceReminders.Place(name: "bakery", latitude: 52.5200, longitude: 13.4050)
    let office = PlaceReminders.Place(name: "office", latitude: 52.5163, longitude: 13.3777)

    func app() async throws -> PlaceReminders {
        #expect(try await UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .sound]))
        return PlaceReminders()
    }

    @Test("arriving within the radius of a place reminds")
    func arrive() async throws {
        let simulator = NotificationSimulator.current
        let app = try await app()
        app.remind(at: bakery, message: "Bread")
        await simulator.move(to: PlaceReminders.coordinate(52.5205, 13.4055))
        #expect(await simulator.deliveredNotifications.map(\.request.content.body) == ["Bread"])
    }

    @Test("elsewhere nothing happens")
    func elsewhere() async throws {
        let simulator = NotificationSimulator.current
        let app = try await app()
        app.remind(at: bakery, message: "Bread")
        await simulator.move(to: office.location.coordinate)
        #expect(await simulator.deliveredNotifications.isEmpty)
        #expect(await simulator.pendingRequests.count == 1)
    }

    @Test("the region is made from the place's CLLocation")
    func region() async throws {
        let simulator = NotificationSimulator.current
        let app = try await app()
        app.remind(at: office, message: "Stand-up")
        let trigger = try #require(await simulator.pendingRequests.first?.trigger as? UNLocationNotificationTrigger)
        let region = try #require(trigger.region as? CLCircularRegion)
        #expect(region.center == office.location.coordinate)
        #expect(region.radius == app.radius)
        #expect(!region.notifyOnExit)
    }

    @Test("distance(from:) tells the nearby places apart, nearest first")
    func nearby() async throws {
        let app = try await app()
        app.remind(at: bakery, message: "Bread")
        app.remind(at: office, message: "Stand-up")
        let here = PlaceReminders.coordinate(52.5190, 13.4000)
        #expect(app.places(near: here, within: 500) == ["bakery"])
        #expect(app.places(near: here, within: 2_500) == ["bakery", "office"])
        #expect(abs(bakery.location.distance(from: office.location) - 1_900) < 100)
    }

    @Test("a reminder fires once, then is gone")
    func once() async throws {
        let simulator = NotificationSimulator.current
        let app = try await app()
        app.remind(at: bakery, message: "Bread")
        await simulator.move(to: bakery.location.coordinate)
        await simulator.move(to: office.location.coordinate)
        await simulator.move(to: bakery.location.coordinate)
        #expect(await simulator.deliveredNotifications.count == 1)
        #expect(await simulator.pendingRequests.isEmpty)
    }
}
