import Chime

// The action identifiers, kept in one place (the tutorial's advice). Named as in the tutorial:
// this app's own `NotificationAction` shadows the Chime core type of the same name in this module.
enum NotificationAction {
    case drinkingReminderDone
    case drinkingReminderNotThirsty

    var id: String {
        switch self {
        case .drinkingReminderDone:
            return "drinkingReminder.doneAction"
        case .drinkingReminderNotThirsty:
            return "drinkingReminder.notThirstyAction"
        }
    }
}

/// One answer the user gave to a drinking reminder, as the app writes it down.
public struct DrinkAnswer: Equatable, Codable {
    public enum Kind: String, Codable {
        case drank, notThirsty, dismissed, opened
    }
    public var kind: Kind
    /// When the reminder was delivered.
    public var reminderDate: Date
}

/// The drinking reminder from the "custom actions for push and local notifications" tutorial:
/// "Done" and "Not thirsty" buttons, a category with `.customDismissAction` (so swiping the reminder
/// away is an answer too), used both by a local reminder and by a remote (APNs) payload.
///
/// The tutorial warns that an answer may arrive while the app cannot write its files (the device is
/// locked). This app writes every answer to its log, and while the log is unavailable it does not
/// take answers at all: Chime keeps them in the app's outbox and hands them over, in order, once
/// the app takes answers again (`protectedDataDidBecomeAvailable()`) — even after a restart.
public class DrinkingReminderApp: NSObject, UNUserNotificationCenterDelegate {
    public static let categoryIdentifier = "drinkingReminderCategory"

    /// What a backend would send to APNs for the same reminder.
    public static let remotePayload = Data(
        """
        {
           "aps" : {
              "alert" : {
                 "title" : "Stay hydrated",
                 "body" : "It's time for a glass of water"
              },
              "sound": "default",
              "category" : "drinkingReminderCategory"
           },
           "glasses": 8
        }
        """.utf8)

    /// Every answer written down, oldest first.
    public private(set) var log: [DrinkAnswer] = []
    /// Where the log is kept on disk, one JSON object a line (`nil`: in memory only).
    public let logURL: URL?
    /// Whether the log can be written now.
    public private(set) var isProtectedDataAvailable = true
    /// Called on the main actor after an answer is written down.
    public var onAnswer: ((DrinkAnswer) -> Void)?

    public var glassesDrunk: Int { log.filter { $0.kind == .drank }.count }
    public var timesNotThirsty: Int { log.filter { $0.kind == .notThirsty }.count }
    public var timesDismissed: Int { log.filter { $0.kind == .dismissed }.count }

    public init(logURL: URL? = nil) {
        self.logURL = logURL
        super.init()
        if let logURL, let text = try? String(contentsOf: logURL, encoding: .utf8) {
            let decoder = JSONDecoder()
            log = text.split(separator: "\n").compactMap { try? decoder.decode(DrinkAnswer.self, from: Data($0.utf8)) }
        }
    }

    /// At launch: take answers, register the category, ask for permission.
    public func launch() {
        let doneAction = UNNotificationAction(
            identifier: NotificationAction.drinkingReminderDone.id, title: "Done", options: [])
        let notThirstyAction = UNNotificationAction(
            identifier: NotificationAction.drinkingReminderNotThirsty.id, title: "Not thirsty", options: [])

        let drinkingReminderCategory = UNNotificationCategory(
            identifier: DrinkingReminderApp.categoryIdentifier,
            actions: [doneAction, notThirstyAction],
            intentIdentifiers: [],
            options: .customDismissAction)

        UNUserNotificationCenter.current().setNotificationCategories([drinkingReminderCategory])
        UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .sound]) { granted, error in
            if !granted {
                print("Drinking reminders need notifications: \(error?.localizedDescription ?? "not allowed")")
            }
        }
        if isProtectedDataAvailable {
            UNUserNotificationCenter.current().delegate = self
        }
    }

    /// Schedules the local reminder.
    public func scheduleReminder(in seconds: TimeInterval, identifier: String = "drink") {
        let content = UNMutableNotificationContent()
        content.title = "Stay hydrated"
        content.body = "It's time for a glass of water"
        content.sound = .default
        content.categoryIdentifier = DrinkingReminderApp.categoryIdentifier

        let trigger = UNTimeIntervalNotificationTrigger(timeInterval: seconds, repeats: false)
        let request = UNNotificationRequest(identifier: identifier, content: content, trigger: trigger)
        UNUserNotificationCenter.current().add(request) { error in
            if let error = error {
                print("Could not schedule the reminder: \(error.localizedDescription)")
            }
        }
    }

    /// The device locks: the log cannot be written, so the app stops taking answers. They wait in
    /// Chime's outbox.
    public func protectedDataWillBecomeUnavailable() {
        isProtectedDataAvailable = false
        UNUserNotificationCenter.current().delegate = nil
    }

    /// The device unlocks: answers given meanwhile are handed over now.
    public func protectedDataDidBecomeAvailable() {
        isProtectedDataAvailable = true
        UNUserNotificationCenter.current().delegate = self
    }

    // MARK: - UNUserNotificationCenterDelegate

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void
    ) {
        completionHandler([.banner, .list, .sound])
    }

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping () -> Void
    ) {
        let kind: DrinkAnswer.Kind
        switch response.actionIdentifier {
        case NotificationAction.drinkingReminderDone.id:
            kind = .drank
        case NotificationAction.drinkingReminderNotThirsty.id:
            kind = .notThirsty
        case UNNotificationDismissActionIdentifier:
            kind = .dismissed
        default:
            kind = .opened
        }
        write(DrinkAnswer(kind: kind, reminderDate: response.notification.date))
        // Only now, with the answer written down, does it leave Chime's outbox.
        completionHandler()
    }

    private func write(_ answer: DrinkAnswer) {
        log.append(answer)
        if let logURL, let line = try? JSONEncoder().encode(answer) {
            if let handle = try? FileHandle(forWritingTo: logURL) {
                handle.seekToEndOfFile()
                handle.write(line + Data("\n".utf8))
                try? handle.close()
            } else {
                try? (line + Data("\n".utf8)).write(to: logURL)
            }
        }
        onAnswer?(answer)
    }
}
