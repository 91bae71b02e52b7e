import Foundation

// The JSON shape of a recurrence-rule trigger (a Chime addition):
//
//     {"type": "recurrence", "rrule": "FREQ=MONTHLY;BYDAY=-1FR", "start": "2027-01-29T09:00",
//      "timeZone": "Europe/Berlin", "exceptionDates": ["2027-03-26T09:00"]}
//
// `start` is a wall time in `timeZone` (RFC 5545's DTSTART with a TZID); each exception date is a
// wall time in the same zone or an instant with its own zone (`2027-03-26T08:00:00Z`). The encoder
// writes the start as a wall time to the second and the exception dates as UTC instants, which the
// decoder reads back to an equal schedule.

extension RecurrenceSchedule {
    static let jsonFields = JSONFieldName.Trigger.recurrenceFields

    /// Decodes the members of a `{"type": "recurrence", …}` trigger (`r` is the trigger's reader).
    init(reader r: JSONObjectReader) throws(ChimeError) {
        typealias Field = JSONFieldName.Trigger
        try r.finish(accepted: Self.jsonFields, what: "a recurrence trigger")
        let text = try r.requiredString(
            Field.rrule, code: .invalidTrigger, hint: " holding an RFC 5545 rule such as \"FREQ=MONTHLY;BYDAY=-1FR\"")
        let startText = try r.requiredString(
            Field.start, code: .invalidTrigger,
            hint: " holding the first occurrence's wall time in timeZone, such as \"2027-01-29T09:00\"")
        guard let start = JSONMapping.parseWallTime(startText) else {
            throw ChimeError(
                .invalidTrigger, field: r.field(Field.start),
                "\(r.field(Field.start)): \"\(JSONParser.clip(startText))\" is not a wall time; accepted: \"2027-01-29T09:00\", \"2027-01-29T09:00:00\" or \"20270129T090000\" (in timeZone, without a zone of its own)"
            )
        }
        let zoneName = try r.requiredString(
            Field.timeZone, code: .invalidTrigger, hint: " naming an IANA time zone such as \"Europe/Berlin\"")
        guard let zone = TimeZone(identifier: zoneName) else {
            throw ChimeError(
                .invalidTrigger, field: r.field(Field.timeZone),
                "\(r.field(Field.timeZone)): \"\(JSONParser.clip(zoneName))\" is not a known time zone; accepted: an IANA identifier such as \"Europe/Berlin\", \"America/New_York\" or \"UTC\""
            )
        }
        var exceptions: [Date] = []
        for (index, text) in (try r.strings(Field.exceptionDates, code: .invalidTrigger) ?? []).enumerated() {
            if let instant = JSONMapping.parseDate(text) {
                exceptions.append(instant)
            } else if let wall = JSONMapping.parseWallTime(text), let instant = Self.instant(ofWallTime: wall, in: zone)
            {
                exceptions.append(instant)
            } else {
                let name = JSONPath.element(r.field(Field.exceptionDates), index)
                throw ChimeError(
                    .invalidTrigger, field: name,
                    "\(name): \"\(JSONParser.clip(text))\" is not a date; accepted: a wall time in timeZone (\"2027-03-26T09:00\") or an instant with its zone (\"2027-03-26T08:00:00Z\")"
                )
            }
        }
        let field = r.path
        do {
            let rule = try RecurrenceRule(parsing: text)
            try self.init(rule: rule, start: start, timeZone: zone, exceptionDates: exceptions)
        } catch let error as ChimeError {
            throw error.movingField(from: JSONFieldName.Request.trigger, to: field)
        } catch {
            throw ChimeError(.invalidTrigger, field: JSONPath.member(field, Field.rrule), "\(error)")
        }
    }

    /// `{"type": "recurrence", "rrule", "start", "timeZone", "exceptionDates"}`.
    var json: JSONValue {
        typealias Field = JSONFieldName.Trigger
        var object: JSONObject = [
            Field.type: .string(Field.Kind.recurrence), Field.rrule: .string(rule.rruleString),
            Field.start: .string(JSONMapping.formatWallTime(start)),
            Field.timeZone: .string(timeZone.identifier),
        ]
        if !exceptionDates.isEmpty {
            object[Field.exceptionDates] = .array(exceptionDates.map { .string(JSONMapping.formatDate($0)) })
        }
        return .object(object)
    }
}

extension JSONMapping {
    /// Parses a wall time without a zone: `2027-01-29T09:00`, `2027-01-29T09:00:00` (a space may
    /// stand for the `T`), or RFC 5545's basic form `20270129T090000`. Only the format is checked
    /// here (months 1–12, days 1–31, 00:00–23:59:59); whether the day exists is the schedule's.
    public static func parseWallTime(_ text: String) -> DateComponents? {
        var scanner = DigitScanner(text)
        func digits(_ n: Int) -> Int? { scanner.digits(n) }
        func expect(_ chars: String) -> Bool { scanner.expect(chars) }
        guard let year = digits(4) else { return nil }
        let extended = expect("-")
        guard let month = digits(2), !extended || expect("-"), let day = digits(2), expect(extended ? "Tt " : "Tt"),
            let hour = digits(2), !extended || expect(":"), let minute = digits(2)
        else { return nil }
        var second = 0
        if !scanner.atEnd {
            guard !extended || expect(":"), let value = digits(2) else { return nil }
            second = value
        } else if !extended {
            return nil
        }
        guard scanner.atEnd, (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour),
            (0...59).contains(minute),
            (0...59).contains(second)
        else { return nil }
        return DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// A wall time as `2027-01-29T09:00:00`.
    public static func formatWallTime(_ components: DateComponents) -> String {
        func pad(_ value: Int?, _ width: Int) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(components.year, 4))-\(pad(components.month, 2))-\(pad(components.day, 2))T"
            + "\(pad(components.hour, 2)):\(pad(components.minute, 2)):\(pad(components.second, 2))"
    }
}
