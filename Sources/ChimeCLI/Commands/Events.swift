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
        typealias Field = JSONFieldName.Event
        typealias Request = JSONFieldName.Request
        typealias Response = JSONFieldName.Response
        let app = event[Field.app]?.stringValue ?? ""
        var words: [String]
        switch kind {
        case "delivered", "silentPush":
            let notification = event[Field.notification]
            words = [notification?[Request.identifier]?.stringValue ?? "?", quoted(headline(notification))]
            // A delivery's actions are its category's (the notification does not repeat them).
            if let actions = event[Field.category]?[JSONFieldName.Category.actions]?.arrayValue.compactMap({
                $0[JSONFieldName.Action.identifier]?.stringValue
            }),
                !actions.isEmpty
            {
                words.append("actions: " + actions.joined(separator: ", "))
            }
        case "realerted":
            // An escalating notification alerted again, unanswered: which, and which alert.
            let notification = event[Field.notification]
            words = [
                notification?[Request.identifier]?.stringValue ?? "?", quoted(headline(notification)),
                "alert \(event[Field.alert]?.numberValue.map { Validation.seconds($0) } ?? "?")",
            ]
        case "expired":
            let request = event[Field.request]
            words = [
                request?[Request.identifier]?.stringValue ?? "?",
                "due \(event[Field.dueDate]?.stringValue ?? "?"), not delivered after \(request?[Request.expirationDate]?.stringValue ?? "?")",
            ]
        case "response":
            let response = event[Field.response]
            let action = response?[Response.actionIdentifier]?.stringValue ?? "?"
            words = [
                response?[Response.notification]?[Request.identifier]?.stringValue ?? "?", "→", humanAction(action),
            ]
            if let text = response?[Response.userText]?.stringValue { words.append(quoted(text)) }
        case "removed":
            let identifiers = event[Field.identifiers]?.arrayValue.compactMap(\.stringValue) ?? []
            words = [
                "\(event[Field.scope]?.stringValue ?? "?"):",
                identifiers.isEmpty ? "(none)" : identifiers.joined(separator: ", "),
            ]
        case "scheduled":
            let identifiers = event[Field.identifiers]?.arrayValue.compactMap(\.stringValue) ?? []
            words = [identifiers.isEmpty ? "(more than 100 requests)" : identifiers.joined(separator: ", ")]
        case "settings":
            words = [
                "authorization: \(event[Field.settings]?[JSONFieldName.authorizationStatus]?.stringValue ?? "?")"
            ]
        case "categories":
            let names =
                event[Field.categories]?.arrayValue.compactMap { $0[JSONFieldName.Category.identifier]?.stringValue }
                ?? []
            words = [names.isEmpty ? "(none)" : names.joined(separator: ", ")]
        case "app":
            words = [event[Field.change]?.stringValue ?? "updated"]
        case "focus":
            // The owner's (no app): each mode, on or off, how and until when.
            let modes = event[Field.modes]?.arrayValue ?? []
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
