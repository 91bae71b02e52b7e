import ChimeCore
import Foundation

extension CLI {
    // MARK: summary

    /// `chime summary`: apps' scheduled summaries (iOS 15's), on the service.
    static let summary = Command(
        name: "summary",
        summary:
            "scheduled summaries: an app's notifications held quietly and delivered as one summary at the times you pick",
        usage:
            "chime summary [list] | chime summary set APP --at HH:MM [--at HH:MM]… [--time-zone ZONE] | chime summary show|remove APP",
        examples: [
            "chime summary set com.example.news --at 08:00 --at 18:00 --time-zone Europe/Berlin",
            "chime summary show com.example.news", "chime summary list --json", "chime summary remove com.example.news",
        ],
        options: [
            .value("at", "set: a time of day for the summary, HH:MM (24-hour; repeatable, 1 to 12)", repeatable: true),
            .value("time-zone", "set: the IANA time zone of the times, as Europe/Berlin (default: this machine's)"),
        ],
        notes: [
            "While an app is in a summary its passive and active notifications are in the list but make no banner, sound, desktop pop-up or push; time-sensitive and critical ones come at once. At each time, one summary lists the best three by relevanceScore and counts the rest (\"6 more notifications from Alice and Bob\", by summaryArgument and summaryArgumentCount).",
            "set replaces the app's times; remove delivers what it held at once.",
        ],
        run: { arguments, cli in
            let (action, app) = try listOrOne(
                arguments, command: "summary", actions: ["list", "set", "show", "remove"],
                operand: "the app's bundle identifier: chime summary ACTION APP", flagsOf: "set", ["at", "time-zone"])
            let client = try cli.client(arguments)
            let status: JSONValue?
            switch action {
            case "list":
                let response = try await client.send(.listSummaries)
                guard case .array(let summaries)? = response.json else {
                    throw CommandError("the service answered without a list of summaries")
                }
                if arguments.has("json") {
                    cli.printJSON(summaries)
                    return 0
                }
                if summaries.isEmpty {
                    cli.write(
                        "No app is in a scheduled summary. Put one in: chime summary set APP --at 08:00 --at 18:00")
                }
                for summary in summaries { cli.write(try describeSummary(summary)) }
                return 0
            case "set":
                status = try await client.send(.putSummary, ["app": app], json: try summaryBody(arguments)).json
            case "show":
                status = try await client.send(.getSummary, ["app": app]).json
            default:
                try await client.send(.removeSummary, ["app": app])
                if arguments.has("json") {
                    cli.printJSON([JSONFieldName.removed: .string(app)])
                    return 0
                }
                cli.write("\(app) is out of its scheduled summary; what it held is delivered now.")
                return 0
            }
            if arguments.has("json") {
                cli.printJSON(status ?? .null)
                return 0
            }
            cli.write(try status.map(describeSummary) ?? "Done.")
            return 0
        })

    /// `PUT /v1/apps/{app}/summary`'s body from `chime summary set`'s flags, checked before sending.
    static func summaryBody(_ arguments: ParsedArguments) throws -> JSONValue {
        let times = arguments.all("at")
        guard !times.isEmpty else { throw UsageError("give at least one --at HH:MM, such as --at 08:00 --at 18:00") }
        let zone = arguments.value("time-zone") ?? TimeZone.current.identifier
        do throws(ChimeError) {
            return try ScheduledSummary(times: times, timeZone: zone).json
        } catch {
            // The refusal names the flag instead of the field: "--at \"25:00\" is not a time of day; …".
            let flag = error.field == "timeZone" ? "--time-zone" : "--at"
            var message = error.message
            if let field = error.field, message.hasPrefix(field) { message = flag + message.dropFirst(field.count) }
            throw UsageError(message)
        }
    }

    /// "com.example.news: 08:00, 18:00 Europe/Berlin; next 2027-06-07T16:00:00.000Z, 3 held": the
    /// service's status read as the Apple layer reads it (``ScheduledSummaryStatus/init(json:)``).
    static func describeSummary(_ json: JSONValue) throws -> String {
        let status: ScheduledSummaryStatus
        do throws(ChimeError) { status = try ScheduledSummaryStatus(json: json) } catch {
            throw CommandError("the service's scheduled summary is not readable: \(error.message)")
        }
        let summary = status.summary
        var text = "\(status.app): \(summary.timeTexts.joined(separator: ", ")) \(summary.timeZone)"
        if let next = status.nextDelivery { text += "; next \(JSONMapping.formatDate(next))" }
        return text + ", \(status.held) held"
    }
}
