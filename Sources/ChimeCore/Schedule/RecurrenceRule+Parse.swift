import Foundation

extension RecurrenceRule {
    /// The field a refusal names: `trigger.rrule`, or `trigger.rrule.BYDAY` for one part.
    static func field(_ part: String? = nil) -> String { part.map { "trigger.rrule.\($0)" } ?? "trigger.rrule" }

    /// Parses RFC 5545 `RRULE` text, with or without the `RRULE:` prefix; part names and values are
    /// read case-insensitively.
    ///
    /// - Throws: ``ChimeError`` `invalidTrigger`, its field `trigger.rrule.PART` naming the part at
    ///   fault (`trigger.rrule` for the rule as a whole) and its message what is accepted.
    ///
    /// ```swift
    /// let rule = try RecurrenceRule(parsing: "RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;UNTIL=20271231T230000Z")
    /// ```
    public init(parsing text: String) throws {
        var body = Substring(text.trimmingCharacters(in: .whitespaces))
        if body.uppercased().hasPrefix("RRULE:") { body = body.dropFirst(6) }
        var values: [String: String] = [:]
        var order: [String] = []
        for rawPart in body.split(separator: ";", omittingEmptySubsequences: false) {
            guard let equals = rawPart.firstIndex(of: "=") else {
                throw ChimeError(
                    .invalidTrigger, field: Self.field(),
                    "the rule part '\(rawPart.prefix(40))' is not NAME=VALUE; write parts like FREQ=MONTHLY;BYDAY=-1FR, separated by ';'"
                )
            }
            let name = rawPart[..<equals].uppercased()
            let value = String(rawPart[rawPart.index(after: equals)...])
            guard Self.partNames.contains(name) else {
                throw ChimeError(
                    .invalidTrigger, field: Self.field(String(name.prefix(40))),
                    "'\(name.prefix(40))' is not a part of a recurrence rule; the parts are \(Self.partNames.joined(separator: ", "))"
                )
            }
            guard values[name] == nil else {
                throw ChimeError(
                    .invalidTrigger, field: Self.field(name), "\(name) is given twice; give each part once")
            }
            values[name] = value
            order.append(name)
        }
        guard let freq = values["FREQ"] else {
            throw ChimeError(
                .invalidTrigger, field: Self.field("FREQ"),
                "a recurrence rule needs FREQ (one of \(Frequency.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        guard let frequency = Frequency(rawValue: freq.uppercased()) else {
            throw ChimeError(
                .invalidTrigger, field: Self.field("FREQ"),
                "FREQ '\(freq.prefix(40))' is not one of \(Frequency.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self.init(frequency: frequency)
        if let text = values["INTERVAL"] {
            interval = try Self.number(text, part: "INTERVAL", in: 1...Self.maximumInterval, signed: false)
        }
        if values["COUNT"] != nil, values["UNTIL"] != nil {
            throw ChimeError(
                .invalidTrigger, field: Self.field("COUNT"),
                "COUNT and UNTIL are both given; RFC 5545 allows one of them: end after a number of occurrences or at a date"
            )
        }
        if let text = values["COUNT"] {
            end = .count(try Self.number(text, part: "COUNT", in: 1...Self.maximumCount, signed: false))
        }
        if let text = values["UNTIL"] { end = .until(try Self.parseUntil(text)) }
        if let text = values["BYSECOND"] {
            bySecond = Self.normalized(try Self.numbers(text, part: "BYSECOND", in: 0...60, signed: false))
        }
        if let text = values["BYMINUTE"] {
            byMinute = Self.normalized(try Self.numbers(text, part: "BYMINUTE", in: 0...59, signed: false))
        }
        if let text = values["BYHOUR"] {
            byHour = Self.normalized(try Self.numbers(text, part: "BYHOUR", in: 0...23, signed: false))
        }
        if let text = values["BYDAY"] { byDay = Self.normalized(try Self.parseDays(text)) }
        if let text = values["BYMONTHDAY"] {
            byMonthDay = Self.normalized(try Self.numbers(text, part: "BYMONTHDAY", in: 1...31, signed: true))
        }
        if let text = values["BYYEARDAY"] {
            byYearDay = Self.normalized(try Self.numbers(text, part: "BYYEARDAY", in: 1...366, signed: true))
        }
        if let text = values["BYWEEKNO"] {
            byWeekNumber = Self.normalized(try Self.numbers(text, part: "BYWEEKNO", in: 1...53, signed: true))
        }
        if let text = values["BYMONTH"] {
            byMonth = Self.normalized(try Self.numbers(text, part: "BYMONTH", in: 1...12, signed: false))
        }
        if let text = values["BYSETPOS"] {
            bySetPosition = Self.normalized(try Self.numbers(text, part: "BYSETPOS", in: 1...366, signed: true))
        }
        if let text = values["WKST"] {
            guard let day = Weekday(rawValue: text.uppercased()) else {
                throw ChimeError(
                    .invalidTrigger, field: Self.field("WKST"),
                    "WKST '\(text.prefix(40))' is not a weekday; write one of MO, TU, WE, TH, FR, SA, SU")
            }
            weekStart = day
        }
        try validate()
    }

    /// The part names RFC 5545 defines, in the order ``rruleString`` writes them.
    static let partNames = [
        "FREQ", "UNTIL", "COUNT", "INTERVAL", "BYSECOND", "BYMINUTE", "BYHOUR", "BYDAY", "BYMONTHDAY",
        "BYYEARDAY", "BYWEEKNO", "BYMONTH", "BYSETPOS", "WKST",
    ]
    /// The largest `INTERVAL` and `COUNT` accepted.
    public static let maximumInterval = 100_000
    public static let maximumCount = 100_000

    /// Checks what RFC 5545 requires of a rule built in code (``init(parsing:)`` checks the same):
    /// numbers in range, one of COUNT and UNTIL, BYSETPOS only with another BY part, and the parts
    /// each frequency allows.
    ///
    /// - Throws: ``ChimeError`` `invalidTrigger` naming the part (`trigger.rrule.BYDAY`).
    ///
    /// ```swift
    /// var rule = RecurrenceRule(frequency: .weekly)
    /// rule.byMonthDay = [1]
    /// try rule.validate()   // throws: BYMONTHDAY is not allowed with FREQ=WEEKLY
    /// ```
    public func validate() throws {
        try Self.check(interval, part: "INTERVAL", in: 1...Self.maximumInterval, signed: false)
        switch end {
        case .never: break
        case .count(let count): try Self.check(count, part: "COUNT", in: 1...Self.maximumCount, signed: false)
        case .until(let until): try Self.check(until)
        }
        for value in bySecond { try Self.check(value, part: "BYSECOND", in: 0...60, signed: false) }
        for value in byMinute { try Self.check(value, part: "BYMINUTE", in: 0...59, signed: false) }
        for value in byHour { try Self.check(value, part: "BYHOUR", in: 0...23, signed: false) }
        for value in byMonthDay { try Self.check(value, part: "BYMONTHDAY", in: 1...31, signed: true) }
        for value in byYearDay { try Self.check(value, part: "BYYEARDAY", in: 1...366, signed: true) }
        for value in byWeekNumber { try Self.check(value, part: "BYWEEKNO", in: 1...53, signed: true) }
        for value in byMonth { try Self.check(value, part: "BYMONTH", in: 1...12, signed: false) }
        for value in bySetPosition { try Self.check(value, part: "BYSETPOS", in: 1...366, signed: true) }
        for day in byDay {
            guard let ordinal = day.ordinal else { continue }
            try Self.check(ordinal, part: "BYDAY", in: 1...53, signed: true)
            guard frequency == .monthly || frequency == .yearly else {
                throw ChimeError(
                    .invalidTrigger, field: Self.field("BYDAY"),
                    "BYDAY \(day) has an ordinal, which RFC 5545 allows only with FREQ=MONTHLY or YEARLY; write the weekday alone (\(day.weekday.rawValue))"
                )
            }
            guard byWeekNumber.isEmpty else {
                throw ChimeError(
                    .invalidTrigger, field: Self.field("BYDAY"),
                    "BYDAY \(day) has an ordinal, which RFC 5545 does not allow with BYWEEKNO; write the weekday alone (\(day.weekday.rawValue))"
                )
            }
        }
        if !byMonthDay.isEmpty, frequency == .weekly {
            throw ChimeError(
                .invalidTrigger, field: Self.field("BYMONTHDAY"),
                "BYMONTHDAY is not allowed with FREQ=WEEKLY (RFC 5545); use FREQ=MONTHLY or DAILY with BYMONTHDAY")
        }
        if !byYearDay.isEmpty, [.daily, .weekly, .monthly].contains(frequency) {
            throw ChimeError(
                .invalidTrigger, field: Self.field("BYYEARDAY"),
                "BYYEARDAY is not allowed with FREQ=\(frequency.rawValue) (RFC 5545); it is allowed with YEARLY, HOURLY, MINUTELY and SECONDLY"
            )
        }
        if !byWeekNumber.isEmpty, frequency != .yearly {
            throw ChimeError(
                .invalidTrigger, field: Self.field("BYWEEKNO"),
                "BYWEEKNO is allowed only with FREQ=YEARLY (RFC 5545)")
        }
        if !bySetPosition.isEmpty, !hasByPartBesidesSetPosition {
            throw ChimeError(
                .invalidTrigger, field: Self.field("BYSETPOS"),
                "BYSETPOS picks among the occurrences another BY part makes (RFC 5545); give BYDAY, BYMONTHDAY, BYHOUR or another BY part with it"
            )
        }
    }

    var hasByPartBesidesSetPosition: Bool {
        !(bySecond.isEmpty && byMinute.isEmpty && byHour.isEmpty && byDay.isEmpty && byMonthDay.isEmpty
            && byYearDay.isEmpty
            && byWeekNumber.isEmpty && byMonth.isEmpty)
    }

    /// The rule as RFC 5545 text, parts in a fixed order, defaults (INTERVAL=1, WKST=MO) left out;
    /// ``init(parsing:)`` reads it back to an equal rule.
    ///
    /// ```swift
    /// try RecurrenceRule(parsing: "byday=fr,-1mo;freq=monthly").rruleString   // "FREQ=MONTHLY;BYDAY=-1MO,FR"
    /// ```
    public var rruleString: String {
        var parts = ["FREQ=\(frequency.rawValue)"]
        switch end {
        case .never: break
        case .count(let count): parts.append("COUNT=\(count)")
        case .until(let until): parts.append("UNTIL=\(Self.text(until))")
        }
        if interval != 1 { parts.append("INTERVAL=\(interval)") }
        func list(_ name: String, _ values: [some CustomStringConvertible]) {
            if !values.isEmpty { parts.append("\(name)=\(values.map(\.description).joined(separator: ","))") }
        }
        list("BYSECOND", bySecond)
        list("BYMINUTE", byMinute)
        list("BYHOUR", byHour)
        list("BYDAY", byDay)
        list("BYMONTHDAY", byMonthDay)
        list("BYYEARDAY", byYearDay)
        list("BYWEEKNO", byWeekNumber)
        list("BYMONTH", byMonth)
        list("BYSETPOS", bySetPosition)
        if weekStart != .monday { parts.append("WKST=\(weekStart.rawValue)") }
        return parts.joined(separator: ";")
    }

    // MARK: - Values

    private static func check(_ value: Int, part: String, in range: ClosedRange<Int>, signed: Bool) throws {
        guard range.contains(signed ? abs(value) : value), value != Int.min else {
            throw ChimeError(
                .invalidTrigger, field: field(part),
                "\(part) \(value) is out of range; \(accepted(range, signed: signed))")
        }
    }

    private static func accepted(_ range: ClosedRange<Int>, signed: Bool) -> String {
        signed
            ? "give \(range.lowerBound) to \(range.upperBound) or -\(range.upperBound) to -\(range.lowerBound)"
            : "give \(range.lowerBound) to \(range.upperBound)"
    }

    private static func number(_ text: String, part: String, in range: ClosedRange<Int>, signed: Bool) throws -> Int {
        var digits = Substring(text)
        var negative = false
        if signed, let sign = digits.first, sign == "+" || sign == "-" {
            negative = sign == "-"
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            let magnitude = Int(digits)
        else {
            throw ChimeError(
                .invalidTrigger, field: field(part),
                "\(part) '\(text.prefix(40))' is not a number; \(accepted(range, signed: signed))")
        }
        let value = negative ? -magnitude : magnitude
        try check(value, part: part, in: range, signed: signed)
        return value
    }

    private static func numbers(_ text: String, part: String, in range: ClosedRange<Int>, signed: Bool) throws -> [Int]
    {
        let items = text.split(separator: ",", omittingEmptySubsequences: false)
        guard items.count <= 400 else {
            throw ChimeError(
                .invalidTrigger, field: field(part), "\(part) lists \(items.count) values; at most 400 are accepted")
        }
        return try items.map { try number(String($0), part: part, in: range, signed: signed) }
    }

    private static func parseDays(_ text: String) throws -> [WeekdayNumber] {
        let items = text.split(separator: ",", omittingEmptySubsequences: false)
        guard items.count <= 400 else {
            throw ChimeError(
                .invalidTrigger, field: field("BYDAY"), "BYDAY lists \(items.count) values; at most 400 are accepted")
        }
        return try items.map { item in
            let upper = item.uppercased()
            guard upper.count >= 2, let day = Weekday(rawValue: String(upper.suffix(2))) else {
                throw ChimeError(
                    .invalidTrigger, field: field("BYDAY"),
                    "BYDAY '\(item.prefix(40))' is not a weekday; write MO, TU, WE, TH, FR, SA or SU, optionally after an ordinal (-1FR, 2MO)"
                )
            }
            let ordinalText = upper.dropLast(2)
            guard !ordinalText.isEmpty else { return WeekdayNumber(day) }
            return WeekdayNumber(day, ordinal: try number(String(ordinalText), part: "BYDAY", in: 1...53, signed: true))
        }
    }

    private static func parseUntil(_ text: String) throws -> Until {
        let refusal = ChimeError(
            .invalidTrigger, field: field("UNTIL"),
            "UNTIL '\(text.prefix(40))' is not a date; write YYYYMMDD, YYYYMMDDTHHMMSSZ (UTC) or YYYYMMDDTHHMMSS (local time)"
        )
        let characters = Array(text.uppercased().utf8)
        func digits(_ range: Range<Int>) throws -> Int {
            guard range.upperBound <= characters.count, characters[range].allSatisfy({ (0x30...0x39).contains($0) })
            else { throw refusal }
            return characters[range].reduce(0) { $0 * 10 + Int($1 - 0x30) }
        }
        let year = try digits(0..<4)
        let month = try digits(4..<6)
        let day = try digits(6..<8)
        guard (1...12).contains(month), (1...CivilDays.daysIn(month: month, year: year)).contains(day) else {
            throw refusal
        }
        if characters.count == 8 { return .date(year: year, month: month, day: day) }
        guard characters.count == 15 || (characters.count == 16 && characters[15] == UInt8(ascii: "Z")),
            characters[8] == UInt8(ascii: "T")
        else {
            throw refusal
        }
        let hour = try digits(9..<11)
        let minute = try digits(11..<13)
        let second = try digits(13..<15)
        guard hour <= 23, minute <= 59, second <= 60 else { throw refusal }
        if characters.count == 15 {
            return .localTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        }
        let seconds = CivilDays.days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
        return .instant(Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    private static func check(_ until: Until) throws {
        let refusal = ChimeError(
            .invalidTrigger, field: field("UNTIL"),
            "UNTIL is not a valid date; give a year 1…9999, a month 1…12 and a day of that month")
        switch until {
        case .instant(let date):
            guard date.timeIntervalSince1970.rounded(.down) == date.timeIntervalSince1970,
                (-62_135_596_800...253_402_300_799).contains(date.timeIntervalSince1970)
            else {
                throw ChimeError(
                    .invalidTrigger, field: field("UNTIL"), "UNTIL must be a whole second between the years 1 and 9999")
            }
        case .date(let year, let month, let day), .localTime(let year, let month, let day, _, _, _):
            guard (1...9999).contains(year), (1...12).contains(month),
                (1...CivilDays.daysIn(month: month, year: year)).contains(day)
            else {
                throw refusal
            }
            if case .localTime(_, _, _, let hour, let minute, let second) = until,
                !(0...23 ~= hour && 0...59 ~= minute && 0...60 ~= second)
            {
                throw refusal
            }
        }
    }

    private static func text(_ until: Until) -> String {
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        switch until {
        case .instant(let date):
            let seconds = Int(date.timeIntervalSince1970.rounded(.down))
            let (year, month, day) = CivilDays.date(days: seconds.floorDivided(by: 86_400))
            let time = seconds.floorModulo(86_400)
            return
                "\(pad(year, 4))\(pad(month, 2))\(pad(day, 2))T\(pad(time / 3600, 2))\(pad(time / 60 % 60, 2))\(pad(time % 60, 2))Z"
        case .date(let year, let month, let day):
            return "\(pad(year, 4))\(pad(month, 2))\(pad(day, 2))"
        case .localTime(let year, let month, let day, let hour, let minute, let second):
            return "\(pad(year, 4))\(pad(month, 2))\(pad(day, 2))T\(pad(hour, 2))\(pad(minute, 2))\(pad(second, 2))"
        }
    }
}
