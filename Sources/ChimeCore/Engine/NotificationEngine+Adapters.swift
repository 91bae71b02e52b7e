import Foundation

// Named operations for the engine's adapters — the service (`ChimeServer`) and the Apple layer's
// center in this process (`Chime`) — so that no adapter runs closures against the store or the
// writer's core: the engine is the only owner of its state. Each says on which side of the writer
// it runs. (`NotificationEngineOwnershipTests` holds the adapters to this.)

extension NotificationEngine {
    // MARK: App records and token hashes

    /// The app's record if it is registered, without creating it (read beside the writer).
    package func registeredApp(_ app: String) async throws -> AppRecord? {
        try await read { try $0.app(app) }
    }

    /// Sets the app's token hash (the SHA-256 of its token), creating the record — with a device
    /// token from the engine's one generator — when `create` and the app is new. `indexed` is
    /// called on the writer in the same operation with the new hash, so an index of hashes follows
    /// the store in commit order.
    ///
    /// - Throws: ``ChimeError`` `notFound` when the app is not registered and `create` is false.
    package func setTokenHash(
        _ hash: String, app: String, create: Bool,
        indexed: @escaping @Sendable (String) -> Void
    ) async throws -> AppRecord {
        try await perform { core in
            var record: AppRecord
            if let existing = try core.store.app(app) {
                record = existing
            } else if create {
                record = try core.appRecord(app)
            } else {
                throw ChimeError(.notFound, field: "app", "no app \(app) is registered")
            }
            record.tokenHash = hash
            try core.putApp(record)
            indexed(hash)
            return record
        }
    }

    /// Changes a registered app's record (its launch command, its APNs provider) and returns it.
    ///
    /// - Throws: ``ChimeError`` `notFound` naming `app` when it is not registered.
    package func changeApp(_ app: String, _ change: @escaping @Sendable (inout AppRecord) -> Void) async throws
        -> AppRecord
    {
        try await perform { core in
            guard var record = try core.store.app(app) else {
                throw ChimeError(.notFound, field: "app", "no app \(app); register it with `chime apps add \(app)`")
            }
            change(&record)
            try core.putApp(record)
            return record
        }
    }

    /// Hands the app's record (`nil`: not registered) to `body` on the writer, after every
    /// operation called before: for an index of tokens and certificates that must follow the
    /// store's order.
    package func withApp(_ app: String, _ body: @escaping @Sendable (AppRecord?) -> Void) {
        submit({ core in body(try core.store.app(app)) }, completion: { _ in })
    }

    /// ``withApp(_:_:)``, returning once `body` has run.
    package func withAppNow(_ app: String, _ body: @escaping @Sendable (AppRecord?) -> Void) async throws {
        try await perform { core in body(try core.store.app(app)) }
    }

    /// Hands every app's record to `body` on the writer (an index loaded there misses no change
    /// committed after it).
    package func withApps(_ body: @escaping @Sendable ([AppRecord]) -> Void) async throws {
        try await perform { core in body(try core.store.apps()) }
    }

    // MARK: The store's key/value table (web sessions, sign-in codes)

    /// The value stored under `key`, or `nil` (read beside the writer).
    package func storedValue(forKey key: String) async throws -> String? {
        try await read { try $0.value(forKey: key) }
    }

    /// Stores `value` under `key` (`nil` removes it).
    package func setStoredValue(_ value: String?, forKey key: String) async throws {
        try await perform { core in try core.store.setValue(value, forKey: key) }
    }

    /// Removes the value under `key` and returns what it was: of two callers, one gets it.
    package func takeStoredValue(forKey key: String) async throws -> String? {
        try await perform { core in try core.store.takeValue(forKey: key) }
    }

    // MARK: Values every node of a shared store agrees on

    /// The key (in the store's values) of the owner token's hash.
    static let ownerTokenHashKey = "owner.tokenHash"

    /// The hash of the service's owner token that the store keeps: `proposed` when the store has
    /// none yet (the caller is the first to start on it, and its token is the owner's from now
    /// on), else the one kept. Race-free across the nodes of a shared store: of nodes proposing at
    /// once, every one gets the first one's. Works before the scheduler starts.
    ///
    /// ```swift
    /// let kept = try await engine.ownerTokenHash(proposing: Tokens.hash(token))
    /// guard kept == Tokens.hash(token) else { throw … }   // another node's token owns the store
    /// ```
    package func ownerTokenHash(proposing proposed: String) async throws -> String {
        try await keptValue(proposing: proposed, forKey: Self.ownerTokenHashKey)
    }

    /// The value the store keeps under `key`, storing `proposed` when it has none; of callers
    /// proposing at once (on any node of a shared store) every one gets the first one's.
    func keptValue(proposing proposed: String, forKey key: String) async throws -> String {
        try await perform { core in try core.store.insertValue(proposed, forKey: key) }
    }

    // MARK: Event pages

    /// A page of the event log after `sequence`, read on the writer; `read` is called there with
    /// the page before any later commit is published, so a reader that switches to live events
    /// from `read` on misses none.
    package func eventPage(
        after sequence: Int64, app: String?, limit: Int,
        read: @escaping @Sendable ([EngineEvent]) -> Void
    ) async throws -> [EngineEvent] {
        try await perform { core in
            let events = try core.store.events(after: sequence, app: app, limit: limit)
            read(events)
            return events
        }
    }

    // MARK: The Apple layer's calls, in call order

    /// `requestAuthorization`, with a completion handler; the call order is the processing order.
    package func requestAuthorization(
        app: String, options: UNAuthorizationOptions,
        ordered completion: @escaping @Sendable (Result<Bool, any Error>) -> Void
    ) {
        submit({ try $0.requestAuthorization(app: app, options: options).granted }, completion: completion)
    }

    /// The app's settings, in call order.
    package func settings(
        app: String, ordered completion: @escaping @Sendable (Result<NotificationSettings, any Error>) -> Void
    ) {
        submit({ try $0.appRecord(app).settings }, completion: completion)
    }

    /// The app's categories, in call order.
    package func categories(
        app: String, ordered completion: @escaping @Sendable (Result<[NotificationCategory], any Error>) -> Void
    ) {
        submit({ try $0.store.categories(app: app) }, completion: completion)
    }

    /// Reports `error` through the writer, after the operations called before (the order promise
    /// of a call that failed before it reached the engine).
    package func fail(_ error: any Error, ordered completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        submit({ _ in throw error }, completion: completion)
    }

    /// The app's pending requests, in call order.
    package func pending(
        app: String, ordered completion: @escaping @Sendable (Result<[PendingRequest], any Error>) -> Void
    ) {
        submit({ try $0.store.pending(app: app) }, completion: completion)
    }

    /// The app's delivered notifications, in call order.
    package func delivered(
        app: String, ordered completion: @escaping @Sendable (Result<[DeliveredNotification], any Error>) -> Void
    ) {
        submit({ try $0.store.delivered(app: app, thread: nil) }, completion: completion)
    }

    /// `setBadge`, with a completion handler; the call order is the processing order.
    package func setBadge(
        _ count: Int, app: String, ordered completion: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        submit({ try $0.setBadge(count, app: app) }, completion: completion)
    }
}
