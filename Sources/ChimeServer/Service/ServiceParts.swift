import ChimeCore
import Synchronization

/// The parts a running service is made of, in one list (``Part``): started one after another in
/// its order, stopped in reverse. It learns from swift-service-lifecycle's `ServiceGroup` (an
/// ordered list, a graceful shutdown in reverse) without its task tree: Chime's parts start and
/// stop themselves, and most of them need what an earlier one made.
///
/// A part that fails to start stops every part started before it, last first, and the error names
/// the part. ``stop()`` stops all that started, once; a second call (another signal, a test's
/// cleanup) waits until the first has finished. Each start and stop is logged with the part's name.
///
/// ```swift
/// let parts = ServiceParts(logger: logger)
/// let engine = try await parts.start(.engine) {
///     let engine = NotificationEngine(store: store)
///     return (engine, stop: engine.shutdown)
/// }
/// try await parts.start(.httpServer, stop: server.stop) { try server.start() }
/// await parts.stop()     // the HTTP server, then the engine
/// ```
final class ServiceParts: Sendable {
    /// The parts of `chime serve`, in the order they start.
    enum Part: String, CaseIterable, Sendable {
        /// The store (SQLite in the data directory, or a shared PostgreSQL database and its
        /// clock).
        case store
        /// The engine: its state loaded, its writer taking operations (the scheduler starts later).
        case engine
        /// The owner token: the data directory's (made there when missing), and with a shared
        /// database the one whose hash the database keeps (set by the first node), read through
        /// the engine.
        case ownerToken
        /// The key Web Push signs with (VAPID; the data directory's, or a shared database's, read
        /// through the engine).
        case webPushKey
        /// The index of app tokens, certificates and team keys requests are authorized with.
        case tokens
        /// Desktop pop-ups (`--desktop`), when there is a notification server to show them.
        case desktop
        /// Web Push to the subscribed devices.
        case webPush
        /// The scheduler: firing on the clock.
        case scheduler
        /// The HTTP server: the listener, HTTP/1.1 and HTTP/2.
        case httpServer
        /// `server.json`, where the CLI finds the service.
        case serverInfo
        /// Background launch: apps with answers waiting are started.
        case launcher

        /// How messages name it.
        var title: String {
            switch self {
            case .store: "the store"
            case .engine: "the engine"
            case .ownerToken: "the owner token"
            case .webPushKey: "the Web Push key"
            case .tokens: "the token index"
            case .desktop: "the desktop pop-ups"
            case .webPush: "Web Push"
            case .scheduler: "the scheduler"
            case .httpServer: "the HTTP server"
            case .serverInfo: "server.json"
            case .launcher: "background launch"
            }
        }
    }

    private struct State {
        /// The parts started so far, in order, with what stops each.
        var started: [(part: Part, stop: @Sendable () async -> Void)] = []
        /// The one shutdown, once asked for.
        var stopping: Task<Void, Never>?
    }

    private let state = Mutex(State())
    private let logger: ServerLogger
    /// For tests: the part whose start fails (before it does anything), as a real failure there would.
    private let failing: Part?

    init(logger: ServerLogger, failing: Part? = nil) {
        self.logger = logger
        self.failing = failing
    }

    /// Starts `part` with `body`, which gives back what it made and how to stop it. When `body`
    /// throws, every part started before is stopped, last first, and the error is thrown again
    /// with the part's name.
    func start<Value>(_ part: Part, _ body: () async throws -> (Value, stop: @Sendable () async -> Void)) async throws
        -> Value
    {
        do {
            if part == failing { throw ServerError(.startFailed, "a failure injected for a test") }
            let (value, stop) = try await body()
            state.withLock { $0.started.append((part, stop)) }
            logger.info("started", ["part": part.rawValue])
            return value
        } catch {
            logger.error("could not start; stopping what started", ["part": part.rawValue])
            await self.stop()
            throw Self.naming(part, error)
        }
    }

    /// Starts `part` with `body`; `stop` stops it (nothing, for a part that leaves nothing running).
    func start(_ part: Part, stop: @escaping @Sendable () async -> Void = {}, _ body: () async throws -> Void)
        async throws
    {
        try await start(part) {
            try await body()
            return ((), stop: stop)
        }
    }

    /// Stops every part that started, in reverse order, once. A call while the shutdown runs waits
    /// for it; a call after it returns at once.
    func stop() async {
        let shutdown = state.withLock { state -> Task<Void, Never> in
            if let stopping = state.stopping { return stopping }
            let started = state.started
            let logger = self.logger
            let stopping = Task {
                for (part, stop) in started.reversed() {
                    await stop()
                    logger.info("stopped", ["part": part.rawValue])
                }
            }
            state.stopping = stopping
            return stopping
        }
        await shutdown.value
    }

    /// The error a part's failed start is thrown as: of the same kind and code, its message naming
    /// the part (`cannot start the HTTP server: cannot serve on 127.0.0.1:7878: …`).
    static func naming(_ part: Part, _ error: any Error) -> any Error {
        let prefix = "cannot start \(part.title): "
        switch error {
        case let error as ServerError: return ServerError(error.code, prefix + error.message)
        case let error as ChimeError: return ChimeError(error.code, field: error.field, prefix + error.message)
        default: return ServerError(.startFailed, prefix + "\(error)")
        }
    }
}
