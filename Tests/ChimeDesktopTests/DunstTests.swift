import ChimeCore
import Foundation
import Synchronization
import TestThreads
import Testing

@testable import ChimeDesktop

/// The desktop surface against dunst (Debian's), on a private session bus and an Xvfb display:
/// dunst's menu is a script, so `dunstctl context` picks an action as a user would, and
/// `dunstctl close` dismisses as a user would. dunst sends its signals to the connection that
/// called `Notify` alone.
@Suite("Desktop pop-ups on dunst", .testThreads, .serialized)
struct DunstTests {
    /// Starts a desktop with dunst and a fixture connected to it.
    func withDunst(
        markup: Bool = true, lowTimeout: Int = 0, markUrgency: Bool = false, prompt: (any DesktopReplyPrompt)? = nil,
        _ body: (TestDesktop, DesktopFixture) async throws -> Void
    ) async throws {
        try await withTestDesktop { desktop in
            try await desktop.startDunst(markup: markup, lowTimeout: lowTimeout, markUrgency: markUrgency)
            let fixture = try await DesktopFixture.make(on: desktop, prompt: prompt)
            _ = try await fixture.events.connected()
            try await fixture.run { try await body(desktop, fixture) }
        }
    }

    @Test("reads the server's name and capabilities at start")
    func readsTheServer() async throws {
        try await withDunst { _, fixture in
            let profile = try #require(await fixture.surface.server)
            #expect(profile.name == "dunst")
            #expect(profile.has("actions") && profile.has("body-markup"))
        }
    }

