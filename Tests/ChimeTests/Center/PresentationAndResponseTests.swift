import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// How notifications are shown, and how the user's answers reach the app.
@Suite("Presentation and responses", .testThreads)
struct PresentationAndResponseTests {
    enum DelegateKind: String, Sendable, CustomTestStringConvertible {
        case full, responseOnly, none
        var testDescription: String { rawValue }
    }

    struct PresentationCase: Sendable, CustomTestStringConvertible {
        var name: String
        var state: NotificationSimulator.AppState
        var delegate: DelegateKind
        var willPresentAnswer: UNNotificationPresentationOptions = [.banner, .list, .sound, .badge]
        var authorization: UNAuthorizationOptions = [.alert, .sound, .badge]
        var sound = true
        var badge = false
        var level: UNNotificationInterruptionLevel = .active
        /// `nil`: not shown at all (yet still delivered).
        var expected: UNNotificationPresentationOptions?
        var testDescription: String { name }
    }

    static let presentationCases: [PresentationCase] = [
        PresentationCase(
            name: "foreground + willPresent: options as asked", state: .foreground, delegate: .full,
            badge: true, expected: [.banner, .list, .sound, .badge]),
        PresentationCase(
            name: "foreground + willPresent: limited by what the user allowed", state: .foreground, delegate: .full,
            authorization: [.alert], badge: true, expected: [.banner, .list]),
        PresentationCase(
            name: "foreground + willPresent answering only .list", state: .foreground, delegate: .full,
            willPresentAnswer: [.list], expected: [.list]),
        PresentationCase(
            name: "foreground + willPresent answering []: nothing shown", state: .foreground, delegate: .full,
            willPresentAnswer: [], expected: nil),
        PresentationCase(
            name: "foreground, delegate without willPresent: nothing shown", state: .foreground,
            delegate: .responseOnly, expected: nil),
        PresentationCase(
            name: "foreground, no delegate: nothing shown", state: .foreground, delegate: .none, expected: nil),
        PresentationCase(
            name: "background, content with sound", state: .background, delegate: .full,
            expected: [.list, .banner, .sound]),
        PresentationCase(
            name: "background, content without sound", state: .background, delegate: .full, sound: false,
            expected: [.list, .banner]),
        PresentationCase(
            name: "background, content with badge", state: .background, delegate: .none, sound: false, badge: true,
            expected: [.list, .banner, .badge]),
        PresentationCase(
            name: "background, passive: list only", state: .background, delegate: .full, badge: false,
            level: .passive, expected: [.list]),
        PresentationCase(
            name: "background, sound not allowed", state: .background, delegate: .none, authorization: [.alert],
            expected: [.list, .banner]),
    ]

