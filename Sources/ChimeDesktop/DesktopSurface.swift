import ChimeCore
import Foundation
import Synchronization

/// Notifications as desktop pop-ups: the freedesktop notification server on the session bus
/// (GNOME Shell, KDE Plasma, dunst, mako, swaync, …), through sd-bus.
///
/// Each delivery becomes a pop-up with the category's actions as buttons; the body click, a
/// button, KDE's inline reply and a dismissal come back as answers to the engine. The connection
/// lives on a thread of its own; when the bus or the server goes away the surface logs it once,
/// keeps what arrives meanwhile, and shows it when a server is back.
///
/// ```swift
/// let desktop = DesktopSurface(engine: engine)
/// engine.attach(desktop, app: nil)          // every app's notifications
/// …
/// await desktop.stop()
/// ```
///
/// Text-input actions: where the server advertises `inline-reply` (KDE Plasma) the first one is
/// the pop-up's reply field; elsewhere choosing one opens ``Configuration/replyPrompt`` (a dialog,
/// or under `chime serve` the web center's reply field). Without a prompt such actions are not
/// offered: the app never gets an empty "reply".
public final class DesktopSurface: NotificationSurface {
    public enum LogLevel: String, Sendable {
        case info, warning
    }

    /// What the surface did, for observers (diagnostics and tests).
    public enum Event: Sendable {
        /// A notification server answered (at start, after a restart or a reconnection).
        case connected(ServerProfile)
        /// The server or the bus went away.
        case serverGone
        /// A pop-up was shown (or updated in place) as `id`.
        case shown(app: String, identifier: String, id: UInt32, request: NotifyRequest)
        /// A pop-up was closed because its notification was removed or answered elsewhere.
        case closed(app: String, identifier: String, id: UInt32)
        /// A signal from the server about one of this surface's pop-ups.
        case signal(ServerSignal)
        /// The answer reached the engine (`nil`: a dismissal the app does not hear of).
        case answered(DesktopAnswer, NotificationResponse?)
        /// The engine refused the answer (the notification was already answered or removed, …).
        case answerFailed(DesktopAnswer, String)
        /// A text-input action was chosen without inline reply: the prompt asks for the text.
        case prompting(DesktopAnswer)
        /// The prompt ended without a text for the app (cancelled, or handed over).
        case promptEnded(DesktopAnswer, ReplyPromptOutcome)
    }

    public struct Configuration: Sendable {
        /// The bus address; `nil` for the session bus (`DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`).
        public var address: String?
        /// How long a call to the server may take.
        public var callTimeout: Duration
        /// How an app is named and which icon it has.
        public var app: @Sendable (String) -> DesktopApp
        /// Asks for the text of a text-input action where the server has no inline reply; `nil`:
        /// such actions are not offered.
        public var replyPrompt: (any DesktopReplyPrompt)?
        /// Where the surface says what went wrong (once per outage) and, at `info`, what server it uses.
        public var log: @Sendable (LogLevel, String) -> Void
        /// Told of everything the surface does.
        public var observer: (@Sendable (Event) -> Void)?
        /// Whether ``stop()`` closes the pop-ups shown (their buttons would reach nobody).
        public var closesPopUpsOnStop: Bool
        /// How many deliveries are kept while no server is there, to show when one is.
        public var backlogLimit: Int

        public init(
            address: String? = nil, callTimeout: Duration = .seconds(5),
            app: @escaping @Sendable (String) -> DesktopApp = { DesktopApp.lookup($0) },
            replyPrompt: (any DesktopReplyPrompt)? = DialogReplyPrompt.find(),
            log: @escaping @Sendable (LogLevel, String) -> Void = DesktopSurface.standardErrorLog,
            observer: (@Sendable (Event) -> Void)? = nil, closesPopUpsOnStop: Bool = true, backlogLimit: Int = 32
        ) {
            self.address = address
            self.callTimeout = callTimeout
            self.app = app
            self.replyPrompt = replyPrompt
            self.log = log
            self.observer = observer
            self.closesPopUpsOnStop = closesPopUpsOnStop
            self.backlogLimit = backlogLimit
        }
    }

