import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

func simulatorDate(_ text: String) throws -> Date { try Date(text, strategy: .iso8601) }

/// A simulator whose app asked for alerts, sounds and badges and was allowed.
func grantedSimulator(
    bundle: String = "com.example.sim", now: Date = Date(timeIntervalSince1970: 1_780_000_000),
    timeZone: TimeZone = TimeZone(identifier: "UTC")!
) async throws -> NotificationSimulator {
    let simulator = NotificationSimulator(bundleIdentifier: bundle, now: now, timeZone: timeZone)
    try #require(try await simulator.center.requestAuthorization(options: [.alert, .sound, .badge]))
    return simulator
}

func timed(_ identifier: String, after seconds: TimeInterval, category: String = "") -> UNNotificationRequest {
    let content = UNMutableNotificationContent()
    content.title = identifier
    content.categoryIdentifier = category
    return UNNotificationRequest(
        identifier: identifier, content: content,
        trigger: UNTimeIntervalNotificationTrigger(timeInterval: seconds, repeats: false))
}

@MainActor
final class Recorder: UNUserNotificationCenterDelegate {
    var events: [String] = []
    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification) async
        -> UNNotificationPresentationOptions
    {
        events.append("present \(notification.request.identifier)")
        return [.banner, .list]
    }
    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
        let text = (response as? UNTextInputNotificationResponse).map { " \"\($0.userText)\"" } ?? ""
        events.append("\(response.actionIdentifier) \(response.notification.request.identifier)\(text)")
    }
}

/// Every member of the simulator's API (issue 2 §4).
@Suite("NotificationSimulator API", .testThreads)
struct NotificationSimulatorTests {
    @Test("the initialiser sets bundle identifier, virtual date and time zone; defaults are background and grant")
    func initialiser() async throws {
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        let now = Date(timeIntervalSince1970: 1_780_000_000)
        let simulator = NotificationSimulator(bundleIdentifier: "com.example.alarm", now: now, timeZone: berlin)
        #expect(simulator.now == now)
        #expect(simulator.center.bundleIdentifier == "com.example.alarm")
        #expect(simulator.appState == .background)
        #expect(simulator.authorizationAnswer == .grant)
        #expect(try await simulator.engine.timeZone() == berlin)
        #expect(try await simulator.center.requestAuthorization(options: [.alert]))
    }

    @Test("appState and authorizationAnswer can be set and read back")
    func settableState() {
        let simulator = NotificationSimulator()
        simulator.appState = .foreground
        #expect(simulator.appState == .foreground)
        #expect(simulator.center.isAppInForeground)
        simulator.appState = .background
        #expect(!simulator.center.isAppInForeground)
        simulator.authorizationAnswer = .deny
        #expect(simulator.authorizationAnswer == .deny)
    }

    @Test("advance(by:) and advance(to:) move the virtual date exactly")
    func advanceMovesTime() async {
        let simulator = NotificationSimulator(now: Date(timeIntervalSince1970: 1_000))
        await simulator.advance(by: 10)
        #expect(simulator.now == Date(timeIntervalSince1970: 1_010))
        await simulator.advance(to: Date(timeIntervalSince1970: 5_000))
        #expect(simulator.now == Date(timeIntervalSince1970: 5_000))
        await simulator.advance(by: 0)
        #expect(simulator.now == Date(timeIntervalSince1970: 5_000))
    }

