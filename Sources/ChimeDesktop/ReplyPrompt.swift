import ChimeCore
import Foundation

/// What the user is asked to type, when a text-input action is chosen on a notification server
/// without inline replies.
public struct ReplyQuestion: Sendable, Hashable {
    public var app: DesktopApp
    public var bundleIdentifier: String
    /// The notification's identifier.
    public var notification: String
    /// The notification's summary as the pop-up showed it.
    public var summary: String
    /// The text-input action chosen.
    public var action: NotificationAction

    public init(
        app: DesktopApp, bundleIdentifier: String, notification: String, summary: String, action: NotificationAction
    ) {
        self.app = app
        self.bundleIdentifier = bundleIdentifier
        self.notification = notification
        self.summary = summary
        self.action = action
    }
}

/// How a prompt ended.
public enum ReplyPromptOutcome: Sendable, Hashable {
    /// The user typed this (never empty); the surface answers with it.
    case text(String)
    /// Someone else takes the answer (the web center's reply field was opened): the surface sends nothing.
    case handedOver
    /// The user closed the prompt without typing: no answer; the notification stays delivered.
    case cancelled
}

/// Lets the user type a reply where the notification server has no inline reply field.
///
/// ```swift
/// struct AlwaysYes: DesktopReplyPrompt {
///     func ask(_ question: ReplyQuestion) async -> ReplyPromptOutcome { .text("yes") }
/// }
/// ```
public protocol DesktopReplyPrompt: Sendable {
    func ask(_ question: ReplyQuestion) async -> ReplyPromptOutcome
}

/// A small dialog with a text field: the first of `zenity`, `kdialog` and `yad` found on the `PATH`
/// (GNOME's, KDE's and a lighter GTK one). It needs the desktop's `DISPLAY` or `WAYLAND_DISPLAY`.
///
/// ```swift
/// let prompt = DialogReplyPrompt.find()        // nil when none is installed or no display is there
/// ```
public struct DialogReplyPrompt: DesktopReplyPrompt {
    public enum Program: String, Sendable, CaseIterable {
        case zenity, kdialog, yad
    }

    public let program: Program
    public let path: String
    public let environment: [String: String]

    public init(program: Program, path: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.program = program
        self.path = path
        self.environment = environment
    }

    /// The first dialog program on the `PATH`, when there is a display to show it on.
    public static func find(environment: [String: String] = ProcessInfo.processInfo.environment) -> DialogReplyPrompt? {
        guard !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty else {
            return nil
        }
        let directories = (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").map(String.init)
        for program in Program.allCases {
            for directory in directories
            where FileManager.default.isExecutableFile(atPath: "\(directory)/\(program.rawValue)") {
                return DialogReplyPrompt(
                    program: program, path: "\(directory)/\(program.rawValue)", environment: environment)
            }
        }
        return nil
    }

    /// The dialog's window title (tests look windows up by it).
    public static func title(for question: ReplyQuestion) -> String {
        "\(question.app.displayName): \(question.action.title)"
    }

    /// The program's arguments for `question`.
    public func arguments(for question: ReplyQuestion) -> [String] {
        let title = Self.title(for: question)
        let placeholder = question.action.textInput?.placeholder ?? ""
        let text = placeholder.isEmpty ? question.summary : "\(question.summary)\n\n\(placeholder)"
        let button = question.action.textInput?.buttonTitle ?? ""
        switch program {
        case .zenity, .yad:
            var arguments = ["--entry", "--title=\(title)", "--text=\(text)"]
            if !button.isEmpty {
                arguments.append(program == .zenity ? "--ok-label=\(button)" : "--button=\(button):0")
            }
            if program == .yad && !button.isEmpty { arguments.append("--button=Cancel:1") }
            return arguments
        case .kdialog:
            return ["--title", title, "--inputbox", text]
        }
    }

    public func ask(_ question: ReplyQuestion) async -> ReplyPromptOutcome {
        let output = Pipe()
        guard
            let dialog = try? ChildProcess(
                executable: path, arguments: arguments(for: question), environment: environment,
                stdin: .null, stdout: .pipe(output), stderr: .null)
        else { return .cancelled }
        // The user answers when they will: no time limit. The answer is one line, well within a
        // pipe's buffer, so it is read after the dialog has ended.
        let end = await dialog.termination
        let data = (try? output.fileHandleForReading.readToEnd()) ?? Data()
        guard end.succeeded else { return .cancelled }
        var text = String(decoding: data, as: UTF8.self)
        while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
        // An empty field is no reply: never answer a text-input action with nothing.
        return text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? .cancelled : .text(text)
    }
}
