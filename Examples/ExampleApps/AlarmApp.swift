import Chime

/// The alarm from the "categories and actions" tutorial, without its UIKit screen: an alarm that
/// fires 10 s after `start()`, can be snoozed for 5 s as often as the user likes, and takes a typed
/// comment that becomes the body of the next alarm.
///
/// The screen's label becomes `commentsLabelText`; the Start button becomes `start()`;
/// `viewDidLoad` becomes `load(ready:)`.
public class AlarmApp: NSObject, UNUserNotificationCenterDelegate {

    // MARK: Properties
    public let time: TimeInterval = 10.0
    public let snooze: TimeInterval = 5.0
    public private(set) var isGrantedAccess = false
    /// What the screen's comments label would show.
    public private(set) var commentsLabelText = ""
    /// Called on the main actor when the app's label changes (the terminal example prints it).
    public var onCommentsLabelChange: ((String) -> Void)?

    public override init() {
        super.init()
    }

    // MARK: - Functions
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
        UNUserNotificationCenter.current().add(
            request,
            withCompletionHandler: { (errorObject) in
                if let error = errorObject {
                    print("Error \(error.localizedDescription) in notification \(identifier)")
                }
            })
    }

    // MARK: - Actions
    /// The Start button: the alarm goes off in `time` seconds.
    public func start() {
        if isGrantedAccess {
            let content = UNMutableNotificationContent()
            content.title = "Alarm"
            content.subtitle = "First Alarm"
            content.body = "First Alarm"
            content.sound = UNNotificationSound.default()
            content.categoryIdentifier = "alarm.category"
            let trigger = UNTimeIntervalNotificationTrigger(timeInterval: time, repeats: false)
            addNotification(content: content, trigger: trigger, identifier: "Alarm")
        } else {
            print("Notification access was not granted: turn on notification permissions to use the alarm.")
        }
    }

    /// What `viewDidLoad` did: become the delegate and ask for permission; `ready` runs (on the main
    /// actor) once the answer is in and the categories are registered.
    public func load(ready: (() -> Void)? = nil) {
        UNUserNotificationCenter.current().delegate = self
        UNUserNotificationCenter.current().requestAuthorization(
            options: [.alert, .sound, .badge],
            completionHandler: { (granted, error) in
                // The answer arrives off the main thread (as on iOS): go back to it, as UIKit code
                // must. A Task (rather than DispatchQueue.main.async) carries the center along, so
                // under test `current()` in there is still the test's simulator.
                Swift.Task { @MainActor in
                    self.isGrantedAccess = granted
                    if granted {
                        self.setCategories()
                    } else {
                        print(
                            "Notification Access: in order to use this application, turn on notification permissions.")
                    }
                    ready?()
                }
            })
    }

    // MARK: - Delegates
    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void
    ) {
        completionHandler([.banner, .list, .sound])  // the tutorial's [.alert, .sound]: .alert is banner and list
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
            onCommentsLabelChange?(commentsLabelText)
            let newContent = request.content.mutableCopy() as! UNMutableNotificationContent
            newContent.body = textResponse.userText
            addNotification(content: newContent, trigger: request.trigger, identifier: request.identifier)
        }

        completionHandler()
    }
}
