import Foundation

/// An RFC 5545 recurrence rule (`RRULE`): how often something repeats, and on which days and
/// times, without its start. A ``RecurrenceSchedule`` adds the start (DTSTART), the time zone and
/// the skipped dates, and computes the occurrences.
///
/// Lists are kept sorted and without repeats, so two rules that mean the same are equal, and
/// ``rruleString`` parses back to an equal rule.
///
/// ```swift
/// let lastFriday = try RecurrenceRule(parsing: "FREQ=MONTHLY;BYDAY=-1FR")
/// var workdays = RecurrenceRule(frequency: .monthly)
/// workdays.byDay = [.init(.monday), .init(.tuesday), .init(.wednesday), .init(.thursday), .init(.friday)]
/// workdays.bySetPosition = [-1]              // the last workday of each month
/// print(workdays.rruleString)                // FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1
/// ```
public struct RecurrenceRule: Sendable, Hashable {
    /// `FREQ`: the length of one period of the rule.
    public enum Frequency: String, Sendable, Hashable, CaseIterable {
        case secondly = "SECONDLY", minutely = "MINUTELY", hourly = "HOURLY", daily = "DAILY"
        case weekly = "WEEKLY", monthly = "MONTHLY", yearly = "YEARLY"
    }

    /// A day of the week, as RFC 5545 writes it (`MO` … `SU`).
    public enum Weekday: String, Sendable, Hashable, CaseIterable, Comparable {
        case monday = "MO", tuesday = "TU", wednesday = "WE", thursday = "TH", friday = "FR", saturday = "SA", sunday =
            "SU"

        /// Monday 0 … Sunday 6.
        var index: Int {
            switch self {
            case .monday: 0
            case .tuesday: 1
            case .wednesday: 2
            case .thursday: 3
            case .friday: 4
            case .saturday: 5
            case .sunday: 6
            }
        }

        init(index: Int) { self = Self.allCases[index] }

        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.index < rhs.index }
    }

    /// One `BYDAY` entry: a weekday, and for monthly and yearly rules optionally which one of the
    /// month or year (`-1FR` the last Friday, `4TH` the fourth Thursday).
    public struct WeekdayNumber: Sendable, Hashable, Comparable, CustomStringConvertible {
        /// Which occurrence of the weekday in the month or year: 1 … 53 from the start, -1 … -53
        /// from the end; `nil` for every one.
        public var ordinal: Int?
        public var weekday: Weekday

        /// ```swift
        /// let lastFriday = RecurrenceRule.WeekdayNumber(.friday, ordinal: -1)
        /// ```
        public init(_ weekday: Weekday, ordinal: Int? = nil) {
            self.weekday = weekday
            self.ordinal = ordinal
        }

        /// `-1FR`, `MO`.
        public var description: String { (ordinal.map(String.init) ?? "") + weekday.rawValue }

        public static func < (lhs: Self, rhs: Self) -> Bool {
            (lhs.ordinal ?? 0, lhs.weekday.index) < (rhs.ordinal ?? 0, rhs.weekday.index)
        }
    }

    /// `UNTIL`: the last moment an occurrence may have (inclusive).
    public enum Until: Sendable, Hashable {
        /// A UTC date-time (`UNTIL=20271231T230000Z`), compared with each occurrence's instant.
        /// Whole seconds.
        case instant(Date)
        /// A date (`UNTIL=20271231`): occurrences on that local day still count.
        case date(year: Int, month: Int, day: Int)
        /// A local ("floating") date-time (`UNTIL=20271231T170000`), compared with each occurrence's
        /// wall time.
        case localTime(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int)
    }

    /// How the rule ends: never, after a number of occurrences, or at a moment. RFC 5545 allows one
    /// of `COUNT` and `UNTIL`, not both.
    public enum End: Sendable, Hashable {
        case never
        /// `COUNT`: this many occurrences from the start, the start included; skipped dates
        /// (EXDATE) count too.
        case count(Int)
        /// `UNTIL`.
        case until(Until)
    }

    public var frequency: Frequency
    /// `INTERVAL`: every how many periods (1 every period, 2 every other one).
    public var interval: Int
    public var end: End
    /// `BYSECOND`, 0 … 60 (60, a leap second, never occurs: Foundation's time has none).
    public var bySecond: [Int] { didSet { bySecond = Self.normalized(bySecond) } }
    /// `BYMINUTE`, 0 … 59.
    public var byMinute: [Int] { didSet { byMinute = Self.normalized(byMinute) } }
    /// `BYHOUR`, 0 … 23.
    public var byHour: [Int] { didSet { byHour = Self.normalized(byHour) } }
    /// `BYDAY`.
    public var byDay: [WeekdayNumber] { didSet { byDay = Self.normalized(byDay) } }
    /// `BYMONTHDAY`, 1 … 31 and -31 … -1 (-1 the month's last day).
    public var byMonthDay: [Int] { didSet { byMonthDay = Self.normalized(byMonthDay) } }
    /// `BYYEARDAY`, 1 … 366 and -366 … -1.
    public var byYearDay: [Int] { didSet { byYearDay = Self.normalized(byYearDay) } }
    /// `BYWEEKNO`, 1 … 53 and -53 … -1: weeks as ISO 8601 numbers them, starting on ``weekStart``.
    public var byWeekNumber: [Int] { didSet { byWeekNumber = Self.normalized(byWeekNumber) } }
    /// `BYMONTH`, 1 … 12.
    public var byMonth: [Int] { didSet { byMonth = Self.normalized(byMonth) } }
    /// `BYSETPOS`, 1 … 366 and -366 … -1: which of each period's occurrences are kept.
    public var bySetPosition: [Int] { didSet { bySetPosition = Self.normalized(bySetPosition) } }
    /// `WKST`: the first day of a week (for weekly rules with an interval, and week numbers).
    public var weekStart: Weekday

    /// A rule of the given frequency with no other parts; set the others as properties. Use
    /// ``init(parsing:)`` or ``validate()`` to have a rule checked.
    ///
    /// ```swift
    /// var rule = RecurrenceRule(frequency: .weekly, interval: 2, end: .count(10))
    /// rule.byDay = [.init(.tuesday), .init(.thursday)]
    /// ```
    public init(frequency: Frequency, interval: Int = 1, end: End = .never) {
        self.frequency = frequency
        self.interval = interval
        self.end = end
        bySecond = []
        byMinute = []
        byHour = []
        byDay = []
        byMonthDay = []
        byYearDay = []
        byWeekNumber = []
        byMonth = []
        bySetPosition = []
        weekStart = .monday
    }

    /// `COUNT`, when the rule ends after a number of occurrences.
    public var count: Int? { if case .count(let count) = end { count } else { nil } }
    /// `UNTIL`, when the rule ends at a moment.
    public var until: Until? { if case .until(let until) = end { until } else { nil } }

    static func normalized<T: Comparable & Hashable>(_ values: [T]) -> [T] {
        var seen = Set<T>()
        return values.filter { seen.insert($0).inserted }.sorted()
    }
}
