import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeDesktop

/// The pure parts on their own: what the integration tests cannot reach cheaply.
@Suite("Desktop surface parts", .testThreads)
struct DesktopPartsTests {
    @Test(
        "an escalating notification alerted again is shown with urgency critical; its first alert and a list-only one are not"
    )
    func realertedIsCritical() {
        var content = NotificationContent(title: "Wake up")
        content.interruptionLevel = .active
        let notification = DeliveredNotification(
            request: NotificationRequest(
                identifier: "wake", content: content,
                escalation: NotificationEscalation(every: 60, for: 1800)),
            date: Date(timeIntervalSince1970: 1_780_000_000))
        let server = ServerProfile(
            name: "test", vendor: "chime", version: "1", specVersion: "1.2", capabilities: ["body", "actions"],
            owner: ":1.1")
        func urgency(alert: Int, presentation: UNNotificationPresentationOptions) -> HintValue? {
            var delivery = Delivery(
                notification: notification, category: nil, settings: NotificationSettings(), presentation: presentation)
            delivery.alert = alert
            return DesktopMapping.popUp(
                for: delivery, app: DesktopApp(displayName: "Alarm"), server: server, replacesID: 0,
                canPrompt: false
            ).request.hints["urgency"]
        }
        #expect(urgency(alert: 1, presentation: [.banner, .list]) == .byte(1))
        #expect(urgency(alert: 2, presentation: [.banner, .list]) == .byte(2))
        #expect(urgency(alert: 5, presentation: [.list]) == .byte(0))
    }

    @Test(
        "a bus address loses its guid, so a bus restarted on the same socket is reached again",
        arguments: [
            ("unix:path=/run/user/1000/bus,guid=0123abcd", "unix:path=/run/user/1000/bus"),
            ("unix:path=/tmp/a,guid=1;tcp:host=localhost,port=1,guid=2", "unix:path=/tmp/a;tcp:host=localhost,port=1"),
            ("unix:path=/run/user/1000/bus", "unix:path=/run/user/1000/bus"),
        ])
    func withoutGUID(address: String, expected: String) {
        #expect(DesktopLoop.withoutGUID(address) == expected)
    }

    @Test("the session bus: DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus when it exists, else none")
    func sessionBus() throws {
        #expect(
            DesktopSurface.sessionBusAddress(environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"])
                == "unix:path=/x")
        #expect(DesktopSurface.sessionBusAddress(environment: ["XDG_RUNTIME_DIR": "/nonexistent"]) == nil)
        #expect(DesktopSurface.sessionBusAddress(environment: [:]) == nil)
    }

    @Test("a desktop entry's unlocalised Name and Icon, from its [Desktop Entry] group only")
    func desktopEntry() {
        let entry = DesktopApp.desktopEntry(
            """
            # a comment
            [Desktop Entry]
            Name=Alarm Clock
            Name[de]=Wecker
            Icon = alarm-clock
            [Desktop Action New]
            Name=New Alarm
            """)
        #expect(entry["Name"] == "Alarm Clock" && entry["Icon"] == "alarm-clock")
    }

    @Test("a dialog prompt's arguments carry the summary, the placeholder and the button title")
    func dialogArguments() {
        let action = NotificationAction(
            identifier: "comment", title: "Add Comment", textInput: .init(buttonTitle: "Add", placeholder: "Type here"))
        let question = ReplyQuestion(
            app: DesktopApp(displayName: "Alarm"), bundleIdentifier: "com.example.alarm", notification: "n",
            summary: "Wake up", action: action)
        #expect(
            DialogReplyPrompt(program: .zenity, path: "/usr/bin/zenity").arguments(for: question)
                == ["--entry", "--title=Alarm: Add Comment", "--text=Wake up\n\nType here", "--ok-label=Add"])
        #expect(
            DialogReplyPrompt(program: .kdialog, path: "/usr/bin/kdialog").arguments(for: question)
                == ["--title", "Alarm: Add Comment", "--inputbox", "Wake up\n\nType here"])
        #expect(DialogReplyPrompt.find(environment: ["PATH": "/usr/bin"]) == nil, "no display, no dialog")
    }
}
