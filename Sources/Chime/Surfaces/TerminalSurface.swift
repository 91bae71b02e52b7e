import ChimeCore
import Foundation
import Synchronization

/// Where a ``TerminalSurface`` reads the user's lines from.
public protocol TerminalInput: Sendable {
    /// The next line without its line break, or `nil` when the input has ended.
    func readLine() async -> String?
}

/// Where a ``TerminalSurface`` writes what it shows.
public protocol TerminalOutput: Sendable {
    /// Writes `text` as it is (the surface supplies the line breaks).
    func write(_ text: String)
}

/// The process's standard input, read line by line on a thread of its own so that waiting for the
/// user never blocks Swift's concurrency threads. At end of input `readLine()` answers `nil`, once
/// and for good.
public final class StandardInput: TerminalInput {
    private let lines: AsyncStream<String>
    // `@unchecked Sendable`: AsyncStream's iterator is not Sendable (so it cannot live inside the
    // `Mutex`); it is only used under `lock` by one reader at a time (`readLine` is not meant to be
    // called concurrently).
    private final class Reader: @unchecked Sendable {
        let lock = Mutex(())
        var iterator: AsyncStream<String>.AsyncIterator?
        var started = false
    }
    private let reader = Reader()
    private let continuation: AsyncStream<String>.Continuation

    public init() {
        (lines, continuation) = AsyncStream<String>.makeStream()
        reader.iterator = lines.makeAsyncIterator()
    }

    public func readLine() async -> String? {
        let start = reader.lock.withLock { _ -> Bool in
            defer { reader.started = true }
            return !reader.started
        }
        if start {
            let continuation = self.continuation
            let thread = Thread {
                while let line = Swift.readLine(strippingNewline: true) { continuation.yield(line) }
                continuation.finish()
            }
            thread.name = "chime.terminal.stdin"
            thread.start()
        }
        var iterator = reader.lock.withLock { _ in reader.iterator }
        let line = await iterator?.next()
        reader.lock.withLock { _ in reader.iterator = iterator }
        return line
    }
}

/// The process's standard output, flushed after every write.
public struct StandardOutput: TerminalOutput {
    public init() {}
    public func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// Shows an app's notifications in a terminal and lets the user answer them by typing.
///
/// Each notification appears with its title, subtitle, body, app and time (a bell rings when the
/// presentation includes `.sound`), followed by the numbered actions of its category, "Open" (the
/// default action) and "Dismiss". The user types a number; for a text-input action the surface then
/// asks for the text. Notifications arriving meanwhile wait and are asked one at a time, in order.
/// Notifications presented only in the list (no banner) or with a passive interruption level are
/// announced on one quiet line and asked about when their turn comes.
///
/// ```swift
/// let center = UNUserNotificationCenter.current()
/// let terminal = TerminalSurface(center: center)
/// center.addSurface(terminal)
/// // … schedule notifications …
/// await terminal.run { command in      // lines that are not answers
///     command == "help" ? (print("Type a number to answer"), true).1 : false
/// }                                    // returns at end of input or when the user types q
/// ```
///
/// Input and output are injectable, so a test can drive the surface without a terminal:
///
/// ```swift
/// let surface = TerminalSurface(input: ScriptedLines(["1"]), output: recorder) { id, action, text in
///     answers.append((id, action, text))
/// }
/// ```
public final class TerminalSurface: NotificationSurface {
    /// What the surface does with a line that is not an answer (on the main actor, where app state
    /// lives): return `true` if it was understood.
    public typealias CommandHandler = @MainActor @Sendable (String) async -> Bool

    private let input: any TerminalInput
    private let session: Session
    private let respond: @Sendable (String, String, String?) async throws -> Void

    /// Makes a surface that reports answers through `respond`.
    ///
    /// - Parameters:
    ///   - input: where answers are read (standard input by default).
    ///   - output: where notifications are shown (standard output by default).
    ///   - timeZone: the zone for the delivery time shown.
    ///   - respond: called with the notification identifier, the action identifier and the typed
    ///     text (for a text-input action); an error it throws is shown to the user.
    public init(
        input: any TerminalInput = StandardInput(), output: any TerminalOutput = StandardOutput(),
        timeZone: TimeZone = .current,
        respond: @escaping @Sendable (_ identifier: String, _ action: String, _ text: String?) async throws -> Void
    ) {
        self.input = input
        self.session = Session(output: output, timeZone: timeZone)
        self.respond = respond
    }

