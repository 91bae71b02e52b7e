import Foundation

private typealias Field = JSONFieldName.Focus

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
    public static let fields = JSONFieldName.Focus.given
    static let scheduleFields = JSONFieldName.Focus.scheduleFields

    /// A focus mode from a client's JSON. `name` is the route's: a body that names another is
    /// refused. Every field is checked; the error names the field and what is accepted.
    public init(json: JSONValue, name: String) throws(ChimeError) {
        try self.init(json: json, name: name, stored: false)
    }

    /// `stored`: the engine's own record, which also holds `manual`.
    init(json: JSONValue, name: String?, stored: Bool) throws(ChimeError) {
        let body = try JSONObjectReader(
            json, path: "", what: "a focus mode",
            accepted: stored ? Self.fields + [Field.manual] : Self.fields)
        let given = try body.string(Field.name)
        if let name, let given, given != name {
            throw ChimeError(
                .invalidValue, field: Field.name,
                "name \"\(given.prefix(80))\" is not the focus this route names (\"\(name.prefix(80))\"); leave it out or make them the same"
            )
        }
        guard let resolved = name ?? given else {
            throw ChimeError(.invalidValue, field: Field.name, "name is missing; expected the focus's name")
        }
        var schedule: FocusSchedule?
        if let value = body.value(Field.schedule) {
            let reader = try JSONObjectReader(
                value, path: Field.schedule, what: "a focus schedule", accepted: Self.scheduleFields)
            let from = try reader.requiredString(Field.from, hint: " as HH:MM, such as 22:00")
            let to = try reader.requiredString(Field.to, hint: " as HH:MM, such as 07:00")
            let zone = try reader.requiredString(
                Field.timeZone, hint: " naming an IANA time zone, such as Europe/Berlin")
            let days: Set<FocusDay>
            switch reader.value(Field.days) {
            case nil: days = FocusDay.everyDay
            case .string(let text)?: days = try FocusDay.parseList(text, field: "\(Field.schedule).\(Field.days)")
            case .array?:
                var parsed: Set<FocusDay> = []
                for (index, text) in (try reader.strings(Field.days) ?? []).enumerated() {
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
                    Field.days, expected: "an array of day names or a string such as \"mon-fri\"", found: other)
            }
            schedule = try FocusSchedule(from: from, to: to, days: days, timeZone: zone)
        }
        var manual: FocusOverride?
        if stored, let value = body.value(Field.manual) {
            let reader = try JSONObjectReader(
                value, path: Field.manual, what: "a manual setting", accepted: [Field.on, Field.since])
            let since = try reader.requiredString(Field.since)
            guard let date = JSONMapping.parseDate(since) else {
                throw ChimeError(.invalidValue, field: "\(Field.manual).\(Field.since)", "manual.since is not a date")
            }
            manual = FocusOverride(isOn: try reader.requiredBool(Field.on), since: date)
        }
        try self.init(
            name: resolved, schedule: schedule, allowedApps: try body.strings(Field.allowedApps) ?? [],
            allowedThreads: try body.strings(Field.allowedThreads) ?? [],
            allowedFilterCriteria: try body.strings(Field.allowedFilterCriteria) ?? [], manual: manual)
    }

    /// The mode as JSON (with `manual` when it was turned on or off by hand).
    public var json: JSONValue {
        var object: JSONObject = [Field.name: .string(name)]
        if let schedule {
            object[Field.schedule] = [
                Field.from: .string(schedule.fromText), Field.to: .string(schedule.toText),
                Field.days: .array(schedule.days.sorted().map { .string($0.rawValue) }),
                Field.timeZone: .string(schedule.timeZone),
            ]
        } else {
            object[Field.schedule] = .null
        }
        object[Field.allowedApps] = .array(allowedApps.map { .string($0) })
        object[Field.allowedThreads] = .array(allowedThreads.map { .string($0) })
        object[Field.allowedFilterCriteria] = .array(allowedFilterCriteria.map { .string($0) })
        object[Field.manual] =
            manual.map { [Field.on: .bool($0.isOn), Field.since: JSONMapping.json($0.since)] } ?? .null
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
        object[Field.active] = .bool(isActive)
        object[Field.byHand] = .bool(byHand)
        object[Field.nextChange] = nextChange.map(JSONMapping.json) ?? .null
        object[Field.held] = .object(
            JSONObject(held.sorted { $0.key < $1.key }.map { ($0.key, .integer(Int64($0.value))) }))
        object[Field.heldTotal] = .integer(Int64(held.values.reduce(0, +)))
        return .object(object)
    }

    /// A status as the service answers it.
    public init(json: JSONValue) throws(ChimeError) {
        let mode = try FocusMode(
            json: JSONMapping.keeping(FocusMode.fields + [Field.manual], from: json), name: nil, stored: true)
        var held: [String: Int] = [:]
        if case .object(let counts)? = json[Field.held] {
            for (app, value) in counts { if case .integer(let n) = value { held[app] = Int(n) } }
        }
        var next: Date?
        if case .string(let text)? = json[Field.nextChange] { next = JSONMapping.parseDate(text) }
        self.init(
            mode: mode, isActive: json[Field.active] == .bool(true), nextChange: next, held: held,
            byHand: json[Field.byHand] == .bool(true))
    }
}

extension FocusDecision {
    /// `{"name": "Sleep", "quiet": true, "reason": "focus"}`.
    public var json: JSONValue {
        [Field.name: .string(focus), Field.quiet: .bool(quiet), Field.reason: .string(reason.rawValue)]
    }

    init?(json: JSONValue?) {
        guard case .string(let name)? = json?[Field.name], case .string(let reasonName)? = json?[Field.reason],
            let reason = Reason(rawValue: reasonName)
        else { return nil }
        self.init(focus: name, quiet: json?[Field.quiet] == .bool(true), reason: reason)
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

    /// The stored record's field names (`{"until", "held": [{"app", "count"}]}`), for ``serialized``
    /// and ``init(stored:)``, its one writer and one reader.
    enum Field {
        static let until = "until"
        static let held = "held"
        static let app = "app"
        static let count = "count"
    }

    var serialized: String {
        let object: JSONObject = [
            Field.until: until.map(JSONMapping.json) ?? .null,
            Field.held: .array(held.map { [Field.app: .string($0.app), Field.count: .integer(Int64($0.count))] }),
        ]
        return JSONValue.object(object).serialized()
    }

    init(until: Date?) { self.until = until }

    /// A stored session; one that cannot be read counts nothing.
    init(stored text: String) {
        guard let json = try? JSONValue.parse(text) else { return }
        if case .string(let date)? = json[Field.until] { until = JSONMapping.parseDate(date) }
        if case .array(let items)? = json[Field.held] {
            for item in items {
                if case .string(let app)? = item[Field.app], case .integer(let count)? = item[Field.count] {
                    held.append((app, Int(count)))
                }
            }
        }
    }

    var dictionary: [String: Int] { Dictionary(held.map { ($0.app, $0.count) }, uniquingKeysWith: +) }
}
