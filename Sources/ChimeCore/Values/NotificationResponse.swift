import Foundation

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

    public init(
        id: Int64 = 0, notification: DeliveredNotification, actionIdentifier: String, userText: String? = nil,
        date: Date
    ) {
        self.id = id
        self.notification = notification
        self.actionIdentifier = actionIdentifier
        self.userText = userText
        self.date = date
    }
}
