import Foundation

/// What makes a notification fire.
public enum NotificationTrigger: Sendable, Hashable {
    /// After `interval` seconds; repeating every `interval` seconds.
    case timeInterval(TimeInterval, repeats: Bool)
    /// At the next date matching the components (only the components given take part).
    case calendar(DateComponents, repeats: Bool)
    /// On entering or leaving a region.
    case location(CircularRegion, repeats: Bool)
    /// At each occurrence of an RFC 5545 recurrence rule from its start in a named time zone,
    /// skipping its exception dates (EXDATE), until `COUNT` or `UNTIL` ends it. A Chime addition:
    /// Apple's triggers repeat only at an interval or when date components match.
    ///
    /// ```swift
    /// let lastFriday = try RecurrenceSchedule(rule: RecurrenceRule(parsing: "FREQ=MONTHLY;BYDAY=-1FR"),
    ///                                         start: DateComponents(year: 2027, month: 1, day: 29, hour: 9),
    ///                                         timeZone: TimeZone(identifier: "Europe/Berlin")!)
    /// let trigger = NotificationTrigger.recurrence(lastFriday)
    /// ```
    case recurrence(RecurrenceSchedule)
    /// A remote (APNs-format) notification, delivered when it arrives.
    case push

    /// Whether the trigger fires again after it fires.
    public var repeats: Bool {
        switch self {
        case .timeInterval(_, let repeats), .calendar(_, let repeats), .location(_, let repeats): repeats
        case .recurrence: true
        case .push: false
        }
    }

    /// A calendar trigger without a time zone follows the center's current time zone ("floating").
    public var isFloating: Bool {
        if case .calendar(let components, _) = self { return components.timeZone == nil }
        return false
    }

    /// A short name of the kind: `timeInterval`, `calendar`, `location`, `recurrence`, `push`.
    public var kindName: String {
        typealias Kind = JSONFieldName.Trigger.Kind
        return switch self {
        case .timeInterval: Kind.timeInterval
        case .calendar: Kind.calendar
        case .location: Kind.location
        case .recurrence: Kind.recurrence
        case .push: Kind.push
        }
    }
}
