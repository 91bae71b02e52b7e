import Foundation

/// Focus modes in JSON: the body of `PUT /v1/focus/{name}`, the answers of `GET /v1/focus`, and
/// the form the engine keeps them in (its key/value table).
///
/// ```json
/// {"name": "Sleep",
///  "schedule": {"from": "22:00", "to": "07:00", "days": ["mon", "tue", "wed", "thu", "fri"], "timeZone": "Europe/Berlin"},
///  "allowedApps": ["com.example.alarm"], "allowedThreads": [], "allowedFilterCriteria": ["family"]}
/// ```
extension FocusMode {
    /// The fields a client sends (`manual` is set by `POST /v1/focus/{name}/on|off`, not here).
    public static let fields = ["name", "schedule", "allowedApps", "allowedThreads", "allowedFilterCriteria"]
    static let scheduleFields = ["from", "to", "days", "timeZone"]

    /// A focus mode from a client's JSON. `name` is the route's: a body that names another is
    /// refused. Every field is checked; the error names the field and what is accepted.
    public init(json: JSONValue, name: String) throws(ChimeError) {
        try self.init(json: json, name: name, stored: false)
    }

    /// `stored`: the engine's own record, which also holds `manual`.
    init(json: JSONValue, name: String?, stored: Bool) throws(ChimeError) {
        let body = try JSONObjectReader(
            json, path: "", what: "a focus mode",
            accepted: stored ? Self.fields + ["manual"] : Self.fields)
        let given = try body.string("name")
        if let name, let given, given != name {
            throw ChimeError(
                .invalidValue, field: "name",
                "name \"\(given.prefix(80))\" is not the focus this route names (\"\(name.prefix(80))\"); leave it out or make them the same"
            )
        }
        guard let resolved = name ?? given else {
            throw ChimeError(.invalidValue, field: "name", "name is missing; expected the focus's name")
        }
        var schedule: FocusSchedule?
        if let value = body.value("schedule") {
            let reader = try JSONObjectReader(
                value, path: "schedule", what: "a focus schedule", accepted: Self.scheduleFields)
            let from = try reader.requiredString("from", hint: " as HH:MM, such as 22:00")
            let to = try reader.requiredString("to", hint: " as HH:MM, such as 07:00")
            let zone = try reader.requiredString("timeZone", hint: " naming an IANA time zone, such as Europe/Berlin")
            let days: Set<FocusDay>
            switch reader.value("days") {
            case nil: days = FocusDay.everyDay
            case .string(let text)?: days = try FocusDay.parseList(text, field: "schedule.days")
            case .array?:
                var parsed: Set<FocusDay> = []
                for (index, text) in (try reader.strings("days") ?? []).enumerated() {
                    guard let day = FocusDay.day(text) else {
                        throw ChimeError(
                            .invalidValue, field: "schedule.days[\(index)]",
                            "schedule.days[\(index)] \"\(text.prefix(40))\" is not a day; accepted: mon, tue, wed, thu, fri, sat, sun"
                        )
                    }
                    parsed.insert(day)
                }
                days = parsed
            case let other?:
                throw reader.typeError(
                    "days", expected: "an array of day names or a string such as \"mon-fri\"", found: other)
            }
            schedule = try FocusSchedule(from: from, to: to, days: days, timeZone: zone)
        }
        var manual: FocusOverride?
        if stored, let value = body.value("manual") {
            let reader = try JSONObjectReader(
                value, path: "manual", what: "a manual setting", accepted: ["on", "since"])
            let since = try reader.requiredString("since")
            guard let date = JSONMapping.parseDate(since) else {
                throw ChimeError(.invalidValue, field: "manual.since", "manual.since is not a date")
            }
            manual = FocusOverride(isOn: try reader.requiredBool("on"), since: date)
        }
        try self.init(
            name: resolved, schedule: schedule, allowedApps: try body.strings("allowedApps") ?? [],
            allowedThreads: try body.strings("allowedThreads") ?? [],
            allowedFilterCriteria: try body.strings("allowedFilterCriteria") ?? [], manual: manual)
    }

    /// The mode as JSON (with `manual` when it was turned on or off by hand).
    public var json: JSONValue {
        var object: JSONObject = ["name": .string(name)]
        if let schedule {
            object["schedule"] = [
                "from": .string(schedule.fromText), "to": .string(schedule.toText),
                "days": .array(schedule.days.sorted().map { .string($0.rawValue) }),
                "timeZone": .string(schedule.timeZone),
            ]
        } else {
            object["schedule"] = .null
        }
        object["allowedApps"] = .array(allowedApps.map { .string($0) })
        object["allowedThreads"] = .array(allowedThreads.map { .string($0) })
        object["allowedFilterCriteria"] = .array(allowedFilterCriteria.map { .string($0) })
        object["manual"] = manual.map { ["on": .bool($0.isOn), "since": JSONMapping.json($0.since)] } ?? .null
        return .object(object)
    }

