import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// The engine's rules as an app sees them through `UNUserNotificationCenter` and the simulator.
@Suite("Center rules: requests, delivery, authorization, categories", .testThreads)
struct CenterRulesTests {
    @Test("adding a request whose identifier is pending replaces it")
    func replacePending() async throws {
        let simulator = try await authorizedSimulator()
        let start = simulator.now
        try await simulator.center.add(request("a", after: 10, title: "first"))
        try await simulator.center.add(request("a", after: 20, title: "second"))
        let pending = await simulator.pendingRequests
        #expect(pending.map(\.content.title) == ["second"])
        await simulator.advance(by: 15)
        #expect(await simulator.deliveredNotifications.isEmpty, "the replaced request must not fire")
        await simulator.advance(by: 5)
        let delivered = await simulator.deliveredNotifications
        #expect(delivered.map(\.request.content.title) == ["second"])
        #expect(delivered.first?.date == start.addingTimeInterval(20))
    }

    @Test("the delivered list holds an identifier once: a newer delivery replaces the older")
    func deliveredOnce() async throws {
        let simulator = try await authorizedSimulator()
        try await simulator.center.add(UNNotificationRequest(identifier: "a", content: content("one"), trigger: nil))
        await simulator.advance(by: 30)
        try await simulator.center.add(UNNotificationRequest(identifier: "a", content: content("two"), trigger: nil))
        let delivered = await simulator.deliveredNotifications
        #expect(delivered.map(\.request.content.title) == ["two"])
        #expect(delivered.first?.date == simulator.now)
    }

    @Test("a request without a trigger is delivered at once, without moving time")
    func noTrigger() async throws {
        let simulator = try await authorizedSimulator()
        let now = simulator.now
        try await simulator.center.add(UNNotificationRequest(identifier: "now", content: content("Now"), trigger: nil))
        let delivered = await simulator.deliveredNotifications
        #expect(delivered.map(\.request.identifier) == ["now"])
        #expect(delivered.first?.date == now)
        #expect(delivered.first?.request.trigger == nil)
        #expect(await simulator.pendingRequests.isEmpty)
    }

