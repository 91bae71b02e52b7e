import Foundation

/// What makes a notification fire.
public enum NotificationTrigger: Sendable, Hashable {
    /// After `interval` seconds; repeating every `interval` seconds.
    case timeInterval(TimeInterval, repeats: Bool)
    /// At the next date matching the components (only the components given take part).
    case calendar(DateComponents, repeats: Bool)
    /// On entering or leaving a region.
    case location(CircularRegion, repeats: Bool)
    /// A remote (APNs-format) notification, delivered when it arrives.
    case push

    /// Whether the trigger fires again after it fires.
    public var repeats: Bool {
        switch self {
        case .timeInterval(_, let repeats), .calendar(_, let repeats), .location(_, let repeats): repeats
        case .push: false
        }
    }

    /// A calendar trigger without a time zone follows the center's current time zone ("floating").
    public var isFloating: Bool {
        if case .calendar(let components, _) = self { return components.timeZone == nil }
        return false
    }

    /// A short name of the kind: `timeInterval`, `calendar`, `location`, `push`.
    public var kindName: String {
        switch self {
        case .timeInterval: "timeInterval"
        case .calendar: "calendar"
        case .location: "location"
        case .push: "push"
        }
    }
}
