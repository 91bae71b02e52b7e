import ChimeCore
import ChimeCrypto
import ChimeHTTP
import ChimeServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The names of a request's own fields and of its content's, as `chime add` writes them.
private typealias Field = JSONFieldName.Request
private typealias Content = JSONFieldName.Content

extension CLI {
    // MARK: add

    static let add = Command(
        name: "add", summary: "schedule a notification",
        usage:
            "chime add [--app APP] [--id ID] --title TEXT [--body TEXT] [--in 10m | --at 2026-12-01T08:30 | --every 1h | --calendar 'weekday=2 hour=8 minute=30' | --rrule RULE --start 2027-01-29T09:00 [--time-zone ZONE] [--except DATE ...] | --location LAT,LON,RADIUS] [--expires-in 10m | --expires-at 2026-12-01T09:00] [--dismiss-in 10m | --dismiss-at 2026-12-01T09:00] [--escalate every=60s,for=30m]",
        examples: [
            "chime add --app com.example.alarm --title Alarm --in 10s --category alarm.category",
            "chime add --title 'Stand up' --every 1h",
            "chime add --title 'Weekly review' --calendar 'weekday=2 hour=8 minute=30 timeZone=Europe/Berlin'",
            "chime add --title 'Buy milk' --location 52.52,13.40,100 --id milk",
            "chime add --title 'Team review' --rrule 'FREQ=MONTHLY;BYDAY=-1FR' --start 2027-01-29T09:00 --time-zone Europe/Berlin",
            "chime add --title Report --at 2026-12-01T08:30 --user-info '{\"report\": 42}'",
            "chime add --title 'Your ride is here' --in 5m --expires-in 10m",
            "chime add --title 'Bus 42 in 3 minutes' --dismiss-in 5m",
            "chime add --title 'Wake up' --at 2026-12-01T07:00 --sound default --escalate every=60s,for=30m",
        ],
        options: [
            .value("app", "the app (default: the only registered app)"),
            .value("id", "the request identifier (default: a new UUID)"),
            .value("title", "the title"), .value("subtitle", "the subtitle"), .value("body", "the body"),
            .value("category", "the category identifier"), .value("thread", "the thread identifier, for grouping"),
            .value("user-info", "a JSON object of extra data"), .value("sound", "default, or a sound file name"),
            .value("badge", "the app badge to set (0 clears)"),
            .value("in", "fire once after a duration: 90s, 10m, 1h30m"),
            .value("at", "fire once at a local date and time, 2026-12-01T08:30"),
            .value("every", "fire repeatedly at an interval of at least 60 s: 1h"),
            .value(
                "calendar",
                "fire every time these components match: 'weekday=2 hour=8 minute=30 [timeZone=Europe/Berlin]'"),
            .flag("once", "with --calendar: fire at the next match only"),
            .value(
                "rrule",
                "fire at each occurrence of an RFC 5545 rule: 'FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;UNTIL=20271231T230000Z'"
            ),
            .value("start", "with --rrule: the first occurrence's wall time (DTSTART), 2027-01-29T09:00"),
            .value("time-zone", "with --rrule: the rule's time zone, Europe/Berlin (default: this machine's)"),
            .value(
                "except", "with --rrule: a wall time that does not occur (EXDATE), 2027-03-26T09:00", repeatable: true),
            .value("location", "fire on entering a circle: LAT,LON,RADIUS (metres)"),
            .flag("on-exit", "with --location: fire on leaving instead"),
            .value("expires-in", "not delivered if due later than this after the add (an expired event instead): 10m"),
            .value(
                "expires-at",
                "not delivered if due after this local date and time (or an ISO 8601 date with its offset): 2026-12-01T09:00"
            ),
            .value("dismiss-in", "removed from the delivered list this long after each delivery (auto-dismiss): 10m"),
            .value(
                "dismiss-at",
                "removed from the delivered list at this local date and time (or an ISO 8601 date with its offset): 2026-12-01T09:00"
            ),
            .value("escalate", "alerted again until answered or removed: every=60s,for=30m (see chime receipt)"),
        ],
        run: { arguments, cli in
            guard arguments.positionals.isEmpty else {
                throw UsageError("unexpected '\(arguments.positionals[0])'; text goes in --title/--body (quote it)")
            }
            var request = JSONObject()
            request[Field.identifier] = .string(arguments.value("id") ?? UUID().uuidString)
            for (option, field) in addTextFields {
                if let value = arguments.value(option) { request[field] = .string(value) }
            }
            if let badge = arguments.value("badge") {
                guard let number = Int64(badge) else {
                    throw UsageError("--badge is '\(badge)'; give a whole number, 0 or more")
                }
                request[Content.badge] = .integer(number)
            }
            if let info = arguments.value("user-info") {
                guard let parsed = try? JSONValue.parse(info), case .object = parsed else {
                    throw UsageError("--user-info must be a JSON object, e.g. '{\"task\": 42}'")
                }
                request[Content.userInfo] = parsed
            }
            request[Field.trigger] = try trigger(arguments)
            try expiration(arguments, into: &request)
            try autoDismiss(arguments, into: &request)
            try escalation(arguments, into: &request)
            try checkedRequest(request, arguments)
            let client = try cli.client(arguments)
            let app = try await cli.app(arguments, client)
            let response = try await client.send(.addRequests, ["app": app], json: .object(request))
            if arguments.has("json") {
                cli.printJSON(response)
                return 0
            }
            let added = response.json?.arrayValue.first ?? response.json
            let when =
                added?[Field.nextTriggerDate]?.stringValue.map { "fires \($0)" }
                ?? (request[Field.trigger] == .null ? "delivered now" : "waits for its trigger")
            cli.write("Added \(request[Field.identifier]?.stringValue ?? "?") to \(app): \(when).")
            return 0
        })

