import Foundation

/// A ``RecurrenceRule`` with its start (RFC 5545's DTSTART, a wall time in a named time zone) and
/// the dates it skips (EXDATE): the occurrences themselves.
///
/// The occurrences are the rule's expansion from the start: the start is one of them when the
/// rule matches it (an unsynchronised DTSTART, which RFC 5545 leaves undefined, is not added).
/// Times follow RFC 5545:
/// - a wall time that a daylight-saving change skips moves forward by the length of the gap
///   (02:30 on a spring-forward night in Berlin is 03:30 CEST), as RFC 5545 §3.3.5 reads a
///   DATE-TIME in a gap;
/// - a wall time that occurs twice (clocks go back) occurs once, at its first pass;
/// - a day that does not exist (the 31st of a short month, the 29th of February in a common year)
///   gives no occurrence;
/// - `COUNT` counts from the start, and skipped dates count toward it (EXDATE removes occurrences
///   from the set `COUNT` bounds); `UNTIL` is inclusive.
///
/// Periods are wall-clock periods: `FREQ=HOURLY` steps through the local hours, so the hour a
/// clock change repeats is one period, not two.
///
/// Each answer is computed by expanding one period (a year, month, week, day, …) at a time from the
/// one around the date asked about, never the rule's whole history (a rule with `COUNT` is expanded
/// from its start once, when the schedule is made, to find its last occurrence: it has at most
/// ``RecurrenceRule/maximumCount``). A rule that finds
/// no occurrence within one 400-year cycle of the Gregorian calendar (or within
/// ``searchBudget`` candidate checks), or none before the year 10000, has no next date.
///
/// ```swift
/// let schedule = try RecurrenceSchedule(rule: RecurrenceRule(parsing: "FREQ=MONTHLY;BYDAY=-1FR"),
///                                       start: DateComponents(year: 2027, month: 1, day: 29, hour: 9),
///                                       timeZone: TimeZone(identifier: "Europe/Berlin")!)
/// let nextThree = schedule.next(3, after: .now)   // the last Fridays of the next three months, 09:00
/// ```
public struct RecurrenceSchedule: Sendable, Hashable {
    public let rule: RecurrenceRule
    /// The start's wall time (year, month, day, hour, minute, second), in ``timeZone``.
    public let start: DateComponents
    public let timeZone: TimeZone
    /// EXDATE: occurrences that do not happen (compared to the second), sorted.
    public let exceptionDates: [Date]

    /// The most candidate times (and days without one) one answer examines before it gives up.
    public static let searchBudget = 4_000_000

    let plan: RecurrencePlan
    let exceptions: Set<Int>
    /// For a rule with `COUNT`: the wall time of its last occurrence (`Int.min` when it has none),
    /// found once when the schedule is made, so each later answer expands only the periods around
    /// the date asked about instead of counting from the start. `nil` for other rules.
    let countEnd: Int?

    /// A schedule starting at a wall time in `timeZone` (the components' year, month, day, hour,
    /// minute and second; missing time fields are 0).
    ///
    /// - Throws: ``ChimeError`` `invalidTrigger` for a rule ``RecurrenceRule/validate()`` refuses,
    ///   or a start that is not a date of the years 1…9999 (field `trigger.start`).
    ///
    /// ```swift
    /// let daily = try RecurrenceSchedule(rule: RecurrenceRule(frequency: .daily, end: .count(3)),
    ///                                    start: DateComponents(year: 2027, month: 3, day: 1, hour: 7, minute: 30),
    ///                                    timeZone: TimeZone(identifier: "America/New_York")!)
    /// ```
    public init(rule: RecurrenceRule, start: DateComponents, timeZone: TimeZone, exceptionDates: [Date] = []) throws {
        try self.init(rule: rule, start: start, timeZone: timeZone, exceptionDates: exceptionDates, knownCountEnd: nil)
    }

