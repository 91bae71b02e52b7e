import Foundation

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