    /// `chime add`'s text options and the request fields they set.
    static let addTextFields = [
        ("title", Content.title), ("subtitle", Content.subtitle), ("body", Content.body),
        ("category", Content.categoryIdentifier), ("thread", Content.threadIdentifier), ("sound", Content.sound),
    ]

    /// Reads `request` with the service's own JSON mapping and checks it with the engine's
    /// `Validation` (the rules live there alone), so a mistake is refused before anything is sent,
    /// in the words of the flags: `--every is 30.0 with repeats; …`.
    static func checkedRequest(_ request: JSONObject, _ arguments: ParsedArguments) throws {
        do {
            // The service holds an escalation to its own limits; here only to what any service accepts.
            try Validation.validate(
                try NotificationRequest(json: .object(request)),
                escalationLimits: EscalationLimits(minimumInterval: 0, maximumDuration: Validation.maxDeadlineSeconds))
        } catch {
            guard let field = error.field else { throw UsageError(error.message) }
            let flag = flagName(field, arguments)
            var message = error.message
            if let range = message.range(of: field) {
                message.replaceSubrange(range, with: flag)
            } else if field.hasPrefix("trigger.") {
                message = "\(flag): \(message)"
            }
            throw UsageError(message)
        }
    }

    /// The `chime add` flag a request field comes from.
    static func flagName(_ field: String, _ arguments: ParsedArguments) -> String {
        let nested = Field.content + "."
        let name = field.hasPrefix(nested) ? String(field.dropFirst(nested.count)) : field
        let flags = Dictionary(
            uniqueKeysWithValues: (addTextFields + [
                ("id", Field.identifier), ("badge", Content.badge), ("user-info", Content.userInfo),
                ("expires-in", Field.expiresIn), ("expires-at", Field.expirationDate),
                ("dismiss-in", Field.dismissIn), ("dismiss-at", Field.dismissAt),
                ("escalate", Field.escalateEvery), ("escalate", Field.escalateFor),
            ])
            .map { option, field in (field, "--" + option) })
        if let flag = flags[name.split(separator: ".").first.map(String.init) ?? name] { return flag }
        if name.hasPrefix(Field.trigger) {
            typealias Trigger = JSONFieldName.Trigger
            let member = { (key: String) in Field.trigger + "." + key }
            if name.hasPrefix(member(Trigger.start)) { return "--start" }
            if name.hasPrefix(member(Trigger.timeZone)) { return "--time-zone" }
            if name.hasPrefix(member(Trigger.exceptionDates)) { return "--except" }
            let rule = member(Trigger.rrule) + "."
            if name.hasPrefix(rule) { return "--rrule " + name.dropFirst(rule.count) }
            let given = ["in", "at", "every", "calendar", "rrule", "location"].first { arguments.value($0) != nil }
            return given.map { "--\($0)" } ?? "the trigger"
        }
        return name.isEmpty ? "the notification" : name
    }

