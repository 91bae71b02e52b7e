import Chime

/// An inbox that keeps its unread count on the app badge: a message notification carries the new
/// count; a count-only update (after reading on another device) carries nothing but the badge. In
/// front, it shows messages as banners and decides whether the badge follows.
public class InboxBadge: NSObject, UNUserNotificationCenterDelegate {
    /// Whether messages shown in front update the badge.
    public var badgeInFront: Bool

    public init(badgeInFront: Bool) {
        self.badgeInFront = badgeInFront
        super.init()
        UNUserNotificationCenter.current().delegate = self
    }

    public func messageArrived(_ identifier: String, from sender: String, unread: Int) {
        let content = UNMutableNotificationContent()
        content.title = sender
        content.body = "New message"
        content.badge = NSNumber(value: unread)
        UNUserNotificationCenter.current().add(
            UNNotificationRequest(identifier: identifier, content: content, trigger: nil))
    }

    /// Read elsewhere: only the count changes.
    public func unreadChanged(to unread: Int) {
        let content = UNMutableNotificationContent()
        content.badge = NSNumber(value: unread)
        UNUserNotificationCenter.current().add(
            UNNotificationRequest(identifier: "unread-count", content: content, trigger: nil))
    }

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void
    ) {
        completionHandler(badgeInFront ? [.banner, .list, .badge] : [.banner, .list])
    }
}
