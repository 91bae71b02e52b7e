import ChimeCore
import ChimeCrypto
import ChimeHTTP
import ChimeServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension CLI {
    // MARK: events, status

    static let events = Command(
        name: "events",
        summary:
            "follow the live events of one app or all: delivered, response, removed, settings, silentPush, scheduled, categories, app, focus",
        usage: "chime events [--app APP] [--json]",
        examples: ["chime events", "chime events --app com.example.alarm --json"],
        options: [
            .value(
                "app",
                "only this app (default: every app; scheduled, categories, app and focus come on the every-app stream only)"
            )
        ],
        run: { arguments, cli in
            let client = try cli.client(arguments)
            let (stream, parameters) =
                arguments.value("app").map { (APIRoute.appEvents, ["app": $0]) } ?? (.allEvents, [:])
            let json = arguments.has("json")
            try await client.follow(stream, parameters) { kind, id, data in
                if json {
                    cli.write(data)
                    return
                }
                guard let event = try? JSONValue.parse(data) else { return }
                cli.write(describeEvent(kind: kind, id: id, event))
            }
            return 0
        })

    /// One line for an event: its id (`-` for hints that are not logged), kind, app and what it is about.
    package static func describeEvent(kind: String, id: String?, _ event: JSONValue) -> String {
        let app = event["app"]?.stringValue ?? ""
        var words: [String]
        switch kind {
        case "delivered", "silentPush":
            let notification = event["notification"]
            words = [notification?["identifier"]?.stringValue ?? "?", quoted(headline(notification))]
            // A delivery's actions are its category's (the notification does not repeat them).
            if let actions = event["category"]?["actions"]?.arrayValue.compactMap({ $0["identifier"]?.stringValue }),
                !actions.isEmpty
            {
                words.append("actions: " + actions.joined(separator: ", "))
            }
        case "realerted":
            // An escalating notification alerted again, unanswered: which, and which alert.
            let notification = event["notification"]
            words = [
                notification?["identifier"]?.stringValue ?? "?", quoted(headline(notification)),
                "alert \(event["alert"]?.numberValue.map { Validation.seconds($0) } ?? "?")",
            ]
        case "expired":
            let request = event["request"]
            words = [
                request?["identifier"]?.stringValue ?? "?",
                "due \(event["dueDate"]?.stringValue ?? "?"), not delivered after \(request?["expirationDate"]?.stringValue ?? "?")",
            ]
        case "response":
            let response = event["response"]
            let action = response?["actionIdentifier"]?.stringValue ?? "?"
            words = [response?["notification"]?["identifier"]?.stringValue ?? "?", "→", humanAction(action)]
            if let text = response?["userText"]?.stringValue { words.append(quoted(text)) }
        case "removed":
            let identifiers = event["identifiers"]?.arrayValue.compactMap(\.stringValue) ?? []
            words = [
                "\(event["scope"]?.stringValue ?? "?"):",
                identifiers.isEmpty ? "(none)" : identifiers.joined(separator: ", "),
            ]
        case "scheduled":
            let identifiers = event["identifiers"]?.arrayValue.compactMap(\.stringValue) ?? []
            words = [identifiers.isEmpty ? "(more than 100 requests)" : identifiers.joined(separator: ", ")]
        case "settings":
            words = [
                "authorization: \(event[JSONFieldName.settings]?[JSONFieldName.authorizationStatus]?.stringValue ?? "?")"
            ]
        case "categories":
            let names = event["categories"]?.arrayValue.compactMap { $0["identifier"]?.stringValue } ?? []
            words = [names.isEmpty ? "(none)" : names.joined(separator: ", ")]
        case "app":
            words = [event["change"]?.stringValue ?? "updated"]
        case "focus":
            // The owner's (no app): each mode, on or off, how and until when.
            let modes = event["modes"]?.arrayValue ?? []
            words = modes.isEmpty ? ["(no focus modes)"] : modes.map(focusWords)
            return ([id ?? "-", kind] + words).joined(separator: "  ")
        default:
            words = []
        }
        return ([id ?? "-", kind, app] + words).joined(separator: "  ")
    }

    /// "Sleep on by hand until 2027-06-01T05:00:00.000Z, 3 held", "Work off".
    static func focusWords(_ mode: JSONValue) -> String {
        let on = mode["active"] == .bool(true)
        var text = "\(mode["name"]?.stringValue ?? "?") \(on ? "on" : "off")"
        if mode["byHand"] == .bool(true) { text += " by hand" }
        if let next = mode["nextChange"]?.stringValue { text += on ? " until \(next)" : " (next change \(next))" }
        if let held = mode["heldTotal"]?.numberValue, held > 0 { text += ", \(Validation.seconds(held)) held" }
        return text
    }

    static func quoted(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\n", with: " ") + "\"" }

    /// Apple's system action identifiers as the CLI spells them (`chime respond … open|dismiss`).
    static func humanAction(_ action: String) -> String {
        switch action {
        case UNNotificationDefaultActionIdentifier: "open"
        case UNNotificationDismissActionIdentifier: "dismiss"
        default: action
        }
    }
}
