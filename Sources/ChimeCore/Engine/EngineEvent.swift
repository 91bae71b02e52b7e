import Foundation

/// Something that happened to an app's notifications, with everything its consumers need: a
/// delivery carries the notification, its category and how to present it, so no surface, stream or
/// adapter reads them again.
///
/// ```swift
/// engine.subscribe(app: "com.example.alarm") { event in
///     switch event.payload {
///     case .delivered(let delivery) where delivery.presentation.contains(.banner):
///         print("banner:", delivery.notification.request.content.title)
///     case .response(let response):
///         print("answered with", response.actionIdentifier)
///     default:
///         break
///     }
/// }
/// ```
public struct EngineEvent: Sendable, Hashable {
    /// What happened, with what it carries. (`indirect`: a payload is boxed once, so handing an
    /// event to many consumers copies a reference, not the notification.)
    public indirect enum Payload: Sendable, Hashable {
        /// A notification was delivered.
        case delivered(Delivery)
        /// The user answered; the response is in the app's outbox until acknowledged.
        case response(NotificationResponse)
        /// Pending requests or delivered notifications were removed; `reason` says whether someone
        /// asked (the app, the user, a quota) or delivered notifications reached their end of
        /// relevance (``NotificationRequest/autoDismiss``).
        case removed(identifiers: [String], scope: RemovalScope, reason: RemovalReason = .request)
        /// A silent (content-available) push arrived; it is never shown.
        case silentPush(DeliveredNotification)
        /// The app's authorization or settings changed; these are the new settings.
        case settings(NotificationSettings)
        /// Requests were added or replaced: their identifiers when at most 100, else none; and the
        /// requests as the pending list has them (with their next fire dates) when at most 100 of at
        /// most 64 KiB in all (as stored) were added, else none: then a consumer that shows the list
        /// reads it (a large add, another node's commit). Announced to subscribers only, not kept in
        /// the event log.
        case scheduled(identifiers: [String], requests: [PendingRequest] = [])
        /// The app's categories were replaced by these. Announced only, not logged.
        case categories([NotificationCategory])
        /// The app was registered or changed (its token, its badge, a question for permission or
        /// its answer), or removed; `record` is the app's record as committed, for `updated` (`nil`
        /// when only the change is known: a hint from another node's commit that could not read it).
        /// Announced only, not logged.
        case app(AppChange, record: AppRecord? = nil)
        /// A due request could not be delivered and was set aside (see ``QuarantinedRequest``); the
        /// rest fired. Logged: a resumed stream sees it.
        case quarantined(QuarantinedRequest)
        /// A request fell due after its expiration (``NotificationRequest/expiration``): it was not
        /// delivered, and was removed in the same transaction (a repeating one ends). Logged: a
        /// resumed stream sees it. A Chime addition.
        case expired(ExpiredRequest)
        /// A delivered notification that escalates (``NotificationRequest/escalation``) was alerted
        /// again, unanswered: surfaces show it again (``Delivery/alert`` is 2 or more). Logged, in
        /// the transaction that took the step, so a step is alerted once. A Chime addition.
        case realerted(Delivery)
        /// The focus modes (``FocusMode``; a Chime addition) changed: one was added, replaced or
        /// removed, turned on or off by hand, or its schedule turned it on or off. Carries every
        /// mode as it is now. The owner's, not an app's: its ``EngineEvent/app`` is empty, so only
        /// subscribers to every app get it (the owner's event stream, so the web center). Announced
        /// only, not logged.
        case focus([FocusStatus])
    }

