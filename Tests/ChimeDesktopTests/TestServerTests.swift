import ChimeCore
import Foundation
import Synchronization
import TestThreads
import Testing

@testable import ChimeDesktop

/// The desktop surface against the tests' own notification server (Servers/notification_server.py):
/// it advertises KDE's `inline-reply`, sends `NotificationReplied` and `ActivationToken`, can
/// broadcast its signals as KDE Plasma does, and reports every `Notify` exactly as received, so
/// each mapping rule is checked on what went over the bus.
@Suite("Desktop pop-ups on an inline-reply server", .testThreads, .serialized)
struct TestServerTests {
    func withServer(
        capabilities: [String] = ["actions", "body", "body-markup", "inline-reply"], broadcast: Bool = false,
        prompt: (any DesktopReplyPrompt)? = nil,
        app: @escaping @Sendable (String) -> DesktopApp = { DesktopApp(displayName: $0) },
        _ body: (TestServer, DesktopFixture) async throws -> Void
    ) async throws {
        try await withTestDesktop(display: false) { desktop in
            let server = try await desktop.startServer(capabilities: capabilities, broadcast: broadcast)
            let fixture = try await DesktopFixture.make(on: desktop, prompt: prompt, app: app)
            _ = try await fixture.events.connected()
            try await fixture.run { try await body(server, fixture) }
        }
    }

