import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeDesktop
@testable import ChimeServer

/// `chime serve --desktop`: the service's desktop pop-ups for every app, on a test desktop.
@Suite("chime serve --desktop", .testThreads, .serialized)
struct DesktopServiceTests {
    func configuration(_ desktop: TestDesktop, mode: ChimeService.DesktopMode, browser: String? = nil)
        -> ChimeService.Configuration
    {
        ChimeService.Configuration(
            dataDirectory: desktop.directory + "/data", listen: .tcp(host: "127.0.0.1", port: 0), autoAllow: true,
            printsBanner: false, desktop: mode, desktopBusAddress: desktop.busAddress, browser: browser)
    }

    @Test("--desktop on without a notification server fails at start and says what to do")
    func onWithoutServer() async throws {
        try await withTestDesktop(display: false) { desktop in
            let error = await #expect(throws: ServerError.self) {
                _ = try await RunningService.start(configuration: configuration(desktop, mode: .on), logger: .silent)
            }
            #expect(error?.code == .invalidConfiguration)
            #expect(error?.message.contains("--desktop on: no notification server on the session bus") == true)
            #expect(error?.message.contains("--desktop auto or off") == true)
        }
    }

    @Test("--desktop auto without a notification server serves without pop-ups")
    func autoWithoutServer() async throws {
        try await withTestDesktop(display: false) { desktop in
            let service = try await RunningService.start(
                configuration: configuration(desktop, mode: .auto), logger: .silent)
            #expect(service.desktop == nil)
            #expect(service.banner.contains("Desktop:        off (no notification server on the session bus)"))
            await service.stop()
        }
    }

    @Test("every app's notifications pop up; a button answers into the service's outbox")
    func everyApp() async throws {
        try await withTestDesktop { desktop in
            try await desktop.startDunst()
            let service = try await RunningService.start(
                configuration: configuration(desktop, mode: .auto), logger: .silent)
            let surface = try #require(service.desktop)
            try await waitUntil("the desktop to find dunst") { await surface.server?.name == "dunst" }
            let engine = service.engine
            for app in ["com.example.alarm", "com.example.organizer"] {
                _ = try await engine.requestAuthorization(app: app, options: [.alert, .sound])
                try await engine.setCategories([DesktopFixture.alarm], app: app)
                var content = NotificationContent(title: "From \(app)")
                content.categoryIdentifier = "alarm"
                _ = try await engine.add([NotificationRequest(identifier: "n", content: content)], app: app)
            }
            await engine.hub.settle()
            #expect(try await desktop.dunstCount().displayed == 2)
            try await desktop.choose("(From com.example.organizer) [", ",snooze]")
            try await waitUntil("the answer in the outbox") {
                try await engine.outbox(app: "com.example.organizer").count == 1
            }
            #expect(try await engine.outbox(app: "com.example.organizer").first?.actionIdentifier == "snooze")
            #expect(try await engine.outbox(app: "com.example.alarm").isEmpty)
            await service.stop()
            #expect(try await desktop.dunstCount().displayed == 0, "the service closed its pop-ups when it stopped")
        }
    }

    @Test("an answer given on the desktop launches the app (background launch) with the server's activation token")
    func activationTokenReachesTheLaunchedApp() async throws {
        try await withTestDesktop(display: false) { desktop in
            let server = try await desktop.startServer(broadcast: true)
            let service = try await RunningService.start(
                configuration: configuration(desktop, mode: .on), logger: .silent)
            let surface = try #require(service.desktop)
            try await waitUntil("the desktop to find the server") { await surface.server != nil }
            let app = "com.example.alarm"
            let record = desktop.directory + "/launched.txt"
            _ = try await service.engine.requestAuthorization(app: app, options: [.alert])
            try await service.engine.setCategories([DesktopFixture.alarm], app: app)
            _ = try await service.engine.setLaunchCommand(
                try LaunchCommand(arguments: [
                    "/bin/sh", "-c", "echo \"$CHIME_LAUNCH_REASON $XDG_ACTIVATION_TOKEN\" >> \(record)",
                ]), app: app)
            var content = NotificationContent(title: "Alarm")
            content.categoryIdentifier = "alarm"
            _ = try await service.engine.add([NotificationRequest(identifier: "wake", content: content)], app: app)
            await service.engine.hub.settle()
            let id = try await server.notify(number: 1).id
            try await server.invoke(id, "snooze", token: "xdg-token-7")
            try await waitUntil("the app to be launched") {
                ((try? String(contentsOfFile: record, encoding: .utf8)) ?? "").contains("\n")
            }
            let first = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n").first.map(
                String.init)
            #expect(first == "response xdg-token-7")
            await service.stop()
        }
    }

    @Test("a text-input action without inline reply opens the web center's reply field with a one-time sign-in link")
    func replyInTheWebCenter() async throws {
        try await withTestDesktop { desktop in
            try await desktop.startDunst()
            let opened = desktop.directory + "/opened.txt"
            let browser = desktop.directory + "/browser.sh"
            // It records its arguments, and the page it is given (the link is there, never in argv).
            try
                "#!/bin/sh\necho \"$@\" > \"\(opened).argv\"\ncat \"${1#file://}\" > \"\(opened).page\"\nmv \"\(opened).page\" \"\(opened)\"\n"
                .write(toFile: browser, atomically: true, encoding: .utf8)
            chmod(browser, 0o755)
            let service = try await RunningService.start(
                configuration: configuration(desktop, mode: .on, browser: browser), logger: .silent)
            let surface = try #require(service.desktop)
            try await waitUntil("the desktop to find dunst") { await surface.server != nil }
            let app = "com.example.alarm"
            _ = try await service.engine.requestAuthorization(app: app, options: [.alert])
            try await service.engine.setCategories([DesktopFixture.alarm], app: app)
            var content = NotificationContent(title: "Alarm")
            content.categoryIdentifier = "alarm"
            _ = try await service.engine.add(
                [NotificationRequest(identifier: "wake/up now", content: content)], app: app)
            await service.engine.hub.settle()
            try await desktop.choose("#Add Comment (Alarm)")
            // The page is moved into place whole.
            try await waitUntil("the browser to be started") { FileManager.default.fileExists(atPath: opened) }
            let argv = try String(contentsOfFile: opened + ".argv", encoding: .utf8)
            #expect(argv.hasPrefix("file://") && !argv.contains("login="), "\(argv)")
            let page = try String(contentsOfFile: opened, encoding: .utf8)
            let href = try #require(page.range(of: #"href=""#).map { page[$0.upperBound...].prefix { $0 != "\"" } })
            let url = href.replacingOccurrences(of: "&amp;", with: "&")
            #expect(url.hasPrefix(service.url + "/#login="))
            #expect(url.hasSuffix("&reply=com.example.alarm/wake%2Fup%20now/comment"))
            // The link signs in once.
            let code = try #require(url.split(separator: "&").first?.split(separator: "=").last.map(String.init))
            #expect(service.api.sessions.redeem(code))
            #expect(!service.api.sessions.redeem(code))
            // Nothing was answered for the user: the reply comes from the web center.
            #expect(try await service.engine.outbox(app: app).isEmpty)
            #expect(try await service.engine.delivered(app: app).map(\.request.identifier) == ["wake/up now"])
            await service.stop()
        }
    }
}

#if canImport(Glibc)
    import Glibc
#endif