    @Test("advance fires everything due, in order of due date, and presents it with the clock at the due date")
    @MainActor
    func advanceInOrder() async throws {
        let simulator = try await grantedSimulator()
        let recorder = Recorder()
        simulator.center.delegate = recorder
        simulator.appState = .foreground
        let start = simulator.now
        for (identifier, seconds) in [("c", 30.0), ("a", 10), ("b", 20), ("late", 100)] {
            try await simulator.center.add(timed(identifier, after: seconds))
        }
        await simulator.advance(by: 60)
        #expect(recorder.events == ["present a", "present b", "present c"])
        #expect(
            await simulator.presented.map(\.notification.date) == [10.0, 20, 30].map { start.addingTimeInterval($0) })
        #expect(await simulator.deliveredNotifications.map(\.request.identifier) == ["c", "b", "a"])
        #expect(await simulator.pendingRequests.map(\.identifier) == ["late"])
        #expect(simulator.now == start.addingTimeInterval(60))
    }

    @Test("presented lists each shown notification with its options, oldest first")
    func presentedList() async throws {
        let simulator = try await grantedSimulator()
        try await simulator.center.add(timed("one", after: 1))
        try await simulator.center.add(timed("two", after: 2))
        await simulator.advance(by: 5)
        let presented = await simulator.presented
        #expect(presented.map(\.notification.request.identifier) == ["one", "two"])
        #expect(presented.map(\.options) == [[.list, .banner], [.list, .banner]])
    }

    @Test("tap, perform, reply and dismiss reach the delegate and return after it finished")
    @MainActor
    func userActions() async throws {
        let simulator = try await grantedSimulator()
        let recorder = Recorder()
        simulator.center.delegate = recorder
        simulator.center.setNotificationCategories([
            UNNotificationCategory(
                identifier: "cat",
                actions: [
                    UNNotificationAction(identifier: "snooze", title: "Snooze"),
                    UNTextInputNotificationAction(
                        identifier: "comment", title: "Comment", options: [],
                        textInputButtonTitle: "Add", textInputPlaceholder: ""),
                ], intentIdentifiers: [], options: [.customDismissAction])
        ])
        for identifier in ["t", "p", "r", "d"] {
            try await simulator.center.add(timed(identifier, after: 1, category: "cat"))
        }
        await simulator.advance(by: 1)
        try await simulator.tap("t")
        #expect(recorder.events == ["\(UNNotificationDefaultActionIdentifier) t"])
        try await simulator.perform("snooze", on: "p")
        try await simulator.reply("Call me", with: "comment", on: "r")
        try await simulator.dismiss("d")
        #expect(
            recorder.events == [
                "\(UNNotificationDefaultActionIdentifier) t", "snooze p", "comment r \"Call me\"",
                "\(UNNotificationDismissActionIdentifier) d",
            ])
    }

    @Test(
        "acting on a notification that is not delivered throws an error naming it",
        arguments: ["tap", "perform", "reply", "dismiss"])
    func undelivered(kind: String) async throws {
        let simulator = try await grantedSimulator()
        let error = await #expect(throws: ChimeError.self) {
            switch kind {
            case "tap": try await simulator.tap("Ghost")
            case "perform": try await simulator.perform("snooze", on: "Ghost")
            case "reply": try await simulator.reply("hi", with: "comment", on: "Ghost")
            default: try await simulator.dismiss("Ghost")
            }
        }
        #expect(error?.message.contains("'Ghost'") == true, "\(error?.message ?? "")")
    }

    @Test("an action the category lacks throws an error naming the action")
    func unknownAction() async throws {
        let simulator = try await grantedSimulator()
        try await simulator.center.add(timed("n", after: 1))
        await simulator.advance(by: 1)
        let error = await #expect(throws: ChimeError.self) { try await simulator.perform("launch", on: "n") }
        #expect(error?.message.contains("'launch'") == true, "\(error?.message ?? "")")
    }

    // MARK: push

    @Test("push with an aps.alert string: the string is the body")
    func pushAlertString() async throws {
        let simulator = try await grantedSimulator()
        try await simulator.push(Data(#"{"aps": {"alert": "Hello from the server"}}"#.utf8), identifier: "p1")
        let notification = try #require(await simulator.deliveredNotifications.first)
        #expect(notification.request.identifier == "p1")
        #expect(notification.request.content.body == "Hello from the server")
        #expect(notification.request.content.title == "")
        #expect(notification.request.trigger is UNPushNotificationTrigger)
        #expect(notification.date == simulator.now)
    }

    @Test("push with an alert dictionary, sound, badge, category, thread-id and custom keys")
    func pushFull() async throws {
        let simulator = try await grantedSimulator()
        let payload = #"""
            {"aps": {"alert": {"title": "Order", "subtitle": "Shipped", "body": "Your parcel is on its way"},
                     "sound": "default", "badge": 4, "category": "ORDER", "thread-id": "orders"},
             "orderID": 42, "items": ["a", "b"], "meta": {"express": true}}
            """#
        try await simulator.push(Data(payload.utf8))
        let content = try #require(await simulator.deliveredNotifications.first).request.content
        #expect(content.title == "Order")
        #expect(content.subtitle == "Shipped")
        #expect(content.body == "Your parcel is on its way")
        #expect(content.sound == .default)
        #expect(content.badge == 4)
        #expect(content.categoryIdentifier == "ORDER")
        #expect(content.threadIdentifier == "orders")
        #expect(content.userInfo["orderID"] as? Int == 42)
        #expect(content.userInfo["items"] as? [String] == ["a", "b"])
        #expect((content.userInfo["meta"] as? [String: Any])?["express"] as? Bool == true)
        #expect(try await simulator.engine.app(simulator.bundleIdentifier).badge == 4)
        #expect(await simulator.presented.first?.options == [.list, .banner, .sound, .badge])
    }

    @Test("a pushed notification with a named sound keeps the name")
    func pushNamedSound() async throws {
        let simulator = try await grantedSimulator()
        try await simulator.push(Data(#"{"aps": {"alert": "x", "sound": "bell.caf"}}"#.utf8))
        let sound = try #require(await simulator.deliveredNotifications.first?.request.content.sound)
        #expect(sound == UNNotificationSound(named: UNNotificationSoundName("bell.caf")))
    }

    @Test("a push with the same identifier replaces the delivered one")
    func pushCollapses() async throws {
        let simulator = try await grantedSimulator()
        try await simulator.push(Data(#"{"aps": {"alert": "first"}}"#.utf8), identifier: "score")
        try await simulator.push(Data(#"{"aps": {"alert": "second"}}"#.utf8), identifier: "score")
        #expect(await simulator.deliveredNotifications.map(\.request.content.body) == ["second"])
    }

    @Test(
        "a malformed push payload throws", arguments: [#"{"alert": "no aps"}"#, "not json", #"{"aps": {"badge": -1}}"#])
    func pushMalformed(payload: String) async throws {
        let simulator = try await grantedSimulator()
        await #expect(throws: (any Error).self) { try await simulator.push(Data(payload.utf8)) }
        #expect(await simulator.deliveredNotifications.isEmpty)
    }

    @Test("a pushed notification can be tapped; the delegate hears it")
    @MainActor
    func tapPush() async throws {
        let simulator = try await grantedSimulator()
        let recorder = Recorder()
        simulator.center.delegate = recorder
        try await simulator.push(Data(#"{"aps": {"alert": "hi"}, "k": "v"}"#.utf8), identifier: "p")
        try await simulator.tap("p")
        #expect(recorder.events == ["\(UNNotificationDefaultActionIdentifier) p"])
    }

    // MARK: move and setTimeZone

    @Test("move fires location triggers on entry")
    func move() async throws {
        let simulator = try await grantedSimulator()
        let region = CLCircularRegion(
            center: CLLocationCoordinate2D(latitude: 52.52, longitude: 13.40), radius: 200, identifier: "office")
        region.notifyOnExit = false
        let content = UNMutableNotificationContent()
        content.title = "At the office"
        try await simulator.center.add(
            UNNotificationRequest(
                identifier: "office", content: content,
                trigger: UNLocationNotificationTrigger(region: region, repeats: false)))
        await simulator.move(to: CLLocationCoordinate2D(latitude: 48.85, longitude: 2.35))
        #expect(await simulator.deliveredNotifications.isEmpty)
        await simulator.move(to: CLLocationCoordinate2D(latitude: 52.52, longitude: 13.40))
        #expect(await simulator.deliveredNotifications.map(\.request.identifier) == ["office"])
        #expect(try await simulator.engine.location() == Coordinate(latitude: 52.52, longitude: 13.40))
    }

    @Test("setTimeZone changes the device's zone")
    func setTimeZone() async throws {
        let simulator = try await grantedSimulator()
        let newYork = TimeZone(identifier: "America/New_York")!
        await simulator.setTimeZone(newYork)
        #expect(try await simulator.engine.timeZone() == newYork)
    }

    @Test("a simulator kept in a SQLite file keeps pending requests for the next simulator on that file")
    func storePath() async throws {
        // The store's companions (-wal, -shm, -verified) go with the directory.
        let path = scratchDirectory("chime-sim").appendingPathComponent("store.sqlite").path
        do {
            let first = try NotificationSimulator(bundleIdentifier: "com.example.file", storePath: path)
            #expect(try await first.center.requestAuthorization(options: [.alert]))
            try await first.center.add(timed("kept", after: 60))
            await first.engine.shutdown()
        }
        let second = try NotificationSimulator(bundleIdentifier: "com.example.file", storePath: path)
        #expect(await second.pendingRequests.map(\.identifier) == ["kept"])
        await second.advance(by: 60)
        #expect(await second.deliveredNotifications.map(\.request.identifier) == ["kept"])
    }
}
