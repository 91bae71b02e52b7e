import Foundation

/// Scheduled summaries in JSON: the body of `PUT /v1/apps/{app}/summary`, its answers, and the
/// form the engine keeps them in (its key/value table).
///
/// ```json
/// {"times": ["08:00", "18:00"], "timeZone": "Europe/Berlin"}
/// ```
extension ScheduledSummary {
    /// The fields a client sends.
    public static let fields = [JSONFieldName.Summary.times, JSONFieldName.Summary.timeZone]

    /// A summary from a client's JSON; every field is checked, the error names the one at fault
    /// and what is accepted.
    public init(json: JSONValue) throws(ChimeError) {
        typealias Field = JSONFieldName.Summary
        let body = try JSONObjectReader(json, path: "", what: "a scheduled summary", accepted: Self.fields)
        guard let times = try body.strings(Field.times) else {
            throw ChimeError(
                .invalidValue, field: Field.times,
                "\(Field.times) is missing; give 1 to \(Self.maximumTimes) times of day as HH:MM, such as [\"08:00\", \"18:00\"]"
            )
        }
        let zone = try body.requiredString(Field.timeZone, hint: " naming an IANA time zone, such as Europe/Berlin")
        try self.init(times: times, timeZone: zone)
    }

    /// `{"times": ["08:00", "18:00"], "timeZone": "Europe/Berlin"}`.
    public var json: JSONValue {
        [
            JSONFieldName.Summary.times: .array(timeTexts.map { .string($0) }),
            JSONFieldName.Summary.timeZone: .string(timeZone),
        ]
    }

    /// The engine's record of every app's summary.
    static func stored(_ apps: [String: ScheduledSummary]) -> String {
        JSONValue.array(
            apps.keys.sorted().map { app in
                guard case .object(var object) = apps[app]!.json else { return .null }
                object[JSONFieldName.Summary.app] = .string(app)
                return .object(object)
            }
        ).serialized()
    }

    /// Reads the engine's record; one that cannot be read holds no summaries.
    static func stored(_ text: String?) -> [String: ScheduledSummary] {
        guard let text, case .array(let items)? = try? JSONValue.parse(text) else { return [:] }
        var apps: [String: ScheduledSummary] = [:]
        for item in items {
            guard case .string(let app)? = item[JSONFieldName.Summary.app], case .object(var object) = item else {
                continue
            }
            object[JSONFieldName.Summary.app] = nil
            if let summary = try? ScheduledSummary(json: .object(object)) { apps[app] = summary }
        }
        return apps
    }
}

extension ScheduledSummaryStatus {
    /// `{"app", "times", "timeZone", "nextDelivery", "held"}`.
    public var json: JSONValue {
        typealias Field = JSONFieldName.Summary
        guard case .object(var object) = summary.json else { return summary.json }
        object[Field.app] = .string(app)
        object[Field.nextDelivery] = nextDelivery.map(JSONMapping.json) ?? .null
        object[Field.held] = .integer(Int64(held))
        return .object(object)
    }

    /// A status as the service answers it.
    public init(json: JSONValue) throws(ChimeError) {
        typealias Field = JSONFieldName.Summary
        let summary = try ScheduledSummary(json: JSONMapping.keeping(ScheduledSummary.fields, from: json))
        guard case .string(let app)? = json[Field.app] else {
            throw ChimeError(.invalidValue, field: Field.app, "\(Field.app) is missing")
        }
        var next: Date?
        if case .string(let text)? = json[Field.nextDelivery] { next = JSONMapping.parseDate(text) }
        var held = 0
        if case .integer(let n)? = json[Field.held] { held = Int(n) }
        self.init(app: app, summary: summary, nextDelivery: next, held: held)
    }
}