    /// The kinds of events, by the names event streams use (`event:` of a server-sent event).
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case delivered, response, removed, silentPush, settings, scheduled, categories, app, quarantined, expired,
            realerted, focus
    }

    /// The event's position in the store's log; resumable streams continue after it. 0 for events
    /// that are announced but not logged (and for every event when the log is off).
    public var sequence: Int64
    /// The app the event belongs to; empty for the owner's own events (``Payload/focus(_:)``).
    public var app: String
    /// When it happened (for a delivery: when the notification was due).
    public var date: Date
    public var payload: Payload

    public init(sequence: Int64 = 0, app: String, date: Date, payload: Payload) {
        self.sequence = sequence
        self.app = app
        self.date = date
        self.payload = payload
    }

    /// The payload's kind.
    public var kind: Kind {
        switch payload {
        case .delivered: .delivered
        case .response: .response
        case .removed: .removed
        case .silentPush: .silentPush
        case .settings: .settings
        case .scheduled: .scheduled
        case .categories: .categories
        case .app: .app
        case .quarantined: .quarantined
        case .expired: .expired
        case .realerted: .realerted
        case .focus: .focus
        }
    }

    /// The delivery, for a `delivered` event.
    public var delivery: Delivery? {
        if case .delivered(let delivery) = payload { return delivery }
        return nil
    }

    /// The response, for a `response` event.
    public var response: NotificationResponse? {
        if case .response(let response) = payload { return response }
        return nil
    }
}

/// A delivered notification as the engine announces it: with its category and the presentation
/// the engine decided from the app's settings, read in the transaction that delivered it.
public struct Delivery: Sendable, Hashable {
    /// The notification, as it is now in the delivered list.
    public var notification: DeliveredNotification
    /// Its category, when the notification names one the app registered.
    public var category: NotificationCategory?
    /// The app's settings when it was delivered.
    public var settings: NotificationSettings
    /// How to show it: ``Presentation/background(for:settings:)`` as the engine announces it; when
    /// the app is in front and answers `willPresent`, surfaces get that answer instead, within what
    /// the settings allow (``Presentation/foreground(requested:settings:)``). Empty: not shown.
    public var presentation: UNNotificationPresentationOptions
    /// The app's badge after this delivery, when the delivery changed it.
    public var badge: Int?
    /// The badge this delivery sets once the app in front answers `willPresent` with `.badge` (the
    /// hub applies it then, or when the app is no longer in front). Held in memory only: not in the
    /// event log or on event streams.
    public var pendingBadge: Int?
    /// Which alert this is: 1 for the delivery, 2 and on for an escalating notification alerted
    /// again (a `realerted` event; a Chime addition), which surfaces present with more urgency.
    public var alert = 1
    /// What an active focus did to it (a Chime addition; ``FocusMode``): held quietly, with its
    /// banner and sound taken out of ``presentation``, or let through and why. `nil`: no focus on.
    public var focus: FocusDecision?
    /// For a request whose trigger repeats: the next date it fires, as it stays in the pending list
    /// after this delivery (a Chime addition), so a consumer that shows the list moves the request
    /// without reading the list. `nil` when the trigger does not repeat or its repeats ended (then
    /// the request left the pending list).
    public var nextTriggerDate: Date?

    public init(
        notification: DeliveredNotification, category: NotificationCategory?, settings: NotificationSettings,
        presentation: UNNotificationPresentationOptions, badge: Int? = nil
    ) {
        self.notification = notification
        self.category = category
        self.settings = settings
        self.presentation = presentation
        self.badge = badge
    }
}

/// A request that fell due after its expiration, as the `expired` event carries it.
public struct ExpiredRequest: Sendable, Hashable {
    /// The request, with its expiration date.
    public var request: NotificationRequest
    /// When it fell due (its fire date; for a request without a trigger, when it was added).
    public var dueDate: Date

    public init(request: NotificationRequest, dueDate: Date) {
        self.request = request
        self.dueDate = dueDate
    }
}

/// Which list a removal took from.
public enum RemovalScope: String, Sendable, Hashable {
    /// Pending requests.
    case pending
    /// Delivered notifications (answered, dismissed, or removed by the app or the user).
    case delivered
}

/// Why notifications were removed.
public enum RemovalReason: String, Sendable, Hashable {
    /// The app, the user or the owner removed them (or answered them), or the app's delivered
    /// quota made room.
    case request
    /// Delivered notifications reached their end of relevance (``NotificationRequest/autoDismiss``;
    /// a Chime addition). Event streams say `"reason": "autoDismiss"`.
    case autoDismiss
}

/// What happened to an app's record.
public enum AppChange: String, Sendable, Hashable {
    /// Registered, or changed (a new token, a new background-launch command).
    case updated
    /// Removed with everything it owned.
    case removed
}
