import ChimeCore
import ChimeCrypto
import ChimeHTTP
import ChimeServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension CLI {
    // MARK: list, remove, delivered

    static let list = Command(
        name: "list", summary: "list an app's pending requests with their next fire dates",
        usage: "chime list [--app APP] [--limit N] [--next N] [--json]",
        examples: [
            "chime list --app com.example.alarm", "chime list --json", "chime list --limit 20",
            "chime list --json --next 5",
        ],
        options: [
            .value("app", "the app (default: the only registered app)"),
            .value("limit", "show at most N (default: all, read a page at a time)"),
            .value(
                "next", "list each request's next N fire dates (nextTriggerDates; 1 to \(FireDates.maximumUpcoming))"),
        ],
        run: { arguments, cli in
            var query = ""
            if let text = arguments.value("next") {
                guard let count = Int(text), (1...FireDates.maximumUpcoming).contains(count) else {
                    throw UsageError(
                        "--next is '\(text)'; give how many upcoming dates to list, 1 to \(FireDates.maximumUpcoming)")
                }
                query = CLI.query([("next", String(count))])
            }
            let client = try cli.client(arguments)
            let app = try await cli.app(arguments, client)
            let items = try await client.list(
                .listRequests, ["app": app], query: query, limit: try cli.listLimit(arguments))
            if arguments.has("json") {
                cli.printJSON(items)
                return 0
            }
            if items.isEmpty { cli.write("\(app): nothing pending.") }
            typealias Field = JSONFieldName.Request
            typealias Trigger = JSONFieldName.Trigger
            for item in items {
                var trigger = item[Field.trigger]?[Trigger.type]?.stringValue ?? "none"
                if trigger == Trigger.Kind.recurrence, let rule = item[Field.trigger]?[Trigger.rrule]?.stringValue {
                    trigger = rule
                }
                let expires = item[Field.expirationDate]?.stringValue.map { "  (expires \($0))" } ?? ""
                let dismiss =
                    item[Field.dismissIn]?.numberValue.map { "  (dismissed \(Int($0)) s after delivery)" }
                    ?? item[Field.dismissAt]?.stringValue.map { "  (dismissed at \($0))" } ?? ""
                let identifier = item[Field.identifier]?.stringValue ?? "?"
                let next = item[Field.nextTriggerDate]?.stringValue ?? "-"
                let title = item[JSONFieldName.Content.title]?.stringValue ?? ""
                cli.write("\(identifier)  \(next)  \(trigger)  \(title)\(expires)\(dismiss)\(escalates(item))")
                for date in item[Field.nextTriggerDates]?.arrayValue.dropFirst() ?? [] {
                    cli.write("    then \(date.stringValue ?? "?")")
                }
            }
            return 0
        })
}
