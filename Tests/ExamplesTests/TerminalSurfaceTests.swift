import Chime
import ChimeTesting
import Foundation
import Synchronization
import TestThreads
import Testing

/// Lines typed in advance; then the end of input.
final class ScriptedLines: TerminalInput {
    private let lines: Mutex<[String]>
    private let reads = Mutex(0)
    init(_ lines: [String]) { self.lines = Mutex(lines) }
    func readLine() async -> String? {
        reads.withLock { $0 += 1 }
        return lines.withLock { $0.isEmpty ? nil : $0.removeFirst() }
    }
    var readCount: Int { reads.withLock { $0 } }
}

/// Everything written, in order.
final class Screen: TerminalOutput {
    private let text = Mutex("")
    func write(_ text: String) { self.text.withLock { $0 += text } }
    var contents: String { text.withLock { $0 } }
}

struct Answer: Equatable, Sendable {
    var identifier: String
    var action: String
    var text: String?
}

final class Answers: Sendable {
    private let list = Mutex<[Answer]>([])
    func append(_ answer: Answer) { list.withLock { $0.append(answer) } }
    var all: [Answer] { list.withLock { $0 } }
}

@Suite("TerminalSurface", .testThreads)
struct TerminalSurfaceTests {
    static let alarmCategory = NotificationCategory(
        identifier: "alarm.category",
        actions: [
            NotificationAction(identifier: "snooze", title: "Snooze 5 Sec"),
            NotificationAction(
                identifier: "comment", title: "Add Comment",
                textInput: .init(buttonTitle: "Add", placeholder: "Add Comment Here")),
            NotificationAction(identifier: "delete", title: "Delete", options: .destructive),
        ])

    static func notification(
        _ identifier: String, title: String, body: String = "",
        category: String = "alarm.category"
    ) -> DeliveredNotification {
        var content = NotificationContent(title: title, body: body)
        content.categoryIdentifier = category
        return DeliveredNotification(
            request: NotificationRequest(identifier: identifier, content: content),
            date: Date(timeIntervalSince1970: 1_780_000_000))
    }

    func surface(_ lines: [String], answers: Answers, screen: Screen, failing: Bool = false) -> (
        TerminalSurface, ScriptedLines
    ) {
        let input = ScriptedLines(lines)
        let surface = TerminalSurface(input: input, output: screen, timeZone: TimeZone(identifier: "UTC")!) {
            id, action, text in
            if failing { throw ChimeError(.notFound, field: "identifier", "no delivered notification '\(id)'") }
            answers.append(Answer(identifier: id, action: action, text: text))
        }
        return (surface, input)
    }

    @Test("shows the notification with numbered actions and a bell, and a number picks the action")
    func numberedChoice() async {
        let answers = Answers()
        let screen = Screen()
        let (surface, _) = surface(["1"], answers: answers, screen: screen)
        await surface.show(
            Self.notification("Alarm", title: "Alarm", body: "First Alarm"), app: "alarm",
            options: [.banner, .sound], category: Self.alarmCategory)
        await surface.run()
        let text = screen.contents
        #expect(text.contains("\u{7}"))
        #expect(text.contains("alarm · 20:26:40"))
        #expect(text.contains("Alarm\n   First Alarm"))
        #expect(text.contains("[1] Snooze 5 Sec"))
        #expect(text.contains("[2] Add Comment (type a text)"))
        #expect(text.contains("[3] Delete (destructive)"))
        #expect(text.contains("[4] Open"))
        #expect(text.contains("[5] Dismiss"))
        #expect(answers.all == [Answer(identifier: "Alarm", action: "snooze", text: nil)])
    }

