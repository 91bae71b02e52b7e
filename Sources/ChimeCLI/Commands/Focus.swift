import ChimeCore
import Foundation

extension CLI {
    // MARK: focus

    /// `chime focus`: the owner's focus modes (quiet hours; Chime's addition), on the service.
    static let focus = Command(
        name: "focus",
        summary:
            "focus modes (quiet hours): notifications are delivered quietly while one is on, with a summary when it ends",
        usage:
            "chime focus [list] | chime focus add NAME [--from HH:MM --to HH:MM [--days DAYS] --time-zone ZONE] [--allow-app APP]… [--allow-thread ID]… [--allow-filter VALUE]… | chime focus on|off|remove|show NAME",
        examples: [
            "chime focus add Sleep --from 22:00 --to 07:00 --days mon-fri --time-zone Europe/Berlin",
            "chime focus add Sleep --from 22:00 --to 07:00 --time-zone Europe/Berlin --allow-app com.example.alarm --allow-thread family",
            "chime focus add Work --allow-filter work     # on only by hand", "chime focus on Work",
            "chime focus off Sleep",
            "chime focus list", "chime focus list --json", "chime focus remove Work",
        ],
        options: [
            .value("from", "add: when it starts, HH:MM (24-hour)"),
            .value("to", "add: when it ends, HH:MM (before --from: the next day)"),
            .value("days", "add: the days it starts on: mon-fri, sat,sun, daily, weekdays, weekends (default daily)"),
            .value(
                "time-zone", "add: the IANA time zone of --from and --to, as Europe/Berlin (default: this machine's)"),
            .value("allow-app", "add: an app whose notifications it lets through (repeatable)", repeatable: true),
            .value("allow-thread", "add: a thread (threadIdentifier) it lets through (repeatable)", repeatable: true),
            .value("allow-filter", "add: a filterCriteria value it lets through (repeatable)", repeatable: true),
        ],
        notes: [
            "While a focus is on, notifications are in the list but make no banner, sound, desktop pop-up or push; time-sensitive and critical ones, and allowed apps, threads and filterCriteria, come through. When it ends, each app gets one summary (\"12 notifications during Sleep\").",
            "on and off hold until the schedule's next start or end; then the schedule decides again. add replaces a focus of the same name.",
        ],
        run: { arguments, cli in
            let (action, name) = try listOrOne(
                arguments, command: "focus", actions: ["list", "add", "on", "off", "remove", "show"],
                operand: "the focus's name: chime focus ACTION NAME",
                flagsOf: "add", ["from", "to", "days", "time-zone", "allow-app", "allow-thread", "allow-filter"])
            let client = try cli.client(arguments)
            let status: JSONValue?
            switch action {
            case "list":
                let response = try await client.send(.listFocus)
                guard case .array(let modes)? = response.json else {
                    throw CommandError("the service answered without a list of focus modes")
                }
                if arguments.has("json") {
                    cli.printJSON(modes)
                    return 0
                }
                if modes.isEmpty {
                    cli.write(
                        "No focus modes. Add one: chime focus add Sleep --from 22:00 --to 07:00 --time-zone Europe/Berlin"
                    )
                }
                for mode in modes { cli.write(try describeFocus(mode)) }
                return 0
            case "add":
                status = try await client.send(.putFocus, ["name": name], json: try focusBody(arguments)).json
            case "on", "off":
                status = try await client.send(action == "on" ? .focusOn : .focusOff, ["name": name]).json
            case "show":
                status = try await client.send(.getFocus, ["name": name]).json
            default:
                try await client.send(.removeFocus, ["name": name])
                if arguments.has("json") {
                    cli.printJSON([JSONFieldName.removed: .string(name)])
                    return 0
                }
                cli.write("Removed \(name); what it held is summarized now.")
                return 0
            }
            if arguments.has("json") {
                cli.printJSON(status ?? .null)
                return 0
            }
            cli.write(try status.map(describeFocus) ?? "Done.")
            return 0
        })

