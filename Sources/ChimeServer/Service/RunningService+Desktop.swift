import ChimeCore
import ChimeDesktop
import Foundation
import Synchronization

extension RunningService {
    /// `--desktop`: asks the session bus for a notification server before anything starts.
    /// `on` without one fails; `auto` without one goes on without pop-ups and says so.
    ///
    /// - Returns: whether to start the desktop surface.
    static func checkDesktop(_ configuration: ChimeService.Configuration, logger: ServerLogger) async throws -> Bool {
        guard configuration.desktop != .off else { return false }
        switch await DesktopSurface.probe(address: configuration.desktopBusAddress, timeout: .seconds(5)) {
        case .success:
            return true
        case .failure(let error):
            if configuration.desktop == .on {
                throw ServerError(
                    .invalidConfiguration,
                    "--desktop on: no notification server on the session bus (\(error)); start one (a desktop session, dunst, mako, …) or use --desktop auto or off"
                )
            }
            logger.info("desktop pop-ups off: no notification server on the session bus", ["reason": error.description])
            return false
        }
    }

    /// The desktop surface for every app, answering into the engine. A text-input action on a
    /// server without inline reply opens the web center's reply field (or a dialog), at `server`'s
    /// address (the surface starts before the server: the address is read when a reply is asked).
    static func startDesktop(
        _ configuration: ChimeService.Configuration, engine: NotificationEngine, api: ChimeAPI, server: HTTPServer,
        tokens: ActivationTokens, logger: ServerLogger
    ) -> (DesktopSurface, NotificationHub.Attachment) {
        let sessions = api.sessions
        let unix = configuration.listen.isUnix
        let prompt = WebCenterReplyPrompt(
            baseURL: { unix ? nil : server.url }, codes: { sessions.makeCode().code },
            opener: configuration.browser ?? Browser.opener(), fallback: DialogReplyPrompt.find())
        // Files reach the notification server only from the app's own attachment store, laid out
        // as the apps' centers lay it out (Chime's AttachmentStore: <data>/attachments/<app>).
        let attachments = configuration.dataDirectory + "/attachments/"
        let desktopApp: @Sendable (String) -> DesktopApp = { app in
            var desktop = DesktopApp.lookup(app)
            desktop.attachmentDirectory = attachments + app.replacingOccurrences(of: "/", with: "_")
            return desktop
        }
        let desktopConfiguration = DesktopSurface.Configuration(
            address: configuration.desktopBusAddress, app: desktopApp, replyPrompt: prompt,
            log: { level, text in logger.log(level == .info ? .info : .warning, text) })
        // Kept before the answer reaches the engine: the response event starts the app's launch,
        // which takes the token, possibly before `respond` has returned here.
        let surface = DesktopSurface(
            engine: engine, configuration: desktopConfiguration,
            onAnswer: { answer in
                if let token = answer.activationToken { tokens.record(token, app: answer.app) }
            })
        return (surface, engine.attach(surface, app: nil))
    }
}

/// The XDG activation tokens that came with desktop answers (`ActivationToken`), by app, for the
/// app the answer starts (`XDG_ACTIVATION_TOKEN`). Each is kept as its answer goes to the engine,
/// before the response can start a launch; holds the newest 256. A token whose answer the engine
/// refused (answered elsewhere already) waits for the app's next launch like the others: a
/// compositor refuses a token that is no longer valid, so a stale one grants nothing.
///
/// ```swift
/// if let token = service.activationTokens.takeNewest(app: "com.example.alarm") {
///     environment["XDG_ACTIVATION_TOKEN"] = token      // what the background launch does
/// }
/// ```
public final class ActivationTokens: Sendable {
    private let tokens = Mutex<[(app: String, token: String)]>([])

    public init() {}

    func record(_ token: String, app: String) {
        tokens.withLock { tokens in
            tokens.append((app, token))
            if tokens.count > 256 { tokens.removeFirst(tokens.count - 256) }
        }
    }

    /// The newest token of the app's answers, once (the app's launch gets it; older ones go too,
    /// since a launch hands every waiting answer over).
    public func takeNewest(app: String) -> String? {
        tokens.withLock { tokens in
            let newest = tokens.last { $0.app == app }?.token
            tokens.removeAll { $0.app == app }
            return newest
        }
    }
}
