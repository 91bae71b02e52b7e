import Chime

/// The action identifiers in one place, as the tutorial advises.
public enum DrinkAction {
    case done
    case notThirsty

    public var id: String {
        switch self {
        case .done: return "drinkingReminder.doneAction"
        case .notThirsty: return "drinkingReminder.notThirstyAction"
        }
    }
}

/// The drinking reminder of the custom-actions tutorial: "Done" and "Not thirsty", a category with
/// `.customDismissAction`, used by a local reminder and by a remote payload. Answers are written to
/// a journal; while the journal cannot be written (the device is locked) the app does not take
/// answers, and Chime keeps them until it does.
public class DrinkReminder: NSObject, UNUserNotificationCenterDelegate {
    public static let category = "drinkingReminderCategory"
    /// The payload a server sends.
    public static let remotePayload = """
        {"aps": {"alert": {"title": "Stay hydrated", "body": "It's time for a glass of water"},
                 "sound": "default", "category": "drinkingReminderCategory"}}
        """

    /// What was answered, oldest first: "done", "notThirsty", "dismissed", "opened".
    public private(set) var journal: [String] = []
    public private(set) var canWriteJournal = true

    public override init() {}

    public func applicationDidFinishLaunching() {
        let doneAction = UNNotificationAction(identifier: DrinkAction.done.id, title: "Done", options: [])
        let notThirstyAction = UNNotificationAction(
            identifier: DrinkAction.notThirsty.id, title: "Not thirsty", options: [])
        let category = UNNotificationCategory(
            identifier: DrinkReminder.category, actions: [doneAction, notThirstyAction],
            intentIdentifiers: [], options: .customDismissAction)
        UNUserNotificationCenter.current().setNotificationCategories([category])
        UNUserNotificationCenter.current().delegate = self
    }

    public func remind(in seconds: TimeInterval, identifier: String) {
        let content = UNMutableNotificationContent()
        content.title = "Stay hydrated"
        content.body = "It's time for a glass of water"
        content.sound = .default
        content.categoryIdentifier = DrinkReminder.category
        let request = UNNotificationRequest(
            identifier: identifier, content: content,
            trigger: UNTimeIntervalNotificationTrigger(timeInterval: seconds, repeats: false))
        UNUserNotificationCenter.current().add(request)
    }

    public func deviceLocked() {
        canWriteJournal = false
        UNUserNotificationCenter.current().delegate = nil
    }

    public func deviceUnlocked() {
        canWriteJournal = true
        UNUserNotificationCenter.current().delegate = self
    }

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping () -> Void
    ) {
        switch response.actionIdentifier {
        case DrinkAction.done.id: journal.append("done")
        case DrinkAction.notThirsty.id: journal.append("notThirsty")
        case UNNotificationDismissActionIdentifier: journal.append("dismissed")
        default: journal.append("opened")
        }
        completionHandler()
    }
}
