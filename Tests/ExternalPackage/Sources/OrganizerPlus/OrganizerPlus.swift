import Chime

/// A task of OrganizerPlus with its reminder. Named `Task` as in the tutorial: in this module it
/// shadows Swift's `Task`.
public struct Task: Codable, Equatable {
    public var id: String
    public var name: String
    public var completed = false
    public var reminder: Reminder

    public init(id: String = UUID().uuidString, name: String, reminder: Reminder) {
        self.id = id
        self.name = name
        self.reminder = reminder
    }
}

public struct Reminder: Codable, Equatable {
    public enum ReminderType: String, Codable {
        case time, calendar, location
    }

    public var reminderType: ReminderType
    public var timeInterval: TimeInterval?
    public var date: Date?
    public var location: LocationReminder?
    public var repeats = false

    public init(timeInterval: TimeInterval, repeats: Bool = false) {
        reminderType = .time
        self.timeInterval = timeInterval
        self.repeats = repeats
    }

    public init(date: Date, repeats: Bool = false) {
        reminderType = .calendar
        self.date = date
        self.repeats = repeats
    }

    public init(location: LocationReminder) {
        reminderType = .location
        self.location = location
    }
}

public struct LocationReminder: Codable, Equatable {
    public var latitude: Double
    public var longitude: Double
    public var radius: Double
    public init(latitude: Double, longitude: Double, radius: Double) {
        self.latitude = latitude
        self.longitude = longitude
        self.radius = radius
    }
}

enum NotificationManagerConstants {
    static let timeBasedNotificationThreadId = "TimeBasedNotificationThreadId"
    static let calendarBasedNotificationThreadId = "CalendarBasedNotificationThreadId"
    static let locationBasedNotificationThreadId = "LocationBasedNotificationThreadId"
}

/// The task list; the tutorial's app uses `TaskManager.shared`, tests make their own.
public class TaskManager {
    public static let shared = TaskManager()
    public private(set) var tasks: [Task] = []
    let notifications = NotificationManager()

    public init() {}

    public func save(task: Task) {
        tasks.append(task)
        notifications.scheduleNotification(task: task)
    }

    public func remove(task: Task) {
        tasks.removeAll { $0.id == task.id }
        UNUserNotificationCenter.current().removePendingNotificationRequests(withIdentifiers: [task.id])
    }
}

/// Schedules a task's reminder: grouped by trigger kind, the task in `userInfo` as JSON data.
public class NotificationManager {
    public static let categoryIdentifier = "OrganizerPlusCategory"
    let calendar: Calendar

    public init(calendar: Calendar = .current) { self.calendar = calendar }

    public func scheduleNotification(task: Task) {
        let content = UNMutableNotificationContent()
        content.title = task.name
        content.body = "Gentle reminder for your task!"
        content.categoryIdentifier = NotificationManager.categoryIdentifier
        let taskData = try? JSONEncoder().encode(task)
        if let taskData = taskData {
            content.userInfo = ["Task": taskData]
        }

        var trigger: UNNotificationTrigger?
        switch task.reminder.reminderType {
        case .time:
            content.threadIdentifier = NotificationManagerConstants.timeBasedNotificationThreadId
            if let timeInterval = task.reminder.timeInterval {
                trigger = UNTimeIntervalNotificationTrigger(timeInterval: timeInterval, repeats: task.reminder.repeats)
            }
        case .calendar:
            content.threadIdentifier = NotificationManagerConstants.calendarBasedNotificationThreadId
            if let date = task.reminder.date {
                trigger = UNCalendarNotificationTrigger(
                    dateMatching: calendar.dateComponents(
                        [.timeZone, .year, .month, .day, .hour, .minute], from: date),
                    repeats: task.reminder.repeats)
            }
        case .location:
            content.threadIdentifier = NotificationManagerConstants.locationBasedNotificationThreadId
            if let location = task.reminder.location {
                let center = CLLocationCoordinate2D(latitude: location.latitude, longitude: location.longitude)
                let region = CLCircularRegion(center: center, radius: location.radius, identifier: task.id)
                trigger = UNLocationNotificationTrigger(region: region, repeats: task.reminder.repeats)
            }
        }

        if let trigger = trigger {
            let request = UNNotificationRequest(identifier: task.id, content: content, trigger: trigger)
            UNUserNotificationCenter.current().add(request) { error in
                if let error = error { print(error) }
            }
        }
    }
}

/// The app delegate's notification part: the category with "Dismiss" and "Mark As Done", and
/// "Mark As Done" removing the task without opening the app.
public class OrganizerAppDelegate: NSObject, UNUserNotificationCenterDelegate {
    public let taskManager: TaskManager
    /// Tasks opened from a notification (the app would show them).
    public private(set) var opened: [String] = []

    public init(taskManager: TaskManager) {
        self.taskManager = taskManager
    }

    public func configureUserNotifications() {
        UNUserNotificationCenter.current().delegate = self
        let dismissAction = UNNotificationAction(identifier: "dismiss", title: "Dismiss", options: [])
        let markAsDone = UNNotificationAction(identifier: "markAsDone", title: "Mark As Done", options: [])
        let category = UNNotificationCategory(
            identifier: NotificationManager.categoryIdentifier, actions: [dismissAction, markAsDone],
            intentIdentifiers: [], options: [])
        UNUserNotificationCenter.current().setNotificationCategories([category])
    }

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void
    ) {
        completionHandler(.banner)
    }

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping () -> Void
    ) {
        let userInfo = response.notification.request.content.userInfo
        if let taskData = userInfo["Task"] as? Data, let task = try? JSONDecoder().decode(Task.self, from: taskData) {
            if response.actionIdentifier == "markAsDone" {
                taskManager.remove(task: task)
            } else if response.actionIdentifier == UNNotificationDefaultActionIdentifier {
                opened.append(task.name)
            }
        }
        completionHandler()
    }
}
