import ChimeCore
import Foundation
import Testing
@testable import ChimeDesktop

/// The desktop surface against dunst (Debian's), on a private session bus and an Xvfb display:
/// dunst's menu is a script, so `dunstctl context` picks an action as a user would, and
/// `dunstctl close` dismisses as a user would.
@Suite("Desktop pop-ups on dunst", .serialized)
struct DunstTests {
    @Test("reads the server's name and capabilities at start")
    func readsTheServer() async throws {
        try await withTestDesktop { desktop in
            try await desktop.startDunst()
            let fixture = try await DesktopFixture.make(on: desktop)
            let profile = try await fixture.events.connected()
            #expect(profile.name == "dunst")
            #expect(profile.has("actions") && profile.has("body-markup"))
            #expect(await fixture.surface.server?.name == "dunst")
            await fixture.stop()
        }
    }

    @Test("a delivery pops up with its texts and app name; the chosen button reaches the engine")
    func buttonReachesTheEngine() async throws {
        try await withTestDesktop { desktop in
            try await desktop.startDunst()
            let fixture = try await DesktopFixture.make(on: desktop)
            _ = try await fixture.events.connected()
            try await fixture.deliver("wake", title: "Alarm", subtitle: "Bedroom", body: "Wake <up> & go")
            let (id, _) = try await fixture.events.shown("wake")
            let history = try await desktop.dunstHistory()
            #expect(history.isEmpty)
            #expect(try await desktop.dunstCount().displayed == 1)

            try await desktop.choose("[\(id),snooze]")
            let (answer, response) = try await fixture.events.answered()
            #expect(answer.action == "snooze" && answer.notification == "wake" && answer.userText == nil)
            #expect(response?.actionIdentifier == "snooze")
            #expect(try await fixture.outbox().map(\.actionIdentifier) == ["snooze"])
            #expect(try await fixture.delivered().isEmpty)
            // Answered means gone: the engine withdrew it, and the surface closed the pop-up.
            try await waitUntil("the pop-up to close") { try await desktop.dunstCount().displayed == 0 }
            #expect(desktop.menuInput.contains("Snooze 5 Sec"))
            await fixture.stop()
        }
    }
}