    @Test(
        "open and dismiss give Apple's default and dismiss identifiers",
        arguments: [("4", UNNotificationDefaultActionIdentifier), ("5", UNNotificationDismissActionIdentifier)])
    func systemActions(line: String, action: String) async {
        let answers = Answers()
        let screen = Screen()
        let (surface, _) = surface([line], answers: answers, screen: screen)
        await surface.show(
            Self.notification("Alarm", title: "Alarm"), app: "alarm", options: [.banner], category: Self.alarmCategory)
        await surface.run()
        #expect(answers.all == [Answer(identifier: "Alarm", action: action, text: nil)])
    }

    @Test("a text-input action prompts with its placeholder and button, and passes the text")
    func textInput() async {
        let answers = Answers()
        let screen = Screen()
        let (surface, _) = surface(["2", "", "Call me back"], answers: answers, screen: screen)
        await surface.show(
            Self.notification("Alarm", title: "Alarm"), app: "alarm", options: [.banner], category: Self.alarmCategory)
        await surface.run()
        #expect(screen.contents.contains("Add Comment Here (Enter to Add): "))
        #expect(answers.all == [Answer(identifier: "Alarm", action: "comment", text: "Call me back")])
    }

    @Test("a wrong number asks again; no bell without .sound")
    func wrongNumber() async {
        let answers = Answers()
        let screen = Screen()
        let (surface, _) = surface(["9", "x", "1"], answers: answers, screen: screen)
        await surface.show(
            Self.notification("Alarm", title: "Alarm"), app: "alarm", options: [.banner], category: Self.alarmCategory)
        await surface.run()
        #expect(screen.contents.contains("Type a number from 1 to 5."))
        #expect(!screen.contents.contains("\u{7}"))
        #expect(answers.all == [Answer(identifier: "Alarm", action: "snooze", text: nil)])
    }