    /// The public initialiser, with ``countEnd`` as a store kept it (`nil`: compute it).
    init(rule: RecurrenceRule, start: DateComponents, timeZone: TimeZone, exceptionDates: [Date], knownCountEnd: Int?)
        throws
    {
        try rule.validate()
        guard let year = start.year, let month = start.month, let day = start.day, (1...9999).contains(year),
            (1...12).contains(month),
            (1...CivilDays.daysIn(month: month, year: year)).contains(day)
        else {
            throw ChimeError(
                .invalidTrigger, field: "trigger.start",
                "the start needs a year (1…9999), a month and a day of that month; it was \(FireDates.describe(start))")
        }
        let hour = start.hour ?? 0
        let minute = start.minute ?? 0
        let second = start.second ?? 0
        guard (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second) else {
            throw ChimeError(
                .invalidTrigger, field: "trigger.start",
                "the start's time must be 00:00:00 to 23:59:59; it was \(FireDates.describe(start))")
        }
        self.rule = rule
        self.start = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        self.timeZone = timeZone
        let exceptions = Set(exceptionDates.map { Int($0.timeIntervalSince1970.rounded(.down)) })
        self.exceptions = exceptions
        self.exceptionDates = exceptions.sorted().map { Date(timeIntervalSince1970: TimeInterval($0)) }
        let plan = RecurrencePlan(
            rule: rule,
            startWall: CivilDays.days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second)
        self.plan = plan
        if let limit = rule.count {
            countEnd = knownCountEnd ?? Self.lastWall(of: plan, count: limit)
        } else {
            countEnd = nil
        }
    }

    /// The wall time of the `count`-th occurrence from the start (or the last one, when there are
    /// fewer within the search), `Int.min` when there is none.
    private static func lastWall(of plan: RecurrencePlan, count: Int) -> Int {
        var counted = 0
        var last = Int.min
        plan.generate(fromPeriod: 0, budget: searchBudget) { wall in
            if wall < plan.startWall { return true }
            counted += 1
            last = wall
            return counted < count
        }
        return last
    }

    /// A schedule starting at `start`'s wall time in `timeZone` (to the second).
    ///
    /// ```swift
    /// let weekly = try RecurrenceSchedule(rule: RecurrenceRule(parsing: "FREQ=WEEKLY"), start: .now, timeZone: .current)
    /// ```
    public init(rule: RecurrenceRule, start: Date, timeZone: TimeZone, exceptionDates: [Date] = []) throws {
        let seconds = Int(start.timeIntervalSince1970.rounded(.down))
        let wall = seconds + timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(seconds)))
        let (year, month, day) = CivilDays.date(days: wall.floorDivided(by: 86_400))
        let time = wall.floorModulo(86_400)
        try self.init(
            rule: rule,
            start: DateComponents(
                year: year, month: month, day: day, hour: time / 3600, minute: time / 60 % 60,
                second: time % 60),
            timeZone: timeZone, exceptionDates: exceptionDates)
    }

    /// The first occurrence strictly after `date`, or `nil` when there is none.
    ///
    /// ```swift
    /// if let date = schedule.next(after: .now) { print("next at \(date)") }
    /// ```
    public func next(after date: Date) -> Date? { next(1, after: date).first }

    /// The first `count` occurrences strictly after `date`, in order (fewer when the rule ends).
    ///
    /// ```swift
    /// for date in schedule.next(20, after: .now) { print(date) }
    /// ```
    public func next(_ count: Int, after date: Date) -> [Date] {
        guard count > 0 else { return [] }
        let after = date.timeIntervalSince1970
        guard after.isFinite, after < 253_402_300_800 else { return [] }
        let afterSecond = after < -62_135_596_800 ? -62_135_596_801 : Int(after.rounded(.down))
        var converter = WallClock(zone: timeZone)
        var collector = Collector(limit: count, after: afterSecond, exceptions: exceptions)
        // An occurrence after `after` has a wall time past `after` plus its offset, and that offset
        // is one of those in force around `after` (no zone is more than a day from UTC).
        let lowestOffset = min(
            converter.offset(at: afterSecond - 86_400), converter.offset(at: afterSecond),
            converter.offset(at: afterSecond + 86_400))
        let lowestWall = afterSecond + lowestOffset - 60
        // Start at the period around the date asked about (COUNT ends at ``countEnd``).
        let firstPeriod = plan.period(containing: lowestWall)
        plan.generate(fromPeriod: firstPeriod, budget: Self.searchBudget) { wall in
            if wall < plan.startWall { return true }
            switch rule.end {
            case .never, .until(.instant): break
            case .count:
                if wall > countEnd ?? .max { return false }
            case .until(.date(let year, let month, let day)):
                if wall >= (CivilDays.days(year: year, month: month, day: day) + 1) * 86_400 { return false }
            case .until(.localTime(let year, let month, let day, let hour, let minute, let second)):
                if wall > CivilDays.days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60
                    + second
                {
                    return false
                }
            }
            if wall < lowestWall { return true }
            let (instant, moved) = converter.instant(wall: wall)
            if case .until(.instant(let until)) = rule.end, Double(instant) > until.timeIntervalSince1970 {
                // A time moved by a gap may pass UNTIL while later wall times do not.
                return moved != 0
            }
            return collector.take(instant: instant, wall: wall, moved: moved)
        }
        return collector.finish().map { Date(timeIntervalSince1970: TimeInterval($0)) }
    }

    /// The instant of a wall time in `zone` as the occurrences read it (a time a clock change skips
    /// moves forward; one that occurs twice is its first pass); `nil` for a day that does not exist.
    ///
    /// ```swift
    /// let skipped = RecurrenceSchedule.instant(ofWallTime: DateComponents(year: 2027, month: 3, day: 26, hour: 9), in: berlin)
    /// ```
    public static func instant(ofWallTime wall: DateComponents, in zone: TimeZone) -> Date? {
        guard let year = wall.year, let month = wall.month, let day = wall.day, (1...12).contains(month),
            (1...CivilDays.daysIn(month: month, year: year)).contains(day)
        else { return nil }
        var converter = WallClock(zone: zone)
        let seconds =
            CivilDays.days(year: year, month: month, day: day) * 86_400 + (wall.hour ?? 0) * 3600 + (wall.minute ?? 0)
            * 60
            + (wall.second ?? 0)
        return Date(timeIntervalSince1970: TimeInterval(converter.instant(wall: seconds).instant))
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.rule == rhs.rule && lhs.start == rhs.start && lhs.timeZone.identifier == rhs.timeZone.identifier
            && lhs.exceptionDates == rhs.exceptionDates
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(rule)
        hasher.combine(start)
        hasher.combine(timeZone.identifier)
        hasher.combine(exceptionDates)
    }
}

