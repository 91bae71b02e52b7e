import Chime

/// The alarm of the categories-and-actions tutorial, its screen left out: Start sets an alarm
/// 10 s away; "Snooze 5 Sec" brings it back 5 s later; "Add Comment" takes typed text, shows it on
/// the label and puts it in the body of the next alarm. As in the tutorial it calls
/// `UNUserNotificationCenter.current()` wherever it needs the center.
public class AlarmController: NSObject, UNUserNotificationCenterDelegate {
    let time: TimeInterval = 10.0
    let snooze: TimeInterval = 5.0
    public var isGrantedAccess = false
    /// The screen's comments label.
    public var commentsLabelText = ""

    public override init() {}

    /// What viewDidLoad does; `loaded` runs once the answer is in and the categories are set.
    public func viewDidLoad(loaded: (() -> Void)? = nil) {
        UNUserNotificationCenter.current().delegate = self
        UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .sound, .badge]) { granted, error in
            self.isGrantedAccess = granted
            if granted {
                self.setCategories()
            } else {
                print("Notification Access: turn on notification permissions to use the alarm.")
            }
            loaded?()
        }
    }

    func setCategories() {
        let snoozeAction = UNNotificationAction(identifier: "snooze", title: "Snooze 5 Sec", options: [])
        let commentAction = UNTextInputNotificationAction(
            identifier: "comment", title: "Add Comment", options: [],
            textInputButtonTitle: "Add", textInputPlaceholder: "Add Comment Here")
        let alarmCategory = UNNotificationCategory(
            identifier: "alarm.category", actions: [snoozeAction, commentAction],
            intentIdentifiers: [], options: [])
        UNUserNotificationCenter.current().setNotificationCategories([alarmCategory])
    }

    func addNotification(content: UNNotificationContent, trigger: UNNotificationTrigger?, identifier: String) {
        let request = UNNotificationRequest(identifier: identifier, content: content, trigger: trigger)
        UNUserNotificationCenter.current().add(request) { errorObject in
            if let error = errorObject {
                print("Error \(error.localizedDescription) in notification \(identifier)")
            }
        }
    }

    /// The Start button.
    public func startButton() {
        guard isGrantedAccess else { return }
        let content = UNMutableNotificationContent()
        content.title = "Alarm"
        content.subtitle = "First Alarm"
        content.body = "First Alarm"
        content.sound = UNNotificationSound.default()
        content.categoryIdentifier = "alarm.category"
        let trigger = UNTimeIntervalNotificationTrigger(timeInterval: time, repeats: false)
        addNotification(content: content, trigger: trigger, identifier: "Alarm")
    }

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void
    ) {
        completionHandler([.banner, .list, .sound])  // the tutorial's [.alert, .sound], without the deprecation warning
    }

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping () -> Void
    ) {
        let identifier = response.actionIdentifier
        let request = response.notification.request
        if identifier == "snooze" {
            let newContent = request.content.mutableCopy() as! UNMutableNotificationContent
            newContent.body = "Snooze 5 Seconds"
            newContent.subtitle = "Snooze 5 Seconds"
            let newTrigger = UNTimeIntervalNotificationTrigger(timeInterval: snooze, repeats: false)
            addNotification(content: newContent, trigger: newTrigger, identifier: request.identifier)
        }
        if identifier == "comment" {
            let textResponse = response as! UNTextInputNotificationResponse
            commentsLabelText = textResponse.userText
            let newContent = request.content.mutableCopy() as! UNMutableNotificationContent
            newContent.body = textResponse.userText
            addNotification(content: newContent, trigger: request.trigger, identifier: request.identifier)
        }
        completionHandler()
    }
}