    @Test("a text-input action is KDE's inline reply, with the placeholder and the button title as hints")
    func inlineReplyMapping() async throws {
        try await withServer { server, fixture in
            try await fixture.deliver("wake")
            let notify = try await server.notify(number: 1)
            #expect(
                notify.actions == [
                    "default", "Open", "snooze", "Snooze 5 Sec", "inline-reply", "Add Comment", "delete", "⚠ Delete",
                ])
            #expect(notify.hint("x-kde-reply-placeholder-text") == "s:Type a comment")
            #expect(notify.hint("x-kde-reply-submit-button-text") == "s:Add")
        }
    }

    @Test(
        "an answer's activation token is handed over before the engine has the response: whoever hears of the response finds it"
    )
    func activationTokenBeforeTheResponse() async throws {
        try await withServer(broadcast: true) { server, fixture in
            let events = fixture.engine.events(app: DesktopFixture.app)
            try await fixture.deliver("wake")
            let id = try await server.notify(number: 1).id
            try await server.invoke(id, "snooze", token: "xdg-token-9")
            // The response event is published after the response is stored; by then `onAnswer`
            // has run (this is what `chime serve`'s launcher relies on for XDG_ACTIVATION_TOKEN).
            for await event in events where event.kind == .response {
                #expect(fixture.responses.answered.map(\.activationToken) == ["xdg-token-9"])
                break
            }
            let (answer, _) = try await fixture.events.answered()
            #expect(answer.action == "snooze" && answer.activationToken == "xdg-token-9")
        }
    }

    @Test("NotificationReplied is a text response to the text-input action")
    func inlineReply() async throws {
        try await withServer { server, fixture in
            try await fixture.deliver("wake")
            let id = try await server.notify(number: 1).id
            try await server.reply(id, "call the plumber")
            let (answer, response) = try await fixture.events.answered()
            #expect(answer.action == "comment" && answer.userText == "call the plumber")
            #expect(response?.userText == "call the plumber")
            #expect(try await fixture.outbox().map(\.userText) == ["call the plumber"])
            #expect(try await fixture.delivered().isEmpty)
            try await waitUntil("the pop-up to be closed") { server.closes.contains(id) }
        }
    }

    @Test("an empty inline reply is no reply: the app hears nothing and the notification stays")
    func emptyReply() async throws {
        try await withServer { server, fixture in
            try await fixture.deliver("wake")
            let id = try await server.notify(number: 1).id
            try await server.reply(id, "")
            try await server.invoke(id, "snooze")  // a later answer shows the empty one was read and dropped
            let (answer, _) = try await fixture.events.answered()
            #expect(answer.action == "snooze")
            #expect(try await fixture.outbox().map(\.actionIdentifier) == ["snooze"])
        }
    }

    @Test("broadcast signals (as KDE sends them) and the activation token reach the answer")
    func broadcastAndActivationToken() async throws {
        try await withServer(broadcast: true) { server, fixture in
            try await fixture.deliver("wake")
            let id = try await server.notify(number: 1).id
            try await server.invoke(id, "default", token: "xdg-token-42")
            let (answer, _) = try await fixture.events.answered()
            #expect(answer.action == UNNotificationDefaultActionIdentifier && answer.activationToken == "xdg-token-42")
            let seen = try #require(fixture.responses.all.first)
            #expect(
                seen.0.actionIdentifier == UNNotificationDefaultActionIdentifier
                    && seen.1.activationToken == "xdg-token-42")
        }
    }

    @Test("a close after an action is part of the action, not a dismissal")
    func closeAfterAction() async throws {
        try await withServer(broadcast: true) { server, fixture in
            try await fixture.deliver("wake")
            let id = try await server.notify(number: 1).id
            try await server.invoke(id, "snooze")
            try await server.closed(id, reason: 2)
            _ = try await fixture.events.answered()
            try await fixture.events.wait("the close to be read") {
                if case .signal(.closed(id, 2)) = $0 { true } else { nil }
            }
            #expect(try await fixture.outbox().map(\.actionIdentifier) == ["snooze"])
        }
    }

    @Test("signals from anyone but the server are ignored")
    func spoofedSignal() async throws {
        try await withServer(broadcast: true) { server, fixture in
            try await fixture.deliver("wake")
            let id = try await server.notify(number: 1).id
            try await server.spoof(id, "delete")
            try await server.invoke(id, "snooze")
            let (answer, _) = try await fixture.events.answered()
            #expect(answer.action == "snooze")
            #expect(try await fixture.outbox().map(\.actionIdentifier) == ["snooze"])
        }
    }

    @Test(
        "NotificationClosed reasons: 1 and 3 say nothing, 2 dismisses", arguments: [(1, false), (3, false), (2, true)])
    func closeReasons(reason: Int, dismisses: Bool) async throws {
        try await withServer { server, fixture in
            try await fixture.deliver("wake")
            let id = try await server.notify(number: 1).id
            try await server.closed(id, reason: reason)
            try await fixture.events.wait("the close to be read") {
                if case .signal(.closed(id, UInt32(reason))) = $0 { true } else { nil }
            }
            if dismisses { _ = try await fixture.events.answered() }
            await fixture.engine.hub.settle()
            #expect(
                try await fixture.outbox().map(\.actionIdentifier)
                    == (dismisses ? [UNNotificationDismissActionIdentifier] : []))
            #expect(try await fixture.delivered() == (dismisses ? [] : ["wake"]))
        }
    }

    @Test(
        "without inline reply a text-input action is a button whose choice asks the prompt; only a typed text answers")
    func promptFallback() async throws {
        let prompt = ScriptedPrompt([.cancelled, .handedOver, .text("on my way")])
        try await withServer(capabilities: ["actions", "body"], prompt: prompt) { server, fixture in
            try await fixture.deliver("wake")
            let notify = try await server.notify(number: 1)
            #expect(
                notify.actions == [
                    "default", "Open", "snooze", "Snooze 5 Sec", "comment", "Add Comment", "delete", "⚠ Delete",
                ])
            #expect(notify.hint("x-kde-reply-placeholder-text") == nil)
            for _ in 0..<2 {
                try await server.invoke(notify.id, "comment")
                try await fixture.events.wait("the prompt to end", after: fixture.events.count - 1) { event in
                    if case .promptEnded = event { true } else { nil }
                }
            }
            #expect(try await fixture.outbox().isEmpty)
            #expect(try await fixture.delivered() == ["wake"])
            // After a prompt ended without text, choosing the action again asks again.
            try await server.invoke(notify.id, "comment")
            let (answer, _) = try await fixture.events.answered()
            #expect(answer.userText == "on my way" && answer.action == "comment")
            #expect(prompt.questions.map(\.action.identifier) == ["comment", "comment", "comment"])
            #expect(prompt.questions.first?.summary == "Alarm")
        }
    }

    @Test(
        "urgency from the interruption level and the presentation",
        arguments: [
            (UNNotificationInterruptionLevel.passive, UInt8(0)), (.active, 1), (.timeSensitive, 2), (.critical, 2),
        ])
    func urgency(level: UNNotificationInterruptionLevel, urgency: UInt8) async throws {
        try await withServer { server, fixture in
            try await fixture.deliver("wake", level: level)
            #expect(try await server.notify(number: 1).hint("urgency") == "y:\(urgency)")
        }
    }

    @Test("a notification shown in the list only (no banner) is of low urgency")
    func listOnly() async throws {
        try await withServer { server, fixture in
            _ = try await fixture.engine.updateSettings(app: DesktopFixture.app) { $0.alertSetting = .disabled }
            try await fixture.deliver("wake", level: .timeSensitive)
            #expect(try await server.notify(number: 1).hint("urgency") == "y:0")
        }
    }

    @Test("sounds: the default sound, a named one, none, and sound switched off")
    func sounds() async throws {
        try await withServer { server, fixture in
            try await fixture.deliver("default", sound: .default)
            try await fixture.deliver("named", sound: NotificationSound(name: "bell.caf"))
            try await fixture.deliver("file", sound: NotificationSound(name: "/usr/share/sounds/bell.oga"))
            try await fixture.deliver("silent", sound: nil)
            let calls = [
                try await server.notify(number: 1), try await server.notify(number: 2),
                try await server.notify(number: 3),
                try await server.notify(number: 4),
            ]
            #expect(calls[0].hint("sound-name") == "s:message-new-instant" && calls[0].hint("suppress-sound") == nil)
            #expect(calls[1].hint("sound-name") == "s:bell")
            #expect(calls[2].hint("sound-file") == "s:/usr/share/sounds/bell.oga")
            #expect(calls[3].hint("suppress-sound") == "b:1" && calls[3].hint("sound-name") == nil)

            _ = try await fixture.engine.updateSettings(app: DesktopFixture.app) { $0.soundSetting = .disabled }
            try await fixture.deliver("muted", sound: .default)
            let muted = try await server.notify(number: 5)
            #expect(muted.hint("suppress-sound") == "b:1" && muted.hint("sound-name") == nil)
        }
    }

    @Test("the app's name and icon from its desktop entry; its bundle identifier without one")
    func appNameAndIcon() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent(
            "chime-desktop-entries-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: data.appendingPathComponent("applications"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: data) }
        try """
        [Desktop Entry]
        Type=Application
        Name=Alarm Clock
        Name[de]=Wecker
        Icon=alarm-clock
        Exec=alarm
        """.write(
            to: data.appendingPathComponent("applications/\(DesktopFixture.app).desktop"), atomically: true,
            encoding: .utf8)
        let environment = ["XDG_DATA_HOME": data.path, "XDG_DATA_DIRS": "/nonexistent", "HOME": "/nonexistent"]
        try await withServer(app: { DesktopApp.lookup($0, environment: environment) }) { server, fixture in
            try await fixture.deliver("wake")
            let known = try await server.notify(number: 1)
            #expect(known.appName == "Alarm Clock" && known.appIcon == "alarm-clock")
            #expect(known.hint("desktop-entry") == "s:\(DesktopFixture.app)")

            _ = try await fixture.engine.requestAuthorization(app: "com.example.other", options: [.alert])
            try await fixture.deliver("other", category: "", app: "com.example.other")
            let unknown = try await server.notify(number: 2)
            #expect(
                unknown.appName == "com.example.other" && unknown.appIcon == "" && unknown.hint("desktop-entry") == nil)
            #expect(unknown.actions == ["default", "Open"])
        }
    }

    @Test("an image attachment is the pop-up's image")
    func image() async throws {
        try await withServer { server, fixture in
            let url = URL(fileURLWithPath: "/tmp/chime-desktop-photo.png")
            try await fixture.deliver(
                "wake", attachments: [NotificationAttachment(identifier: "photo", url: url, type: "public.png")])
            #expect(try await server.notify(number: 1).hint("image-path") == "s:file:///tmp/chime-desktop-photo.png")
        }
    }

    @Test("with an attachment store, images and sound files reach the server only from inside it, links resolved")
    func filesOnlyFromTheStore() async throws {
        let store = FileManager.default.temporaryDirectory.appendingPathComponent(
            "chime-desktop-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: store.appendingPathComponent("entry"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: store) }
        let inside = store.appendingPathComponent("entry/photo.png")
        let link = store.appendingPathComponent("entry/passwd.png")
        try Data([0x89]).write(to: inside)
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "/etc/passwd")
        try await withServer(app: { DesktopApp(displayName: $0, attachmentDirectory: store.path) }) { server, fixture in
            let photo = { (url: URL) in [NotificationAttachment(identifier: "photo", url: url, type: "public.png")] }
            try await fixture.deliver(
                "outside", sound: NotificationSound(name: "/etc/shadow.oga"),
                attachments: photo(URL(fileURLWithPath: "/etc/passwd.png")))
            try await fixture.deliver("link", attachments: photo(link))
            try await fixture.deliver(
                "inside", sound: NotificationSound(name: store.appendingPathComponent("entry/bell.oga").path),
                attachments: photo(inside))
            let outside = try await server.notify(number: 1)
            let linked = try await server.notify(number: 2)
            let stored = try await server.notify(number: 3)
            #expect(outside.hint("image-path") == nil)
            #expect(outside.hint("sound-file") == nil && outside.hint("sound-name") == "s:shadow")
            #expect(linked.hint("image-path") == nil)
            #expect(stored.hint("image-path") == "s:\(inside.absoluteString)")
            #expect(stored.hint("sound-file") == "s:\(store.appendingPathComponent("entry/bell.oga").path)")
        }
    }

    @Test("hidden previews show the category's placeholder and the app's name")
    func hiddenPreviews() async throws {
        try await withServer { server, fixture in
            _ = try await fixture.engine.updateSettings(app: DesktopFixture.app) { $0.showPreviewsSetting = .never }
            try await fixture.deliver("wake", title: "Secret", body: "Very secret")
            let notify = try await server.notify(number: 1)
            #expect(notify.summary == DesktopFixture.app && notify.body == "Notification")
        }
    }

    @Test("a thread is not sent as dunst's stack tag (that replaces) nor as anything else no server groups by")
    func thread() async throws {
        try await withServer(capabilities: ["actions", "body", "x-dunst-stack-tag"]) { server, fixture in
            try await fixture.deliver("one", thread: "kitchen")
            try await fixture.deliver("two", thread: "kitchen")
            let first = try await server.notify(number: 1)
            let second = try await server.notify(number: 2)
            #expect(first.hints.keys.sorted() == ["sound-name", "urgency"])
            #expect(second.id != first.id && second.replacesID == 0)
        }
    }

    @Test("a server without actions gets the texts alone")
    func noActions() async throws {
        try await withServer(capabilities: ["body"]) { server, fixture in
            try await fixture.deliver("wake")
            #expect(try await server.notify(number: 1).actions.isEmpty)
        }
    }

    @Test(
        "a server that refuses Notify: logged once, the store and other surfaces unaffected, and it works when it accepts again"
    )
    func refusedCall() async throws {
        try await withServer { server, fixture in
            let others = RecordingSurface()
            fixture.engine.attach(others, app: nil)
            try await server.refuse(true)
            try await fixture.deliver("one")
            try await fixture.deliver("two")
            #expect(fixture.events.lines.filter { $0.contains("refused Notify") }.count == 1, "\(fixture.events.lines)")
            #expect(others.shown == ["one", "two"])
            #expect(try await fixture.delivered().sorted() == ["one", "two"])
            try await server.refuse(false)
            try await fixture.deliver("three")
            #expect(try await server.notify(number: 1).summary == "Alarm")
            _ = try await fixture.events.shown("three")
        }
    }

    @Test("stopping the surface closes its pop-ups")
    func stopClosesPopUps() async throws {
        try await withTestDesktop(display: false) { desktop in
            let server = try await desktop.startServer()
            let fixture = try await DesktopFixture.make(on: desktop)
            _ = try await fixture.events.connected()
            try await fixture.deliver("wake")
            let id = try await server.notify(number: 1).id
            await fixture.surface.stop()
            try await waitUntil("the pop-up to be closed") { server.closes == [id] }
            #expect(try await fixture.delivered() == ["wake"])
            await fixture.engine.shutdown()
        }
    }
}

/// A reply prompt that answers from a script, and remembers what it was asked.
final class ScriptedPrompt: DesktopReplyPrompt {
    private let state: Mutex<(answers: [ReplyPromptOutcome], questions: [ReplyQuestion])>
    init(_ answers: [ReplyPromptOutcome]) { state = Mutex((answers, [])) }
    var questions: [ReplyQuestion] { state.withLock { $0.questions } }
    func ask(_ question: ReplyQuestion) async -> ReplyPromptOutcome {
        state.withLock { state in
            state.questions.append(question)
            return state.answers.isEmpty ? .cancelled : state.answers.removeFirst()
        }
    }
}
