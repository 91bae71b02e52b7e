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

    /// One line for an event: its id (`-` for hints that are not logged), kind, app and what it is
    /// about. The event's `data:` is read as the Apple layer reads it (``EngineEvent/init(json:)``);
    /// one of a kind this version does not know is named by its kind and app alone, one the decoder
    /// refuses with why.
    ///
    /// ```swift
    /// CLI.describeEvent(kind: "scheduled", id: nil, event.json)  // "-  scheduled  com.a  a, b"
    /// ```
    package static func describeEvent(kind: String, id: String?, _ json: JSONValue) -> String {
        let app = json[JSONFieldName.Event.app]?.stringValue ?? ""
        let event: EngineEvent
        do throws(ChimeError) {
            guard let known = try EngineEvent(json: json) else {
                return [id ?? "-", kind, app].joined(separator: "  ")
            }
            event = known
        } catch {
            return [id ?? "-", kind, app, "(not readable: \(error.message))"].joined(separator: "  ")
        }
        var words: [String]
        switch event.payload {
        case .delivered(let delivery):
            words = [delivery.notification.request.identifier, quoted(headline(delivery.notification.request.content))]
            // A delivery's actions are its category's (the notification does not repeat them).
            if let actions = delivery.category?.actions.map(\.identifier), !actions.isEmpty {
                words.append("actions: " + actions.joined(separator: ", "))
            }
        case .silentPush(let notification):
            words = [notification.request.identifier, quoted(headline(notification.request.content))]
        case .realerted(let delivery):
            // An escalating notification alerted again, unanswered: which, and which alert.
            let request = delivery.notification.request
            words = [request.identifier, quoted(headline(request.content)), "alert \(delivery.alert)"]
        case .expired(let expired):
            var after = "?"
            if case .at(let date)? = expired.request.expiration { after = JSONMapping.formatDate(date) }
            words = [
                expired.request.identifier,
                "due \(JSONMapping.formatDate(expired.dueDate)), not delivered after \(after)",
            ]
        case .response(let response):
            words = [response.notification.request.identifier, "→", humanAction(response.actionIdentifier)]
            if let text = response.userText { words.append(quoted(text)) }
        case .removed(let identifiers, let scope, _):
            words = ["\(scope.rawValue):", identifiers.isEmpty ? "(none)" : identifiers.joined(separator: ", ")]
        case .scheduled(let identifiers, _):
            words = [identifiers.isEmpty ? "(more than 100 requests)" : identifiers.joined(separator: ", ")]
        case .settings(let settings):
            words = ["authorization: \(settings.authorizationStatus.name)"]
        case .categories(let categories):
            words = [categories.isEmpty ? "(none)" : categories.map(\.identifier).joined(separator: ", ")]
        case .app(let change, _):
            words = [change.rawValue]
        case .focus(let modes):
            // The owner's (no app): each mode, on or off, how and until when.
            words = modes.isEmpty ? ["(no focus modes)"] : modes.map(focusWords)
            return ([id ?? "-", kind] + words).joined(separator: "  ")
        case .quarantined:
            words = []
        }
        return ([id ?? "-", kind, app] + words).joined(separator: "  ")
    }

    /// "Sleep on by hand until 2027-06-01T05:00:00.000Z, 3 held", "Work off".
    static func focusWords(_ status: FocusStatus) -> String {
        var text = "\(status.mode.name) \(status.isActive ? "on" : "off")"
        if status.byHand { text += " by hand" }
        if let next = status.nextChange.map(JSONMapping.formatDate) {
            text += status.isActive ? " until \(next)" : " (next change \(next))"
        }
        let held = status.held.values.reduce(0, +)
        if held > 0 { text += ", \(held) held" }
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
