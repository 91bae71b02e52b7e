import Foundation
import Synchronization

extension NotificationEngine {
    // MARK: - Events

    /// Calls `handler` with every event of one app (or, with `nil`, of every app) from now on,
    /// on the engine's writer, after the event's transaction committed and before the operation that
    /// caused it completes. The handler must return quickly and must not wait for the engine.
    /// With a shared store, logged events — this engine's and every other's — come from the store's
    /// feed instead, in the log's order, moments after their commit.
    ///
    /// - Returns: a token; pass it to ``unsubscribe(_:)`` to stop.
    public func subscribe(app: String?, handler: @escaping @Sendable (EngineEvent) -> Void) -> Int {
        hub.subscribe(app: app, handler: handler)
    }

    /// Like ``subscribe(app:handler:)``; with `offPublisher` the handler runs on one of the hub's
    /// fan-out queues instead of the writer, in order for this subscriber but possibly after the
    /// operation completed (``NotificationHub/subscribe(app:offPublisher:handler:)``). For handlers
    /// that only hand events on, where thousands of them would hold up the writer.
    public func subscribe(
        app: String?, offPublisher: Bool, handler: @escaping @Sendable (EngineEvent) -> Void
    ) -> Int {
        hub.subscribe(app: app, offPublisher: offPublisher, handler: handler)
    }

    /// Stops a subscription made with ``subscribe(app:handler:)``.
    public func unsubscribe(_ token: Int) {
        hub.unsubscribe(token)
    }

    /// A live stream of events, for one app or (with `nil`) every app, from now on.
    ///
    /// For resumable streams, read the log first with ``events(after:app:limit:)``.
    public func events(app: String?) -> AsyncStream<EngineEvent> {
        hub.events(app: app)
    }

    /// Shows one app's notifications (or, with `nil`, every app's) on `surface`, on a queue of the
    /// surface's own, off the writer. Answers from the surface go to ``respond(app:notification:action:userText:)``.
    ///
    /// ```swift
    /// let attachment = engine.attach(TerminalSurface(engine: engine), app: "com.example.alarm")
    /// ```
    @discardableResult
    public func attach(_ surface: any NotificationSurface, app: String?) -> NotificationHub.Attachment {
        hub.attach(surface, app: app)
    }

    /// Events from the store's log after `sequence`, oldest first.
    public func events(after sequence: Int64, app: String?, limit: Int = 1000) async throws -> [EngineEvent] {
        try await read { try $0.events(after: sequence, app: app, limit: limit) }
    }

    /// The oldest event sequence the log still holds (0 when empty).
    public func oldestEventSequence() async throws -> Int64 {
        try await read { try $0.oldestEventSequence() }
    }
}
