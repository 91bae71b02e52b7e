import Foundation

/// A store that several engines use at once, each in its own process (PostgreSQL under several
/// `chime serve` nodes). The engine sees the capability and changes four things, and nothing for a
/// store that is not shared:
///
/// - **Claiming.** `due(before:limit:)` claims what it returns: the rows stay locked until the
///   transaction ends, and rows another engine has claimed are skipped. Delivering and removing in
///   the same transaction makes each occurrence fire exactly once, whichever engine fires it and
///   whatever crashes. ``soonestFireDate()`` replaces the in-memory window as the
///   scheduler's next date.
/// - **Caches.** Other engines change apps and categories, so the engine's caches of them last one
///   transaction; a write of an app record another engine changed since it was read fails with
///   ``ChimeError/Code/storeConflict``, and the engine runs the batch again with fresh reads.
/// - **Events.** `appendEvent` inside a transaction returns a provisional (negative) sequence: the
///   log's sequences are assigned at commit, in commit order, so a reader that has seen sequence
///   *n* has seen every event before it. The engine publishes only unlogged events itself; logged
///   ones — its own and every other engine's — reach its hub through the feed, in sequence order.
/// - **The feed** (``startFeed(_:)``): what other engines did, as it commits.
///
/// ```swift
/// let store = try PostgresStore(url: "postgresql://chime@db.internal/chime")
/// let engine = NotificationEngine(store: store, clock: DatabaseClock(url: url))  // starts the feed
/// ```
public protocol SharedNotificationStore: NotificationStore {
    /// The soonest date the scheduler has work (`nil`: none): a timed request's fire date, or a
    /// delivered notification's end of relevance (``NotificationStore/soonestDismissals(limit:)``).
    /// It may be one another engine is firing at this moment: when `due(before:limit:)` then
    /// claims nothing, the engine waits a moment (5 ms) before asking again.
    func soonestFireDate() throws -> Date?

    /// Starts telling `feed` what every engine on the store commits. Safe to call from any thread;
    /// the feed's closures are called from a thread of the store's own.
    func startFeed(_ feed: SharedStoreFeed)

    /// Stops the feed; no closure is called once it returns.
    func stopFeed()
}

/// What a shared store tells an engine about commits, its own and other engines'.
public struct SharedStoreFeed: Sendable {
    /// Logged events of every engine, in sequence order, each once; and the hints other engines
    /// announced (`scheduled`, `categories`, `app`, with sequence 0).
    public var events: @Sendable ([EngineEvent]) -> Void
    /// Another engine scheduled a request for this date (`nil`: anything may have changed, after
    /// the feed reconnected).
    public var scheduleChanged: @Sendable (Date?) -> Void
    /// Another engine changed device-wide state (time zone, location).
    public var deviceChanged: @Sendable () -> Void
    /// Another engine gave back Web Push pushes it had claimed
    /// (``NotificationStore/releaseWebPushes(_:at:)``): they are due now.
    public var webPushReleased: @Sendable () -> Void

    public init(
        events: @escaping @Sendable ([EngineEvent]) -> Void, scheduleChanged: @escaping @Sendable (Date?) -> Void,
        deviceChanged: @escaping @Sendable () -> Void, webPushReleased: @escaping @Sendable () -> Void = {}
    ) {
        self.events = events
        self.scheduleChanged = scheduleChanged
        self.deviceChanged = deviceChanged
        self.webPushReleased = webPushReleased
    }
}