    /// Makes a surface that answers through `center.respond(to:actionIdentifier:userText:)`.
    public convenience init(
        center: UNUserNotificationCenter, input: any TerminalInput = StandardInput(),
        output: any TerminalOutput = StandardOutput(), timeZone: TimeZone = .current
    ) {
        self.init(input: input, output: output, timeZone: timeZone) { [weak center] identifier, action, text in
            guard let center else { return }
            try await center.respond(to: identifier, actionIdentifier: action, userText: text)
        }
    }

    public func show(_ delivery: Delivery, app: String) async {
        await session.enqueue(
            Entry(
                notification: delivery.notification, app: app, options: delivery.presentation,
                category: delivery.category))
    }

    public func withdraw(_ identifiers: [String], app: String) async {
        await session.withdraw(identifiers, app: app)
    }

    /// Prints `text` on the surface's output, in order with the notifications it shows.
    public func print(_ text: String) async {
        await session.say(text)
    }

    /// Reads the user's lines until input ends or the user types `q` (or `quit`): numbers answer the
    /// notification asked about, anything else goes to `commands`.
    public func run(commands: CommandHandler? = nil) async {
        while let line = await input.readLine() {
            let step = await session.take(line)
            switch step {
            case .none:
                break
            case .quit:
                return
            case .command(let text, let asking):
                if await commands?(text) != true { await session.unknown(text, asking: asking) }
            case .answer(let entry, let action, let text):
                var failure: (any Error)?
                do {
                    try await respond(entry.notification.request.identifier, action, text)
                } catch {
                    failure = error
                }
                await session.answered(entry, failure: failure)
            }
        }
        await session.inputEnded()
    }
}

// MARK: - The session: what is shown, what is asked, what waits

extension TerminalSurface {
    struct Entry: Sendable {
        var notification: DeliveredNotification
        var app: String
        var options: UNNotificationPresentationOptions
        var category: NotificationCategory?

        var identifier: String { notification.request.identifier }
        var content: NotificationContent { notification.request.content }

        /// Shown without interrupting: only in the list, or passive.
        var isQuiet: Bool {
            (!options.contains(.banner) && !options.contains(UNNotificationPresentationOptions(rawValue: 1 << 2)))
                || content.interruptionLevel == .passive
        }

        /// The numbered choices: the category's actions, then open and dismiss.
        var choices: [Choice] {
            (category?.actions ?? []).map { Choice.action($0) } + [.open, .dismiss]
        }
    }

    enum Choice: Sendable {
        case action(NotificationAction)
        case open
        case dismiss

        var identifier: String {
            switch self {
            case .action(let action): action.identifier
            case .open: UNNotificationDefaultActionIdentifier
            case .dismiss: UNNotificationDismissActionIdentifier
            }
        }

        var label: String {
            switch self {
            case .action(let action):
                var label = action.title
                if action.textInput != nil { label += " (type a text)" }
                if action.options.contains(.destructive) { label += " (destructive)" }
                return label
            case .open: return "Open"
            case .dismiss: return "Dismiss notification"
            }
        }
    }

    enum Step: Sendable {
        case none
        case quit
        /// A line that is not an answer; `asking` says whether a notification waits for one.
        case command(String, asking: Int?)
        case answer(Entry, action: String, text: String?)
    }