    @Test("a delivery pops up with title and subtitle as summary, the escaped body and the app's name")
    func popsUp() async throws {
        try await withDunst { desktop, fixture in
            try await fixture.deliver("wake", title: "Alarm", subtitle: "Bedroom", body: "Wake <b>up</b> & go")
            let (id, request) = try await fixture.events.shown("wake")
            #expect(request.summary == "Alarm — Bedroom")
            #expect(request.body == "Wake &lt;b&gt;up&lt;/b&gt; &amp; go")
            #expect(request.appName == DesktopFixture.app)
            #expect(try await desktop.dunstCount().displayed == 1)
            // dunst lists the actions in its menu under the pop-up's summary, the destructive one marked.
            try await desktop.choose("nothing matches this")
            let menu = desktop.menuInput
            for entry in [
                "#Snooze 5 Sec (Alarm — Bedroom) [\(id),snooze]", "#Open (Alarm — Bedroom) [\(id),default]",
                "#⚠ Delete (Alarm — Bedroom) [\(id),delete]",
            ] {
                #expect(menu.contains(entry), "\(entry) in \(menu)")
            }
            // What dunst shows: the body as text, not as markup.
            _ = try await desktop.dunstctl("close")
            let shown = try #require(try await desktop.dunstHistory().first)
            #expect(shown["summary"] as? String == "Alarm — Bedroom")
            #expect(shown["appname"] as? String == DesktopFixture.app)
            #expect(
                (shown["body"] as? String)?.contains("Wake &lt;b&gt;up") == true
                    || (shown["body"] as? String)?.contains("Wake <b>up") == true)
        }
    }

    @Test("body markup is left alone when the server does not read markup")
    func plainBody() async throws {
        try await withDunst(markup: false) { _, fixture in
            #expect(await fixture.surface.server?.has("body-markup") == false)
            try await fixture.deliver("wake", body: "Wake <b>up</b> & go")
            #expect(try await fixture.events.shown("wake").request.body == "Wake <b>up</b> & go")
        }
    }

    @Test("the chosen button reaches the engine, the notification leaves the delivered list and the pop-up closes")
    func buttonReachesTheEngine() async throws {
        try await withDunst { desktop, fixture in
            try await fixture.deliver("wake")
            let (id, _) = try await fixture.events.shown("wake")
            try await desktop.choose("[\(id),snooze]")
            let (answer, response) = try await fixture.events.answered()
            #expect(answer == DesktopAnswer(app: DesktopFixture.app, notification: "wake", action: "snooze"))
            #expect(response?.actionIdentifier == "snooze")
            #expect(try await fixture.outbox().map(\.actionIdentifier) == ["snooze"])
            #expect(try await fixture.delivered().isEmpty)
            try await waitUntil("the pop-up to close") { try await desktop.dunstCount().displayed == 0 }
        }
    }

    @Test("a click on the body is the default action")
    func bodyClick() async throws {
        try await withDunst { desktop, fixture in
            try await fixture.deliver("wake")
            let (id, _) = try await fixture.events.shown("wake")
            try await desktop.choose("[\(id),default]")
            let (answer, _) = try await fixture.events.answered()
            #expect(answer.action == UNNotificationDefaultActionIdentifier)
            #expect(try await fixture.outbox().map(\.actionIdentifier) == [UNNotificationDefaultActionIdentifier])
        }
    }

    @Test("closing the pop-up dismisses: the app hears of it only when its category asks (customDismissAction)")
    func dismissal() async throws {
        try await withDunst { desktop, fixture in
            try await fixture.deliver("custom", category: "alarm")
            _ = try await fixture.events.shown("custom")
            _ = try await desktop.dunstctl("close")
            let (answer, response) = try await fixture.events.answered()
            #expect(answer.action == UNNotificationDismissActionIdentifier && answer.notification == "custom")
            #expect(response?.actionIdentifier == UNNotificationDismissActionIdentifier)

            let mark = fixture.events.count
            try await fixture.deliver("quiet", category: "plain")
            _ = try await fixture.events.shown("quiet", after: mark)
            _ = try await desktop.dunstctl("close")
            let (second, none) = try await fixture.events.answered(after: mark)
            #expect(second.notification == "quiet" && none == nil)
            #expect(try await fixture.outbox().map(\.notification.request.identifier) == ["custom"])
            #expect(try await fixture.delivered().isEmpty)
        }
    }

    @Test("an expired pop-up leaves the notification delivered, and nobody is told")
    func expiry() async throws {
        try await withDunst(lowTimeout: 1) { _, fixture in
            // Passive: urgency low, which this dunst expires after a second.
            try await fixture.deliver("later", level: .passive)
            let (id, request) = try await fixture.events.shown("later")
            #expect(request.hints["urgency"] == .byte(0))
            try await fixture.events.wait("the pop-up to expire") { event in
                if case .signal(.closed(id, 1)) = event { return true }
                return nil
            }
            await fixture.engine.hub.settle()
            #expect(try await fixture.delivered() == ["later"])
            #expect(try await fixture.outbox().isEmpty)
        }
    }

    @Test("a new delivery with the same identifier updates the pop-up in place")
    func replacement() async throws {
        try await withDunst { desktop, fixture in
            try await fixture.deliver("wake", title: "Alarm")
            let (id, first) = try await fixture.events.shown("wake")
            #expect(first.replacesID == 0)
            let mark = fixture.events.count
            try await fixture.deliver("wake", title: "Alarm again")
            let (again, second) = try await fixture.events.shown("wake", after: mark)
            #expect(second.replacesID == id && again == id)
            #expect(try await desktop.dunstCount().displayed == 1)
            try await desktop.choose("nothing matches this")
            #expect(desktop.menuInput.contains("(Alarm again) [\(id),snooze]"))
            #expect(!desktop.menuInput.contains("(Alarm)"))
        }
    }

    @Test("removing a delivered notification closes its pop-up, and nobody is told")
    func removal() async throws {
        try await withDunst { desktop, fixture in
            try await fixture.deliver("wake")
            let (id, _) = try await fixture.events.shown("wake")
            _ = try await fixture.engine.removeDelivered(app: DesktopFixture.app, identifiers: ["wake"])
            await fixture.engine.hub.settle()
            try await waitUntil("the pop-up to close") { try await desktop.dunstCount().displayed == 0 }
            try await fixture.events.wait("dunst's close signal") { event in
                if case .signal(.closed(id, 3)) = event { return true }
                return nil
            }
            await fixture.engine.hub.settle()
            #expect(try await fixture.outbox().isEmpty)
            #expect(!fixture.events.all.contains { if case .answered = $0 { true } else { false } })
        }
    }

    @Test(
        "during a focus an active notification makes no pop-up (it is listed) and a time-sensitive one pops up, critical"
    )
    func focusHolds() async throws {
        try await withDunst(markUrgency: true) { desktop, fixture in
            try await fixture.engine.putFocusMode(FocusMode(name: "Sleep"))
            try await fixture.engine.setFocus(named: "Sleep", on: true)
            try await fixture.deliver("quiet", title: "Newsletter", level: .active)
            try await fixture.deliver("urgent", title: "Door open", level: .timeSensitive)
            let (_, request) = try await fixture.events.shown("urgent")
            #expect(request.hints["urgency"] == .byte(2))
            // The surface's jobs run in order: the held one's came first, and made no pop-up.
            #expect(!fixture.events.all.contains { if case .shown(_, "quiet", _, _) = $0 { true } else { false } })
            #expect(try await desktop.dunstCount().displayed == 1)
            #expect(Set(try await fixture.delivered()) == ["quiet", "urgent"], "the held one is in the list")
            // Off: the summary pops up as usual.
            try await fixture.engine.setFocus(named: "Sleep", on: false)
            await fixture.engine.hub.settle()
            let (_, summary) = try await fixture.events.shown("chime.focus.Sleep")
            #expect(summary.body.contains("1 notification during Sleep"))
        }
    }

    @Test("interruption levels become urgencies: passive low, active normal, time-sensitive and critical critical")
    func urgencies() async throws {
        try await withDunst(markUrgency: true) { desktop, fixture in
            let levels: [(UNNotificationInterruptionLevel, String)] = [
                (.passive, "LOW"), (.active, "NORMAL"), (.timeSensitive, "CRITICAL"), (.critical, "CRITICAL"),
            ]
            for (level, _) in levels {
                try await fixture.deliver("\(level)", title: "level \(level)", level: level)
                _ = try await fixture.events.shown("\(level)")
            }
            _ = try await desktop.dunstctl("close-all")
            try await waitUntil("dunst's history to hold all four") { try await desktop.dunstHistory().count == 4 }
            let history = try await desktop.dunstHistory()
            for (level, urgency) in levels {
                let entry = history.first { $0["summary"] as? String == "level \(level)" }
                #expect(entry?["message"] as? String == "\(urgency): level \(level)", "\(level)")
            }
        }
    }

    @Test("a text-input action without inline reply asks in a dialog (yad); the typed text is the answer")
    func replyPrompt() async throws {
        let yad = "/usr/bin/yad"
        try #require(
            FileManager.default.isExecutableFile(atPath: yad), "yad is installed by scripts/install-deps.sh test")
        try await withTestDesktop { desktop in
            try await desktop.startDunst()
            let prompt = DialogReplyPrompt(program: .yad, path: yad, environment: desktop.environment)
            let fixture = try await DesktopFixture.make(on: desktop, prompt: prompt)
            _ = try await fixture.events.connected()
            try await fixture.deliver("wake", title: "Alarm")
            let (id, request) = try await fixture.events.shown("wake")
            #expect(request.actions.contains("comment"))
            try await desktop.choose("[\(id),comment]")
            let title = DialogReplyPrompt.title(
                for: ReplyQuestion(
                    app: DesktopApp(displayName: DesktopFixture.app), bundleIdentifier: DesktopFixture.app,
                    notification: "wake", summary: "Alarm", action: DesktopFixture.alarm.actions[1]))
            let window =
                try await run(
                    "/usr/bin/xdotool", ["search", "--sync", "--name", title], environment: desktop.environment
                )
                .split(separator: "\n").first.map(String.init) ?? ""
            try await run("/usr/bin/xdotool", ["windowfocus", "--sync", window], environment: desktop.environment)
            try await run(
                "/usr/bin/xdotool", ["type", "--delay", "10", "call the plumber"], environment: desktop.environment)
            try await run("/usr/bin/xdotool", ["key", "Return"], environment: desktop.environment)
            let (answer, response) = try await fixture.events.answered()
            #expect(answer.action == "comment" && answer.userText == "call the plumber")
            #expect(response?.userText == "call the plumber")
            await fixture.stop()
        }
    }

    @Test("without inline reply and without a prompt a text-input action is not offered (never an empty reply)")
    func noWayToType() async throws {
        try await withDunst(prompt: nil) { _, fixture in
            try await fixture.deliver("wake")
            let (_, request) = try await fixture.events.shown("wake")
            #expect(request.actions == ["default", "Open", "snooze", "Snooze 5 Sec", "delete", "⚠ Delete"])
            #expect(fixture.events.lines.filter { $0.contains("'comment'") }.count == 1)
            try await fixture.deliver("again")
            _ = try await fixture.events.shown("again")
            #expect(fixture.events.lines.filter { $0.contains("'comment'") }.count == 1, "logged once")
        }
    }

    @Test("dunst restarting: logged once, what arrives meanwhile is kept and shown when it is back, answers work again")
    func serverRestart() async throws {
        try await withDunst { desktop, fixture in
            let others = RecordingSurface()
            fixture.engine.attach(others, app: nil)
            try await fixture.deliver("before")
            _ = try await fixture.events.shown("before")

            await desktop.stopDunst()
            try await fixture.events.wait("the server to go") { if case .serverGone = $0 { true } else { nil } }
            let mark = fixture.events.count
            try await fixture.deliver("meanwhile")
            #expect(others.shown == ["before", "meanwhile"])
            #expect(try await fixture.delivered().sorted() == ["before", "meanwhile"])
            #expect(fixture.events.lines.filter { $0.contains("stopped") }.count == 1)

            try await desktop.startDunst()
            _ = try await fixture.events.connected(after: mark)
            let (id, _) = try await fixture.events.shown("meanwhile", after: mark)
            try await desktop.choose("[\(id),snooze]")
            let (answer, _) = try await fixture.events.answered(after: mark)
            #expect(answer.notification == "meanwhile" && answer.action == "snooze")
            #expect(fixture.events.lines.contains { $0.contains("back:") })
        }
    }

    @Test("the session bus going away: logged once, reconnected when it is back, nothing lost")
    func busRestart() async throws {
        try await withDunst { desktop, fixture in
            await desktop.stopDunst()
            await desktop.stopBus()
            try await fixture.events.wait("the server to go") { if case .serverGone = $0 { true } else { nil } }
            let mark = fixture.events.count
            try await fixture.deliver("meanwhile")
            #expect(try await fixture.delivered() == ["meanwhile"])

            try await desktop.startBus()
            try await desktop.startDunst()
            _ = try await fixture.events.connected(after: mark)
            let (id, _) = try await fixture.events.shown("meanwhile", after: mark)
            try await desktop.choose("[\(id),default]")
            let (answer, _) = try await fixture.events.answered(after: mark)
            #expect(answer.action == UNNotificationDefaultActionIdentifier)
            #expect(
                fixture.events.lines.filter { $0.contains("lost the session bus") }.count == 1,
                "\(fixture.events.lines)")
        }
    }
}

/// A surface that records what it was asked to show.
final class RecordingSurface: NotificationSurface {
    private let seen = Mutex<[String]>([])
    var shown: [String] { seen.withLock { $0 } }
    func show(_ delivery: Delivery, app: String) async {
        seen.withLock { $0.append(delivery.notification.request.identifier) }
    }
    func withdraw(_ identifiers: [String], app: String) async {}
}
