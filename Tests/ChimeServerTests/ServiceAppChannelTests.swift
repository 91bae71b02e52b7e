import ChimeCore
import ChimeHTTP
import Foundation
import Synchronization
import TestThreads
import Testing

@testable import Chime
@testable import ChimeServer

/// Rewrites the title, as a decrypting extension would.
final class DecryptingService: UNNotificationServiceExtension {
    override func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        let content = request.content.mutableCopy() as! UNMutableNotificationContent
        content.title = "Decrypted: \(content.title)"
        content.threadIdentifier = "secret"
        contentHandler(content)
    }
}

/// Hands over its best attempt only when its time runs out.
final class LateService: UNNotificationServiceExtension {
    var contentHandler: ((UNNotificationContent) -> Void)?
    var best: UNMutableNotificationContent?
    override func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        self.contentHandler = contentHandler
        best = request.content.mutableCopy() as? UNMutableNotificationContent
        best?.title = "Best attempt"
    }
    override func serviceExtensionTimeWillExpire() {
        if let contentHandler, let best { contentHandler(best) }
    }
}

/// A delegate that answers willPresent with fixed options.
@MainActor final class Presenting: UNUserNotificationCenterDelegate {
    let options: UNNotificationPresentationOptions
    var asked: [String] = []
    init(_ options: UNNotificationPresentationOptions) { self.options = options }
    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification) async
        -> UNNotificationPresentationOptions
    {
        asked.append(notification.request.identifier)
        return options
    }
}

/// What the service asks of a connected Chime app: its notification service extension, and its
/// willPresent (and with it the badge) while it is in front.
@Suite("A Chime app connected to the service: service extension and willPresent", .testThreads)
struct ServiceAppChannelTests {
    static func center(_ harness: ServiceHarness, app: String, token: String, foreground: Bool = false)
        -> UNUserNotificationCenter
    {
        UNUserNotificationCenter(
            backend: ServiceBackend(endpoint: .url(harness.service.url), token: token), bundleIdentifier: app,
            timeZone: .current, driven: false, foreground: foreground)
    }

    /// Pushes `payload` to `app` through the APNs endpoint with the app's token.
    static func push(_ harness: ServiceHarness, app: String, token: String, _ payload: String, id: String) async throws
        -> Int
    {
        let client = harness.client(token: token)
        guard case .string(let device)? = try await client.request(.deviceToken, ["app": app]).json?["deviceToken"]
        else { return 0 }
        return try await client.request(
            .push, ["token": device], body: Array(payload.utf8),
            headers: [("apns-topic", app), ("apns-collapse-id", id)]
        ).status
    }

    static func delivered(_ harness: ServiceHarness, app: String) async throws -> [DeliveredNotification] {
        try await harness.service.engine.delivered(app: app)
    }

    static let mutable = #"{"aps": {"alert": {"title": "Ciphertext"}, "mutable-content": 1, "badge": 3}}"#

