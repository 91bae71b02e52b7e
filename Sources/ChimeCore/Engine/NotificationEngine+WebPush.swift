import Foundation

/// The Web Push subscriptions and the queue of pushes not yet sent: the engine keeps them in its
/// store (so they survive a restart, and with PostgreSQL every node sees them); the service's Web
/// Push surface sends.
///
/// ```swift
/// let (subscription, _) = try await engine.registerWebPushSubscription(registration, userAgent: "Firefox/133", date: .now)
/// try await engine.updateWebPushSubscription(id: subscription.id, apps: .some(["com.example.alarm"]), name: "Phone")
/// for device in try await engine.webPushSubscriptions() { print(device.name, device.endpoint) }
/// ```
extension NotificationEngine {
    /// Every subscription, oldest first. Read beside the writer where the store has readers (the
    /// Web Push sender asks for every batch of events it queues).
    public func webPushSubscriptions() async throws -> [WebPushSubscription] {
        try await read { try $0.webPushSubscriptions() }
    }

    /// Registers a browser's subscription. The same endpoint again (the browser registering once
    /// more, or with new keys) updates the one there: its id, creation date, and — unless the
    /// registration gives them — its name and apps stay.
    ///
    /// - Returns: the stored subscription, and whether it is new.
    public func registerWebPushSubscription(_ registration: WebPushRegistration, userAgent: String, date: Date)
        async throws
        -> (subscription: WebPushSubscription, created: Bool)
    {
        try await perform { core in
            let store = core.store
            let agent = String(
                userAgent.unicodeScalars.filter { $0.properties.generalCategory != .control }.prefix(
                    WebPushSubscription.maximumUserAgentLength
                )
                .map(Character.init))
            if var existing = try store.webPushSubscription(endpoint: registration.endpoint) {
                existing.p256dh = registration.p256dh
                existing.auth = registration.auth
                existing.expires = registration.expires
                existing.userAgent = agent
                if let name = registration.name { existing.name = name }
                if let apps = registration.apps { existing.apps = apps }
                try store.putWebPushSubscription(existing)
                return (existing, false)
            }
            let subscription = WebPushSubscription(
                id: WebPushSubscription.makeID(), endpoint: registration.endpoint, p256dh: registration.p256dh,
                auth: registration.auth, apps: registration.apps ?? nil, name: registration.name ?? "",
                userAgent: agent, created: date, expires: registration.expires)
            // The first subscriber: the queue's position in the log stood still while nobody was
            // subscribed (nothing to queue), and what was logged meanwhile is not for this device.
            if try !store.hasWebPushSubscriptions() {
                let newest = try store.newestEventSequence()
                if newest > (try Self.webPushQueuedThrough(store)) {
                    try store.setValue(String(newest), forKey: Self.webPushPositionKey)
                }
            }
            try store.putWebPushSubscription(subscription)
            return (subscription, true)
        }
    }

    /// Changes which apps a subscriber gets (`apps`: `.some(nil)` every app, `.some([…])` those,
    /// `nil` unchanged) and its name.
    ///
    /// - Throws: ``ChimeError`` `notFound` for an unknown id.
    @discardableResult
    public func updateWebPushSubscription(id: String, apps: [String]??, name: String?) async throws
        -> WebPushSubscription
    {
        try await perform { core in
            guard var subscription = try core.store.webPushSubscription(id: id) else {
                throw ChimeError(
                    .notFound, field: "id",
                    "no web push subscription \(id.prefix(40)); see GET /v1/web-push/subscriptions")
            }
            if let apps { subscription.apps = apps }
            if let name { subscription.name = name }
            try core.store.putWebPushSubscription(subscription)
            return subscription
        }
    }

    /// Removes a subscription and what is queued for it; returns whether it was there.
    public func removeWebPushSubscription(id: String) async throws -> Bool {
        try await perform { try $0.store.removeWebPushSubscription(id: id) }
    }

    /// Notes how sending to a subscriber went: a success, or a failure with its reason.
    public func recordWebPushOutcome(id: String, failure reason: String?, date: Date) async throws {
        try await perform { core in
            guard var subscription = try core.store.webPushSubscription(id: id) else { return }
            if let reason {
                subscription.lastFailure = date
                subscription.lastFailureReason = String(reason.prefix(300))
            } else {
                subscription.lastSuccess = date
            }
            try core.store.putWebPushSubscription(subscription)
        }
    }

    /// Queues a message for these subscribers (durably: a restart sends what is queued), claimed
    /// by the caller until `claimedUntil`. (The service's sender queues what the event log says
    /// with ``queueWebPushes(_:through:claimedUntil:)``, once per event.)
    public func queueWebPush(_ message: String, app: String, subscriptions: [String], claimedUntil: Date) async throws
        -> Int64
    {
        try await perform {
            try $0.store.queueWebPush(message, app: app, subscriptions: subscriptions, claimedUntil: claimedUntil)
        }
    }

    /// Takes queued pushes due by `date`, at most `limit`, claimed until `claimUntil`.
    public func claimWebPushes(before date: Date, claimUntil: Date, limit: Int) async throws -> [QueuedWebPush] {
        try await perform { try $0.store.claimWebPushes(before: date, claimUntil: claimUntil, limit: limit) }
    }

    /// A push to send again after `notBefore`.
    public func retryWebPush(message: Int64, subscription: String, attempts: Int, notBefore: Date) async throws {
        try await perform {
            try $0.store.retryWebPush(
                message: message, subscription: subscription, attempts: attempts, notBefore: notBefore)
        }
    }

