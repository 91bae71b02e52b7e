import ChimeCore
import ChimeCrypto
import ChimeHTTP
import ChimeServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension CLI {
    // MARK: respond, push

    static let respond = Command(
        name: "respond", summary: "answer a delivered notification as the user (an action, a reply, open or dismiss)",
        usage: "chime respond [--app APP] NOTIFICATION_ID ACTION [--text TEXT]",
        examples: [
            "chime respond Alarm snooze", "chime respond Alarm comment --text 'Call me'", "chime respond Alarm open",
            "chime respond Alarm dismiss",
        ],
        options: [
            .value("app", "the app (default: the only registered app)"),
            .value("text", "the typed reply, for a text-input action"),
        ],
        run: { arguments, cli in
            guard arguments.positionals.count == 2 else {
                throw UsageError("give the notification's identifier and the action")
            }
            let (identifier, given) = (arguments.positionals[0], arguments.positionals[1])
            let action =
                given == "open"
                ? UNNotificationDefaultActionIdentifier
                : given == "dismiss" ? UNNotificationDismissActionIdentifier : given
            typealias Field = JSONFieldName.Response
            var body: JSONObject = [Field.actionIdentifier: .string(action), Field.surface: "cli"]
            if let text = arguments.value("text") { body[Field.userText] = .string(text) }
            let client = try cli.client(arguments)
            let app = try await cli.app(arguments, client)
            let response = try await client.send(.respond, ["app": app, "identifier": identifier], json: .object(body))
            if arguments.has("json") {
                cli.printJSON(response)
                return 0
            }
            // 204: a dismissal the app does not hear of (its category has no customDismissAction).
            guard response.status != 204 else {
                cli.write(
                    "Answered \(identifier) with \(given); its category has no customDismissAction, so the app is not told."
                )
                return 0
            }
            // 201: the response the service recorded, read as the Apple layer reads its outbox.
            let answer = response.json ?? .null
            let recorded = try readAnswer("response") { () throws(ChimeError) in
                try NotificationResponse(json: answer)
            }
            let text = recorded.userText.map { ", \"\($0)\"" } ?? ""
            cli.write(
                "Answered \(identifier) with \(given); the app finds response \(recorded.id) "
                    + "(\(recorded.actionIdentifier)\(text)) in its outbox.")
            return 0
        })
}