    @Test("how a notification is presented", arguments: presentationCases)
    @MainActor
    func presentation(_ c: PresentationCase) async throws {
        let simulator = try await authorizedSimulator(c.authorization)
        let full = RecordingDelegate(presenting: c.willPresentAnswer)
        let responseOnly = ResponseOnlyDelegate()
        switch c.delegate {
        case .full: simulator.center.delegate = full
        case .responseOnly: simulator.center.delegate = responseOnly
        case .none: break
        }
        simulator.appState = c.state
        let content = content("Hello", sound: c.sound ? .default : nil)
        content.badge = c.badge ? 1 : nil
        content.interruptionLevel = c.level
        try await simulator.center.add(
            UNNotificationRequest(
                identifier: "n", content: content,
                trigger: UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false)))
        await simulator.advance(by: 5)
        let presented = await simulator.presented
        if let expected = c.expected {
            #expect(presented.map(\.notification.request.identifier) == ["n"])
            #expect(presented.first?.options == expected)
        } else {
            #expect(presented.isEmpty)
        }
        #expect(await simulator.deliveredNotifications.map(\.request.identifier) == ["n"], "delivered either way")
        #expect(
            full.willPresent == (c.state == .foreground && c.delegate == .full ? ["n"] : []),
            "willPresent is asked only with the app in front")
    }

    @Test("the async willPresent form decides presentation")
    @MainActor
    func asyncWillPresent() async throws {
        @MainActor final class AsyncDelegate: UNUserNotificationCenterDelegate {
            func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification)
                async
                -> UNNotificationPresentationOptions
            { [.banner] }
        }
        let simulator = try await authorizedSimulator()
        let delegate = AsyncDelegate()
        simulator.center.delegate = delegate
        simulator.appState = .foreground
        try await simulator.center.add(UNNotificationRequest(identifier: "n", content: content("Hi"), trigger: nil))
        #expect(await simulator.presented.map(\.options) == [[.banner]])
    }

    // MARK: Responses

    /// A simulator in the foreground with a category of a button and a text field, and one delivered
    /// notification "n" of it.
    @MainActor
    func deliveredWithCategory(options: UNNotificationCategoryOptions = []) async throws -> (
        NotificationSimulator, RecordingDelegate
    ) {
        let simulator = try await authorizedSimulator()
        let delegate = RecordingDelegate()
        simulator.center.delegate = delegate
        let snooze = UNNotificationAction(identifier: "snooze", title: "Snooze")
        let comment = UNTextInputNotificationAction(
            identifier: "comment", title: "Comment", options: [],
            textInputButtonTitle: "Add", textInputPlaceholder: "Say something")
        simulator.center.setNotificationCategories([
            UNNotificationCategory(
                identifier: "alarm", actions: [snooze, comment], intentIdentifiers: [], options: options),
            UNNotificationCategory(
                identifier: "other", actions: [UNNotificationAction(identifier: "archive", title: "Archive")],
                intentIdentifiers: []),
        ])
        try await simulator.center.add(
            UNNotificationRequest(identifier: "n", content: content("Alarm", category: "alarm"), trigger: nil))
        return (simulator, delegate)
    }

    @Test("a tap gives the default action identifier, once")
    @MainActor
    func tap() async throws {
        let (simulator, delegate) = try await deliveredWithCategory()
        try await simulator.tap("n")
        #expect(delegate.responses.map(\.actionIdentifier) == [UNNotificationDefaultActionIdentifier])
        #expect(delegate.responses.first?.notification.request.identifier == "n")
        #expect(!(delegate.responses.first is UNTextInputNotificationResponse))
        await simulator.advance(by: 60)
        _ = await simulator.deliveredNotifications
        #expect(delegate.responses.count == 1, "didReceive is called exactly once per response")
        #expect(
            try await simulator.engine.outbox(app: simulator.bundleIdentifier).isEmpty,
            "handled responses leave the outbox")
    }

    @Test("a button gives its identifier")
    @MainActor
    func button() async throws {
        let (simulator, delegate) = try await deliveredWithCategory()
        try await simulator.perform("snooze", on: "n")
        #expect(delegate.responses.map(\.actionIdentifier) == ["snooze"])
    }

    @Test("a text-input action gives a UNTextInputNotificationResponse with the typed text")
    @MainActor
    func textInput() async throws {
        let (simulator, delegate) = try await deliveredWithCategory()
        try await simulator.reply("Call me", with: "comment", on: "n")
        let response = try #require(delegate.responses.first as? UNTextInputNotificationResponse)
        #expect(response.userText == "Call me")
        #expect(response.actionIdentifier == "comment")
        #expect(delegate.responses.count == 1)
    }

    @Test(
        "a dismissal reaches the delegate only when the category has .customDismissAction",
        arguments: [
            (UNNotificationCategoryOptions.customDismissAction, true), ([], false), ([.allowInCarPlay], false),
        ] as [(UNNotificationCategoryOptions, Bool)])
    @MainActor
    func dismiss(options: UNNotificationCategoryOptions, heard: Bool) async throws {
        let (simulator, delegate) = try await deliveredWithCategory(options: options)
        try await simulator.dismiss("n")
        #expect(delegate.responses.map(\.actionIdentifier) == (heard ? [UNNotificationDismissActionIdentifier] : []))
        #expect(await simulator.deliveredNotifications.isEmpty, "a dismissed notification leaves the list")
    }

    @Test("acting on a notification that is not delivered throws an error naming it")
    @MainActor
    func notDelivered() async throws {
        let (simulator, delegate) = try await deliveredWithCategory()
        let error = await #expect(throws: ChimeError.self) { try await simulator.tap("missing") }
        #expect(error?.code == .notFound)
        #expect(error?.message.contains("'missing'") == true, "\(error?.message ?? "")")
        #expect(delegate.responses.isEmpty)
    }

    @Test("an action the category does not have throws an error naming the action", arguments: ["archive", "nope"])
    @MainActor
    func unknownAction(action: String) async throws {
        let (simulator, delegate) = try await deliveredWithCategory()
        let error = await #expect(throws: ChimeError.self) { try await simulator.perform(action, on: "n") }
        #expect(error?.code == .unknownAction)
        #expect(error?.message.contains("'\(action)'") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("'snooze'") == true, "the message lists what is accepted")
        #expect(delegate.responses.isEmpty)
        #expect(
            await simulator.deliveredNotifications.map(\.request.identifier) == ["n"],
            "still delivered after a refused action")
    }

    @Test("a reply on a button without a text field, or a button press on a text field without text, is refused")
    @MainActor
    func textMismatch() async throws {
        let (simulator, _) = try await deliveredWithCategory()
        await #expect(throws: ChimeError.self) { try await simulator.reply("hi", with: "snooze", on: "n") }
        await #expect(throws: ChimeError.self) { try await simulator.perform("comment", on: "n") }
    }

    @Test("a response waits in the outbox until a delegate takes it")
    @MainActor
    func outbox() async throws {
        let simulator = try await authorizedSimulator()
        try await simulator.center.add(UNNotificationRequest(identifier: "n", content: content("Hi"), trigger: nil))
        try await simulator.tap("n")
        await simulator.advance(by: 10)
        let waiting = try await simulator.engine.outbox(app: simulator.bundleIdentifier)
        #expect(waiting.map(\.actionIdentifier) == [UNNotificationDefaultActionIdentifier])
        let delegate = RecordingDelegate()
        simulator.center.delegate = delegate
        await simulator.advance(by: 0)
        #expect(delegate.responses.map(\.notification.request.identifier) == ["n"])
        #expect(try await simulator.engine.outbox(app: simulator.bundleIdentifier).isEmpty)
        await simulator.advance(by: 10)
        #expect(delegate.responses.count == 1)
    }

    @Test("a response given while the app was not running is handed over when it returns (same store)")
    @MainActor
    func outboxAcrossRestart() async throws {
        // The store's companions (-wal, -shm, -verified) go with the directory.
        let path = scratchDirectory("chime-outbox").appendingPathComponent("store.sqlite").path
        do {
            let before = try NotificationSimulator(bundleIdentifier: "com.example.restart", storePath: path)
            #expect(try await before.center.requestAuthorization(options: [.alert]))
            try await before.center.add(UNNotificationRequest(identifier: "n", content: content("Hi"), trigger: nil))
            try await before.tap("n")
            await before.engine.shutdown()
        }
        let after = try NotificationSimulator(bundleIdentifier: "com.example.restart", storePath: path)
        let delegate = RecordingDelegate()
        after.center.delegate = delegate
        await after.advance(by: 0)
        #expect(delegate.responses.map(\.actionIdentifier) == [UNNotificationDefaultActionIdentifier])
        #expect(try await after.engine.outbox(app: "com.example.restart").isEmpty)
    }

    @Test("a delegate's add during didReceive is pending when perform returns (the snooze loop)")
    @MainActor
    func snoozeInsideDidReceive() async throws {
        let (simulator, delegate) = try await deliveredWithCategory()
        delegate.onResponse = { center, response in
            let changed = response.notification.request.content.mutableCopy() as! UNMutableNotificationContent
            changed.body = "Snoozed"
            center.add(
                UNNotificationRequest(
                    identifier: "n", content: changed,
                    trigger: UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false)))
        }
        try await simulator.perform("snooze", on: "n")
        let pending = try await simulator.engine.pending(app: simulator.bundleIdentifier)
        #expect(pending.map(\.request.content.body) == ["Snoozed"])
        await simulator.advance(by: 5)
        #expect(await simulator.deliveredNotifications.first?.request.content.body == "Snoozed")
    }
}
