import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeDesktop

/// An embedded app (`UNUserNotificationCenter.current()`, no service) also pops up on the desktop:
/// the drinking-reminder example, run as a person runs it, on a test desktop with dunst.
@Suite("Embedded apps on the desktop", .testThreads, .serialized)
struct EmbeddedDesktopTests {
    static func example(_ name: String) throws -> String {
        let candidates =
            [Bundle.main.executableURL, URL(fileURLWithPath: CommandLine.arguments[0])]
            .compactMap { $0?.deletingLastPathComponent() } + [Bundle.main.bundleURL.deletingLastPathComponent()]
        for directory in candidates
        where FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent(name).path) {
            return directory.appendingPathComponent(name).path
        }
        throw TestDesktopError(
            description: "\(name) was not found next to the test bundle in \(candidates.map(\.path))")
    }

    func start(_ desktop: TestDesktop, desktopSetting: String?) throws -> TestProgram {
        var environment = desktop.environment
        environment["CHIME_STORE"] = desktop.directory + "/drinking.sqlite"
        environment["CHIME_BUNDLE_IDENTIFIER"] = "com.example.drinking-reminder"
        environment["TMPDIR"] = desktop.directory
        environment["CHIME_DESKTOP"] = desktopSetting
        return try desktop.spawn(
            "drinking-reminder", try Self.example("drinking-reminder"), ["--exit-after", "60"], environment: environment
        )
    }

    /// The example's own local reminder comes 5 s after launch with the text, category and buttons
    /// of the pushed one. It is answered first: pushed first, it could reach dunst while the test
    /// waited for the answered pop-up to close (a second pop-up, or dunst stacking it onto the
    /// first, which dunst then closes as if expired), and one pop-up stayed open — the reminder's,
    /// rightly. After it nothing else is due, so each pop-up the test waits on is the one answered.
    @Test("the example pops up with its buttons and keeps its terminal; Done on the desktop reaches its delegate")
    func popsUp() async throws {
        try await withTestDesktop { desktop in
            try await desktop.startDunst()
            let app = try start(desktop, desktopSetting: nil)
            _ = try await app.line { $0.contains("Commands:") }
            let reminder = try await app.line(timeout: .seconds(60)) { $0.contains("Stay hydrated") }
            let first = try await answerDone(on: desktop, app, after: reminder.index)
            app.send("push")
            let pushed = try await app.line(after: first + 1) { $0.contains("Stay hydrated") }
            let second = try await answerDone(on: desktop, app, after: pushed.index)
            #expect(app.allLines[second].contains("glasses so far 2"))
            app.send("q")
            await app.stop()
        }
    }

    /// Chooses Done on the one pop-up dunst shows and waits for the delegate's line (its index) and
    /// for the pop-up to close.
    private func answerDone(on desktop: TestDesktop, _ app: TestProgram, after index: Int) async throws -> Int {
        try await waitUntil("the pop-up on dunst") { try await desktop.dunstCount().displayed == 1 }
        try await desktop.choose("#Done (Stay hydrated)")
        let logged = try await app.line(after: index + 1) { $0.contains("(logged: drank") }
        try await waitUntil("the pop-up to close") { try await desktop.dunstCount().displayed == 0 }
        return logged.index
    }

    /// The surface is attached when the app makes its center and waits for a server: a notification
    /// server that starts after the app (the app started before the desktop's daemon, or the daemon
    /// restarted) shows what was delivered meanwhile. Before, the app asked once at start, in the
    /// background, and attached only if a server answered then: an app started first never popped
    /// up, and what it delivered before the answer never did either.
    @Test(
        "a notification server that starts after the app shows what the app was sent meanwhile, and its answer reaches the delegate"
    )
    func serverStartsLater() async throws {
        try await withTestDesktop(display: false) { desktop in
            let app = try start(desktop, desktopSetting: nil)
            _ = try await app.line { $0.contains("Commands:") }
            app.send("push")
            let pushed = try await app.line { $0.contains("Stay hydrated") }
            let server = try await desktop.startServer(capabilities: ["actions", "body"])
            let popUp = try await server.notify(number: 1)
            #expect(popUp.summary == "Stay hydrated")
            #expect(popUp.actions.contains("drinkingReminder.doneAction"))
            try await server.invoke(popUp.id, "drinkingReminder.doneAction")
            _ = try await app.line(after: pushed.index + 1) { $0.contains("(logged: drank") }
            try await waitUntil("the pop-up to close") { server.closes.contains(popUp.id) }
            // Nothing was said about the bus having no notification server at first.
            let errors =
                (try? String(contentsOfFile: desktop.directory + "/drinking-reminder.log", encoding: .utf8)) ?? ""
            #expect(!errors.contains("desktop:"), "\(errors)")
            app.send("q")
            await app.stop()
        }
    }

    @Test("CHIME_DESKTOP=off keeps the app off the desktop")
    func off() async throws {
        try await withTestDesktop { desktop in
            try await desktop.startDunst()
            let app = try start(desktop, desktopSetting: "off")
            _ = try await app.line { $0.contains("Commands:") }
            app.send("push")
            _ = try await app.line { $0.contains("Stay hydrated") }
            app.send("1")
            _ = try await app.line { $0.contains("(logged: drank") }
            #expect(try await desktop.dunstCount() == (0, 0))
            app.send("q")
            await app.stop()
        }
    }
}
