import ChimeCore
import Foundation
import Testing
@testable import ChimeDesktop

/// An embedded app (`UNUserNotificationCenter.current()`, no service) also pops up on the desktop:
/// the drinking-reminder example, run as a person runs it, on a test desktop with dunst.
@Suite("Embedded apps on the desktop", .serialized)
struct EmbeddedDesktopTests {
    static func example(_ name: String) throws -> String {
        let candidates = [Bundle.main.executableURL, URL(fileURLWithPath: CommandLine.arguments[0])]
            .compactMap { $0?.deletingLastPathComponent() } + [Bundle.main.bundleURL.deletingLastPathComponent()]
        for directory in candidates where FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent(name).path) {
            return directory.appendingPathComponent(name).path
        }
        throw TestDesktopError(description: "\(name) was not found next to the test bundle in \(candidates.map(\.path))")
    }

    func start(_ desktop: TestDesktop, desktopSetting: String?) throws -> TestProgram {
        var environment = desktop.environment
        environment["CHIME_STORE"] = desktop.directory + "/drinking.sqlite"
        environment["CHIME_BUNDLE_IDENTIFIER"] = "com.example.drinking-reminder"
        environment["TMPDIR"] = desktop.directory
        environment["CHIME_DESKTOP"] = desktopSetting
        return try desktop.spawn("drinking-reminder", try Self.example("drinking-reminder"), ["--exit-after", "60"], environment: environment)
    }

    @Test("the example pops up with its buttons and keeps its terminal; Done on the desktop reaches its delegate")
    func popsUp() async throws {
        try await withTestDesktop { desktop in
            try await desktop.startDunst()
            let app = try start(desktop, desktopSetting: nil)
            _ = try await app.line { $0.contains("Commands:") }
            app.send("push")
            _ = try await app.line { $0.contains("Stay hydrated") }
            try await waitUntil("the pop-up on dunst") { try await desktop.dunstCount().displayed == 1 }
            try await desktop.choose("#Done (Stay hydrated)")
            _ = try await app.line { $0.contains("(logged: drank") }
            try await waitUntil("the pop-up to close") { try await desktop.dunstCount().displayed == 0 }
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