    /// The engine's record of all its focus modes.
    static func stored(_ modes: [FocusMode]) -> String { JSONValue.array(modes.map(\.json)).serialized() }

    /// Reads the engine's record; a record that cannot be read holds no modes.
    static func stored(_ text: String?) -> [FocusMode] {
        guard let text, case .array(let items)? = try? JSONValue.parse(text) else { return [] }
        return items.compactMap { try? FocusMode(json: $0, name: nil, stored: true) }.sorted { $0.name < $1.name }
    }
}

extension FocusStatus {
    /// The mode's JSON with `active`, `byHand`, `nextChange` (or null), `held` (by app) and `heldTotal`.
    public var json: JSONValue {
        guard case .object(var object) = mode.json else { return mode.json }
        object["active"] = .bool(isActive)
        object["byHand"] = .bool(byHand)
        object["nextChange"] = nextChange.map(JSONMapping.json) ?? .null
        object["held"] = .object(
            JSONObject(held.sorted { $0.key < $1.key }.map { ($0.key, .integer(Int64($0.value))) }))
        object["heldTotal"] = .integer(Int64(held.values.reduce(0, +)))
        return .object(object)
    }

    /// A status as the service answers it.
    public init(json: JSONValue) throws(ChimeError) {
        let mode = try FocusMode(
            json: JSONMapping.keeping(FocusMode.fields + ["manual"], from: json), name: nil, stored: true)
        var held: [String: Int] = [:]
        if case .object(let counts)? = json["held"] {
            for (app, value) in counts { if case .integer(let n) = value { held[app] = Int(n) } }
        }
        var next: Date?
        if case .string(let text)? = json["nextChange"] { next = JSONMapping.parseDate(text) }
        self.init(
            mode: mode, isActive: json["active"] == .bool(true), nextChange: next, held: held,
            byHand: json["byHand"] == .bool(true))
    }
}

extension FocusDecision {
    /// `{"name": "Sleep", "quiet": true, "reason": "focus"}`.
    public var json: JSONValue { ["name": .string(focus), "quiet": .bool(quiet), "reason": .string(reason.rawValue)] }

    init?(json: JSONValue?) {
        guard case .string(let name)? = json?["name"], case .string(let reasonName)? = json?["reason"],
            let reason = Reason(rawValue: reasonName)
        else { return nil }
        self.init(focus: name, quiet: json?["quiet"] == .bool(true), reason: reason)
    }
}

/// What a focus has held in its current spell, kept in the store's key/value table under
/// `focus.session.NAME` until the spell's summary is delivered.
struct FocusSession: Sendable, Hashable {
    /// Notifications held, by app, in the order the apps were first held.
    var held: [(app: String, count: Int)] = []
    /// When the spell ends as last known (`nil`: when turned off by hand).
    var until: Date?

    static func key(_ name: String) -> String { "focus.session.\(name)" }

    static func == (lhs: FocusSession, rhs: FocusSession) -> Bool {
        lhs.until == rhs.until && lhs.held.elementsEqual(rhs.held) { $0.app == $1.app && $0.count == $1.count }
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(until)
        for entry in held {
            hasher.combine(entry.app)
            hasher.combine(entry.count)
        }
    }

    mutating func count(app: String) {
        if let index = held.firstIndex(where: { $0.app == app }) {
            held[index].count += 1
        } else {
            held.append((app, 1))
        }
    }

    var serialized: String {
        let object: JSONObject = [
            "until": until.map(JSONMapping.json) ?? .null,
            "held": .array(held.map { ["app": .string($0.app), "count": .integer(Int64($0.count))] }),
        ]
        return JSONValue.object(object).serialized()
    }

    init(until: Date?) { self.until = until }

    /// A stored session; one that cannot be read counts nothing.
    init(stored text: String) {
        guard let json = try? JSONValue.parse(text) else { return }
        if case .string(let date)? = json["until"] { until = JSONMapping.parseDate(date) }
        if case .array(let items)? = json["held"] {
            for item in items {
                if case .string(let app)? = item["app"], case .integer(let count)? = item["count"] {
                    held.append((app, Int(count)))
                }
            }
        }
    }

    var dictionary: [String: Int] { Dictionary(held.map { ($0.app, $0.count) }, uniquingKeysWith: +) }
}
