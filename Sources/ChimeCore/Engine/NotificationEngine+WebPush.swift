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
    /// Web Push surface asks for every delivery).
    public func webPushSubscriptions() async throws -> [WebPushSubscription] {
        try await read { try $0.webPushSubscriptions() }
    }

    /// Registers a browser's subscription. The same endpoint again (the browser registering once
    /// more, or with new keys) updates the one there: its id, creation date, and — unless the
    /// registration gives them — its name and apps stay.
    ///
    /// - Returns: the stored subscription, and whether it is new.
    public func registerWebPushSubscription(_ registration: WebPushRegistration, userAgent: String, date: Date) async throws
        -> (subscription: WebPushSubscription, created: Bool) {
        try await perform { core in
            let store = core.store
            let agent = String(userAgent.unicodeScalars.filter { $0.properties.generalCategory != .control }.prefix(WebPushSubscription.maximumUserAgentLength)
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
            let subscription = WebPushSubscription(id: WebPushSubscription.makeID(), endpoint: registration.endpoint, p256dh: registration.p256dh,
                                                   auth: registration.auth, apps: registration.apps ?? nil, name: registration.name ?? "",
                                                   userAgent: agent, created: date, expires: registration.expires)
            try store.putWebPushSubscription(subscription)
            return (subscription, true)
        }
    }

    /// Changes which apps a subscriber gets (`apps`: `.some(nil)` every app, `.some([…])` those,
    /// `nil` unchanged) and its name.
    ///
    /// - Throws: ``ChimeError`` `notFound` for an unknown id.
    @discardableResult
    public func updateWebPushSubscription(id: String, apps: [String]??, name: String?) async throws -> WebPushSubscription {
        try await perform { core in
            guard var subscription = try core.store.webPushSubscription(id: id) else {
                throw ChimeError(.notFound, field: "id", "no web push subscription \(id.prefix(40)); see GET /v1/web-push/subscriptions")
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
    /// by the caller until `claimedUntil`.
    public func queueWebPush(_ message: String, app: String, subscriptions: [String], claimedUntil: Date) async throws -> Int64 {
        try await perform { try $0.store.queueWebPush(message, app: app, subscriptions: subscriptions, claimedUntil: claimedUntil) }
    }

    /// Takes queued pushes due by `date`, at most `limit`, claimed until `claimUntil`.
    public func claimWebPushes(before date: Date, claimUntil: Date, limit: Int) async throws -> [QueuedWebPush] {
        try await perform { try $0.store.claimWebPushes(before: date, claimUntil: claimUntil, limit: limit) }
    }

    /// A push to send again after `notBefore`.
    public func retryWebPush(message: Int64, subscription: String, attempts: Int, notBefore: Date) async throws {
        try await perform { try $0.store.retryWebPush(message: message, subscription: subscription, attempts: attempts, notBefore: notBefore) }
    }

    /// A push that is done: sent, or given up.
    public func finishWebPush(message: Int64, subscription: String) async throws {
        try await perform { try $0.store.finishWebPush(message: message, subscription: subscription) }
    }

    /// How many pushes are queued.
    public func queuedWebPushCount() async throws -> Int {
        try await perform { try $0.store.queuedWebPushCount() }
    }
}
