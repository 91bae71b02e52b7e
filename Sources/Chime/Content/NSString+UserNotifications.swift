import ChimeCore
import Foundation

// UserNotifications' addition to NSString, for notification text that is localised when shown.
extension NSString {
    /// The text for `key`, formatted with `arguments` (`%@` in order, `%1$@` numbered, `%%`).
    ///
    /// ```swift
    /// content.title = NSString.localizedUserNotificationString(forKey: "Wake up!", arguments: nil)
    /// content.body = NSString.localizedUserNotificationString(forKey: "Meeting with %@ at %@", arguments: ["Ann", "10:30"])
    /// ```
    ///
    /// iOS looks the key up in the app's `Localizable.strings` when the notification is shown; Linux
    /// apps have no such tables, so the key itself is the format, as iOS does for a key it cannot
    /// find (and as Chime reads `loc-key` in pushes).
    public class func localizedUserNotificationString(forKey key: String, arguments: [Any]?) -> String {
        APNsPayload.format(key, arguments: (arguments ?? []).map { "\($0)" })
    }
}