    /// The state of the conversation with the user, and all writing to the output (so lines from
    /// deliveries and from answers never interleave).
    actor Session {
        enum Stage {
            case idle
            case choosing(Entry)
            case typing(Entry, NotificationAction)
            case sending(Entry)
        }

        private let output: any TerminalOutput
        private let timeFormat: Date.FormatStyle
        private var stage = Stage.idle
        private var waiting: [Entry] = []
        /// Identifiers answered here: the engine withdraws them afterwards, which is expected.
        private var answeredHere: [String: Int] = [:]

        init(output: any TerminalOutput, timeZone: TimeZone) {
            self.output = output
            var format = Date.FormatStyle(date: .omitted, time: .standard, timeZone: timeZone)
            format.locale = Locale(identifier: "en_GB")
            self.timeFormat = format
        }

        func say(_ text: String) {
            output.write(text.hasSuffix("\n") ? text : text + "\n")
        }

        func enqueue(_ entry: Entry) {
            if let index = waiting.firstIndex(where: { $0.identifier == entry.identifier && $0.app == entry.app }) {
                waiting[index] = entry
                return
            }
            switch stage {
            case .idle:
                ask(entry)
            case .choosing(let current) where current.identifier == entry.identifier && current.app == entry.app:
                say("(\"\(entry.content.title)\" was updated)")
                ask(entry)
            default:
                waiting.append(entry)
                if entry.isQuiet {
                    say("· \(entry.app): \(headline(entry)) (quiet; waits for its turn)")
                } else {
                    say(
                        "\(entry.options.contains(.sound) ? "\u{7}" : "")+ \(entry.app): \(headline(entry)) arrived; it is next after this one"
                    )
                }
            }
        }

        func withdraw(_ identifiers: [String], app: String) {
            for identifier in identifiers {
                if let count = answeredHere[identifier] {
                    answeredHere[identifier] = count > 1 ? count - 1 : nil
                    continue
                }
                waiting.removeAll { $0.identifier == identifier && $0.app == app }
                switch stage {
                case .choosing(let entry) where entry.identifier == identifier && entry.app == app,
                    .typing(let entry, _) where entry.identifier == identifier && entry.app == app:
                    say("(\"\(entry.content.title)\" was removed or answered elsewhere)")
                    next()
                default:
                    break
                }
            }
        }

        /// Reads one line of the user's.
        func take(_ line: String) -> Step {
            let text = line.trimmingCharacters(in: .whitespaces)
            switch stage {
            case .typing(let entry, let action):
                guard !text.isEmpty else {
                    prompt(for: action)
                    return .none
                }
                stage = .sending(entry)
                answeredHere[entry.identifier, default: 0] += 1
                say("→ \(action.textInput?.buttonTitle ?? action.title): \"\(text)\"")
                return .answer(entry, action: action.identifier, text: text)
            case .choosing(let entry):
                if text == "q" || text == "quit" { return .quit }
                let choices = entry.choices
                guard let number = Int(text) else { return .command(text, asking: choices.count) }
                guard choices.indices.contains(number - 1) else {
                    say("Type a number from 1 to \(choices.count).")
                    return .none
                }
                let choice = choices[number - 1]
                if case .action(let action) = choice, action.textInput != nil {
                    stage = .typing(entry, action)
                    prompt(for: action)
                    return .none
                }
                stage = .sending(entry)
                answeredHere[entry.identifier, default: 0] += 1
                say("→ \(choice.label)")
                return .answer(entry, action: choice.identifier, text: nil)
            case .idle, .sending:
                if text == "q" || text == "quit" { return .quit }
                if text.isEmpty { return .none }
                return .command(text, asking: nil)
            }
        }

        func unknown(_ text: String, asking: Int?) {
            if let asking {
                say("Type a number from 1 to \(asking), or q to quit.")
            } else {
                say("Nothing to answer now (\"\(text)\" is not a command here). Type q to quit.")
            }
        }

        func answered(_ entry: Entry, failure: (any Error)?) {
            if let failure {
                if let count = answeredHere[entry.identifier] {
                    answeredHere[entry.identifier] = count > 1 ? count - 1 : nil
                }
                say("! Could not answer \"\(entry.content.title)\": \(failure)")
            }
            next()
        }

        func inputEnded() {
            let left = waiting.count + (isAsking ? 1 : 0)
            stage = .idle
            if left > 0 {
                say("Input ended; \(left) notification\(left == 1 ? "" : "s") left unanswered (still delivered).")
            }
        }

        private var isAsking: Bool {
            switch stage {
            case .choosing, .typing: true
            case .idle, .sending: false
            }
        }

        private func next() {
            if waiting.isEmpty {
                stage = .idle
            } else {
                ask(waiting.removeFirst())
            }
        }

        private func headline(_ entry: Entry) -> String {
            let title = entry.content.title.isEmpty ? "(no title)" : entry.content.title
            return "\"\(title)\""
        }

        /// Shows a notification in full and asks what to do with it.
        private func ask(_ entry: Entry) {
            stage = .choosing(entry)
            let content = entry.content
            let bell = entry.options.contains(.sound) && !entry.isQuiet ? "\u{7}" : ""
            var lines = [
                "",
                "\(bell)== \(entry.app) · \(entry.notification.date.formatted(timeFormat))\(entry.isQuiet ? " · quiet" : "") ==",
            ]
            lines.append("   \(content.title.isEmpty ? "(no title)" : content.title)")
            if !content.subtitle.isEmpty { lines.append("   \(content.subtitle)") }
            if !content.body.isEmpty { lines.append("   \(content.body)") }
            let choices = entry.choices
            for (index, choice) in choices.enumerated() {
                lines.append("   [\(index + 1)] \(choice.label)")
            }
            if !waiting.isEmpty { lines.append("   (\(waiting.count) more waiting)") }
            lines.append("Choose 1-\(choices.count): ")
            output.write(lines.joined(separator: "\n"))
        }

        private func prompt(for action: NotificationAction) {
            let placeholder = action.textInput?.placeholder ?? ""
            let button = action.textInput?.buttonTitle ?? "Send"
            output.write("\(placeholder.isEmpty ? "Your text" : placeholder) (Enter to \(button)): ")
        }
    }
}
