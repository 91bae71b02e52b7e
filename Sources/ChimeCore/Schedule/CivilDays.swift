/// Proleptic Gregorian calendar arithmetic on plain integers: days counted from 1970-01-01 and
/// wall-clock seconds counted from its midnight, with no time zone. The recurrence engine works in
/// these and turns a wall time into an instant only at the end (``RecurrenceSchedule``).
enum CivilDays {
    /// Days from 1970-01-01 to the given date (negative before it): the JSON dates' arithmetic.
    static func days(year: Int, month: Int, day: Int) -> Int {
        JSONMapping.daysFromCivil(year: year, month: month, day: day)
    }

    /// The date of a day counted from 1970-01-01.
    static func date(days: Int) -> (year: Int, month: Int, day: Int) { JSONMapping.civil(fromDays: days) }

    /// Monday 0 … Sunday 6 (1970-01-01 was a Thursday).
    static func weekday(days: Int) -> Int { (days + 3).floorModulo(7) }

    static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    static func daysIn(year: Int) -> Int { isLeap(year) ? 366 : 365 }

    /// The first day of week 1 of `year`, weeks starting on `weekStart` (0 Monday … 6 Sunday):
    /// the week with at least four days of the year in it (ISO 8601, RFC 5545's BYWEEKNO).
    static func firstWeek(of year: Int, weekStart: Int) -> Int {
        let fourth = days(year: year, month: 1, day: 4)
        return fourth - (weekday(days: fourth) - weekStart).floorModulo(7)
    }
}

extension Int {
    /// Division rounding toward minus infinity (Swift's `/` rounds toward zero).
    func floorDivided(by divisor: Int) -> Int {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    /// The remainder that goes with ``floorDivided(by:)``: 0 ..< divisor for a positive divisor.
    func floorModulo(_ divisor: Int) -> Int { self - floorDivided(by: divisor) * divisor }
}