    /// Hands an answer to the engine; returns the stored response (`nil` for a dismissal the app
    /// does not hear of).
    public typealias Responder = @Sendable (DesktopAnswer) async throws -> NotificationResponse?

    private let configuration: Configuration
    private let loop: DesktopLoop
    private let responder: Responder
    private let outcomes: AsyncStream<DesktopBook.Outcome>.Continuation
    private let consumer: Mutex<Task<Void, Never>?> = Mutex(nil)
    private let apps = Mutex<[String: DesktopApp]>([:])
    private let prompts = Mutex<[Task<Void, Never>]>([])

    /// A surface that answers through `respond`, started at once.
    public init(configuration: Configuration = Configuration(), respond: @escaping Responder) {
        self.configuration = configuration
        self.responder = respond
        let (stream, continuation) = AsyncStream<DesktopBook.Outcome>.makeStream(bufferingPolicy: .unbounded)
        self.outcomes = continuation
        let observer = configuration.observer
        let log = configuration.log
        loop = DesktopLoop(
            settings: .init(
                address: configuration.address, callTimeout: configuration.callTimeout,
                canPrompt: configuration.replyPrompt != nil, backlogLimit: configuration.backlogLimit),
            report: { observer?($0) }, outcome: { continuation.yield($0) }, log: { log($0, "desktop: " + $1) })
        loop.start()
        let task = Task { [self] in
            for await outcome in stream { await handle(outcome) }
        }
        consumer.withLock { $0 = task }
    }

    /// A surface whose answers go to `engine.respond`. `onAnswer` is told of each answer before
    /// it reaches the engine — before anything that hears of the response (an app launched to take
    /// it) can run, so that is where its ``DesktopAnswer/activationToken`` is kept for the app the
    /// answer launches. `onResponse` is told of each stored response with the answer it came from.
    public convenience init(
        engine: NotificationEngine, configuration: Configuration = Configuration(),
        onAnswer: (@Sendable (DesktopAnswer) -> Void)? = nil,
        onResponse: (@Sendable (NotificationResponse, DesktopAnswer) -> Void)? = nil
    ) {
        self.init(configuration: configuration) { answer in
            onAnswer?(answer)
            let response = try await engine.respond(
                app: answer.app, notification: answer.notification, action: answer.action,
                userText: answer.userText, surface: "desktop")
            if let response { onResponse?(response, answer) }
            return response
        }
    }

    public func show(_ delivery: Delivery, app: String) async {
        // Held by a focus: in the list only, no pop-up.
        if delivery.focus?.quiet == true { return }
        let desktopApp = desktopApp(app)
        let key = DesktopBook.Key(app: app, identifier: delivery.notification.request.identifier)
        _ = await loop.perform { $0.show(delivery, key: key, app: desktopApp) }
    }

    public func withdraw(_ identifiers: [String], app: String) async {
        _ = await loop.perform { loop in
            for identifier in identifiers { loop.withdraw(DesktopBook.Key(app: app, identifier: identifier)) }
        }
    }

    /// The server in use, or `nil` while there is none.
    public var server: ServerProfile? {
        get async { await loop.perform { $0.server } ?? nil }
    }

    /// How many pop-ups of this surface the server shows now.
    public var popUpCount: Int {
        get async { await loop.perform { $0.book.count } ?? 0 }
    }

    /// Closes the pop-ups (``Configuration/closesPopUpsOnStop``), hands the answers already given
    /// to the engine, and ends the connection. Detach the surface first.
    public func stop() async {
        let closes = configuration.closesPopUpsOnStop
        _ = await loop.perform { if closes { $0.closeAll() } }
        loop.stop()
        for task in prompts.withLock({ $0 }) { task.cancel() }
        outcomes.finish()
        await consumer.withLock { $0 }?.value
    }

    private func desktopApp(_ app: String) -> DesktopApp {
        if let known = apps.withLock({ $0[app] }) { return known }
        let found = configuration.app(app)
        apps.withLock { $0[app] = found }
        return found
    }