/// Puts generated occurrences in order of their instants. They come in wall-time order, which is
/// instant order except for a time moved forward by a gap: 02:30 moved to 03:30 comes after 03:10.
/// So a moved one waits until the wall times have passed where it lands.
private struct Collector {
    let limit: Int
    let after: Int
    let exceptions: Set<Int>
    private(set) var results: [Int] = []
    /// Moved occurrences not yet safe to hand out: (instant, the wall time past which they are).
    private var waiting: [(instant: Int, release: Int)] = []

    init(limit: Int, after: Int, exceptions: Set<Int>) {
        self.limit = limit
        self.after = after
        self.exceptions = exceptions
    }

    /// Takes one occurrence; `false` when enough are collected.
    mutating func take(instant: Int, wall: Int, moved: Int) -> Bool {
        while let first = waiting.first, first.release <= wall || (moved == 0 && first.instant <= instant) {
            waiting.removeFirst()
            emit(first.instant)
        }
        if moved == 0 {
            emit(instant)
        } else if instant > after, !exceptions.contains(instant) {
            waiting.append((instant, wall + moved))
        }
        return results.count < limit
    }

    private mutating func emit(_ instant: Int) {
        guard results.count < limit, instant > after, instant > (results.last ?? .min), !exceptions.contains(instant)
        else { return }
        results.append(instant)
    }

    mutating func finish() -> [Int] {
        for item in waiting { emit(item.instant) }
        waiting.removeAll()
        return results
    }
}

/// Wall times to instants in one zone, as RFC 5545 reads them.
private struct WallClock {
    let zone: TimeZone
    /// The last offset looked up and the instants it holds for (from a lookup to the next change).
    private var cached: (from: Int, to: Int, offset: Int)?

    init(zone: TimeZone) { self.zone = zone }

    mutating func offset(at instant: Int) -> Int {
        if let cached, instant >= cached.from, instant < cached.to { return cached.offset }
        let date = Date(timeIntervalSince1970: TimeInterval(instant))
        let offset = zone.secondsFromGMT(for: date)
        let change =
            zone.nextDaylightSavingTimeTransition(after: date).map { Int($0.timeIntervalSince1970.rounded(.up)) }
            ?? Int.max
        // Only a day past the lookup: zones also change their standard offset, which Foundation
        // does not report as a daylight-saving transition.
        cached = (instant, min(change, instant + 86_400), offset)
        return offset
    }

    /// The instant of a wall time, and how far a gap moved it (0 when the time exists). A time in a
    /// gap is read with the offset before the gap (RFC 5545 §3.3.5), which moves it forward by the
    /// gap's length; a time that occurs twice is its first pass.
    mutating func instant(wall: Int) -> (instant: Int, moved: Int) {
        let before = offset(at: wall - 86_400)
        let later = offset(at: wall + 86_400)
        if before == later {
            let instant = wall - before
            if offset(at: instant) == before { return (instant, 0) }
        }
        let candidates = [wall - before, wall - later].filter { offset(at: $0) == wall - $0 }
        if let first = candidates.min() { return (first, 0) }
        // In a gap: the offset before it.
        return (wall - before, max(0, later - before))
    }
}
