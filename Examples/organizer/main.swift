import Chime
import ExampleApps
import Foundation

// OrganizerPlus: tasks with time, calendar and location reminders.
let tasks = TaskManager.shared

// Started by the Chime service to hand over answers given while no organizer ran ("Mark As Done"
// on the desktop or in the web center): handle them, as iOS launches an app in the background, and
// exit. Register the command with `chime apps add com.example.organizer --launch PATH_TO_ORGANIZER`.
if UNUserNotificationCenter.launchReason == .response {
    let app = OrganizerApp(taskManager: tasks)
    app.onTaskDone = { task in
        print("\"\(task.name)\" marked as done in the background; \(tasks.tasks.count) task(s) left")
    }
    app.configureUserNotifications()
    await UNUserNotificationCenter.current().handleWaitingResponses()
    exit(0)
}

let terminal = ExampleTerminal()
let center = terminal.center
let app = OrganizerApp(taskManager: tasks)
app.onTaskDone = { task in print("(\"\(task.name)\" marked as done and removed; \(tasks.tasks.count) task(s) left)") }
app.configureUserNotifications()
if !tasks.tasks.isEmpty { print("(\(tasks.tasks.count) task(s) from earlier, in \(tasks.fileURL?.path ?? "memory"))") }

let help = """
    Commands:
      add NAME in SECONDS          a reminder after some seconds
      add NAME at HH:MM[:SS]       a reminder at the next such time of day
      add NAME near LAT,LON [M]    a reminder on arriving within M metres (default 100)
      go LAT,LON                   tell the device where it is (location reminders fire on entry)
      list                         tasks and pending reminders
      q                            quit
    Answer a reminder by its number: Mark As Done removes the task without "opening the app".
    """
await terminal.say(
    "OrganizerPlus example. Try: add Buy milk in 5 · add Print slides near 52.52,13.405 · go 52.52,13.405\n" + help)

func coordinate(_ text: Substring) -> CLLocationCoordinate2D? {
    let parts = text.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
    return parts.count == 2 ? CLLocationCoordinate2D(latitude: parts[0], longitude: parts[1]) : nil
}

@MainActor func addTask(_ words: [Substring]) -> Bool {
    guard let keyword = words.lastIndex(where: { ["in", "at", "near"].contains($0) }), keyword > 0,
        keyword + 1 < words.count
    else { return false }
    let name = words[..<keyword].joined(separator: " ")
    let argument = words[keyword + 1]
    let reminder: Reminder
    switch words[keyword] {
    case "in":
        guard let seconds = TimeInterval(argument), seconds > 0 else { return false }
        reminder = .time(seconds)
    case "at":
        let parts = argument.split(separator: ":").compactMap { Int($0) }
        guard (2...3).contains(parts.count) else { return false }
        let wanted = DateComponents(hour: parts[0], minute: parts[1], second: parts.count == 3 ? parts[2] : 0)
        guard let date = Calendar.current.nextDate(after: Date(), matching: wanted, matchingPolicy: .nextTime) else {
            return false
        }
        reminder = .calendar(date)
    default:
        guard let place = coordinate(argument) else { return false }
        let radius = keyword + 2 < words.count ? Double(words[keyword + 2]) ?? 100 : 100
        reminder = .location(latitude: place.latitude, longitude: place.longitude, radius: radius)
    }
    let task = Task(name: name, reminder: reminder)
    tasks.save(task: task)
    print("(added \"\(name)\", \(reminder.reminderType.rawValue) reminder)")
    return true
}

await terminal.run { line in
    let words = line.split(separator: " ")
    switch words.first {
    case "add":
        if !addTask(Array(words.dropFirst())) { print("Usage:\n" + help) }
    case "go":
        guard words.count == 2, let place = coordinate(words[1]) else {
            print("Usage: go LAT,LON")
            return true
        }
        // Stands in for the device's location service: there is no GPS on a server.
        do {
            try await center.updateDeviceLocation(place)
            print("(you are at \(place.latitude),\(place.longitude))")
        } catch {
            print("go failed: \(error)")
        }
    case "list":
        let pending = await center.pendingNotificationRequests()
        if tasks.tasks.isEmpty { print("No tasks.") }
        for task in tasks.tasks {
            let next = pending.first { $0.identifier == task.id }
            print(
                "- \(task.name) [\(task.reminder.reminderType.rawValue)]\(next == nil ? " (reminded)" : " (reminder pending)")"
            )
        }
    case "help":
        print(help)
    default:
        return false
    }
    return true
}
