import Foundation

/// A notification to schedule: identifier, content and trigger (`nil` delivers at once), and
/// optionally when it expires and when its delivered notification stops being relevant.
public struct NotificationRequest: Sendable, Hashable {
    public var identifier: String
    public var content: NotificationContent
    public var trigger: NotificationTrigger?
    /// When the request expires (a Chime addition): due after it, it is not delivered but removed
    /// with an `expired` event (``EngineEvent/Payload/expired(_:)``); a repeating request ends
    /// there. ``NotificationDeadline/after(_:)`` counts from the add: the engine keeps the date it
    /// makes (``NotificationDeadline/at(_:)``), so a listed request shows when it expires. A
    /// request delivered late — its service was down at its fire date — is delivered only if it
    /// has not expired by then. A push (``NotificationTrigger/push``) is delivered as it arrives
    /// whatever its expiration, which it keeps (APNs' `apns-expiration`; see
    /// ``NotificationEngine/deliverPush(_:identifier:silent:app:date:expiration:)``).
    public var expiration: NotificationDeadline?
    /// When the delivered notification stops being relevant (a Chime addition): then it is
    /// removed from the delivered list — and so from every surface: the web center, a desktop
    /// pop-up, a Web Push device, event streams (a `removed` event with reason
    /// ``RemovalReason/autoDismiss``). ``NotificationDeadline/after(_:)`` counts from each
    /// delivery (a repeating request's every occurrence gets its own); the delivered notification
    /// keeps the date it makes (``NotificationDeadline/at(_:)``). A request that would be delivered
    /// at or after its end of relevance (late, after the service was down) is not delivered: it
    /// expires instead (``EngineEvent/Payload/expired(_:)``). Not the user's dismissal: the app is
    /// sent no dismiss action.
    ///
    /// ```swift
    /// let bus = NotificationRequest(identifier: "bus", content: content, trigger: .timeInterval(300, repeats: false),
    ///                               autoDismiss: .after(600))
    /// // added at 12:00: delivered at 12:05, gone from the list at 12:15
    /// ```
    public var autoDismiss: NotificationDeadline?
    /// Repeat until acknowledged (a Chime addition): the delivered notification is alerted again
    /// every ``NotificationEscalation/interval`` until it is answered or removed, or its window
    /// ends; each delivery (a repeating request's every occurrence) escalates on its own, with an
    /// ``EscalationReceipt``. See ``NotificationEscalation``.
    ///
    /// ```swift
    /// let alarm = NotificationRequest(identifier: "wake", content: content,
    ///                                 escalation: NotificationEscalation(every: 60, for: 1800))
    /// ```
    public var escalation: NotificationEscalation?

    public init(
        identifier: String, content: NotificationContent, trigger: NotificationTrigger? = nil,
        expiration: NotificationDeadline? = nil, autoDismiss: NotificationDeadline? = nil,
        escalation: NotificationEscalation? = nil
    ) {
        self.identifier = identifier
        self.content = content
        self.trigger = trigger
        self.expiration = expiration
        self.autoDismiss = autoDismiss
        self.escalation = escalation
    }

    /// The request as the engine keeps it when added at `now`: an expiration given as a duration
    /// becomes the date it makes. (An adapter that answers with the request calls this first, so its
    /// answer shows the date the engine keeps.)
    public func added(at now: Date) -> NotificationRequest {
        guard expiresAfterAdd else { return self }
        var resolved = self
        resolved.expiration = expiration?.resolved(from: now)
        return resolved
    }

    /// Whether the expiration is a duration counted from the add (``added(at:)`` makes it a date).
    var expiresAfterAdd: Bool {
        if case .after? = expiration { return true }
        return false
    }

    /// Whether the request has expired at `now`: its expiration date lies before `now` (an
    /// unresolved ``NotificationDeadline/after(_:)`` is counted from `now`, so never).
    public func isExpired(at now: Date) -> Bool {
        guard let expiration else { return false }
        return now > expiration.date(from: now)
    }

    /// The request as delivered at `date`: an auto-dismissal given as a duration becomes the date
    /// it makes (the delivered notification keeps that).
    public func delivered(at date: Date) -> NotificationRequest {
        guard case .after? = autoDismiss else { return self }
        var resolved = self
        resolved.autoDismiss = autoDismiss?.resolved(from: date)
        return resolved
    }

    /// Whether a delivery dated `date` would come too late at `now`: the request has expired, or
    /// the notification's end of relevance (``autoDismiss``, counted from `date`) is already here.
    public func isStale(deliveredAt date: Date, now: Date) -> Bool {
        if isExpired(at: now) { return true }
        guard let autoDismiss else { return false }
        return autoDismiss.date(from: date) <= now
    }
}

/// A request waiting to fire, as the engine keeps it.
public struct PendingRequest: Sendable, Hashable {
    public var request: NotificationRequest
    /// When it fires next; `nil` for location triggers, which fire on a move.
    public var nextFireDate: Date?
    /// When it was added, or last fired for a repeating trigger: the reference for the next occurrence.
    public var anchor: Date
    /// For location triggers: whether the last known location was inside the region.
    public var inside: Bool?
    /// Insertion order, for stable listing.
    public var sequence: Int64

    public init(
        request: NotificationRequest, nextFireDate: Date?, anchor: Date, inside: Bool? = nil, sequence: Int64 = 0
    ) {
        self.request = request
        self.nextFireDate = nextFireDate
        self.anchor = anchor
        self.inside = inside
        self.sequence = sequence
    }
}
