import ChimeCore
import Foundation
import Synchronization

@testable import ChimeDesktop

/// An engine (in memory) with the alarm app's categories, and a desktop surface attached to it
/// for every app, on a test desktop's bus.
struct DesktopFixture: Sendable {
    static let app = "com.example.alarm"

    let engine: NotificationEngine
    let surface: DesktopSurface
    let events: SurfaceEvents
    let responses: ResponsesSeen

    /// Snooze, a text-input Add Comment and a destructive Delete; the app hears of dismissals.
    static let alarm = NotificationCategory(
        identifier: "alarm",
        actions: [
            NotificationAction(identifier: "snooze", title: "Snooze 5 Sec"),
            NotificationAction(
                identifier: "comment", title: "Add Comment",
                textInput: .init(buttonTitle: "Add", placeholder: "Type a comment")),
            NotificationAction(identifier: "delete", title: "Delete", options: [.destructive]),
        ], options: [.customDismissAction])
    /// One button; the app does not hear of dismissals.
    static let plain = NotificationCategory(
        identifier: "plain", actions: [NotificationAction(identifier: "done", title: "Mark As Done")])

    static func make(
        on desktop: TestDesktop, prompt: (any DesktopReplyPrompt)? = nil,
        app: @escaping @Sendable (String) -> DesktopApp = { DesktopApp(displayName: $0) },
        closesPopUpsOnStop: Bool = true,
        engineConfiguration: NotificationEngine.Configuration = NotificationEngine.Configuration()
    ) async throws -> DesktopFixture {
        let engine = NotificationEngine(
            store: MemoryStore(), policy: FixedAuthorizationPolicy(.grant), configuration: engineConfiguration)
        _ = try await engine.requestAuthorization(app: Self.app, options: [.alert, .sound, .badge])
        try await engine.setCategories([alarm, plain], app: Self.app)
        let events = SurfaceEvents()
        let responses = ResponsesSeen()
        let configuration = DesktopSurface.Configuration(
            address: desktop.busAddress, callTimeout: .seconds(3), app: app,
            replyPrompt: prompt, log: events.log, observer: events.observer,
            closesPopUpsOnStop: closesPopUpsOnStop)
        let surface = DesktopSurface(
            engine: engine, configuration: configuration,
            onAnswer: { answer in
                responses.answering(answer)
            },
            onResponse: { response, answer in
                responses.add(response, answer)
            })
        engine.attach(surface, app: nil)
        return DesktopFixture(engine: engine, surface: surface, events: events, responses: responses)
    }

    /// Delivers a notification at once (no trigger) and waits until the hub's lanes are done.
    func deliver(
        _ identifier: String, title: String = "Alarm", subtitle: String = "", body: String = "Wake up",
        category: String = "alarm", level: UNNotificationInterruptionLevel = .active,
        sound: NotificationSound? = .default,
        thread: String = "", attachments: [NotificationAttachment] = [], app: String = Self.app
    ) async throws {
        var content = NotificationContent(title: title, subtitle: subtitle, body: body)
        content.categoryIdentifier = category
        content.interruptionLevel = level
        content.sound = sound
        content.threadIdentifier = thread
        content.attachments = attachments
        _ = try await engine.add([NotificationRequest(identifier: identifier, content: content)], app: app)
        await engine.hub.settle()
    }

    func delivered(app: String = Self.app) async throws -> [String] {
        try await engine.delivered(app: app).map(\.request.identifier)
    }

    func outbox(app: String = Self.app) async throws -> [NotificationResponse] {
        try await engine.outbox(app: app)
    }

    /// Runs `body`, then stops the surface and the engine, also when `body` throws.
    func run(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            await stop()
            throw error
        }
        await stop()
    }

    func stop() async {
        await surface.stop()
        await engine.shutdown()
    }
}

/// Responses handed to `onResponse`, with the answers they came from.
final class ResponsesSeen: Sendable {
    private let seen = Mutex<[(NotificationResponse, DesktopAnswer)]>([])
    private let beforeEngine = Mutex<[DesktopAnswer]>([])
    func add(_ response: NotificationResponse, _ answer: DesktopAnswer) {
        seen.withLock { $0.append((response, answer)) }
    }
    var all: [(NotificationResponse, DesktopAnswer)] { seen.withLock { $0 } }
    /// `onAnswer`: an answer on its way to the engine.
    func answering(_ answer: DesktopAnswer) { beforeEngine.withLock { $0.append(answer) } }
    /// The answers `onAnswer` was told of, in order.
    var answered: [DesktopAnswer] { beforeEngine.withLock { $0 } }
}
