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
            for (index, item) in items.enumerated() {
                cli.write(try describePending(item, field: "[\(index)]"))
                let upcoming = try readAnswer("pending request") { () throws(ChimeError) in
                    try PendingRequest.upcomingDates(json: item, field: "[\(index)]")
                }
                for date in upcoming.dropFirst() { cli.write("    then \(JSONMapping.formatDate(date))") }
            }
            return 0
        })

    /// One line of `chime list` for an item of `GET /v1/apps/{app}/requests`, read as the Apple layer
    /// reads it (``PendingRequest/init(json:field:)``): its identifier, next fire date (`-` for
    /// none), trigger (its type, or a recurrence's rule), title, expiry, dismissal and escalation.
    ///
    /// ```swift
    /// CLI.describePending(item)  // "tea  2027-06-01T08:00:00.000Z  timeInterval  Tea  (expires …)"
    /// ```
    package static func describePending(_ item: JSONValue, field: String = "") throws -> String {
        let pending = try readAnswer("pending request") { () throws(ChimeError) in
            try PendingRequest(json: item, field: field)
        }
        let request = pending.request
        let next = pending.nextFireDate.map(JSONMapping.formatDate) ?? "-"
        var trigger = request.trigger?.kindName ?? "none"
        if case .recurrence(let schedule)? = request.trigger { trigger = schedule.rule.rruleString }
        var expires = ""
        if case .at(let date)? = request.expiration { expires = "  (expires \(JSONMapping.formatDate(date)))" }
        let dismiss =
            switch request.autoDismiss {
            case .after(let seconds)?: "  (dismissed \(Int(seconds)) s after delivery)"
            case .at(let date)?: "  (dismissed at \(JSONMapping.formatDate(date)))"
            case nil: ""
            }
        return
            "\(request.identifier)  \(next)  \(trigger)  \(request.content.title)\(expires)\(dismiss)\(escalates(request))"
    }
}
