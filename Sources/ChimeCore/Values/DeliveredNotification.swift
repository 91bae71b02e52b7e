import Foundation

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

    /// When it stops being relevant and is removed (its request's
    /// ``NotificationRequest/autoDismiss``, counted from ``date``), or `nil`.
    public var dismissDate: Date? { request.autoDismiss?.date(from: date) }
}
