import ChimeCore
import ChimeSQLite
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `chime serve`: the notification center as a service. Opens the data directory, the store (SQLite
/// in the data directory, or a PostgreSQL database shared with other nodes) and the engine, starts
/// the scheduler and the HTTP server, and runs until SIGTERM or SIGINT.
///
/// ```swift
/// var configuration = ChimeService.Configuration()
/// configuration.listen = try ListenAddress(parsing: "127.0.0.1:7878")
/// try await ChimeService.run(configuration: configuration)   // returns after SIGTERM/SIGINT
/// ```
///
/// Files in the data directory (created with mode 0700):
/// - `chime.sqlite`: the store (unless `database` names a PostgreSQL database).
/// - `owner-token`: the owner token (mode 0600), created at first start. With a shared database the
///   first node creates it and the database keeps its hash; every other node needs a copy.
/// - `server.json`: `{"url": …, "pid": …, "dataDirectory": …, "listen": …, "unixSocket": …}` while running.
public enum ChimeService {
    /// `--desktop`: whether notifications also pop up on the desktop (the freedesktop
    /// notification server on the session bus).
    public enum DesktopMode: String, Sendable, CaseIterable {
        /// When the session bus has a notification server at start (the CLI's default).
        case auto
        /// Always; starting fails with an error when there is no notification server.
        case on
        /// Never.
        case off
    }

    /// The service's settings (the flags of `chime serve`).
    public struct Configuration: Sendable {
        /// `--data DIR`; default ``ChimeService/defaultDataDirectory()``.
        public var dataDirectory: String
        /// `--listen HOST:PORT` or `--listen unix:/path`; default `127.0.0.1:7878`.
        public var listen: ListenAddress
        /// `--tls-cert FILE` and `--tls-key FILE` (PEM): serve HTTPS.
        public var tlsCertificatePath: String?
        public var tlsKeyPath: String?
        /// `--auto-allow`: answer every authorization request with yes.
        public var autoAllow: Bool
        /// `--log-format text|json`.
        public var logFormat: ServerLogger.Format
        /// `--max-connections`: connections served at once; slow clients give up their slots to
        /// newcomers first, and past the limit a newcomer gets 503.
        public var connectionLimit: Int
        /// `--max-connections-per-address`: connections served at once from one client address
        /// (nil: three quarters of ``connectionLimit``).
        public var connectionLimitPerAddress: Int?
        /// `--public-url URL`: the address the service is reached at through a name (a reverse
        /// proxy's `https://chime.example.org`): its host is answered in `Host`, besides IP
        /// addresses, `localhost` and the listen address's (other names get 421: DNS rebinding).
        public var publicURL: String?
        /// `--max-streams-per-app`, `--max-streams-per-session`: the event streams one app (with its
        /// own credentials) and one web session may hold open at once; past that a new stream is
        /// answered 429. Streams opened with the owner token are not counted.
        public var streamLimits = ChimeAPI.StreamLimits()
        /// `--app-max-pending`, `--app-max-delivered`, `--app-max-mb`: how much each app may keep
        /// in the store (``StorageQuota``); past it the app's adds are answered 507 `quotaExceeded`
        /// and its oldest delivered notifications are removed, while other apps carry on.
        public var quota = StorageQuota.serviceDefault
        /// `--escalation-min-every`, `--escalation-max-for`: what a request's escalation may ask
        /// (alerts at least 10 seconds apart, for at most 24 hours by default); beyond them an add
        /// is refused naming `escalateEvery` or `escalateFor`.
        public var escalationLimits = EscalationLimits()
        /// The most bytes an event stream queues for a client that does not read before the
        /// client is disconnected (it resumes with `Last-Event-ID`).
        public var streamQueueLimit: Int
        /// `--event-log-max-events`, `--event-log-max-mb`, `--event-log-max-days`: how much of the
        /// event log (what resumed streams replay) is kept.
        public var eventRetention: EventRetention
        /// Seconds before an idle or slow connection is closed.
        public var connectionTimeout: Int
        /// How often idle event streams get a heartbeat.
        public var heartbeatInterval: Duration
        /// Whether to print the start banner (URL, data directory, next commands) on standard output.
        public var printsBanner: Bool
        /// `--durability full`: fsync every commit.
        public var fullDurability: Bool
        /// `--launch-timeout SECONDS`: how long a process started to hand an app its answers may
        /// run before it is stopped (background launch, ``AppLauncher``).
        public var launchTimeout: Duration = .seconds(30)
        /// `--desktop auto|on|off`; `.off` unless set (`chime serve` defaults to `.auto`).
        public var desktop: DesktopMode
        /// The bus the desktop pop-ups use; `nil` for the session bus (`DBUS_SESSION_BUS_ADDRESS`).
        public var desktopBusAddress: String?
        /// What opens the web center's reply field for a desktop text-input action (`xdg-open`,
        /// `$BROWSER`); `nil` finds one when a desktop session is there.
        public var browser: String?
        /// How long a connected app's notification service extension may work on a push (30 s, as
        /// on iOS); the push then gets the extension's best attempt, or its original content.
        public var serviceExtensionTimeLimit: TimeInterval = 30
        /// `--web-push-endpoints PREFIX,…`: push services Web Push is sent to besides the public
        /// ones (a self-hosted UnifiedPush distributor); see ``WebPushEndpoints``.
        public var webPushEndpoints = WebPushEndpoints.publicServicesOnly
        /// `--web-push-contact mailto:…|https://…`: the VAPID `sub` claim, how a push service
        /// reaches the operator (RFC 8292 §2.1); `nil`: `--public-url` when it is https, else
        /// `mailto:chime@HOSTNAME`.
        public var webPushContact: String?

        /// `--database URL` (or `CHIME_DATABASE_URL`): a PostgreSQL database shared by several
        /// nodes, `postgresql://USER@HOST:PORT/DB` with libpq's parameters (`sslmode`, …) in the
        /// query. `nil`: SQLite in the data directory.
        public var database: String?
        /// The clock of an SQLite-backed service (`nil`: the system clock). Tests pass a manual
        /// clock to move session expiry and firing without waiting; a shared database always
        /// uses its own clock.
        package var clock: (any NotificationClock)?

        public init(
            dataDirectory: String = ChimeService.defaultDataDirectory(), listen: ListenAddress = .default,
            tlsCertificatePath: String? = nil, tlsKeyPath: String? = nil, autoAllow: Bool = false,
            logFormat: ServerLogger.Format = .text, connectionLimit: Int = 1024, connectionTimeout: Int = 60,
            heartbeatInterval: Duration = .seconds(15), printsBanner: Bool = true, fullDurability: Bool = false,
            desktop: DesktopMode = .off, desktopBusAddress: String? = nil, browser: String? = nil,
            connectionLimitPerAddress: Int? = nil, streamQueueLimit: Int = EventStream.defaultQueueLimit,
            eventRetention: EventRetention = EventRetention(),
            database: String? = nil
        ) {
            self.dataDirectory = dataDirectory
            self.listen = listen
            self.tlsCertificatePath = tlsCertificatePath
            self.tlsKeyPath = tlsKeyPath
            self.autoAllow = autoAllow
            self.logFormat = logFormat
            self.connectionLimit = connectionLimit
            self.connectionTimeout = connectionTimeout
            self.heartbeatInterval = heartbeatInterval
            self.printsBanner = printsBanner
            self.fullDurability = fullDurability
            self.desktop = desktop
            self.desktopBusAddress = desktopBusAddress
            self.browser = browser
            self.connectionLimitPerAddress = connectionLimitPerAddress
            self.streamQueueLimit = streamQueueLimit
            self.eventRetention = eventRetention
            self.database = database
        }
    }

    /// `$XDG_DATA_HOME/chime`, or `~/.local/share/chime`.
    public static func defaultDataDirectory() -> String {
        DataDirectory.chime()
    }

    /// The owner token's file in a data directory.
    public static func ownerTokenPath(dataDirectory: String) -> String { dataDirectory + "/owner-token" }
    /// The running server's description in a data directory.
    public static func serverInfoPath(dataDirectory: String) -> String { dataDirectory + "/server.json" }

    /// Runs the service until SIGTERM or SIGINT, then stops gracefully: stops accepting, finishes
    /// in-flight requests, ends event streams, shuts the engine down and closes the store.
    ///
    /// - Throws: ``ServerError`` or ``ChimeError`` when the service cannot start.
    public static func run(configuration: Configuration) async throws {
        try await run(configuration: configuration, logger: .buffered(format: configuration.logFormat))
    }

    /// ``run(configuration:)`` with the logger given: its lines (the access log's among them,
    /// gathered in batches) are flushed when the service has stopped or failed to start.
    static func run(configuration: Configuration, logger: ServerLogger) async throws {
        defer { logger.flush() }
        signal(SIGPIPE, SIG_IGN)
        // Catch the signals before starting, so a SIGTERM during startup stops the service cleanly.
        let signals = SignalWaiter([SIGTERM, SIGINT])
        defer { signals.restore() }
        let service = try await RunningService.start(configuration: configuration, logger: logger)
        if configuration.printsBanner { FileHandle.standardOutput.write(Data((service.banner + "\n").utf8)) }
        let signalName = await signals.wait()
        logger.info("stopping", ["signal": signalName])
        await service.stop()
        logger.info("stopped")
    }
}

/// Turns SIGTERM/SIGINT into an awaitable event with DispatchSource signal sources.
/// `@unchecked Sendable`: `sources` is set in `init` and never changes (dispatch sources are
/// thread-safe); the rest is in the `Sendable` relay.
final class SignalWaiter: @unchecked Sendable {
    private let numbers: [Int32]
    private let sources: [any DispatchSourceSignal]
    private let relay = SignalRelay()

    init(_ numbers: [Int32]) {
        self.numbers = numbers
        let queue = DispatchQueue(label: "chime.signals")
        var sources: [any DispatchSourceSignal] = []
        let relay = self.relay
        for number in numbers {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            let name = number == SIGTERM ? "SIGTERM" : number == SIGINT ? "SIGINT" : "signal \(number)"
            source.setEventHandler { relay.fire(name) }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    /// Waits for the first signal.
    func wait() async -> String { await relay.wait() }

    /// Stops catching the signals: their default action applies again.
    func restore() {
        for source in sources { source.cancel() }
        for number in numbers { signal(number, SIG_DFL) }
    }
}

final class SignalRelay: Sendable {
    private let state = Mutex<(received: String?, waiter: CheckedContinuation<String, Never>?)>((nil, nil))

    func fire(_ name: String) {
        let waiter = state.withLock { state -> CheckedContinuation<String, Never>? in
            guard state.received == nil else { return nil }
            state.received = name
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: name)
    }

    func wait() async -> String {
        await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            let received = state.withLock { state -> String? in
                if let received = state.received { return received }
                state.waiter = continuation
                return nil
            }
            if let received { continuation.resume(returning: received) }
        }
    }
}
