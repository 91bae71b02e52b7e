import Foundation

// ISO 8601 dates for the JSON mapping, parsed and printed by hand: fast, thread-safe, and without
// the allocation of a formatter per call.

extension JSONMapping {
    /// The instants of the years 0001–9999 in UTC, 0001-01-01T00:00:00Z up to (not including)
    /// 10000-01-01T00:00:00Z, in seconds since 1970: what ``parseDate(_:)`` accepts and
    /// ``formatDate(_:)`` writes. The year 0000 is left out: Foundation's Gregorian calendar has no
    /// such year (it is 1 BC, era 0), so a date in it would become 0001 in components, its era lost.
    public static let dateRange: Range<Double> = -62_135_596_800..<253_402_300_800

    /// The first and last instants ``formatDate(_:)`` writes, 0001-01-01T00:00:00.000Z and
    /// 9999-12-31T23:59:59.999Z, in milliseconds since 1970.
    static let formattableMilliseconds: ClosedRange<Double> =
        dateRange.lowerBound * 1000...dateRange.upperBound * 1000 - 1

    /// Formats a date as ISO 8601 in UTC with milliseconds: `2026-12-01T08:30:00.000Z`.
    ///
    /// RFC 3339 has four-digit years only (and ``parseDate(_:)`` the years 0001–9999, ``dateRange``),
    /// so a date outside the years 0001–9999 — the next fire date of a trigger thousands of years away — is written as the nearest
    /// one inside them.
    public static func formatDate(_ date: Date) -> String {
        let millisecondsValue = (date.timeIntervalSince1970 * 1000).rounded()
        let range = formattableMilliseconds
        let clamped = millisecondsValue.isNaN ? 0 : min(max(millisecondsValue, range.lowerBound), range.upperBound)
        let milliseconds = Int64(clamped)
        let (days, msOfDay) = floorDivide(milliseconds, 86_400_000)
        let (year, month, day) = civil(fromDays: days)
        let hour = msOfDay / 3_600_000
        let minute = msOfDay / 60_000 % 60
        let second = msOfDay / 1000 % 60
        let ms = msOfDay % 1000
        var out = ""
        out.reserveCapacity(24)
        if year < 0 { out += "-" }
        out += pad(abs(year), 4)
        out +=
            "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(hour, 2) + ":" + pad(minute, 2) + ":" + pad(second, 2)
        out += "." + pad(ms, 3) + "Z"
        return out
    }

    /// Parses an ISO 8601 date and time with a zone: `2026-12-01T08:30:00Z`,
    /// `2026-12-01T08:30:00.250Z`, `2026-12-01T09:30:00+01:00`. `nil` when it is not one, or when
    /// the instant lies outside the years 0001–9999 in UTC (``dateRange``): `0000-06-01T00:00:00Z`,
    /// `0001-01-01T00:00:00+01:00` (which is in the year 0000) and `9999-12-31T23:30:00-01:00` (10000).
    public static func parseDate(_ text: String) -> Date? {
        var scanner = DigitScanner(text)
        let b = scanner.bytes
        func digits(_ n: Int) -> Int? { scanner.digits(n) }
        func expect(_ chars: String) -> Bool { scanner.expect(chars) }
        var i: Int {
            get { scanner.index }
            set { scanner.index = newValue }
        }
        guard let year = digits(4), expect("-"), let month = digits(2), expect("-"), let day = digits(2),
            expect("Tt"), let hour = digits(2), expect(":"), let minute = digits(2), expect(":"), let second = digits(2)
        else { return nil }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), (0...23).contains(hour),
            (0...59).contains(minute), (0...59).contains(second)
        else { return nil }
        var fraction = 0.0
        if i < b.count, b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: ",") {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, b[i] >= 0x30 && b[i] <= 0x39 {
                fraction += Double(b[i] - 0x30) * scale
                scale /= 10
                i += 1
            }
            guard i > start, i - start <= 9 else { return nil }
        }
        var offsetSeconds = 0
        guard i < b.count else { return nil }  // a zone is required
        if expect("Zz") {
        } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            guard let offsetHours = digits(2) else { return nil }
            if i < b.count, b[i] == UInt8(ascii: ":") { i += 1 }
            guard let offsetMinutes = digits(2), offsetHours <= 23, offsetMinutes <= 59 else { return nil }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        let instant = Double(seconds) + fraction
        guard dateRange.contains(instant) else { return nil }
        return Date(timeIntervalSince1970: instant)
    }

    /// A date from a JSON string, or a `ChimeError` naming the field.
    static func date(_ value: JSONValue, field: String, code: ChimeError.Code = .invalidValue) throws(ChimeError)
        -> Date
    {
        guard case .string(let s) = value else {
            throw ChimeError(
                code, field: field,
                "\(field): expected an ISO 8601 date string such as \"2026-12-01T08:30:00Z\", found \(value.shortDescription)"
            )
        }
        guard let date = parseDate(s) else {
            throw ChimeError(
                code, field: field,
                "\(field): \"\(JSONParser.clip(s))\" is not an ISO 8601 date and time with a zone in the years 0001-9999; accepted: \"2026-12-01T08:30:00Z\", \"2026-12-01T08:30:00.250Z\", \"2026-12-01T09:30:00+01:00\""
            )
        }
        return date
    }

    /// Reads fixed-width decimal fields and separators from a string's bytes, for the date parsers.
    struct DigitScanner {
        let bytes: [UInt8]
        var index = 0

        init(_ text: String) { bytes = Array(text.utf8) }

        var atEnd: Bool { index == bytes.count }

        /// The next `n` bytes as a decimal number, or `nil` when they are not all digits.
        mutating func digits(_ n: Int) -> Int? {
            guard bytes.count - index >= n else { return nil }
            var value = 0
            for _ in 0..<n {
                let c = bytes[index]
                guard c >= 0x30 && c <= 0x39 else { return nil }
                value = value * 10 + Int(c - 0x30)
                index += 1
            }
            return value
        }

        /// Takes the next byte when it is one of `chars`.
        mutating func expect(_ chars: String) -> Bool {
            guard index < bytes.count, chars.utf8.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let s = String(value)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> (Int, Int) {
        var q = a / b
        var r = a % b
        if r < 0 {
            q -= 1
            r += b
        }
        return (Int(q), Int(r))
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (era-based arithmetic).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of ``daysFromCivil(year:month:day:)``.
    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
