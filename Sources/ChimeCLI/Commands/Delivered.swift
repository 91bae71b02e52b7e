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
            typealias Field = JSONFieldName.Request
            for item in items {
                let actions =
                    item[Field.actions]?.arrayValue.compactMap { $0[JSONFieldName.Action.identifier]?.stringValue }
                    ?? []
                let dismiss = item[Field.dismissAt]?.stringValue.map { "  (dismissed at \($0))" } ?? ""
                let identifier = item[Field.identifier]?.stringValue ?? "?"
                let date = item[Field.date]?.stringValue ?? ""
                cli.write(
                    "\(identifier)  \(date)  \(headline(item))\(actions.isEmpty ? "" : "  actions: " + actions.joined(separator: ", "))\(dismiss)\(escalates(item))"
                )
            }
            return 0
        })
}
