import ChimeCore
import ChimeDesktop
import ChimePostgres
import ChimeSQLite
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A started service: its parts (``ServiceParts/Part``: the store, the engine, the surfaces, the
/// scheduler, the HTTP server, …), started in one order and stopped in reverse. Tests start one
/// in-process on port 0; ``ChimeService/run(configuration:)`` starts one and waits for a signal.
///
/// ```swift
/// let service = try await RunningService.start(configuration: .init(dataDirectory: dir, listen: .tcp(host: "127.0.0.1", port: 0)))
/// print(service.url, service.ownerToken)
/// await service.stop()
/// ```
public final class RunningService: Sendable {
    public let configuration: ChimeService.Configuration
    /// The server's base URL (`http://127.0.0.1:7878`).
    public let url: String
    /// The bound TCP port (0 for a Unix socket).
    public let port: UInt16
    /// The owner token (also in `DATA_DIR/owner-token`).
    public let ownerToken: String
    /// With a shared database: where it is (`user@host:port/db`, never a password); `nil` for SQLite.
    public let database: String?
    public let engine: NotificationEngine
    public let server: HTTPServer
    public let metrics: Metrics
    /// The desktop pop-ups (`--desktop`), when on.
    public let desktop: DesktopSurface?
    /// The activation tokens of desktop answers, for the apps they launch.
    public let activationTokens: ActivationTokens
    /// Web Push to the subscribed devices.
    public let webPush: WebPushSurface
    let logger: ServerLogger
    let api: ChimeAPI
    /// Starts apps' launch commands to hand them answers while they are not running.
    public let launcher: AppLauncher
    /// What started, and what stops it.
    private let parts: ServiceParts

    private init(
        configuration: ChimeService.Configuration, url: String, port: UInt16, ownerToken: String, database: String?,
        engine: NotificationEngine, server: HTTPServer, metrics: Metrics, logger: ServerLogger, api: ChimeAPI,
        launcher: AppLauncher, desktop: DesktopSurface?, activationTokens: ActivationTokens, webPush: WebPushSurface,
        parts: ServiceParts
    ) {
        self.configuration = configuration
        self.url = url
        self.port = port
        self.ownerToken = ownerToken
        self.database = database
        self.engine = engine
        self.server = server
        self.metrics = metrics
        self.logger = logger
        self.api = api
        self.launcher = launcher
        self.desktop = desktop
        self.activationTokens = activationTokens
        self.webPush = webPush
        self.parts = parts
    }

    /// Opens the data directory and starts every part, in the order of ``ServiceParts/Part``. A
    /// part that cannot start stops those started before it, last first, and the error names it
    /// (`cannot start the HTTP server: …`).
    public static func start(configuration: ChimeService.Configuration, logger: ServerLogger = ServerLogger())
        async throws -> RunningService
    {
        try await start(configuration: configuration, logger: logger, failing: nil)
    }

    /// ``start(configuration:logger:)``, failing at the start of `failing` (for tests of what a
    /// failure there leaves running: nothing).
    static func start(configuration: ChimeService.Configuration, logger: ServerLogger, failing: ServiceParts.Part?)
        async throws -> RunningService
    {
        let directory = configuration.dataDirectory
        try makeDirectory(directory)
        checkDirectoryPermissions(directory, logger: logger)
        var tls: HTTPServer.Configuration.TLS?
        switch (configuration.tlsCertificatePath, configuration.tlsKeyPath) {
        case (nil, nil): break
        case (let cert?, let key?):
            tls = HTTPServer.Configuration.TLS(
                keyPEM: try readText(key, flag: "--tls-key"), certificatePEM: try readText(cert, flag: "--tls-cert"))
        default:
            throw ServerError(.invalidConfiguration, "give both --tls-cert and --tls-key (PEM files), or neither")
        }
        // Asked before anything starts: `--desktop on` without a notification server starts nothing.
        let desktopWanted = try await checkDesktop(configuration, logger: logger)

        let metrics = Metrics()
        let parts = ServiceParts(logger: logger, failing: failing)
        let opened = try await parts.start(.store) {
            let opened = try openStore(configuration: configuration, metrics: metrics, logger: logger)
            return (opened, stop: { [handle = opened.handle] in handle.close() })
        }
        let engine = try await parts.start(.engine) {
            var engineConfiguration = NotificationEngine.Configuration()
            engineConfiguration.eventRetention = configuration.eventRetention.count
            engineConfiguration.eventRetentionBytes = configuration.eventRetention.bytes
            engineConfiguration.eventRetentionAge = configuration.eventRetention.age
            engineConfiguration.quota = configuration.quota
            engineConfiguration.escalationLimits = configuration.escalationLimits
            engineConfiguration.receiptRetentionAge = configuration.eventRetention.age
            let engine = NotificationEngine(
                store: opened.store, clock: opened.clock,
                policy: FixedAuthorizationPolicy(configuration.autoAllow ? .grant : .ask),
                configuration: engineConfiguration)
            // Accepted operations commit; then the store may close.
            return (engine, stop: { await engine.shutdown() })
        }
        // Values a shared database keeps for every node, through the engine (its store's one owner)
        // before its scheduler starts: the first node to start stores them, the others read them.
        let ownerToken = try await parts.start(.ownerToken) {
            let token =
                configuration.database == nil
                ? try loadOrCreateOwnerToken(dataDirectory: directory)
                : try await Self.ownerToken(sharedBy: engine, dataDirectory: directory)
            return (token, stop: {})
        }
        let webPushKey = try await parts.start(.webPushKey) {
            let key = try await WebPushKey.loadOrCreate(
                dataDirectory: directory, sharedBy: configuration.database == nil ? nil : engine)
            return (key, stop: {})
        }
        let api = ChimeAPI(
            engine: engine, ownerTokenHash: Tokens.hash(ownerToken), metrics: metrics, logger: logger,
            secureCookies: tls != nil, serviceExtensionTimeLimit: configuration.serviceExtensionTimeLimit,
            streamLimits: configuration.streamLimits, hostNames: hostNames(configuration),
            webPush: ChimeAPI.WebPush(publicKey: webPushKey.publicKeyText, endpoints: configuration.webPushEndpoints))
        // The token and certificate index: TLS clients are asked for a certificate while an app has one.
        try await parts.start(.tokens) { try await api.loadTokens() }
        let connectionLimits = fitConnectionLimits(configuration, openFiles: raiseOpenFileLimit(), logger: logger)
        let serverConfiguration = HTTPServer.Configuration(
            listen: configuration.listen, tls: tls, connectionLimit: connectionLimits.total,
            connectionLimitPerAddress: connectionLimits.perAddress,
            connectionTimeout: configuration.connectionTimeout,
            streamQueueLimit: configuration.streamQueueLimit, heartbeatInterval: configuration.heartbeatInterval)
        let server = HTTPServer(configuration: serverConfiguration, handler: api, logger: logger, metrics: metrics)
        let activationTokens = ActivationTokens()
        // The surfaces start before the scheduler and the server, so whatever fires or comes in is
        // shown, and stop after them, when nothing more comes.
        var desktop: DesktopSurface?
        if desktopWanted {
            desktop = try await parts.start(.desktop) {
                let (surface, attachment) = startDesktop(
                    configuration, engine: engine, api: api, server: server, tokens: activationTokens, logger: logger)
                // Answers already given on the desktop reach the engine before it shuts down.
                return (
                    surface,
                    stop: {
                        attachment.detach()
                        await surface.stop()
                    }
                )
            }
        }
        let webPush = try await parts.start(.webPush) {
            let contact =
                configuration.webPushContact
                ?? configuration.publicURL.flatMap { $0.hasPrefix("https://") ? $0 : nil }
                ?? "mailto:chime@" + ProcessInfo.processInfo.hostName
            let webPush = WebPushSurface(
                engine: engine,
                configuration: .init(key: webPushKey, contact: contact, endpoints: configuration.webPushEndpoints),
                logger: logger)
            webPush.start()
            // Pushes not sent yet stay queued in the store: claims given back for another node (or
            // the next start) to send.
            return (webPush, stop: { await webPush.stop() })
        }
        try await parts.start(.scheduler, stop: { engine.stopScheduler() }) { engine.startScheduler() }
        // Stopped gracefully: in-flight requests finish, event streams end.
        try await parts.start(.httpServer, stop: { await server.stop() }) { try server.start() }
        let serverInfo = ChimeService.serverInfoPath(dataDirectory: directory)
        try await parts.start(.serverInfo, stop: { unlink(serverInfo) }) {
            let pin = tls.flatMap { TLSContext.publicKeyPin(certificatePEM: $0.certificatePEM) }
            try writeServerInfo(configuration: configuration, url: server.url, tlsPin: pin)
        }
        let launcher = try await parts.start(.launcher) {
            let launcher = AppLauncher(
                engine: engine, api: api, serviceURL: configuration.listen.isUnix ? nil : server.url,
                timeout: configuration.launchTimeout, logger: logger
            ) { app in
                activationTokens.takeNewest(app: app).map { ["XDG_ACTIVATION_TOKEN": $0] } ?? [:]
            }
            await launcher.start()
            // Launches no more; running processes are told to stop.
            return (launcher, stop: { await launcher.stop() })
        }
        let service = RunningService(
            configuration: configuration, url: server.url, port: server.port, ownerToken: ownerToken,
            database: opened.database, engine: engine, server: server, metrics: metrics, logger: logger, api: api,
            launcher: launcher, desktop: desktop, activationTokens: activationTokens, webPush: webPush, parts: parts)
        logger.info(
            "serving",
            [
                "url": service.url, "data": directory, "listen": configuration.listen.description,
                "store": opened.database.map { "postgresql \($0)" } ?? "sqlite",
                "authorization": configuration.autoAllow ? "auto-allow" : "ask",
                "desktop": desktop == nil ? "off" : "on",
            ])
        return service
    }

    /// The `Host` names a TCP listener answers besides IP addresses and `localhost`: the listen
    /// address's and `--public-url`'s; `nil` (every one) on a Unix socket.
    static func hostNames(_ configuration: ChimeService.Configuration) -> HostNames? {
        guard case .tcp(let host, _) = configuration.listen else { return nil }
        return HostNames(Set([host] + [configuration.publicURL.flatMap { URL(string: $0)?.host }].compactMap { $0 }))
    }

    /// The store and the clock: SQLite in the data directory with the system clock, or a shared
    /// PostgreSQL database with its clock.
    private static func openStore(configuration: ChimeService.Configuration, metrics: Metrics, logger: ServerLogger)
        throws
        -> (store: any NotificationStore, clock: any NotificationClock, database: String?, handle: StoreHandle)
    {
        let directory = configuration.dataDirectory
        guard let url = configuration.database else {
            let path = directory + "/chime.sqlite"
            let notice = SQLiteStore.upgradeNotice(path: path)
            if let notice { logger.info(notice) }
            let started = Date()
            let store = try SQLiteStore(path: path, durability: configuration.fullDurability ? .full : .normal)
            if notice != nil {
                logger.info(
                    "upgraded the Chime store at \(path) to schema version \(SQLiteStore.schemaVersion) in \(String(format: "%.1f", Date().timeIntervalSince(started))) s"
                )
            }
            return (store, configuration.clock ?? SystemClock(), nil, StoreHandle { store.close() })
        }
        let store = try PostgresStore(url: url)
        let skewed = Atomic<Bool>(false)
        let clock: DatabaseClock
        do {
            clock = try DatabaseClock(url: url) { offset in
                metrics.setGauge(
                    "chime_clock_offset_seconds",
                    help: "The database's clock minus this node's, in seconds (firing follows the database's).",
                    value: offset)
                let far = abs(offset) > 1
                if skewed.exchange(far, ordering: .relaxed) != far {
                    if far {
                        logger.warning(
                            "this node's clock is more than 1 s away from the database's; firing follows the database's clock, but fix this node's time (NTP)",
                            ["offsetSeconds": String(format: "%.3f", offset)])
                    } else {
                        logger.info(
                            "this node's clock is within 1 s of the database's again",
                            ["offsetSeconds": String(format: "%.3f", offset)])
                    }
                }
            }
        } catch {
            store.close()
            throw error
        }
        logger.info(
            "database",
            ["at": store.described, "node": store.node, "clockOffsetSeconds": String(format: "%.3f", clock.offset)])
        return (
            store, clock, store.described,
            StoreHandle {
                clock.stop()
                store.close()
            }
        )
    }

    /// Stops every part, in the reverse of their start: background launch, server.json, the HTTP
    /// server (in-flight requests finish, event streams end), the scheduler, the surfaces, the engine
    /// (accepted operations commit), the store. Each stop is logged. Once: a call while the
    /// shutdown runs waits for it to finish; a later one returns at once.
    public func stop() async {
        await parts.stop()
        logger.flush()
    }

    /// What `chime serve` prints on start.
    public var banner: String {
        let dir = configuration.dataDirectory
        let dataFlag = dir == ChimeService.defaultDataDirectory() ? "" : " --data \(dir)"
        let chime = Self.invocation
        var lines = [
            "Chime is serving at \(url)"
                + (configuration.listen.isUnix ? " (Unix socket \(configuration.listen.socketPath ?? ""))" : ""),
            "Data directory: \(dir)",
            "Store:          "
                + (database.map { "PostgreSQL \($0), shared with every node on it" } ?? "\(dir)/chime.sqlite"),
            "Owner token:    \(ChimeService.ownerTokenPath(dataDirectory: dir))"
                + (database == nil ? "" : " (the same on every node)"),
            "Authorization:  "
                + (configuration.autoAllow
                    ? "granted automatically (--auto-allow)" : "asks the user (chime apps allow|deny BUNDLE)"),
            "Web center:     "
                + (configuration.listen.isUnix
                    ? "needs a TCP listener (--listen HOST:PORT)"
                    : "\(url)/ (sign in with `\(chime) open\(dataFlag)`)"),
            "Desktop:        "
                + (desktop == nil
                    ? "off"
                        + (configuration.desktop == .off
                            ? " (--desktop off)" : " (no notification server on the session bus)")
                    : "pop-ups on the session bus's notification server"),
        ]
        if case .tcp("0.0.0.0", _) = configuration.listen {
            for address in NetworkAddresses.lan() {
                lines.append(
                    "On the network: \(url.replacingOccurrences(of: "0.0.0.0", with: address))/ (a phone signs in with `\(chime) open --qr\(dataFlag)`)"
                )
            }
        }
        lines += [
            "",
            "Try next:",
            "  \(chime) open\(dataFlag)",
            "  \(chime) apps add com.example.alarm\(dataFlag)",
            "  \(chime) apps allow com.example.alarm\(dataFlag)",
            "  \(chime) add --app com.example.alarm --title Hello --in 10s\(dataFlag)",
            "  \(chime) events --app com.example.alarm\(dataFlag)",
            "  curl -s \(url)/healthz",
        ]
        if configuration.listen.isUnix {
            lines[lines.count - 1] =
                "  curl -s --unix-socket \(configuration.listen.socketPath ?? "") http://localhost/healthz"
        }
        return lines.joined(separator: "\n")
    }

    /// How to call this `chime` from a shell: `chime` when that is what is on the PATH, else the
    /// path it was started from (`.build/debug/chime` under `make run`).
    static var invocation: String {
        let started = CommandLine.arguments.first ?? "chime"
        guard started.contains("/"), URL(fileURLWithPath: started).lastPathComponent == "chime" else { return "chime" }
        let onPath = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
            .map { URL(fileURLWithPath: String($0)).appendingPathComponent("chime").resolvingSymlinksInPath().path }
        let resolved = URL(fileURLWithPath: started).resolvingSymlinksInPath().path
        return onPath.contains(resolved) ? "chime" : started
    }

    // MARK: - Files

    /// Writes `server.json` (where the CLI finds the service), replacing it in one rename.
    static func writeServerInfo(configuration: ChimeService.Configuration, url: String, tlsPin: String?) throws {
        var object: JSONObject = [
            "url": .string(url), "pid": .integer(Int64(getpid())),
            "dataDirectory": .string(configuration.dataDirectory),
            "listen": .string(configuration.listen.description), "tls": .bool(configuration.tlsCertificatePath != nil),
        ]
        object["unixSocket"] = configuration.listen.socketPath.map(JSONValue.string) ?? .null
        if let tlsPin { object["tlsPin"] = .string(tlsPin) }
        let path = ChimeService.serverInfoPath(dataDirectory: configuration.dataDirectory)
        let temporary = path + ".tmp"
        try Self.writeFile(
            temporary, contents: JSONValue.object(object).serialized(pretty: true) + "\n", mode: 0o600, exclusive: false
        )
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw ServerError(.startFailed, "cannot write \(path): \(reason)")
        }
    }

    /// Raises the soft limit on open files to the hard limit: every connection (an event stream
    /// too) holds a descriptor, and the common soft limit of 1,024 runs out long before 10,000
    /// event streams. Returns the limit now in force (nil: none, or unknown).
    static func raiseOpenFileLimit() -> Int? {
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        // RLIM_INFINITY is all ones, above Int.max too.
        return limit.rlim_cur > rlim_t(Int.max) ? nil : Int(limit.rlim_cur)
    }

    /// Descriptors kept for everything but connections: the store's files and readers, the log,
    /// attachments being served, outgoing pushes, D-Bus.
    static let reservedDescriptors = 128

    /// The connection limits `configuration` asks for, lowered (with a warning saying by how much
    /// and what to change) when the open-files limit cannot hold them: connections past it would
    /// otherwise take the descriptors the store needs to commit, and a write acknowledged to
    /// nobody is worse than a connection refused.
    static func fitConnectionLimits(
        _ configuration: ChimeService.Configuration, openFiles: Int?, logger: ServerLogger
    ) -> (total: Int, perAddress: Int?) {
        let asked = configuration.connectionLimit
        guard let openFiles else { return (asked, configuration.connectionLimitPerAddress) }
        let fitted = HTTPServer.Configuration.connectionLimit(
            fittingDescriptors: openFiles - reservedDescriptors, asked: asked)
        guard fitted < asked else { return (asked, configuration.connectionLimitPerAddress) }
        logger.warning(
            "the open-files limit holds \(fitted) connections, not the \(asked) of --max-connections; serving "
                + "\(fitted) (past them, clients get 503 or wait). To serve more, raise the hard limit on open files "
                + "(LimitNOFILE= in a systemd unit, `ulimit -Hn` in the shell that starts chime, or "
                + "/etc/security/limits.conf) or ask for fewer with --max-connections",
            [
                "openFilesLimit": String(openFiles), "maxConnections": String(asked),
                "connectionsServed": String(fitted),
            ])
        return (fitted, configuration.connectionLimitPerAddress.map { min($0, fitted) })
    }

    static func makeDirectory(_ path: String) throws {
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw ServerError(
                .invalidConfiguration, "cannot create the data directory \(path): \(error.localizedDescription)")
        }
    }

    /// Warns when users other than the owner can list or read the data directory (the store and
    /// the owner token are in it).
    static func checkDirectoryPermissions(_ path: String, logger: ServerLogger) {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & 0o077 != 0 else { return }
        logger.warning(
            "the data directory can be read by other users; make it yours alone",
            [
                "path": path, "mode": String(info.st_mode & 0o777, radix: 8), "fix": "chmod 700 \(path)",
            ])
    }

    /// The owner token, made at first start. A token file other users can read is refused: anyone
    /// who read it holds the owner's rights.
    static func loadOrCreateOwnerToken(dataDirectory: String) throws -> String {
        let path = ChimeService.ownerTokenPath(dataDirectory: dataDirectory)
        if let token = try readOwnerToken(path) { return token }
        let token = Tokens.make()
        try writeFile(path, contents: token + "\n", mode: 0o600, exclusive: true)
        return token
    }

    /// The token in an owner-token file, `nil` when there is no file. A file other users can
    /// read, an unreadable one, or one that is not a token is refused with what to do.
    private static func readOwnerToken(_ path: String) throws -> String? {
        try readSecretFile(
            path, holder: "whoever read it has the owner's rights", remedy: "delete it to create a new owner token")
    }

    /// The text of a file only its owner may read (a token, a private key), trimmed; `nil` when
    /// there is no file. A file other users can read (`holder` says what they gained), an
    /// unreadable one, or an empty one is refused with what to do (`remedy`).
    static func readSecretFile(_ path: String, holder: String, remedy: String) throws -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            guard errno == ENOENT else {
                throw ServerError(
                    .invalidConfiguration,
                    "cannot look at \(path): \(String(cString: strerror(errno))); fix the data directory's permissions")
            }
            return nil
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw ServerError(.invalidConfiguration, "\(path) is not a file; \(remedy)")
        }
        if info.st_mode & 0o077 != 0 {
            throw ServerError(
                .invalidConfiguration,
                "\(path) can be read by other users (mode \(String(info.st_mode & 0o777, radix: 8))), and \(holder); run `chmod 600 \(path)` if no one else could have read it, else \(remedy)"
            )
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw ServerError(
                .invalidConfiguration,
                "cannot read \(path): \(String(cString: strerror(errno))); the service must run as the user who owns the data directory"
            )
        }
        let data = FileHandle(fileDescriptor: fd, closeOnDealloc: true).readDataToEndOfFile()
        guard let text = String(data: data, encoding: .utf8) else {
            throw ServerError(.invalidConfiguration, "\(path) is not text (it is damaged); \(remedy)")
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw ServerError(.invalidConfiguration, "\(path) is empty; \(remedy)") }
        return trimmed
    }

    /// The owner token of a shared database. The database keeps its hash (`owner.tokenHash`, through
    /// the engine's ``NotificationEngine/ownerTokenHash(proposing:)``): the first node to start on an
    /// empty database makes it the token in its data directory (or a new one, written there); every
    /// later node must have the same token in its own data directory.
    static func ownerToken(sharedBy engine: NotificationEngine, dataDirectory: String) async throws -> String {
        let path = ChimeService.ownerTokenPath(dataDirectory: dataDirectory)
        let local = try readOwnerToken(path)
        let candidate = local ?? Tokens.make()
        let stored = try await engine.ownerTokenHash(proposing: Tokens.hash(candidate))
        guard Tokens.equal(stored, Tokens.hash(candidate)) else {
            if local != nil {
                throw ServerError(
                    .invalidConfiguration,
                    "\(path) holds an owner token that is not this database's; every node on one database needs the same owner token: copy the owner-token file of the node that first started on the database to \(path) (mode 0600)"
                )
            }
            throw ServerError(
                .invalidConfiguration,
                "this database already has an owner token, made by the node that first started on it; copy that node's owner-token file to \(path) (mode 0600) and start again"
            )
        }
        if local == nil { try writeFile(path, contents: candidate + "\n", mode: 0o600, exclusive: true) }
        return candidate
    }

    static func readText(_ path: String, flag: String) throws -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ServerError(.invalidConfiguration, "\(flag) \(path): cannot read the file")
        }
        return text
    }

    static func writeFile(_ path: String, contents: String, mode: mode_t, exclusive: Bool) throws {
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC)
        let fd = open(path, flags, mode)
        guard fd >= 0 else {
            throw ServerError(.startFailed, "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        fchmod(fd, mode)
        let bytes = Array(contents.utf8)
        var written = 0
        while written < bytes.count {
            let result = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard result > 0 else {
                throw ServerError(.startFailed, "cannot write \(path): \(String(cString: strerror(errno)))")
            }
            written += result
        }
        fsync(fd)
    }
}

extension ListenAddress {
    var isUnix: Bool { socketPath != nil }
    var socketPath: String? {
        if case .unix(let path) = self { return path }
        return nil
    }
}

/// Closes the store (and the database clock), after the engine has shut down. `@unchecked
/// Sendable`: the engine uses the store only on its writer, and `close` is the store part's stop,
/// which runs only after the engine part's stop (`engine.shutdown()`) returned, when the writer no
/// longer runs (``ServiceParts`` stops in reverse).
final class StoreHandle: @unchecked Sendable {
    private let closer: () -> Void
    init(_ closer: @escaping () -> Void) { self.closer = closer }
    func close() { closer() }
}