    /// The trigger JSON for `chime add`'s trigger options (at most one).
    static func trigger(_ arguments: ParsedArguments) throws -> JSONValue {
        let given = ["in", "at", "every", "calendar", "rrule", "location"].filter { arguments.value($0) != nil }
        guard given.count <= 1 else {
            throw UsageError("give one trigger, not \(given.map { "--\($0)" }.joined(separator: " and "))")
        }
        if arguments.value("rrule") == nil,
            let stray = ["start", "time-zone", "except"].first(where: { arguments.value($0) != nil })
        {
            throw UsageError("--\(stray) goes with --rrule RULE")
        }
        if let rule = arguments.value("rrule") {
            guard let start = arguments.value("start") else {
                throw UsageError(
                    "--rrule needs --start: the first occurrence's wall time, e.g. --start 2027-01-29T09:00")
            }
            typealias Trigger = JSONFieldName.Trigger
            var trigger: JSONObject = [
                Trigger.type: .string(Trigger.Kind.recurrence), Trigger.rrule: .string(rule),
                Trigger.start: .string(start),
                Trigger.timeZone: .string(arguments.value("time-zone") ?? TimeZone.current.identifier),
            ]
            let exceptions = arguments.all("except")
            if !exceptions.isEmpty { trigger[Trigger.exceptionDates] = .array(exceptions.map(JSONValue.string)) }
            return .object(trigger)
        }
        if let text = arguments.value("in") {
            let seconds = try parseDuration(text)
            return NotificationTrigger.timeInterval(seconds, repeats: false).json
        }
        if let text = arguments.value("every") {
            let seconds = try parseDuration(text)
            return NotificationTrigger.timeInterval(seconds, repeats: true).json
        }
        if let text = arguments.value("at") {
            guard let date = localDate(text) else {
                throw UsageError("--at is '\(text)'; write a local date and time like 2026-12-01T08:30")
            }
            let parts = Calendar.current.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            var components = JSONObject()
            for (name, value) in [
                ("year", parts.year), ("month", parts.month), ("day", parts.day), ("hour", parts.hour),
                ("minute", parts.minute), ("second", parts.second),
            ] {
                if let value { components[name] = .integer(Int64(value)) }
            }
            components[JSONFieldName.Trigger.timeZone] = .string(TimeZone.current.identifier)
            return NotificationTrigger.calendarJSON(.object(components), repeats: false)
        }
        if let text = arguments.value("calendar") {
            var components = JSONObject()
            for pair in text.split(whereSeparator: { $0 == " " || $0 == "," }) {
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2 else {
                    throw UsageError("--calendar: '\(pair)' is not NAME=VALUE; e.g. 'weekday=2 hour=8 minute=30'")
                }
                if parts[0] == JSONFieldName.Trigger.timeZone {
                    components[JSONFieldName.Trigger.timeZone] = .string(parts[1])
                    continue
                }
                if parts[0] == "weekday" {
                    components["weekday"] = .integer(Int64(try weekday(parts[1])))
                    continue
                }
                guard let number = Int64(parts[1]) else {
                    throw UsageError("--calendar: \(parts[0]) is '\(parts[1])'; give a whole number")
                }
                components[parts[0]] = .integer(number)
            }
            return NotificationTrigger.calendarJSON(.object(components), repeats: !arguments.has("once"))
        }
        if let text = arguments.value("location") {
            let numbers = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard numbers.count == 3, let latitude = numbers[0], let longitude = numbers[1], let radius = numbers[2]
            else {
                throw UsageError("--location is '\(text)'; write LAT,LON,RADIUS, e.g. 52.52,13.40,100")
            }
            let exit = arguments.has("on-exit")
            let region = CircularRegion(
                identifier: arguments.value("id") ?? "region",
                center: Coordinate(latitude: latitude, longitude: longitude),
                radius: radius, notifyOnEntry: !exit, notifyOnExit: exit)
            return NotificationTrigger.location(region, repeats: false).json
        }
        return .null
    }