    @Test("several notifications are asked one at a time, in order")
    func queue() async {
        let answers = Answers()
        let screen = Screen()
        let (surface, _) = surface(["2", "first note", "1", "2"], answers: answers, screen: screen)
        await surface.show(
            Self.notification("A", title: "First"), app: "alarm", options: [.banner], category: Self.alarmCategory)
        await surface.show(
            Self.notification("B", title: "Second"), app: "alarm", options: [.banner], category: Self.alarmCategory)
        await surface.show(
            Self.notification("C", title: "Third", category: ""), app: "alarm", options: [.banner], category: nil)
        await surface.run()
        #expect(
            answers.all == [
                Answer(identifier: "A", action: "comment", text: "first note"),
                Answer(identifier: "B", action: "snooze", text: nil),
                Answer(identifier: "C", action: UNNotificationDismissActionIdentifier, text: nil),
            ])
        let text = screen.contents
        #expect(
            text.range(of: "Second")!.lowerBound < text.range(of: "→ Add")!.lowerBound,
            "the second is announced while the first is asked")
    }

    @Test("a withdrawn notification is not asked any more")
    func withdrawn() async {
        let answers = Answers()
        let screen = Screen()
        let (surface, _) = surface(["1"], answers: answers, screen: screen)
        await surface.show(
            Self.notification("A", title: "First"), app: "alarm", options: [.banner], category: Self.alarmCategory)
        await surface.show(
            Self.notification("B", title: "Second"), app: "alarm", options: [.banner], category: Self.alarmCategory)
        await surface.withdraw(["A"], app: "alarm")
        await surface.run()
        #expect(answers.all == [Answer(identifier: "B", action: "snooze", text: nil)])
        #expect(screen.contents.contains("\"First\" was removed or answered elsewhere"))
    }

    @Test("end of input stops reading once, leaving notifications delivered")
    func endOfInput() async {
        let answers = Answers()
        let screen = Screen()
        let (surface, input) = surface([], answers: answers, screen: screen)
        await surface.show(
            Self.notification("A", title: "First"), app: "alarm", options: [.banner], category: Self.alarmCategory)
        await surface.run()
        #expect(input.readCount == 1)
        #expect(answers.all.isEmpty)
        #expect(screen.contents.contains("Input ended; 1 notification left unanswered"))
    }

    @Test("q quits; other lines go to the command handler")
    func commands() async {
        let answers = Answers()
        let screen = Screen()
        let (surface, input) = surface(["list", "bogus", "q", "1"], answers: answers, screen: screen)
        let seen = Mutex<[String]>([])
        await surface.run { line in
            seen.withLock { $0.append(line) }
            return line == "list"
        }
        #expect(seen.withLock { $0 } == ["list", "bogus"])
        #expect(screen.contents.contains("\"bogus\" is not a command here"))
        #expect(input.readCount == 3, "the line after q is not read")
    }

    @Test("an error from respond is shown and the next notification is asked")
    func respondError() async {
        let answers = Answers()
        let screen = Screen()
        let (surface, _) = surface(["1"], answers: answers, screen: screen, failing: true)
        await surface.show(
            Self.notification("A", title: "First"), app: "alarm", options: [.banner], category: Self.alarmCategory)
        await surface.run()
        #expect(screen.contents.contains("! Could not answer \"First\": "))
        #expect(screen.contents.contains("no delivered notification 'A'"))
    }

    @Test("a list-only notification is announced quietly, without a bell")
    func quiet() async {
        let answers = Answers()
        let screen = Screen()
        let (surface, _) = surface(["5", "5"], answers: answers, screen: screen)
        await surface.show(
            Self.notification("A", title: "First"), app: "alarm", options: [.banner], category: Self.alarmCategory)
        await surface.show(
            Self.notification("B", title: "Later"), app: "alarm", options: [.list, .sound], category: Self.alarmCategory
        )
        await surface.run()
        #expect(screen.contents.contains("· alarm: \"Later\" (quiet; waits for its turn)"))
        #expect(!screen.contents.contains("\u{7}"))
        #expect(answers.all.map(\.identifier) == ["A", "B"])
    }

    @Test("with a real center, the answer reaches the app's delegate")
    @MainActor
    func throughCenter() async throws {
        // The simulator's center, not installed: nothing here calls `current()`.
        let simulator = NotificationSimulator(bundleIdentifier: "com.example.terminal")
        let center = simulator.center
        #expect(try await center.requestAuthorization(options: [.alert, .sound]))
        let screen = Screen()
        let delegate = RecordingDelegate()
        center.delegate = delegate
        center.setNotificationCategories([
            UNNotificationCategory(
                identifier: "alarm.category",
                actions: [
                    UNNotificationAction(identifier: "snooze", title: "Snooze 5 Sec", options: [])
                ], intentIdentifiers: [], options: [])
        ])
        let surface = TerminalSurface(
            center: center, input: ScriptedLines(["1"]), output: screen, timeZone: TimeZone(identifier: "UTC")!)
        center.addSurface(surface)
        let content = UNMutableNotificationContent()
        content.title = "Alarm"
        content.categoryIdentifier = "alarm.category"
        try await center.add(
            UNNotificationRequest(
                identifier: "Alarm", content: content,
                trigger: UNTimeIntervalNotificationTrigger(timeInterval: 10, repeats: false)))
        await simulator.advance(by: 10)
        #expect(screen.contents.contains("[1] Snooze 5 Sec"))
        await surface.run()
        await simulator.advance(by: 0)
        #expect(delegate.actions == ["snooze"])
    }
}

@MainActor
final class RecordingDelegate: UNUserNotificationCenterDelegate {
    var actions: [String] = []
    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
        actions.append(response.actionIdentifier)
    }
}

extension TerminalSurface {
    /// A delivery as the engine announces it, for driving the surface directly.
    fileprivate func show(
        _ notification: DeliveredNotification, app: String, options: UNNotificationPresentationOptions,
        category: NotificationCategory?
    ) async {
        await show(
            Delivery(
                notification: notification, category: category, settings: NotificationSettings(), presentation: options),
            app: app)
    }
}