    /// A push that is done: sent, or given up.
    public func finishWebPush(message: Int64, subscription: String) async throws {
        try await perform { try $0.store.finishWebPush(message: message, subscription: subscription) }
    }

    /// Claimed pushes given back, due again from `date` (a sender that stops); with a shared
    /// store the other engines' senders are told at once.
    public func releaseWebPushes(_ pushes: [QueuedWebPushID], at date: Date) async throws {
        guard !pushes.isEmpty else { return }
        try await perform { try $0.store.releaseWebPushes(pushes, at: date) }
    }

    // MARK: The service's key

    /// The key (in the store's values) of the service's Web Push (VAPID) private key.
    package static let webPushKeyKey = "webPush.vapidKey"

    /// The service's Web Push (VAPID) private key, PEM, that a shared store keeps: `proposed` when
    /// the store has none yet (the caller is the first node to start on it), else the one kept.
    /// Race-free across nodes: of nodes proposing at once, every one gets the first one's, so a
    /// subscription made through one node is served by all. Works before the scheduler starts.
    ///
    /// ```swift
    /// let pem = try await engine.webPushKey(proposing: P256PrivateKey().pemRepresentation)
    /// ```
    package func webPushKey(proposing proposed: String) async throws -> String {
        try await keptValue(proposing: proposed, forKey: Self.webPushKeyKey)
    }

    // MARK: Queueing from the event log

    /// The key (in the store's values) of the Web Push queue's position in the event log.
    static let webPushPositionKey = "webPush.queuedThrough"

    /// The Web Push queue's position in the event log: the messages of every `delivered` and
    /// `removed` event up to this sequence are queued (or were for nobody). Read and moved only in
    /// the transaction that queues them, so a crash in between leaves neither: the sender's next
    /// start reads the log after it and queues what is missing. With a shared store the read
    /// locks the position until the transaction ends: of several nodes queueing one event, the
    /// first queues it and the others find it done.
    public func webPushQueuedThrough() async throws -> Int64 {
        if let position = try await read({ try $0.value(forKey: Self.webPushPositionKey) }) {
            return Int64(position) ?? 0
        }
        // None yet (a store from before the position was kept, whose sender queued as events
        // came): what is logged is taken as queued, so it is not pushed a second time.
        return try await perform { core in
            Int64(
                try core.store.insertValue(
                    String(try core.store.newestEventSequence()), forKey: Self.webPushPositionKey)) ?? 0
        }
    }

    /// Whether any device is subscribed (one index read).
    public func hasWebPushSubscriptions() async throws -> Bool {
        try await read { try $0.hasWebPushSubscriptions() }
    }

    static func webPushQueuedThrough(_ store: any NotificationStore) throws -> Int64 {
        Int64(try store.insertValue("0", forKey: webPushPositionKey)) ?? 0
    }

    /// Queues the messages of logged events, each event once, and moves the queue's position in
    /// the log to `sequence` (the last event the caller looked at) — in one transaction. Entries at
    /// or below the position are skipped (queued by an earlier run, or by another node); an entry
    /// with sequence 0 (an event not logged) is queued as it comes.
    ///
    /// - Returns: the pushes queued, claimed by the caller until `claimedUntil`.
    ///
    /// ```swift
    /// let entry = WebPushQueueEntry(sequence: event.sequence, app: event.app, messages: [record], subscriptions: ids)
    /// let queued = try await engine.queueWebPushes([entry], through: event.sequence, claimedUntil: now + 120)
    /// ```
    public func queueWebPushes(_ entries: [WebPushQueueEntry], through sequence: Int64, claimedUntil: Date) async throws
        -> [QueuedWebPush]
    {
        try await perform { core in
            let store = core.store
            let done = sequence > 0 ? try Self.webPushQueuedThrough(store) : 0
            var queued: [QueuedWebPush] = []
            for entry in entries where (entry.sequence == 0 || entry.sequence > done) && !entry.subscriptions.isEmpty {
                for message in entry.messages {
                    let id = try store.queueWebPush(
                        message, app: entry.app, subscriptions: entry.subscriptions, claimedUntil: claimedUntil)
                    queued += entry.subscriptions.map {
                        QueuedWebPush(
                            message: id, subscription: $0, app: entry.app, body: message, attempts: 0,
                            notBefore: claimedUntil)
                    }
                }
            }
            if sequence > done { try store.setValue(String(sequence), forKey: Self.webPushPositionKey) }
            return queued
        }
    }

    /// Calls `handler` when another engine on a shared store gives back the pushes it had claimed
    /// (``releaseWebPushes(_:at:)``), so they can be taken at once; `nil` stops it.
    package func onWebPushReleased(_ handler: (@Sendable () -> Void)?) {
        webPushReleasedHandler.withLock { $0 = handler }
    }

    func webPushReleasedElsewhere() {
        webPushReleasedHandler.withLock { $0 }?()
    }

    /// How many pushes are queued.
    public func queuedWebPushCount() async throws -> Int {
        try await perform { try $0.store.queuedWebPushCount() }
    }
}

/// What one logged event asks of the Web Push queue: its messages (each as queued, see
/// ``QueuedWebPush/body``), for these subscribers.
public struct WebPushQueueEntry: Sendable, Hashable {
    /// The event's sequence in the log (0: not logged).
    public var sequence: Int64
    public var app: String
    public var messages: [String]
    public var subscriptions: [String]

    public init(sequence: Int64, app: String, messages: [String], subscriptions: [String]) {
        self.sequence = sequence
        self.app = app
        self.messages = messages
        self.subscriptions = subscriptions
    }
}
