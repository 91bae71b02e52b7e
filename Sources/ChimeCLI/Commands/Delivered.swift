import ChimeCore
import ChimeCrypto
import ChimeHTTP
import ChimeServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension CLI {
    static let delivered = Command(
        name: "delivered", summary: "list an app's delivered notifications, newest first",
        usage: "chime delivered [--app APP] [--thread THREAD] [--limit N] [--json]",
        examples: ["chime delivered", "chime delivered --thread chat-42 --json", "chime delivered --limit 10"],
        options: [
            .value("app", "the app (default: the only registered app)"), .value("thread", "only this thread"),
            .value("limit", "show at most N, newest first (default: all, read a page at a time)"),
        ],
        run: { arguments, cli in
            let client = try cli.client(arguments)
            let app = try await cli.app(arguments, client)
            let thread = query(arguments.value("thread").map { [("thread", $0)] } ?? [])
            let items = try await client.list(
                .listNotifications, ["app": app], query: thread, limit: try cli.listLimit(arguments))
            if arguments.has("json") {
                cli.printJSON(items)
                return 0
            }
            if items.isEmpty { cli.write("\(app): nothing delivered.") }
            for (index, item) in items.enumerated() {
                cli.write(try describeDelivered(item, field: "[\(index)]"))
            }
            return 0
        })

    /// One line of `chime delivered` for an item of `GET /v1/apps/{app}/notifications`, read as the
    /// Apple layer reads it (``DeliveredNotification/init(json:field:)``): its identifier, delivery
    /// date, headline, its category's actions (the item's `actions`), dismissal and escalation.
    ///
    /// ```swift
    /// CLI.describeDelivered(item)  // "n1  2027-06-01T08:00:00.000Z  Backup done  actions: ok"
    /// ```
    package static func describeDelivered(_ item: JSONValue, field: String = "") throws -> String {
        let (delivered, actions) = try readAnswer("delivered notification") { () throws(ChimeError) in
            (
                try DeliveredNotification(json: item, field: field),
                try DeliveredNotification.actions(json: item, field: field).map(\.identifier)
            )
        }
        let request = delivered.request
        var dismiss = ""
        if case .at(let date)? = request.autoDismiss { dismiss = "  (dismissed at \(JSONMapping.formatDate(date)))" }
        return
            "\(request.identifier)  \(JSONMapping.formatDate(delivered.date))  \(headline(request.content))\(actions.isEmpty ? "" : "  actions: " + actions.joined(separator: ", "))\(dismiss)\(escalates(request))"
    }
}
