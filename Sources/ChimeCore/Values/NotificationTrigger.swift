import Foundation

/// A point on Earth, in degrees.
public struct Coordinate: Sendable, Hashable {
    public var latitude: Double
    public var longitude: Double
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Whether the latitude is in -90...90 and the longitude in -180...180.
    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite && (-90...90).contains(latitude) && (-180...180).contains(longitude)
    }

    /// The great-circle distance to another point, in metres (haversine, mean Earth radius).
    public func distance(to other: Coordinate) -> Double {
        let radius = 6_371_008.8
        let φ1 = latitude * .pi / 180, φ2 = other.latitude * .pi / 180
        let Δφ = (other.latitude - latitude) * .pi / 180
        let Δλ = (other.longitude - longitude) * .pi / 180
        let a = sin(Δφ / 2) * sin(Δφ / 2) + cos(φ1) * cos(φ2) * sin(Δλ / 2) * sin(Δλ / 2)
        return 2 * radius * atan2(a.squareRoot(), (1 - a).squareRoot())
    }
}

/// A circle on Earth that a location trigger watches.
public struct CircularRegion: Sendable, Hashable {
    public var identifier: String
    public var center: Coordinate
    /// The radius in metres.
    public var radius: Double
    public var notifyOnEntry: Bool
    public var notifyOnExit: Bool

    public init(identifier: String, center: Coordinate, radius: Double, notifyOnEntry: Bool = true,
                notifyOnExit: Bool = true) {
        self.identifier = identifier
        self.center = center
        self.radius = radius
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
    }

    /// Whether the point lies inside the circle (on the edge counts as inside).
    public func contains(_ point: Coordinate) -> Bool {
        center.distance(to: point) <= radius
    }
}

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

/// A notification to schedule: identifier, content and trigger (`nil` delivers at once).
public struct NotificationRequest: Sendable, Hashable {
    public var identifier: String
    public var content: NotificationContent
    public var trigger: NotificationTrigger?

    public init(identifier: String, content: NotificationContent, trigger: NotificationTrigger? = nil) {
        self.identifier = identifier
        self.content = content
        self.trigger = trigger
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

    public init(request: NotificationRequest, nextFireDate: Date?, anchor: Date, inside: Bool? = nil, sequence: Int64 = 0) {
        self.request = request
        self.nextFireDate = nextFireDate
        self.anchor = anchor
        self.inside = inside
        self.sequence = sequence
    }
}

/// A notification that has been delivered.
public struct DeliveredNotification: Sendable, Hashable {
    public var request: NotificationRequest
    /// When it was delivered: for a scheduled notification, the time it was due.
    public var date: Date
    /// Delivery order, for listing newest first when dates tie.
    public var sequence: Int64

    public init(request: NotificationRequest, date: Date, sequence: Int64 = 0) {
        self.request = request
        self.date = date
        self.sequence = sequence
    }
}

/// The user's answer to a notification, kept in the app's outbox until the app acknowledges it.
public struct NotificationResponse: Sendable, Hashable {
    /// The outbox identifier, assigned when stored.
    public var id: Int64
    public var notification: DeliveredNotification
    public var actionIdentifier: String
    /// The typed text, for a text-input action.
    public var userText: String?
    /// When the user answered.
    public var date: Date

    public init(id: Int64 = 0, notification: DeliveredNotification, actionIdentifier: String, userText: String? = nil, date: Date) {
        self.id = id
        self.notification = notification
        self.actionIdentifier = actionIdentifier
        self.userText = userText
        self.date = date
    }
}
