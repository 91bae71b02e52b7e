import Chime

/// "Show me", from the userInfo tutorial: a notification shows only its main text; its "Show me"
/// button schedules it again 3 s later with the hidden subtext (kept in `userInfo`), without the
/// button.
public class ShowMeNotifications: NSObject, UNUserNotificationCenterDelegate {
    let notificationCenter = UNUserNotificationCenter.current()
    /// When each notification was added for, by identifier (from `nextTriggerDate()`).
    public private(set) var scheduledFor: [String: Date] = [:]
    /// The calendar the trigger's components come from (the device's, as `Calendar.current`).
    let calendar: Calendar

    public init(calendar: Calendar = .current) {
        self.calendar = calendar
        super.init()
        notificationCenter.delegate = self
    }

    public func showNotification(with item: (String, String), showBody: Bool, withAction: Bool, atDate date: Date) {
        let content = UNMutableNotificationContent()
        let userActionsIdentifier = "showMe"
        content.title = item.0
        if showBody { content.body = item.1 }
        content.userInfo = [item.0: item.1]
        content.sound = UNNotificationSound.default
        if withAction { content.categoryIdentifier = userActionsIdentifier }
        let notificationID = item.0
        var dc = DateComponents()
        dc.hour = calendar.component(.hour, from: date)
        dc.minute = calendar.component(.minute, from: date)
        dc.second = calendar.component(.second, from: date)
        let trigger = UNCalendarNotificationTrigger(dateMatching: dc, repeats: false)
        let request = UNNotificationRequest(identifier: notificationID, content: content, trigger: trigger)
        notificationCenter.add(request) { error in
            if error == nil { self.scheduledFor[notificationID] = trigger.nextTriggerDate() }
        }
        let action = UNNotificationAction(identifier: "showMe", title: "Show me", options: [])
        let category = UNNotificationCategory(
            identifier: userActionsIdentifier, actions: [action], intentIdentifiers: [], options: [])
        notificationCenter.setNotificationCategories([category])
    }

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping () -> Void
    ) {
        switch response.actionIdentifier {
        case "showMe":
            let mainText = response.notification.request.content.userInfo.keys.first! as! String
            let subText = response.notification.request.content.userInfo.values.first! as! String
            showNotification(
                with: (mainText, subText), showBody: true, withAction: false,
                atDate: Date(timeInterval: 3, since: response.notification.date))
        default:
            break
        }
        completionHandler()
    }
}
