import Chime

/// The "Show me" app from the userInfo tutorial: a notification shows only its main text; its
/// "Show me" button schedules it again 3 s later with the hidden subtext (carried in `userInfo`)
/// and without the button.
public class ShowMeApp: NSObject, UNUserNotificationCenterDelegate {
    let notificationCenter = UNUserNotificationCenter.current()

    /// "Now", for the reveal 3 s later. The real clock by default; a test passes the simulator's.
    public var now: () -> Date = { Date() }
    /// The calendar the trigger's hour, minute and second are taken in.
    public var calendar = Calendar.current
    /// Called with each request's next trigger date once it is added.
    public var onScheduled: ((String, Date?) -> Void)?

    public override init() {
        super.init()
        notificationCenter.delegate = self
        notificationCenter.requestAuthorization(options: [.alert, .sound]) { granted, _ in
            if !granted { print("Show me needs notifications: they are not allowed.") }
        }
    }

    /// Schedules `item` (main text, subtext) at the time of day of `date`; the subtext is shown only
    /// with `showBody`, the "Show me" button only `withAction`.
    public func showNotification(with item: (String, String), showBody: Bool, withAction: Bool, atDate date: Date) {
        let content = UNMutableNotificationContent()
        let userActionsIdentifier = "showMe"
        content.title = item.0
        if showBody { content.body = item.1 }
        // Both texts travel with the notification, so the button's handler can find the subtext.
        content.userInfo = [item.0: item.1]
        content.sound = UNNotificationSound.default
        if withAction {
            content.categoryIdentifier = userActionsIdentifier
        }
        let notificationID = item.0

        var dc = DateComponents()
        dc.hour = calendar.component(.hour, from: date)
        dc.minute = calendar.component(.minute, from: date)
        dc.second = calendar.component(.second, from: date)
        let trigger = UNCalendarNotificationTrigger(dateMatching: dc, repeats: false)

        let request = UNNotificationRequest(identifier: notificationID, content: content, trigger: trigger)
        notificationCenter.add(request) { (error) in
            if let error = error {
                print("Could not add \"\(notificationID)\": \(error.localizedDescription)")
            } else {
                let next = trigger.nextTriggerDate()
                print("Notification \"\(notificationID)\" will be shown at", next.map { "\($0)" } ?? "never")
                DispatchQueue.main.async { self.onScheduled?(notificationID, next) }
            }
        }

        let action = UNNotificationAction(identifier: "showMe", title: "Show me", options: [])
        let category = UNNotificationCategory(
            identifier: userActionsIdentifier, actions: [action], intentIdentifiers: [], options: [])
        notificationCenter.setNotificationCategories([category])
    }

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void
    ) {
        completionHandler([.banner, .sound])
    }

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping () -> Void
    ) {
        switch response.actionIdentifier {
        case "showMe":
            let userInfo = response.notification.request.content.userInfo
            if let mainText = userInfo.keys.first as? String, let subText = userInfo.values.first as? String {
                showNotification(
                    with: (mainText, subText), showBody: true, withAction: false,
                    atDate: Date(timeInterval: 3, since: now()))
            }
        default:
            break
        }
        completionHandler()
    }
}
