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
                throw ServerError(.invalidConfiguration,
                                  "--desktop on: no notification server on the session bus (\(error)); start one (a desktop session, dunst, mako, …) or use --desktop auto or off")
            }
            logger.info("desktop pop-ups off: no notification server on the session bus", ["reason": error.description])
            return false
        }
    }

    /// The desktop surface for every app, answering into the engine. A text-input action on a
    /// server without inline reply opens the web center's reply field (or a dialog).
    static func startDesktop(_ configuration: ChimeService.Configuration, engine: NotificationEngine, api: ChimeAPI, url: String,
                             tokens: ActivationTokens, logger: ServerLogger) -> (DesktopSurface, NotificationHub.Attachment) {
        let sessions = api.sessions
        let prompt = WebCenterReplyPrompt(baseURL: configuration.listen.isUnix ? nil : url, codes: { sessions.makeCode().code },
                                          opener: configuration.browser ?? Browser.opener(), fallback: DialogReplyPrompt.find())
        // Files reach the notification server only from the app's own attachment store, laid out
        // as the apps' centers lay it out (Chime's AttachmentStore: <data>/attachments/<app>).
        let attachments = configuration.dataDirectory + "/attachments/"
        let desktopApp: @Sendable (String) -> DesktopApp = { app in
            var desktop = DesktopApp.lookup(app)
            desktop.attachmentDirectory = attachments + app.replacingOccurrences(of: "/", with: "_")
            return desktop
        }
        let desktopConfiguration = DesktopSurface.Configuration(address: configuration.desktopBusAddress, app: desktopApp, replyPrompt: prompt,
                                                                log: { level, text in logger.log(level == .info ? .info : .warning, text) })
        let surface = DesktopSurface(engine: engine, configuration: desktopConfiguration) { response, answer in
            if let token = answer.activationToken { tokens.record(token, app: answer.app, response: response.id) }
        }
        return (surface, engine.attach(surface, app: nil))
    }
}

/// The XDG activation tokens that came with desktop answers (`ActivationToken`), by app and
/// response id, for the app the answer starts (`XDG_ACTIVATION_TOKEN`). Holds the newest 256.
///
/// ```swift
/// if let token = service.activationTokens.takeNewest(app: "com.example.alarm") {
///     environment["XDG_ACTIVATION_TOKEN"] = token      // what the background launch does
/// }
/// ```
public final class ActivationTokens: Sendable {
    private struct Key: Hashable {
        var app: String
        var response: Int64
    }

    private let tokens = Mutex<(byKey: [Key: String], order: [Key])>(([:], []))

    public init() {}

    func record(_ token: String, app: String, response: Int64) {
        tokens.withLock { state in
            let key = Key(app: app, response: response)
            if state.byKey.updateValue(token, forKey: key) == nil { state.order.append(key) }
            if state.order.count > 256 { state.byKey[state.order.removeFirst()] = nil }
        }
    }

    /// The newest token of the app's answers, once (the app's launch gets it; older ones go too,
    /// since a launch hands every waiting answer over).
    public func takeNewest(app: String) -> String? {
        tokens.withLock { state in
            let keys = state.order.filter { $0.app == app }
            state.order.removeAll { $0.app == app }
            let newest = keys.last.flatMap { state.byKey[$0] }
            for key in keys { state.byKey[key] = nil }
            return newest
        }
    }

    /// The token sent with the answer that became this response, once.
    public func take(app: String, response: Int64) -> String? {
        tokens.withLock { state in
            let key = Key(app: app, response: response)
            guard let token = state.byKey.removeValue(forKey: key) else { return nil }
            state.order.removeAll { $0 == key }
            return token
        }
    }
}
