import Chime
import ChimeTesting
import Foundation
import Testing
import TutorialApps

@Suite("The inbox badge", .notificationSimulator(bundleIdentifier: "com.example.inbox"))
@MainActor
struct InboxBadgeTests {
    func app(badgeInFront: Bool, inFront: Bool) async throws -> (NotificationSimulator, InboxBadge) {
        let simulator = NotificationSimulator.current
        #expect(try await UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .badge]))
        simulator.appState = inFront ? .foreground : .background
        return (simulator, InboxBadge(badgeInFront: badgeInFront))
    }

    func badge(_ simulator: NotificationSimulator) async throws -> Int {
        try await simulator.engine.app(simulator.bundleIdentifier).badge
    }

    @Test("in the background a message sets the badge")
    func background() async throws {
        let (simulator, app) = try await app(badgeInFront: false, inFront: false)
        app.messageArrived("m1", from: "Ann", unread: 3)
        #expect(await simulator.deliveredNotifications.count == 1)
        #expect(try await badge(simulator) == 3)
    }

    @Test("in front, a willPresent answer without .badge leaves the badge")
    func frontWithoutBadge() async throws {
        let (simulator, app) = try await app(badgeInFront: false, inFront: true)
        app.messageArrived("m1", from: "Ann", unread: 3)
        #expect(await simulator.presented.map(\.options) == [[.banner, .list]])
        #expect(try await badge(simulator) == 0)
    }

    @Test("in front, a willPresent answer with .badge sets it")
    func frontWithBadge() async throws {
        let (simulator, app) = try await app(badgeInFront: true, inFront: true)
        app.messageArrived("m1", from: "Ann", unread: 4)
        #expect(await simulator.presented.map(\.options) == [[.banner, .list, .badge]])
        #expect(try await badge(simulator) == 4)
    }

    @Test("a count-only update sets the badge and is neither listed nor shown", arguments: [false, true])
    func countOnly(inFront: Bool) async throws {
        let (simulator, app) = try await app(badgeInFront: false, inFront: inFront)
        app.unreadChanged(to: 7)
        #expect(try await badge(simulator) == 7)
        #expect(await simulator.deliveredNotifications.isEmpty)
        #expect(await simulator.presented.isEmpty)
    }

    @Test("a badge-only push clears the count")
    func badgePush() async throws {
        let (simulator, app) = try await app(badgeInFront: false, inFront: false)
        app.messageArrived("m1", from: "Ann", unread: 2)
        try await simulator.push(Data(#"{"aps": {"badge": 0}}"#.utf8))
        #expect(try await badge(simulator) == 0)
        #expect(await simulator.deliveredNotifications.map(\.request.identifier) == ["m1"])
    }
}