    @Test("a mutable push to a connected app goes through its extension before the service delivers it")
    func extensionRuns() async throws {
        try await ServiceHarness.with { harness in
            let app = "com.example.secret"
            let token = try await harness.createApp(app)
            let center = Self.center(harness, app: app, token: token)
            #expect(try await center.requestAuthorization(options: [.alert, .badge]))
            center.notificationServiceExtension = DecryptingService.self
            #expect(
                await ServiceBackendTests.eventually {
                    harness.service.api.channels.connection(of: app).serviceExtension
                })
            #expect(try await Self.push(harness, app: app, token: token, Self.mutable, id: "m1") == 200)
            // Answered once delivered: no waiting needed.
            let notification = try #require(try await Self.delivered(harness, app: app).first)
            #expect(notification.request.content.title == "Decrypted: Ciphertext")
            #expect(notification.request.content.threadIdentifier == "secret")
            #expect(try await harness.service.engine.app(app).badge == 3)
            withExtendedLifetime(center) {}
        }
    }

    @Test(
        "an app that is not connected, or whose extension sends nothing in time, gets the original or its best attempt")
    func notConnectedAndLate() async throws {
        try await ServiceHarness.with(serviceExtensionTimeLimit: 0.2) { harness in
            let app = "com.example.late"
            let token = try await harness.createApp(app)
            _ = try await harness.client(token: token).post("/v1/apps/\(app)/authorization")
            #expect(try await Self.push(harness, app: app, token: token, Self.mutable, id: "away") == 200)
            #expect(
                try await Self.delivered(harness, app: app).first?.request.content.title == "Ciphertext",
                "not running: the original")

            let center = Self.center(harness, app: app, token: token)
            center.notificationServiceExtension = LateService.self
            #expect(
                await ServiceBackendTests.eventually {
                    harness.service.api.channels.connection(of: app).serviceExtension
                })
            #expect(try await Self.push(harness, app: app, token: token, Self.mutable, id: "late") == 200)
            let late = try await Self.delivered(harness, app: app).first { $0.request.identifier == "late" }
            #expect(late?.request.content.title == "Best attempt", "the service's shorter limit is the app's too")
            withExtendedLifetime(center) {}
        }
    }

    @Test(
        "an app in front decides presentation and badge on the service with its willPresent answer",
        arguments: [(UNNotificationPresentationOptions([.banner, .list]), 0), ([.banner, .badge], 5)]
            as [(UNNotificationPresentationOptions, Int)])
    func foreground(answer: UNNotificationPresentationOptions, badge: Int) async throws {
        try await ServiceHarness.with { harness in
            let app = "com.example.front"
            let token = try await harness.createApp(app)
            let center = Self.center(harness, app: app, token: token, foreground: true)
            let delegate = await Presenting(answer)
            await MainActor.run { center.delegate = delegate }
            #expect(try await center.requestAuthorization(options: [.alert, .badge]))
            #expect(
                await ServiceBackendTests.eventually { harness.service.api.channels.connection(of: app).foreground })
            let shown = harness.service.engine.hub.events(app: app)
            let surface = ShownRecorder()
            harness.service.engine.attach(surface, app: app)
            let content = UNMutableNotificationContent()
            content.title = "Hello"
            content.badge = 5
            try await center.add(UNNotificationRequest(identifier: "front", content: content, trigger: nil))
            #expect(await ServiceBackendTests.eventually { !surface.all.isEmpty || answer.isEmpty })
            #expect(await ServiceBackendTests.eventually { await MainActor.run { delegate.asked == ["front"] } })
            await harness.service.engine.hub.settle()
            await harness.service.engine.barrier()
            #expect(try await harness.service.engine.app(app).badge == badge)
            #expect(
                surface.all.first?.presentation
                    == Presentation.foreground(
                        requested: answer, settings: try await harness.service.engine.settings(app: app)))
            _ = shown
            withExtendedLifetime(center) {}
        }
    }

    /// The web center is a subscriber of the service's events, like every event stream: it shows a
    /// delivery with the presentation the service decided from the app's settings, whatever an app
    /// in front on the service answers — the answer is for the surfaces of the machine the app runs
    /// on (the desktop), not for the user's other screens (the web center, Web Push). Decided for
    /// issue 21; docs/architecture.md, the hub's kinds.
    @Test("an app in front that shows nothing hides it from the desktop's surfaces, not from the web center's stream")
    func webCenterKeepsBackgroundPresentation() async throws {
        try await ServiceHarness.with { harness in
            let app = "com.example.frontquiet"
            let token = try await harness.createApp(app)
            let center = Self.center(harness, app: app, token: token, foreground: true)
            let delegate = await Presenting([])
            await MainActor.run { center.delegate = delegate }
            #expect(try await center.requestAuthorization(options: [.alert, .sound]))
            #expect(
                await ServiceBackendTests.eventually { harness.service.api.channels.connection(of: app).foreground })
            let surface = ShownRecorder()
            harness.service.engine.attach(surface, app: app)
            let stream = try await SSEClient.open(harness.endpoint, .allEvents, token: harness.service.ownerToken)
            defer { stream.close() }
            let content = UNMutableNotificationContent()
            content.title = "Quiet"
            content.sound = .default
            try await center.add(UNNotificationRequest(identifier: "quiet", content: content, trigger: nil))
            #expect(await ServiceBackendTests.eventually { await MainActor.run { delegate.asked == ["quiet"] } })
            await harness.service.engine.hub.settle()
            #expect(surface.all.isEmpty, "the app in front answered [], so the desktop's surfaces show nothing")
            var frame: SSEEvent
            repeat { frame = try await stream.next() } while frame.event != "delivered"
            let settings = try await harness.service.engine.settings(app: app)
            let delivered = try #require(try await harness.service.engine.delivered(app: app).first)
            let background = Presentation.background(for: delivered.request.content, settings: settings)
            #expect(!background.isEmpty)
            #expect(frame.json?["notification"]?["identifier"] == .string("quiet"), "\(frame.data)")
            #expect(frame.json?["presentation"] == background.json, "\(frame.data)")
            withExtendedLifetime(center) {}
        }
    }

    @Test("an app that leaves the front no longer holds the service's deliveries")
    func leavesFront() async throws {
        try await ServiceHarness.with { harness in
            let app = "com.example.leaving"
            let token = try await harness.createApp(app)
            let center = Self.center(harness, app: app, token: token, foreground: true)
            #expect(try await center.requestAuthorization(options: [.alert, .badge]))
            #expect(
                await ServiceBackendTests.eventually { harness.service.api.channels.connection(of: app).foreground })
            center.isAppInForeground = false
            #expect(
                await ServiceBackendTests.eventually { !harness.service.api.channels.connection(of: app).foreground })
            #expect(!harness.service.engine.hub.hasPresenter(app: app))
            withExtendedLifetime(center) {}
        }
    }

    @Test("an app the user started is in front; one the service started to hand it answers is not")
    func launchedInBackground() async throws {
        try await ServiceHarness.with { harness in
            let app = "com.example.launched"
            let token = try await harness.createApp(app)
            let started = EmbeddedCenter.connected(
                to: harness.service.url, app: app, environment: ["CHIME_APP_TOKEN": token])
            let launched = EmbeddedCenter.connected(
                to: harness.service.url, app: app,
                environment: ["CHIME_APP_TOKEN": token, "CHIME_LAUNCH_REASON": "response"])
            #expect(started.isAppInForeground)
            #expect(!launched.isAppInForeground)
            withExtendedLifetime((started, launched)) {}
        }
    }

    @Test("answers for calls nobody waits for are refused with 404 and 409")
    func strayAnswers() async throws {
        try await ServiceHarness.with { harness in
            let app = "com.example.stray"
            let token = try await harness.createApp(app)
            let client = harness.client(token: token)
            let content = try await client.post("/v1/apps/\(app)/service-extension/nope", json: #"{"title": "x"}"#)
            #expect(content.status == 404)
            let presented = try await client.post(
                "/v1/apps/\(app)/notifications/n/presentation", json: #"{"options": ["banner"]}"#)
            #expect(presented.status == 409)
            let bad = try await client.post(
                "/v1/apps/\(app)/notifications/n/presentation", json: #"{"options": ["loud"]}"#)
            #expect(bad.status == 400)
        }
    }
}

/// A surface that records the deliveries it is asked to show.
final class ShownRecorder: NotificationSurface, Sendable {
    private let shown = Mutex<[Delivery]>([])
    func show(_ delivery: Delivery, app: String) async { shown.withLock { $0.append(delivery) } }
    func withdraw(_ identifiers: [String], app: String) async {}
    var all: [Delivery] { shown.withLock { $0 } }
}