    /// A local date and time as people write it (2026-12-01T08:30, with seconds, with a space, or a
    /// day alone), in this machine's time zone.
    static func localDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        for format in ["yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd HH:mm", "yyyy-MM-dd"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }

    /// `--expires-in` (a duration) or `--expires-at` (a local date and time, or an ISO 8601 date
    /// with its offset) as the request's `expiresIn` or `expirationDate`.
    static func expiration(_ arguments: ParsedArguments, into request: inout JSONObject) throws {
        try deadline(
            arguments, flags: ("expires-in", "expires-at"), fields: (Field.expiresIn, Field.expirationDate),
            into: &request)
    }

    /// `--dismiss-in` (a duration after each delivery) or `--dismiss-at` (as `--expires-at`) as
    /// the request's `dismissIn` or `dismissAt`.
    static func autoDismiss(_ arguments: ParsedArguments, into request: inout JSONObject) throws {
        try deadline(
            arguments, flags: ("dismiss-in", "dismiss-at"), fields: (Field.dismissIn, Field.dismissAt), into: &request)
    }

    /// `--escalate every=60s,for=30m` as the request's `escalateEvery` and `escalateFor` (seconds).
    static func escalation(_ arguments: ParsedArguments, into request: inout JSONObject) throws {
        guard let text = arguments.value("escalate") else { return }
        let usage =
            "write --escalate every=60s,for=30m (how often it is alerted again, and for how long after the delivery)"
        var given: [String: TimeInterval] = [:]
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, ["every", "for"].contains(pair[0]), given[pair[0]] == nil else {
                throw UsageError("--escalate is '\(text)': '\(part)' is not every=DURATION or for=DURATION; \(usage)")
            }
            do { given[pair[0]] = try parseDuration(pair[1]) } catch {
                throw UsageError("--escalate \(pair[0]): \(error.message)")
            }
        }
        guard let every = given["every"], let duration = given["for"] else {
            throw UsageError("--escalate is '\(text)': it needs both every= and for=; \(usage)")
        }
        request[Field.escalateEvery] = .number(every)
        request[Field.escalateFor] = .number(duration)
    }

    private static func deadline(
        _ arguments: ParsedArguments, flags: (duration: String, date: String), fields: (duration: String, date: String),
        into request: inout JSONObject
    ) throws {
        switch (arguments.value(flags.duration), arguments.value(flags.date)) {
        case (nil, nil): return
        case (_?, _?): throw UsageError("give --\(flags.duration) or --\(flags.date), not both")
        case (let text?, nil):
            do { request[fields.duration] = .number(try parseDuration(text)) } catch {
                throw UsageError("--\(flags.duration): \(error.message)")
            }
        case (nil, let text?):
            guard let date = JSONMapping.parseDate(text) ?? localDate(text) else {
                throw UsageError(
                    "--\(flags.date) is '\(text)'; write a local date and time like 2026-12-01T09:00, or 2026-12-01T09:00:00+01:00"
                )
            }
            request[fields.date] = JSONMapping.json(date)
        }
    }

    /// A weekday as Apple numbers them (1 = Sunday … 7 = Saturday), from a number or an English name.
    package static func weekday(_ text: String) throws(UsageError) -> Int {
        let names = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
        if let number = Int(text) {
            guard (1...7).contains(number) else {
                throw UsageError(
                    "--calendar: weekday=\(text); weekdays are 1 to 7, with 1 = Sunday, 2 = Monday … 7 = Saturday (or write mon, tue, …)"
                )
            }
            return number
        }
        let lower = text.lowercased()
        if lower.count >= 3, let index = names.firstIndex(where: { $0.hasPrefix(lower) }) { return index + 1 }
        throw UsageError(
            "--calendar: weekday=\(text) is not a weekday; write a name (mon, tuesday, …) or 1 to 7, with 1 = Sunday")
    }
}
