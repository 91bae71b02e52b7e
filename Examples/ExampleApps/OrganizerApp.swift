import Chime
import Foundation

/// A task of OrganizerPlus, with its reminder. Named as in the tutorial (it shadows Swift's
/// concurrency `Task` in code that imports this module; write `Swift.Task` there).
public struct Task: Codable, Equatable, Identifiable {
    public var id: String
    public var name: String
    public var completed: Bool
    public var reminder: Reminder

    public init(id: String = UUID().uuidString, name: String, completed: Bool = false, reminder: Reminder) {
        self.id = id
        self.name = name
        self.completed = completed
        self.reminder = reminder
    }
}

/// When (or where) a task reminds its owner.
public struct Reminder: Codable, Equatable {
    public enum ReminderType: String, Codable {
        case time, calendar, location
    }
    public var reminderType: ReminderType
    /// For `.time`: seconds from now.
    public var timeInterval: TimeInterval?
    /// For `.calendar`: the date.
    public var date: Date?
    /// For `.location`: the place, and the radius around it in metres.
    public var location: Location?
    public var repeats: Bool

    public struct Location: Codable, Equatable {
        public var latitude: Double
        public var longitude: Double
        public var radius: Double
        public init(latitude: Double, longitude: Double, radius: Double) {
            self.latitude = latitude
            self.longitude = longitude
            self.radius = radius
        }
    }

    public static func time(_ seconds: TimeInterval, repeats: Bool = false) -> Reminder {
        Reminder(reminderType: .time, timeInterval: seconds, date: nil, location: nil, repeats: repeats)
    }
    public static func calendar(_ date: Date, repeats: Bool = false) -> Reminder {
        Reminder(reminderType: .calendar, timeInterval: nil, date: date, location: nil, repeats: repeats)
    }
    public static func location(latitude: Double, longitude: Double, radius: Double, repeats: Bool = false) -> Reminder
    {
        Reminder(
            reminderType: .location, timeInterval: nil, date: nil,
            location: Location(latitude: latitude, longitude: longitude, radius: radius), repeats: repeats)
    }
}

/// The task list, kept in a JSON file when it has one (so that the organizer started in the
/// background to handle "Mark As Done" finds the tasks the user added earlier).
public class TaskManager {
    /// The app's tasks, in `ORGANIZER_TASKS` or `~/.local/share/chime-examples/organizer-tasks.json`.
    public static let shared = TaskManager(fileURL: defaultFileURL)
    public private(set) var tasks: [Task] = []
    /// Where the tasks are kept; `nil`: in memory only.
    public let fileURL: URL?

    public init(fileURL: URL? = nil) {
        self.fileURL = fileURL
        if let fileURL, let data = try? Data(contentsOf: fileURL),
            let saved = try? JSONDecoder().decode([Task].self, from: data)
        {
            tasks = saved
        }
    }

    public static var defaultFileURL: URL {
        if let path = ProcessInfo.processInfo.environment["ORGANIZER_TASKS"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        let base =
            ProcessInfo.processInfo.environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
        return base.appendingPathComponent("chime-examples/organizer-tasks.json")
    }

    /// Adds a task and schedules its reminder.
    public func save(task: Task) {
        tasks.append(task)
        write()
        NotificationManager.shared.scheduleNotification(task: task)
    }

    /// Removes a task and its pending reminder.
    public func remove(task: Task) {
        tasks.removeAll { $0.id == task.id }
        write()
        UNUserNotificationCenter.current().removePendingNotificationRequests(withIdentifiers: [task.id])
    }

    private func write() {
        guard let fileURL else { return }
        do {
            try FileManager.default.createDirectory(
                at: fileURL.deletingLastPathComponent(), withIntermediateDirectories: true)
            try JSONEncoder().encode(tasks).write(to: fileURL, options: .atomic)
        } catch {
            print("Could not save the tasks to \(fileURL.path): \(error.localizedDescription)")
        }
    }
}

enum NotificationManagerConstants {
    static let timeBasedNotificationThreadId = "TimeBasedNotificationThreadId"
    static let calendarBasedNotificationThreadId = "CalendarBasedNotificationThreadId"
    static let locationBasedNotificationThreadId = "LocationBasedNotificationThreadId"
}

/// Schedules the reminders of tasks.
public class NotificationManager {
    public static let shared = NotificationManager()
    public static let categoryIdentifier = "OrganizerPlusCategory"

    public static let timeThread = NotificationManagerConstants.timeBasedNotificationThreadId
    public static let calendarThread = NotificationManagerConstants.calendarBasedNotificationThreadId
    public static let locationThread = NotificationManagerConstants.locationBasedNotificationThreadId

    public func scheduleNotification(task: Task) {
        let content = UNMutableNotificationContent()
        content.title = task.name
        content.body = "Gentle reminder for your task!"
        content.sound = .default
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
                // With its time zone, the components name one moment wherever the device is.
                let components = Calendar.current.dateComponents(
                    [.timeZone, .year, .month, .day, .hour, .minute, .second], from: date)
                trigger = UNCalendarNotificationTrigger(dateMatching: components, repeats: task.reminder.repeats)
            }
        case .location:
            content.threadIdentifier = NotificationManagerConstants.locationBasedNotificationThreadId
            if let location = task.reminder.location {
                let center = CLLocationCoordinate2D(latitude: location.latitude, longitude: location.longitude)
                let region = CLCircularRegion(center: center, radius: location.radius, identifier: task.id)
                region.notifyOnEntry = true
                region.notifyOnExit = false
                trigger = UNLocationNotificationTrigger(region: region, repeats: task.reminder.repeats)
            }
        }

        if let trigger = trigger {
            let request = UNNotificationRequest(identifier: task.id, content: content, trigger: trigger)
            UNUserNotificationCenter.current().add(request) { error in
                if let error = error {
                    print("Could not schedule a reminder for \(task.name): \(error.localizedDescription)")
                }
            }
        }
    }
}

/// OrganizerPlus's app delegate part: registers the category with "Dismiss" and "Mark As Done", and
/// marks tasks done from the notification without opening the app.
public class OrganizerApp: NSObject, UNUserNotificationCenterDelegate {
    public let taskManager: TaskManager
    /// Called on the main actor after "Mark As Done" removed a task.
    public var onTaskDone: ((Task) -> Void)?

    public init(taskManager: TaskManager = .shared) {
        self.taskManager = taskManager
        super.init()
    }

    /// What `application(_:didFinishLaunchingWithOptions:)` did.
    public func configureUserNotifications() {
        UNUserNotificationCenter.current().delegate = self
        let dismissAction = UNNotificationAction(identifier: "dismiss", title: "Dismiss", options: [])
        let markAsDone = UNNotificationAction(identifier: "markAsDone", title: "Mark As Done", options: [])
        let category = UNNotificationCategory(
            identifier: NotificationManager.categoryIdentifier,
            actions: [dismissAction, markAsDone],
            intentIdentifiers: [],
            options: [])
        UNUserNotificationCenter.current().setNotificationCategories([category])
        UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .sound, .badge]) { granted, _ in
            if !granted { print("OrganizerPlus cannot remind you: notifications are not allowed.") }
        }
    }

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
        if response.actionIdentifier == "markAsDone" {
            let userInfo = response.notification.request.content.userInfo
            if let taskData = userInfo["Task"] as? Data {
                if let task = try? JSONDecoder().decode(Task.self, from: taskData) {
                    taskManager.remove(task: task)
                    onTaskDone?(task)
                }
            }
        }
        completionHandler()
    }
}
