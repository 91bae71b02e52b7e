import ChimeCore
import ChimeDesktop
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Background launch: when the service holds an answer for an app that has no open event stream,
/// it starts the app's launch command (`chime apps set APP --launch 'COMMAND'`), as iOS launches an
/// app in the background to handle a notification action.
///
/// The process gets `CHIME_SERVICE` (this service), `CHIME_APP_TOKEN` (a token that is valid for
/// this launch only and for this app only), `CHIME_BUNDLE_IDENTIFIER` and
/// `CHIME_LAUNCH_REASON=response`; its `UNUserNotificationCenter.current()` hands the answers to its
/// delegate and acknowledges them. Of the service's own environment it gets only what
/// ``inheritedEnvironment`` lists (where it runs, the user and the desktop session), never the
/// service's secrets (`PGPASSWORD`, `CHIME_DATABASE_URL`, cloud credentials, …). Rules:
/// - one launch at a time per app; answers arriving meanwhile go to that process (over its stream);
/// - a process still running after `timeout` gets SIGTERM, and SIGKILL 5 s later;
/// - a process that fails (exit status other than 0, a signal) or exits without acknowledging any
///   answer it was started for is logged with its status and started again after a back-off
///   (1 s, doubling, at most 5 minutes); the answers stay in the outbox until acknowledged;
/// - an app whose own process connects (its event stream opens) is not launched.
///
/// ```swift
/// let launcher = AppLauncher(engine: engine, api: api, serviceURL: "http://127.0.0.1:7878", timeout: .seconds(30), logger: logger)
/// await launcher.start()
/// …
/// await launcher.stop()
/// ```
public actor AppLauncher {
    /// The longest back-off between attempts.
    static let maxBackoff: Duration = .seconds(300)
    /// How long a stopped process has between SIGTERM and SIGKILL.
    static let killGrace: Duration = .seconds(5)
    /// How many lines of a launched process's output reach the log per launch.
    static let loggedLines = 200
    /// The variables of the service's environment a launched app gets (and every `LC_*`): where it
    /// runs, the user, the locale and the desktop session. Everything else — the database's
    /// password and URL, tokens and credentials the service was started with — stays with the service.
    public static let inheritedEnvironment: Set<String> = [
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM",
        "XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_DIRS",
        "XDG_CONFIG_DIRS",
        "XDG_SESSION_TYPE", "XDG_CURRENT_DESKTOP", "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS",
    ]

    /// What a launched app gets of `parent` (the service's environment): ``inheritedEnvironment``
    /// and `LC_*`, nothing else.
    static func scrubbed(_ parent: [String: String]) -> [String: String] {
        parent.filter { inheritedEnvironment.contains($0.key) || $0.key.hasPrefix("LC_") }
    }

    private struct Launch {
        let process: ChildProcess
        let token: String
        /// The answers waiting when it started: it must acknowledge at least one of them.
        let waiting: Set<Int64>
        let started: ContinuousClock.Instant
        var timer: Task<Void, Never>?
    }

    private let engine: NotificationEngine
    private let api: ChimeAPI
    private let serviceURL: String?
    private let timeout: Duration
    private let logger: ServerLogger
    private let extraEnvironment: @Sendable (String) -> [String: String]
    private var launches: [String: Launch] = [:]
    /// Apps being looked at by `consider`, so two looks at once cannot both launch.
    private var considering: Set<String> = []
    private var failures: [String: Int] = [:]
    private var retries: [String: Task<Void, Never>] = [:]
    private var subscription: Int?
    private var stopped = false
    private var warnedNoURL = false
    /// Looks queued by ``queueLook(_:)`` (or an ended process) and not yet taken.
    private nonisolated let queuedLooks = Atomic<Int>(0)
    /// Callers of ``settled()`` waiting for `queuedLooks` to reach zero.
    private var settledWaiters: [CheckedContinuation<Void, Never>] = []

    /// - Parameters:
    ///   - serviceURL: the URL a launched process reaches the service at; `nil` when the service
    ///     listens only on a Unix socket (then nothing is launched, with a warning).
    ///   - timeout: how long a launched process may run.
    ///   - extraEnvironment: more variables for a launch of an app (the desktop's activation token).
    public init(
        engine: NotificationEngine, api: ChimeAPI, serviceURL: String?, timeout: Duration, logger: ServerLogger,
        extraEnvironment: @escaping @Sendable (String) -> [String: String] = { _ in [:] }
    ) {
        self.engine = engine
        self.api = api
        self.serviceURL = serviceURL
        self.timeout = timeout
        self.logger = logger
        self.extraEnvironment = extraEnvironment
    }

    /// Follows answers and app changes, and launches the apps that already have answers waiting.
    public func start() async {
        guard subscription == nil, !stopped else { return }
        subscription = engine.subscribe(app: nil) { [weak self] event in
            // On the engine's writer: only note what to look at.
            switch event.payload {
            case .response, .app(.updated, _):
                self?.queueLook(event.app)
            default:
                break
            }
        }
        api.onAppStreamClosed = { [weak self] app in self?.queueLook(app) }
        for record in (try? await engine.apps()) ?? [] where record.launchCommand != nil {
            await consider(record.bundleIdentifier)
        }
    }

    /// Stops launching; running processes get SIGTERM (and SIGKILL after a grace period).
    public func stop() async {
        stopped = true
        if let subscription { engine.unsubscribe(subscription) }
        subscription = nil
        for retry in retries.values { retry.cancel() }
        retries.removeAll()
        for (app, launch) in launches {
            logger.info("stopping a launched app", ["app": app, "pid": String(launch.process.pid)])
            launch.timer?.cancel()
            terminate(launch.process)
        }
    }

    /// Whether a launched process of the app is running (for tests and status).
    public func isRunning(_ app: String) -> Bool { launches[app] != nil }

    /// Returns once every look at an app the launcher was asked for so far has been taken: each
    /// answer and app change published before the call (counted on the engine's writer, so before
    /// the operation that caused it returned), each stream that closed, each process that ended.
    /// What those looks decided is done by then (a process started, or not). Back-offs still
    /// waiting are not looks yet. How a test knows that nothing was launched, rather than
    /// sleeping for a while and finding nothing.
    ///
    /// ```swift
    /// try await answer("task-1")              // the app's own stream is open
    /// await service.launcher.settled()
    /// #expect(await !service.launcher.isRunning(app))
    /// ```
    package func settled() async {
        guard queuedLooks.load(ordering: .acquiring) > 0 else { return }
        await withCheckedContinuation { settledWaiters.append($0) }
    }

    /// Queues a look at `app` from any thread (the engine's writer, the server's), counted at once.
    private nonisolated func queueLook(_ app: String) {
        queuedLooks.add(1, ordering: .acquiringAndReleasing)
        Task { await takeLook(app) }
    }

    private func takeLook(_ app: String) async {
        await consider(app)
        lookTaken()
    }

    /// One queued look is done; when none is left, ``settled()`` returns.
    private func lookTaken() {
        guard queuedLooks.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 else { return }
        let waiters = settledWaiters
        settledWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }

    /// Looks at one app: launches its command when it has answers waiting, no open stream, no
    /// process running and no back-off pending.
    func consider(_ app: String) async {
        guard !stopped, launches[app] == nil, retries[app] == nil, !considering.contains(app) else { return }
        considering.insert(app)
        defer { considering.remove(app) }
        guard !api.hasAppStream(app) else { return }
        guard let record = try? await api.lookup(app), let command = record.launchCommand else { return }
        guard let waiting = try? await engine.outbox(app: app), !waiting.isEmpty else {
            failures[app] = nil
            return
        }
        guard !stopped, launches[app] == nil, !api.hasAppStream(app) else { return }
        guard let serviceURL else {
            if !warnedNoURL {
                logger.warning(
                    "background launch needs a TCP listener: the service listens only on a Unix socket", ["app": app])
                warnedNoURL = true
            }
            return
        }
        launch(app, command: command, waiting: Set(waiting.map(\.id)), serviceURL: serviceURL)
    }

    private func launch(_ app: String, command: LaunchCommand, waiting: Set<Int64>, serviceURL: String) {
        guard let program = Self.resolve(command.arguments[0]) else {
            failed(
                app,
                reason:
                    "the program \(command.arguments[0]) was not found (give a path, or a name on the service's PATH)")
            return
        }
        let token = api.issueLaunchToken(for: app)
        var environment = Self.scrubbed(ProcessInfo.processInfo.environment)
        environment["CHIME_SERVICE"] = serviceURL
        environment["CHIME_APP_TOKEN"] = token
        environment["CHIME_BUNDLE_IDENTIFIER"] = app
        environment["CHIME_LAUNCH_REASON"] = "response"
        environment.merge(extraEnvironment(app)) { _, extra in extra }

        let output = Pipe()
        let relay = OutputRelay(app: app, logger: logger, limit: Self.loggedLines)
        let process: ChildProcess
        do {
            // Started with an empty signal mask (a child of a concurrency thread would otherwise
            // ignore SIGTERM); the parent's copy of the pipe's writing end is closed once started.
            process = try ChildProcess(
                executable: program, arguments: Array(command.arguments.dropFirst()), environment: environment,
                stdin: .null, stdout: .pipe(output), stderr: .pipe(output))
        } catch {
            api.revokeLaunchToken(token)
            failed(app, reason: "cannot start \(command): \(error)")
            return
        }
        // Read on a thread of its own, which holds the pipe until the end of the app's output (a
        // released `Pipe` closes its reading end, and the app would die of SIGPIPE at its next write).
        _ = PipeReader(output, name: "chime.launch-output") { relay.feed($0) }
        process.onExit { [weak self] end in
            relay.flush()
            guard let self else { return }
            queuedLooks.add(1, ordering: .acquiringAndReleasing)
            Task {
                await self.exited(app, end: end)
                await self.lookTaken()
            }
        }
        let timeout = self.timeout
        let timer = Task { [weak self] in
            guard (try? await Sleep.for(timeout)) != nil, let self else { return }
            await self.timedOut(app, process: process)
        }
        launches[app] = Launch(process: process, token: token, waiting: waiting, started: .now, timer: timer)
        logger.info(
            "launched an app to hand it answers",
            [
                "app": app, "pid": String(process.pid), "command": command.description,
                "waiting": String(waiting.count),
            ])
    }

    private func timedOut(_ app: String, process: ChildProcess) {
        guard let launch = launches[app], launch.process === process, process.isRunning else { return }
        logger.warning(
            "a launched app ran too long; stopping it",
            [
                "app": app, "pid": String(process.pid),
                "timeout": String(describing: timeout),
            ])
        terminate(process)
    }

    /// SIGTERM now, SIGKILL after the grace period if it still runs.
    private nonisolated func terminate(_ process: ChildProcess) {
        guard process.isRunning else { return }
        process.signal(SIGTERM)
        Task {
            try? await Sleep.for(Self.killGrace)
            process.signal(SIGKILL)  // nothing is sent once it has ended
        }
    }

    private func exited(_ app: String, end: ChildProcess.Termination) async {
        guard let launch = launches.removeValue(forKey: app) else { return }
        launch.timer?.cancel()
        api.revokeLaunchToken(launch.token)
        let remaining = Set(((try? await engine.outbox(app: app)) ?? []).map(\.id))
        let acknowledged = launch.waiting.subtracting(remaining).count
        let seconds = String(format: "%.1f", (ContinuousClock.now - launch.started).seconds)
        if end.succeeded, acknowledged > 0 {
            failures[app] = nil
            logger.info(
                "a launched app finished", ["app": app, "acknowledged": String(acknowledged), "seconds": seconds])
            await consider(app)  // answers that came after it had finished
            return
        }
        let outcome =
            switch end {
            case .signaled(let signal): "ended by signal \(signal)"
            case .exited(let status): "exited with status \(status)"
            }
        failed(app, reason: acknowledged == 0 ? "\(outcome) without acknowledging an answer" : outcome)
    }

    /// Logs a failed attempt and tries again after the back-off.
    private func failed(_ app: String, reason: String) {
        let count = (failures[app] ?? 0) + 1
        failures[app] = count
        let delay = min(Duration.seconds(1) * (1 << min(count - 1, 16)), Self.maxBackoff)
        logger.warning(
            "a launched app did not take its answers; they stay in the outbox",
            [
                "app": app, "reason": reason, "attempt": String(count), "retry": String(describing: delay),
            ])
        guard !stopped else { return }
        retries[app] = Task { [weak self] in
            guard (try? await Sleep.for(delay)) != nil, let self else { return }
            await self.retry(app)
        }
    }

    private func retry(_ app: String) async {
        retries[app] = nil
        await consider(app)
    }

    /// A program path: as given when it has a `/`, else found on `PATH`.
    public static func resolve(_ program: String) -> String? {
        if program.contains("/") { return access(program, X_OK) == 0 ? program : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") where !directory.isEmpty {
            let candidate = directory + "/" + program
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}

/// A launched process's output, line by line into the log, at most `limit` lines per launch.
final class OutputRelay: Sendable {
    private let app: String
    private let logger: ServerLogger
    private let limit: Int
    private let state = Mutex<(pending: [UInt8], lines: Int)>(([], 0))

    init(app: String, logger: ServerLogger, limit: Int) {
        self.app = app
        self.logger = logger
        self.limit = limit
    }

    func feed(_ data: Data) {
        let lines = state.withLock { state -> [String] in
            state.pending += data
            var out: [String] = []
            while let newline = state.pending.firstIndex(of: 0x0A) {
                let line = state.pending[..<newline]
                state.pending.removeSubrange(...newline)
                if state.lines < limit { out.append(String(decoding: line.prefix(2000), as: UTF8.self)) }
                state.lines += 1
            }
            if state.pending.count > 64 * 1024 { state.pending.removeAll() }
            return out
        }
        for line in lines { logger.info("launched app output", ["app": app, "line": line]) }
    }

    func flush() {
        let rest = state.withLock { state -> String? in
            defer { state.pending.removeAll() }
            guard !state.pending.isEmpty, state.lines < limit else { return nil }
            return String(decoding: state.pending.prefix(2000), as: UTF8.self)
        }
        if let rest { logger.info("launched app output", ["app": app, "line": rest]) }
    }
}
