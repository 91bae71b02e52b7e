import ChimeCore
import ChimeDesktop
import ChimeHTTP
import ChimeSQLite
import Foundation
import Synchronization

/// The default center: one app, its state in a SQLite file, firing on the real clock.
enum EmbeddedCenter {
    static func make() -> UNUserNotificationCenter {
        let environment = ProcessInfo.processInfo.environment
        let app = bundleIdentifier(environment)
        if let service = environment["CHIME_SERVICE"], !service.isEmpty {
            return connected(to: service, app: app, environment: environment)
        }
        let path = storePath(environment, app: app)
        let policy = authorizationPolicy(environment)
        let store: SQLiteStore
        do {
            store = try SQLiteStore(path: path)
        } catch {
            // There is no way to report this through Apple's API, and running without the store
            // would silently lose notifications: stop with a message that says what to fix.
            fatalError(
                "Chime: cannot open the notification store for \(app): \(error). Set CHIME_STORE to a writable file path."
            )
        }
        // No event log: it serves resumable streams, which only the service has (the outbox, which
        // the app's answers live in, is kept either way).
        var configuration = NotificationEngine.Configuration()
        configuration.recordsEvents = false
        let engine = NotificationEngine(
            store: store, clock: SystemClock(), timeZone: .current, policy: policy, configuration: configuration)
        showOnDesktop(engine: engine, app: app, environment: environment)
        let data = URL(fileURLWithPath: path).deletingLastPathComponent()
        return UNUserNotificationCenter(
            engine: engine, bundleIdentifier: app, timeZone: .current, driven: false, foreground: true,
            attachmentDirectory: AttachmentStore.directory(inDataDirectory: data, app: app))
    }

    /// The app's notifications also pop up on the desktop when the session bus has a notification
    /// server (`CHIME_DESKTOP=off` turns that off). The answers given there reach the delegate like
    /// any other.
    ///
    /// The surface is attached here, before the app can add anything, and connects on its own
    /// thread, so `current()` never waits for the bus and nothing delivered from the start is
    /// missed: what comes before a server answers waits in the surface's backlog and pops up when
    /// one does (at once, or when one starts later, as when the app starts before the desktop's
    /// notification daemon). Asking first and attaching afterwards lost what was delivered
    /// meanwhile, and an app started before the server never popped up. Until a server has
    /// answered once the surface says nothing: a bus without a notification server is no fault of
    /// the app's; after that, losing the server is logged as under `chime serve`.
    static func showOnDesktop(engine: NotificationEngine, app: String, environment: [String: String]) {
        switch environment["CHIME_DESKTOP"]?.lowercased() {
        case nil, "", "auto", "on": break
        case "off": return
        case let other?:
            FileHandle.standardError.write(
                Data("Chime: CHIME_DESKTOP is '\(other)'; accepted: auto, off. Using auto.\n".utf8))
        }
        guard let address = DesktopSurface.sessionBusAddress(environment: environment) else { return }
        let answered = Mutex(false)
        let configuration = DesktopSurface.Configuration(
            address: address,
            log: { level, text in
                guard level == .info || answered.withLock({ $0 }) else { return }
                DesktopSurface.standardErrorLog(level, text)
            },
            observer: { event in
                if case .connected = event { answered.withLock { $0 = true } }
            },
            closesPopUpsOnStop: false)
        engine.attach(DesktopSurface(engine: engine, configuration: configuration), app: app)
    }

    /// A center whose state lives in a `chime serve` service (`CHIME_SERVICE`), as the app
    /// `CHIME_APP_TOKEN` belongs to.
    static func connected(to service: String, app: String, environment: [String: String]) -> UNUserNotificationCenter {
        guard let endpoint = try? HTTPEndpoint(service) else {
            fatalError(
                "Chime: CHIME_SERVICE is '\(service)'; give the service's URL as `chime serve` prints it, such as http://127.0.0.1:7878, or unix:/PATH for its Unix socket"
            )
        }
        guard let token = environment["CHIME_APP_TOKEN"], !token.isEmpty else {
            fatalError(
                "Chime: CHIME_SERVICE is set but CHIME_APP_TOKEN is not; register the app with `chime apps add \(app)` and set CHIME_APP_TOKEN to the token it prints"
            )
        }
        // Started by the service to hand over answers (background launch): not in front, as iOS
        // launches an app in the background; the service then does not wait for its willPresent.
        let launched = environment["CHIME_LAUNCH_REASON"].map { !$0.isEmpty } ?? false
        // The app's attachment files stay on its own machine, in its data directory.
        let attachments = AttachmentStore.directory(
            inDataDirectory: URL(fileURLWithPath: DataDirectory.chime(environment: environment)), app: app)
        return UNUserNotificationCenter(
            backend: ServiceBackend(
                endpoint: endpoint, token: token, caFile: environment["CHIME_CA_FILE"].flatMap { $0.isEmpty ? nil : $0 }
            ), bundleIdentifier: app, timeZone: .current,
            driven: false, foreground: !launched, attachmentDirectory: attachments)
    }

    /// `CHIME_BUNDLE_IDENTIFIER` (which must be a bundle identifier), else the main bundle's
    /// identifier, else the executable's name with anything a bundle identifier cannot hold
    /// replaced by `-`.
    static func bundleIdentifier(_ environment: [String: String]) -> String {
        if let value = environment["CHIME_BUNDLE_IDENTIFIER"], !value.isEmpty {
            do { try Validation.validateBundleIdentifier(value, field: "CHIME_BUNDLE_IDENTIFIER") } catch {
                fatalError("Chime: \(error.message)")
            }
            return value
        }
        if let value = Bundle.main.bundleIdentifier, Validation.isBundleIdentifier(value) { return value }
        let name = (CommandLine.arguments.first.map { URL(fileURLWithPath: $0).lastPathComponent }) ?? ""
        let safe = String(
            String.UnicodeScalarView(
                name.unicodeScalars.prefix(255).map { scalar in
                    Validation.isBundleIdentifier(String(scalar)) ? scalar : "-"
                }))
        return safe.isEmpty ? "app" : safe
    }

    /// `CHIME_STORE`, else `$XDG_DATA_HOME/chime/<app>.sqlite` with XDG's default `~/.local/share`.
    /// The app's attachment files go beside it, in `attachments/<app>/`.
    static func storePath(_ environment: [String: String], app: String) -> String {
        if let value = environment["CHIME_STORE"], !value.isEmpty { return value }
        let safe = app.replacingOccurrences(of: "/", with: "_")
        return DataDirectory.chime(environment: environment) + "/" + safe + ".sqlite"
    }

    /// `CHIME_AUTHORIZATION`: `allow` (the default) or `deny`.
    static func authorizationPolicy(_ environment: [String: String]) -> FixedAuthorizationPolicy {
        switch environment["CHIME_AUTHORIZATION"]?.lowercased() {
        case nil, "", "allow": return FixedAuthorizationPolicy(.grant)
        case "deny": return FixedAuthorizationPolicy(.deny)
        case let other?:
            FileHandle.standardError.write(
                Data("Chime: CHIME_AUTHORIZATION is '\(other)'; accepted: allow, deny. Answering deny.\n".utf8))
            return FixedAuthorizationPolicy(.deny)
        }
    }
}
