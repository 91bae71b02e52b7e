import Chime
import ChimeCore
import ChimeHTTP
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

/// Apple's API over a running `chime serve` (`CHIME_SERVICE`): the app's state lives in the
/// service, and the user's answers come back through its event stream and outbox.
@Suite("UNUserNotificationCenter connected to a service", .testThreads)
struct ServiceBackendTests {
    @MainActor final class Recorder: UNUserNotificationCenterDelegate {
        var responses: [UNNotificationResponse] = []
        func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse)
            async
        {
            responses.append(response)
        }
    }

    static func center(_ harness: ServiceHarness, app: String, token: String) -> UNUserNotificationCenter {
        UNUserNotificationCenter(
            backend: ServiceBackend(endpoint: .url(harness.service.url), token: token), bundleIdentifier: app,
            timeZone: .current, driven: false, foreground: false)
    }

    /// Waits (at most 60 s) for `condition`.
    static func eventually(_ condition: @escaping @MainActor () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            try? await Sleep.for(.milliseconds(50))
        }
        return await condition()
    }

    @Test(
        "an escalating request added through the service keeps its escalation; its receipt reads back through the center once answered"
    )
    func escalationReceipt() async throws {
        try await ServiceHarness.with { harness in
            let app = "com.example.wake"
            let token = try await harness.createApp(app)
            let center = Self.center(harness, app: app, token: token)
            #expect(try await center.requestAuthorization(options: [.alert]))
            let content = UNMutableNotificationContent()
            content.title = "Wake up"
            try await center.add(
                UNNotificationRequest(
                    identifier: "wake", content: content, trigger: nil,
                    escalation: NotificationEscalation(every: 60, for: 1800)))
            #expect(
                await Self.eventually {
                    await center.deliveredNotifications().first?.request.escalation
                        == NotificationEscalation(every: 60, for: 1800)
                })
            #expect(try await center.receipt(for: "wake")?.isEscalating == true)
            #expect(try await center.receipt(for: "nothing") == nil)
            let answer = try await harness.owner.post(
                "/v1/apps/\(app)/notifications/wake/responses",
                json: #"{"actionIdentifier": "com.apple.UNNotificationDismissActionIdentifier", "surface": "desktop"}"#)
            #expect(answer.status == 204)
            let receipt = try await center.receipt(for: "wake")
            #expect(receipt?.acknowledged == true && receipt?.surface == "desktop" && receipt?.alerts == 1)
            #expect(
                receipt?.actionIdentifier == UNNotificationDismissActionIdentifier
                    && receipt?.escalation == NotificationEscalation(every: 60, for: 1800))
        }
    }

    @Test("authorize, categories, schedule, deliver, the user's answer to the delegate, acknowledged")
    func alarmFlow() async throws {
        try await ServiceHarness.with { harness in
            let app = "com.example.alarm"
            let token = try await harness.createApp(app)
            let center = Self.center(harness, app: app, token: token)
            let recorder = Recorder()
            center.delegate = recorder

            #expect(try await center.requestAuthorization(options: [.alert, .sound]))
            #expect(await center.notificationSettings().authorizationStatus == .authorized)
            let snooze = UNNotificationAction(identifier: "snooze", title: "Snooze 5 Sec", options: [])
            let comment = UNTextInputNotificationAction(
                identifier: "comment", title: "Add Comment", options: [.foreground],
                textInputButtonTitle: "Add", textInputPlaceholder: "Add Comment Here")
            center.setNotificationCategories([
                UNNotificationCategory(
                    identifier: "alarm.category", actions: [snooze, comment],
                    intentIdentifiers: [], options: [.customDismissAction])
            ])
            let categories = await center.notificationCategories()
            #expect(categories.first?.actions.map(\.identifier) == ["snooze", "comment"])

            let content = UNMutableNotificationContent()
            content.title = "Wake up"
            content.categoryIdentifier = "alarm.category"
            content.userInfo = ["task": "run"]
            try await center.add(
                UNNotificationRequest(
                    identifier: "chat/42", content: content,
                    trigger: UNTimeIntervalNotificationTrigger(timeInterval: 600, repeats: false)))
            let pending = await center.pendingNotificationRequests()
            #expect(pending.map(\.identifier) == ["chat/42"])
            #expect((pending.first?.trigger as? UNTimeIntervalNotificationTrigger)?.timeInterval == 600)

            try await center.add(UNNotificationRequest(identifier: "now", content: content, trigger: nil))
            #expect(
                await Self.eventually { await center.deliveredNotifications().map(\.request.identifier) == ["now"] })
            let delivered = await center.deliveredNotifications()
            #expect(delivered.first?.request.content.userInfo["task"] as? String == "run")

            // The user answers in the web center (the owner's route); the app hears it.
            let answer = try await harness.owner.post(
                "/v1/apps/\(app)/notifications/now/responses",
                json: #"{"actionIdentifier": "comment", "userText": "on my way"}"#)
            #expect(answer.status == 201)
            #expect(await Self.eventually { recorder.responses.count == 1 })
            let response = await recorder.responses.first
            #expect(response?.actionIdentifier == "comment")
            #expect((response as? UNTextInputNotificationResponse)?.userText == "on my way")
            #expect(
                await Self.eventually {
                    (try? await harness.owner.get("/v1/apps/\(app)/responses").json?.arrayCount) == 0
                },
                "the handled answer leaves the outbox")

            center.removePendingNotificationRequests(withIdentifiers: ["chat/42"])
            try await center.setBadgeCount(3)
            #expect(await center.pendingNotificationRequests().isEmpty, "operations run in call order")
            #expect(try await harness.service.engine.app(app).badge == 3)
            center.removeAllDeliveredNotifications()
            #expect(await center.deliveredNotifications().isEmpty)
        }
    }

    @Test("errors are Apple's and Chime's: not allowed, bad input, bad token, service away")
    func errors() async throws {
        try await ServiceHarness.with(autoAllow: false) { harness in
            let app = "com.example.denied"
            let token = try await harness.createApp(app)
            let center = Self.center(harness, app: app, token: token)
            let content = UNMutableNotificationContent()
            content.title = "Hi"
            await #expect(throws: UNError.self) {
                try await center.add(UNNotificationRequest(identifier: "a", content: content, trigger: nil))
            }
            do {
                try await center.setBadgeCount(-1)
                Issue.record("a negative badge was accepted")
            } catch let error as UNError {
                #expect(error.code == .badgeInputInvalid)
            }

            let stranger = Self.center(harness, app: app, token: "not-a-token")
            await #expect(throws: ChimeError.self) { try await stranger.setBadgeCount(1) }

            let away = UNUserNotificationCenter(
                backend: ServiceBackend(endpoint: .url("http://127.0.0.1:9"), token: token),
                bundleIdentifier: app, timeZone: .current, driven: false, foreground: false)
            do {
                try await away.setBadgeCount(1)
                Issue.record("no service, yet it succeeded")
            } catch let error as ChimeError {
                #expect(error.code == .serviceUnavailable)
            }
        }
    }

    @Test(
        "an answer given while the app was away is handed over when it comes back; pushes go through the APNs endpoint")
    func outboxAndPush() async throws {
        try await ServiceHarness.with { harness in
            let app = "com.example.reminder"
            let token = try await harness.createApp(app)
            let first = Self.center(harness, app: app, token: token)
            #expect(try await first.requestAuthorization(options: [.alert]))
            let payload = Data(#"{"aps": {"alert": {"title": "Drink water"}, "thread-id": "water"}, "glass": 2}"#.utf8)
            try await first.deliverRemoteNotification(payload, identifier: "water-1")
            #expect(
                await Self.eventually {
                    await first.deliveredNotifications().first?.request.trigger is UNPushNotificationTrigger
                })
            let pushed = await first.deliveredNotifications().first
            #expect(pushed?.request.identifier == "water-1")
            #expect(pushed?.request.content.threadIdentifier == "water")
            #expect(pushed?.request.content.userInfo["glass"] as? Int == 2)

            // Nobody listens: the answer waits in the outbox.
            let answer = try await harness.owner.post(
                "/v1/apps/\(app)/notifications/water-1/responses",
                json: #"{"actionIdentifier": "com.apple.UNNotificationDefaultActionIdentifier"}"#)
            #expect(answer.status == 201)
            let second = Self.center(harness, app: app, token: token)
            let recorder = Recorder()
            second.delegate = recorder
            #expect(
                await Self.eventually {
                    recorder.responses.map(\.actionIdentifier) == [UNNotificationDefaultActionIdentifier]
                })
        }
    }
}