    // MARK: - Answers

    private func handle(_ outcome: DesktopBook.Outcome) async {
        switch outcome {
        case .respond(let answer):
            await deliver(answer)
        case .askForText(let answer, let action, let summary):
            let key = DesktopBook.Key(app: answer.app, identifier: answer.notification)
            guard let prompt = configuration.replyPrompt else {
                _ = await loop.perform { $0.reopen(key) }
                return
            }
            configuration.observer?(.prompting(answer))
            let question = ReplyQuestion(
                app: desktopApp(answer.app), bundleIdentifier: answer.app, notification: answer.notification,
                summary: summary, action: action)
            // A prompt waits for the user: it must not hold up other answers.
            let task = Task { [self] in
                let result = await prompt.ask(question)
                guard case .text(let text) = result else {
                    _ = await loop.perform { $0.reopen(key) }
                    configuration.observer?(.promptEnded(answer, result))
                    return
                }
                var typed = answer
                typed.userText = text
                await deliver(typed)
            }
            prompts.withLock { tasks in
                tasks.removeAll { $0.isCancelled }
                tasks.append(task)
            }
        }
    }

    /// Hands the answer to the engine. A failure of the store is tried again (the user answered,
    /// so the answer must not be lost); a refusal by the rules is final and logged.
    private func deliver(_ answer: DesktopAnswer) async {
        var delay: Duration = .milliseconds(200)
        for attempt in 1...4 {
            do {
                let response = try await responder(answer)
                configuration.observer?(.answered(answer, response))
                return
            } catch let error where error is ChimeError || error is UNError || attempt == 4 {
                configuration.log(
                    .warning,
                    "desktop: the answer '\(answer.action)' to \(answer.app) '\(answer.notification)' was not taken: \(error)"
                )
                configuration.observer?(.answerFailed(answer, "\(error)"))
                return
            } catch {
                try? await Sleep.for(delay)
                delay *= 5
            }
        }
    }

    // MARK: - The session bus

    /// The session bus's address: `DBUS_SESSION_BUS_ADDRESS`, else `unix:path=$XDG_RUNTIME_DIR/bus`
    /// when that socket exists, else `nil`.
    public static func sessionBusAddress(environment: [String: String] = ProcessInfo.processInfo.environment) -> String?
    {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty { return address }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty,
            FileManager.default.fileExists(atPath: runtime + "/bus")
        {
            return "unix:path=\(runtime)/bus"
        }
        return nil
    }

    /// Whether a notification server answers on the bus (starting it where the bus can): its
    /// profile, or why not. Runs on a thread of its own; takes at most about `timeout`.
    public static func probe(address: String? = nil, timeout: Duration = .seconds(5)) async -> Result<
        ServerProfile, BusError
    > {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                guard let address = address ?? sessionBusAddress() else {
                    continuation.resume(
                        returning: .failure(
                            BusError(
                                .unreachable,
                                "no session bus: DBUS_SESSION_BUS_ADDRESS is not set and $XDG_RUNTIME_DIR/bus does not exist"
                            )))
                    return
                }
                do {
                    let connection = try BusConnection(address: address, description: "chime-probe")
                    defer { connection.close() }
                    continuation.resume(
                        returning: .success(try FreedesktopNotifications.profile(on: connection, timeout: timeout)))
                } catch let error as BusError {
                    continuation.resume(returning: .failure(error))
                } catch {
                    continuation.resume(returning: .failure(BusError(.callFailed, "\(error)")))
                }
            }
            thread.name = "chime.desktop.probe"
            thread.start()
        }
    }

    /// Lines on standard error: `chime desktop: …`. Only warnings unless `CHIME_DESKTOP_LOG=info`.
    public static let standardErrorLog: @Sendable (LogLevel, String) -> Void = { level, text in
        guard level == .warning || ProcessInfo.processInfo.environment["CHIME_DESKTOP_LOG"] == "info" else { return }
        FileHandle.standardError.write(Data("Chime \(text)\n".utf8))
    }
}