    @Test("an empty request identifier is refused with an error naming the field")
    func emptyIdentifier() async throws {
        let simulator = try await authorizedSimulator()
        let error = await #expect(throws: ChimeError.self) {
            try await simulator.center.add(UNNotificationRequest(identifier: "", content: content("x"), trigger: nil))
        }
        #expect(error?.code == .invalidIdentifier)
        #expect(error?.field == "identifier")
    }

    // MARK: Authorization

    @Test(
        "authorization is asked once: a changed answer later does not change the stored one",
        arguments: [
            (NotificationSimulator.AuthorizationAnswer.grant, NotificationSimulator.AuthorizationAnswer.deny),
            (.deny, .grant),
        ])
    func askedOnce(first: NotificationSimulator.AuthorizationAnswer, later: NotificationSimulator.AuthorizationAnswer)
        async throws
    {
        let simulator = NotificationSimulator(bundleIdentifier: "com.example.auth")
        #expect(await simulator.center.notificationSettings().authorizationStatus == .notDetermined)
        simulator.authorizationAnswer = first
        let granted = try await simulator.center.requestAuthorization(options: [.alert, .sound])
        #expect(granted == (first == .grant))
        simulator.authorizationAnswer = later
        #expect(try await simulator.center.requestAuthorization(options: [.alert, .sound]) == granted)
        let settings = await simulator.center.notificationSettings()
        #expect(settings.authorizationStatus == (first == .grant ? .authorized : .denied))
    }

    @Test("the settings reflect the options granted")
    func settingsAfterGrant() async throws {
        let simulator = try await authorizedSimulator([.alert, .badge])
        let settings = await simulator.center.notificationSettings()
        #expect(settings.authorizationStatus == .authorized)
        #expect(settings.alertSetting == .enabled)
        #expect(settings.badgeSetting == .enabled)
        #expect(settings.soundSetting == .disabled)
        #expect(settings.alertStyle == .banner)
    }

    @Test("when denied, add fails with notificationsNotAllowed (UNErrorDomain code 1)")
    func deniedAdd() async throws {
        let simulator = NotificationSimulator(bundleIdentifier: "com.example.denied")
        simulator.authorizationAnswer = .deny
        #expect(try await simulator.center.requestAuthorization(options: [.alert]) == false)
        var caught = false
        do {
            try await simulator.center.add(request("a", after: 10))
        } catch UNError.notificationsNotAllowed {
            caught = true
        } catch {
            Issue.record("unexpected error \(error)")
        }
        #expect(caught)
        let error = await withCheckedContinuation { (continuation: CheckedContinuation<(any Error)?, Never>) in
            simulator.center.add(request("b", after: 10)) { continuation.resume(returning: $0) }
        }
        let nsError = try #require(error) as NSError
        #expect(nsError.domain == "UNErrorDomain" && nsError.code == 1)
        #expect(await simulator.pendingRequests.isEmpty)
    }

    @Test("before the app asks for permission, add fails with notificationsNotAllowed")
    func addBeforeAsking() async throws {
        let simulator = NotificationSimulator(bundleIdentifier: "com.example.unasked")
        let error = await #expect(throws: UNError.self) { try await simulator.center.add(request("a", after: 10)) }
        #expect(error?.code == .notificationsNotAllowed)
    }

    // MARK: Categories

    static func category(_ identifier: String, actions: [String]) -> UNNotificationCategory {
        UNNotificationCategory(
            identifier: identifier,
            actions: actions.map { UNNotificationAction(identifier: $0, title: $0.capitalized) },
            intentIdentifiers: [])
    }

    static func setCategories(_ center: UNUserNotificationCenter, _ categories: Set<UNNotificationCategory>) async -> (
        any Error
    )? {
        await withCheckedContinuation { continuation in
            center.setNotificationCategories(categories) { continuation.resume(returning: $0) }
        }
    }

    @Test("setNotificationCategories replaces the whole set")
    func categoriesReplace() async throws {
        let simulator = try await authorizedSimulator()
        let center = simulator.center
        #expect(
            await Self.setCategories(center, [Self.category("a", actions: ["x"]), Self.category("b", actions: ["y"])])
                == nil)
        #expect(Set(await center.notificationCategories().map(\.identifier)) == ["a", "b"])
        #expect(await Self.setCategories(center, [Self.category("c", actions: ["z"])]) == nil)
        #expect(await center.notificationCategories().map(\.identifier) == ["c"])
        #expect(await Self.setCategories(center, []) == nil)
        #expect(await center.notificationCategories().isEmpty)
    }

    @Test(
        "invalid categories are refused with an error that says why, and the registered set stays",
        arguments: [
            (["snooze", "snooze"], "a", "listed twice"),
            ([""], "a", "empty"),
            (["ok"], "", "empty"),
            ([UNNotificationDefaultActionIdentifier], "a", "reserved"),
        ])
    func invalidCategories(actions: [String], identifier: String, expected: String) async throws {
        let simulator = try await authorizedSimulator()
        let center = simulator.center
        #expect(await Self.setCategories(center, [Self.category("kept", actions: ["ok"])]) == nil)
        let error = await Self.setCategories(center, [Self.category(identifier, actions: actions)])
        let chimeError = try #require(error as? ChimeError)
        #expect(chimeError.code == .invalidCategory || chimeError.code == .invalidIdentifier)
        #expect(chimeError.message.contains(expected), "\(chimeError.message)")
        #expect(await center.notificationCategories().map(\.identifier) == ["kept"])
    }

    @Test("the fire-and-forget setNotificationCategories does not crash on invalid input")
    func fireAndForgetCategories() async throws {
        let simulator = try await authorizedSimulator()
        simulator.center.setNotificationCategories([Self.category("dup", actions: ["x", "x"])])
        #expect(await simulator.center.notificationCategories().isEmpty)
    }

    @Test("getNotificationCategories and getNotificationSettings answer through their completion handlers")
    func completionGetters() async throws {
        let simulator = try await authorizedSimulator([.alert])
        let center = simulator.center
        center.setNotificationCategories([Self.category("a", actions: ["x"])])
        let names = await withCheckedContinuation { (continuation: CheckedContinuation<[String], Never>) in
            center.getNotificationCategories { continuation.resume(returning: $0.map(\.identifier)) }
        }
        #expect(names == ["a"])
        let status = await withCheckedContinuation {
            (continuation: CheckedContinuation<UNAuthorizationStatus, Never>) in
            center.getNotificationSettings { continuation.resume(returning: $0.authorizationStatus) }
        }
        #expect(status == .authorized)
    }

    // MARK: Delivered list and badge

    @Test("delivered notifications are listed newest first with their dates and threads, and can be removed")
    func deliveredList() async throws {
        let simulator = try await authorizedSimulator()
        let center = simulator.center
        let start = simulator.now
        for (identifier, seconds, thread) in [("a", 10.0, "work"), ("b", 20.0, "home"), ("c", 30.0, "work")] {
            try await center.add(
                UNNotificationRequest(
                    identifier: identifier, content: content(identifier, thread: thread),
                    trigger: UNTimeIntervalNotificationTrigger(timeInterval: seconds, repeats: false)))
        }
        await simulator.advance(by: 60)
        let delivered = await simulator.deliveredNotifications
        #expect(delivered.map(\.request.identifier) == ["c", "b", "a"])
        #expect(delivered.map(\.date) == [30.0, 20.0, 10.0].map { start.addingTimeInterval($0) })
        #expect(delivered.map(\.request.content.threadIdentifier) == ["work", "home", "work"])
        let viaHandler = await withCheckedContinuation { (continuation: CheckedContinuation<[String], Never>) in
            center.getDeliveredNotifications { continuation.resume(returning: $0.map(\.request.identifier)) }
        }
        #expect(viaHandler == ["c", "b", "a"])
        center.removeDeliveredNotifications(withIdentifiers: ["b", "unknown"])
        #expect(await simulator.deliveredNotifications.map(\.request.identifier) == ["c", "a"])
        center.removeAllDeliveredNotifications()
        #expect(await simulator.deliveredNotifications.isEmpty)
    }

    @Test("pending requests can be listed through the completion handler and removed")
    func pendingList() async throws {
        let simulator = try await authorizedSimulator()
        let center = simulator.center
        for identifier in ["a", "b", "c"] { try await center.add(request(identifier, after: 100)) }
        let listed = await withCheckedContinuation { (continuation: CheckedContinuation<[String], Never>) in
            center.getPendingNotificationRequests { continuation.resume(returning: $0.map(\.identifier)) }
        }
        #expect(listed == ["a", "b", "c"])
        center.removePendingNotificationRequests(withIdentifiers: ["b"])
        #expect(await simulator.pendingRequests.map(\.identifier) == ["a", "c"])
        center.removeAllPendingNotificationRequests()
        #expect(await simulator.pendingRequests.isEmpty)
        await simulator.advance(by: 200)
        #expect(await simulator.deliveredNotifications.isEmpty, "removed requests must not fire")
    }

    func badge(_ simulator: NotificationSimulator) async throws -> Int {
        try await simulator.engine.app(simulator.bundleIdentifier).badge
    }

    @Test("the badge is absolute: a number sets it, nil keeps it, 0 clears it, negative is badgeInputInvalid")
    func badgeRules() async throws {
        let simulator = try await authorizedSimulator([.alert, .badge])
        let center = simulator.center
        func deliver(_ identifier: String, badge: NSNumber?) async throws {
            let content = content(identifier)
            content.badge = badge
            try await center.add(UNNotificationRequest(identifier: identifier, content: content, trigger: nil))
        }
        try await deliver("five", badge: 5)
        #expect(try await badge(simulator) == 5)
        try await deliver("none", badge: nil)
        #expect(try await badge(simulator) == 5)
        try await deliver("two", badge: 2)
        #expect(try await badge(simulator) == 2, "the badge is set, not added to")
        try await deliver("zero", badge: 0)
        #expect(try await badge(simulator) == 0)
        try await center.setBadgeCount(3)
        #expect(try await badge(simulator) == 3)
        let thrown = await #expect(throws: UNError.self) { try await center.setBadgeCount(-1) }
        #expect(thrown?.code == .badgeInputInvalid)
        let error = await withCheckedContinuation { (continuation: CheckedContinuation<(any Error)?, Never>) in
            center.setBadgeCount(-2) { continuation.resume(returning: $0) }
        }
        #expect(error.map { ($0 as NSError).code } == 1600, "UNErrorDomain code 1600 through `as NSError`")
        #expect(try await badge(simulator) == 3)
    }

    // MARK: Call order

    /// The fire-and-forget forms, called from synchronous code as an app does.
    static func removeThenAdd(_ center: UNUserNotificationCenter, _ request: UNNotificationRequest) {
        center.removePendingNotificationRequests(withIdentifiers: [request.identifier])
        center.add(request)
    }

    static func addThenRemove(_ center: UNUserNotificationCenter, _ request: UNNotificationRequest) {
        center.add(request)
        center.removePendingNotificationRequests(withIdentifiers: [request.identifier])
    }

    static func addThenRemoveAll(_ center: UNUserNotificationCenter, _ request: UNNotificationRequest) {
        center.add(request)
        center.removeAllPendingNotificationRequests()
    }

    @Test("operations are processed in call order: remove-then-add keeps the add, add-then-remove leaves nothing")
    func callOrder() async throws {
        let simulator = try await authorizedSimulator()
        let center = simulator.center
        try await center.add(request("kept", after: 100, title: "old"))
        for _ in 0..<20 {
            Self.removeThenAdd(center, request("kept", after: 100, title: "new"))
            Self.addThenRemove(center, request("gone", after: 100))
        }
        #expect(await simulator.pendingRequests.map(\.identifier) == ["kept"])
        #expect(await simulator.pendingRequests.first?.content.title == "new")
        Self.addThenRemoveAll(center, request("also-gone", after: 100))
        #expect(await simulator.pendingRequests.isEmpty)
    }
}