    /// The action of `chime COMMAND [ACTION [OPERAND]]` (`list`, the default, takes no operand; every
    /// other action exactly one) and its operand, checked: an unknown action is refused with a
    /// did-you-mean, and `flags` are refused with any action but `flagsOf`.
    static func listOrOne(
        _ arguments: ParsedArguments, command: String, actions: [String], operand: String,
        flagsOf: String, _ flags: [String]
    ) throws -> (action: String, operand: String) {
        let action = arguments.positionals.first ?? "list"
        guard actions.contains(action) else {
            let suggestion = ParsedArguments.closest(action, among: actions).map { "; did you mean '\($0)'?" } ?? ""
            throw UsageError("unknown action '\(action)'\(suggestion)")
        }
        if action == "list" {
            guard arguments.positionals.count <= 1 else { throw UsageError("chime \(command) list takes no arguments") }
        } else {
            guard arguments.positionals.count == 2 else {
                throw UsageError("give \(operand.replacingOccurrences(of: "ACTION", with: action))")
            }
        }
        if action != flagsOf {
            for flag in flags where !arguments.all(flag).isEmpty {
                throw UsageError("--\(flag) is for chime \(command) \(flagsOf)")
            }
        }
        return (action, arguments.positionals.count > 1 ? arguments.positionals[1] : "")
    }

    /// `PUT /v1/focus/{name}`'s body from `chime focus add`'s flags, checked before sending.
    static func focusBody(_ arguments: ParsedArguments) throws -> JSONValue {
        typealias Field = JSONFieldName.Focus
        var body: JSONObject = [:]
        let from = arguments.value("from")
        let to = arguments.value("to")
        if from != nil || to != nil {
            guard let from, let to else {
                throw UsageError("give both --from and --to (HH:MM), or neither for a focus turned on only by hand")
            }
            let zone = arguments.value("time-zone") ?? TimeZone.current.identifier
            let days: Set<FocusDay>
            do throws(ChimeError) {
                days =
                    try arguments.value("days").map { text throws(ChimeError) in
                        try FocusDay.parseList(text, field: "--days")
                    } ?? FocusDay.everyDay
                _ = try FocusSchedule(from: from, to: to, days: days, timeZone: zone)
            } catch {
                throw UsageError(
                    error.message.replacingOccurrences(of: "schedule.timeZone", with: "--time-zone")
                        .replacingOccurrences(of: "schedule.from", with: "--from").replacingOccurrences(
                            of: "schedule.to", with: "--to"
                        )
                        .replacingOccurrences(of: "schedule.days", with: "--days"))
            }
            body[Field.schedule] = [
                Field.from: .string(from), Field.to: .string(to),
                Field.days: .array(days.sorted().map { .string($0.rawValue) }), Field.timeZone: .string(zone),
            ]
        } else {
            for flag in ["days", "time-zone"] where arguments.value(flag) != nil {
                throw UsageError("--\(flag) goes with --from and --to")
            }
        }
        body[Field.allowedApps] = .array(arguments.all("allow-app").map(JSONValue.string))
        body[Field.allowedThreads] = .array(arguments.all("allow-thread").map(JSONValue.string))
        body[Field.allowedFilterCriteria] = .array(arguments.all("allow-filter").map(JSONValue.string))
        return .object(body)
    }

    /// "Sleep: on until 2027-06-08T05:00:00.000Z, 3 held; 22:00-07:00 mon,tue,wed,thu,fri Europe/Berlin;
    /// allows apps com.example.alarm": the service's status read as the Apple layer reads it
    /// (``FocusStatus/init(json:)``).
    static func describeFocus(_ json: JSONValue) throws -> String {
        let status: FocusStatus
        do throws(ChimeError) { status = try FocusStatus(json: json) } catch {
            throw CommandError("the service's focus mode is not readable: \(error.message)")
        }
        let mode = status.mode
        let next = status.nextChange.map(JSONMapping.formatDate)
        var state =
            status.isActive
            ? "on" + (next.map { " until \($0)" } ?? "") : "off" + (next.map { " (next change \($0))" } ?? "")
        let held = status.held.values.reduce(0, +)
        if held > 0 { state += ", \(held) held" }
        if let manual = mode.manual { state += manual.isOn ? ", turned on by hand" : ", turned off by hand" }
        var parts = ["\(mode.name): \(state)"]
        if let schedule = mode.schedule {
            let days = schedule.days.sorted().map(\.rawValue)
            let dayText = days.count == 7 ? "daily" : days.joined(separator: ",")
            parts.append("\(schedule.fromText)-\(schedule.toText) \(dayText) \(schedule.timeZone)")
        } else {
            parts.append("no schedule (by hand)")
        }
        for (values, label) in [
            (mode.allowedApps, "apps"), (mode.allowedThreads, "threads"),
            (mode.allowedFilterCriteria, "filterCriteria"),
        ] where !values.isEmpty {
            parts.append("allows \(label) \(values.joined(separator: ", "))")
        }
        return parts.joined(separator: "; ")
    }
}
