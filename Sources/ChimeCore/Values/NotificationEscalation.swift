import Foundation

/// Repeat until acknowledged (a Chime addition, not Apple's): the delivered notification is alerted
/// again — sound, banner, a desktop pop-up shown again with urgency critical, a Web Push sent again
/// — every ``interval`` seconds until the user answers it (an action, opening it, dismissing it),
/// it is removed, or ``duration`` seconds have passed since it was delivered. Each repeating
/// request's every occurrence escalates on its own. Its progress is kept in an
/// ``EscalationReceipt``.
///
/// The steps are at the delivery date plus 1, 2, 3 … intervals, each before the window ends; at
/// its end the receipt says it expired unanswered. A step missed while the service was down is
/// alerted once when it starts (if the window is still open), and the schedule goes on from there.
///
/// ```swift
/// // Ring every minute until answered, for half an hour:
/// let alarm = NotificationRequest(identifier: "wake", content: content, trigger: nil,
///                                 escalation: NotificationEscalation(every: 60, for: 1800))
/// ```
public struct NotificationEscalation: Sendable, Hashable {
    /// Seconds between two alerts.
    public var interval: TimeInterval
    /// Seconds after the delivery when the escalation ends unanswered.
    public var duration: TimeInterval

    public init(every interval: TimeInterval, for duration: TimeInterval) {
        self.interval = interval
        self.duration = duration
    }

    /// The first step after `now` for a notification delivered at `deliveredAt`, or the end of the
    /// window when no step is left before it.
    func nextDate(after now: Date, deliveredAt: Date) -> Date {
        let end = deliveredAt.addingTimeInterval(duration)
        var step = (now.timeIntervalSince(deliveredAt) / interval).rounded(.down) + 1
        var date = deliveredAt.addingTimeInterval(max(step, 1) * interval)
        // Rounding may land on `now` itself: the step after it, then.
        while date <= now {
            step += 1
            date = deliveredAt.addingTimeInterval(step * interval)
        }
        return min(date, end)
    }
}

/// The limits the engine holds escalations to (``NotificationEngine/Configuration/escalationLimits``;
/// `chime serve` reads them from its configuration).
public struct EscalationLimits: Sendable, Hashable {
    /// The shortest interval between two alerts, in seconds (10 by default).
    public var minimumInterval: TimeInterval
    /// The longest escalation window, in seconds (24 hours by default).
    public var maximumDuration: TimeInterval

    public init(minimumInterval: TimeInterval = 10, maximumDuration: TimeInterval = 86_400) {
        self.minimumInterval = minimumInterval
        self.maximumDuration = maximumDuration
    }
}

/// What became of an escalating notification (a Chime addition): how often it was alerted, and
/// whether and how it was answered. Kept after the notification leaves the delivered list, until
/// the engine's retention age has passed since it ended (``NotificationEngine/receipt(app:notification:)``;
/// `GET /v1/apps/{app}/notifications/{id}/receipt`). One per app and identifier: a later
/// delivery of the identifier (a repeating request's next occurrence) starts a new one.
public struct EscalationReceipt: Sendable, Hashable {
    public var app: String
    /// The notification's identifier.
    public var identifier: String
    /// The delivery's sequence (``DeliveredNotification/sequence``): which delivery this is of.
    public var sequence: Int64
    /// When it was delivered (the first alert).
    public var deliveredAt: Date
    public var escalation: NotificationEscalation
    /// How often it was alerted so far, the delivery included.
    public var alerts: Int
    /// When it was last alerted (at first, its delivery).
    public var lastAlertedAt: Date
    /// The next step, or the end of the window; `nil` once the escalation ended.
    public var nextAlertAt: Date?
    /// When the user answered it.
    public var acknowledgedAt: Date?
    /// The answer's action identifier (``UNNotificationDefaultActionIdentifier`` for opening it,
    /// ``UNNotificationDismissActionIdentifier`` for dismissing it).
    public var actionIdentifier: String?
    /// Where the answer came from: `web`, `desktop`, `webPush`, `terminal`, `api`, `app`,
    /// `simulator` — or what the answering client said.
    public var surface: String?
    /// Whether the window ended before any answer.
    public var expired: Bool
    /// When the notification was removed unanswered (by the app, the user's clear, a replacement,
    /// its end of relevance), which ended the escalation.
    public var removedAt: Date?

    public init(
        app: String, identifier: String, sequence: Int64, deliveredAt: Date, escalation: NotificationEscalation,
        alerts: Int = 1, lastAlertedAt: Date? = nil, nextAlertAt: Date? = nil, acknowledgedAt: Date? = nil,
        actionIdentifier: String? = nil, surface: String? = nil, expired: Bool = false, removedAt: Date? = nil
    ) {
        self.app = app
        self.identifier = identifier
        self.sequence = sequence
        self.deliveredAt = deliveredAt
        self.escalation = escalation
        self.alerts = alerts
        self.lastAlertedAt = lastAlertedAt ?? deliveredAt
        self.nextAlertAt = nextAlertAt
        self.acknowledgedAt = acknowledgedAt
        self.actionIdentifier = actionIdentifier
        self.surface = surface
        self.expired = expired
        self.removedAt = removedAt
    }

    /// Whether the user answered it.
    public var acknowledged: Bool { acknowledgedAt != nil }
    /// Whether it is still being alerted again.
    public var isEscalating: Bool { nextAlertAt != nil }
    /// When the window ends.
    public var endsAt: Date { deliveredAt.addingTimeInterval(escalation.duration) }
    /// When the escalation ended (answered, removed, or its window over), or `nil` while it goes on.
    public var endedAt: Date? {
        guard nextAlertAt == nil else { return nil }
        return expired ? endsAt : acknowledgedAt ?? removedAt ?? endsAt
    }
}
