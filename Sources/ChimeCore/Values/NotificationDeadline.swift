import Foundation

/// A moment given as a date, or as a duration from a reference the field names: when a request
/// expires (``NotificationRequest/expiration``, counted from the add). A Chime addition: Apple's
/// `UNNotificationRequest` has no expiry (APNs has one for pushes, `apns-expiration`).
///
/// ```swift
/// let ride = NotificationRequest(identifier: "ride", content: content,
///                                trigger: .timeInterval(300, repeats: false), expiration: .after(600))
/// // added at 12:00: fires at 12:05; if it cannot be delivered by 12:10, it expires instead
/// ```
public enum NotificationDeadline: Sendable, Hashable {
    /// At this date.
    case at(Date)
    /// This many seconds after the reference (0 or more).
    case after(TimeInterval)

    /// The date, counting ``after(_:)`` from `reference`.
    public func date(from reference: Date) -> Date {
        switch self {
        case .at(let date): date
        case .after(let seconds): reference.addingTimeInterval(seconds)
        }
    }

    /// The date when it is one (``at(_:)``), else `nil`.
    public var date: Date? {
        if case .at(let date) = self { return date }
        return nil
    }

    /// ``after(_:)`` as ``at(_:)`` from `reference`; a date stays as it is.
    public func resolved(from reference: Date) -> NotificationDeadline { .at(date(from: reference)) }
}
