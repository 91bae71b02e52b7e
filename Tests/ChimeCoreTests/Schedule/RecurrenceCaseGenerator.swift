import ChimeCore
import Foundation

/// Random recurrence rules, starts and zones from a fixed seed (SplitMix64), so a failure repeats.
/// Rules keep to what RFC 5545 allows, and stay clear of three places where python-dateutil (the
/// oracle) is known to differ from RFC 5545: a BYDAY list mixing plain weekdays with ordinals
/// (dateutil intersects the two instead of joining them), sub-daily rules narrowed to some days
/// (dateutil steps through every minute or second, which takes it minutes) and BYSETPOS in WEEKLY
/// rules (dateutil's first week begins at DTSTART, see `rule()`).
struct RecurrenceCaseGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
    mutating func chance(_ percent: Int) -> Bool { int(1...100) <= percent }
    mutating func pick<T>(_ values: [T]) -> T { values[int(0...values.count - 1)] }
    mutating func some(_ count: ClosedRange<Int>, _ value: (inout Self) -> Int) -> [Int] {
        (0..<int(count)).map { _ in value(&self) }
    }
    mutating func signed(_ range: ClosedRange<Int>) -> Int { chance(30) ? -int(range) : int(range) }

    static let zones = [
        "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "UTC", "America/Sao_Paulo",
        "Pacific/Auckland", "America/St_Johns",
    ]

    mutating func rule() -> RecurrenceRule {
        let frequency = pick([
            RecurrenceRule.Frequency.yearly, .yearly, .monthly, .monthly, .monthly, .weekly, .weekly, .daily, .daily,
            .hourly, .minutely, .secondly,
        ])
        var rule = RecurrenceRule(frequency: frequency, interval: chance(50) ? 1 : int(2...5))
        switch int(1...3) {
        case 1: rule.end = .count(int(1...30))
        case 2:
            let seconds = int(631_152_000...2_208_988_800)  // 1990 … 2040
            rule.end = .until(.instant(Date(timeIntervalSince1970: TimeInterval(seconds))))
        default: break
        }
        let subDaily = [.hourly, .minutely, .secondly].contains(frequency)
        let sparseAllowed = !subDaily
        if sparseAllowed, chance(30) { rule.byMonth = some(1...3) { $0.int(1...12) } }
        if sparseAllowed, frequency != .weekly, chance(30) { rule.byMonthDay = some(1...3) { $0.signed(1...31) } }
        if frequency == .yearly, chance(15) { rule.byYearDay = some(1...3) { $0.signed(1...366) } }
        if frequency == .yearly, chance(15) { rule.byWeekNumber = some(1...2) { $0.signed(1...53) } }
        if frequency != .secondly, chance(40) {
            let ordinals = [.monthly, .yearly].contains(frequency) && rule.byWeekNumber.isEmpty && chance(50)
            let days = some(1...3) { $0.int(0...6) }.map { RecurrenceRule.Weekday.allCases[$0] }
            rule.byDay = days.map { day in
                guard ordinals else { return .init(day) }
                // Within a month (monthly, or yearly with BYMONTH) at most the fifth: dateutil
                // fails with an IndexError on 6MO … 53MO there.
                let withinMonth = frequency == .monthly || !rule.byMonth.isEmpty
                return .init(day, ordinal: withinMonth ? signed(1...5) : signed(1...53))
            }
        }
        if frequency != .secondly, chance(25) { rule.byHour = some(1...3) { $0.int(0...23) } }
        if chance(20) { rule.byMinute = some(1...3) { $0.int(0...59) } }
        if chance(10) { rule.bySecond = some(1...2) { $0.int(0...59) } }
        if rule.hasAnyByPart, chance(25) {
            let positions = some(1...2) { $0.pick([1, 2, 3, -1, -2]) }
            // Not with WEEKLY: dateutil's first week begins at DTSTART, not at WKST, so BYSETPOS
            // counts within a shorter set there (found by make fuzz-differential; RFC 5545 counts
            // within the whole week, as Chime does). Drawn either way, so the other cases stay.
            if frequency != .weekly { rule.bySetPosition = positions }
        }
        if chance(20) { rule.weekStart = pick(RecurrenceRule.Weekday.allCases) }
        return rule
    }

    /// A start's wall time, 1990 … 2039.
    mutating func start() -> DateComponents {
        let year = int(1990...2039)
        let month = int(1...12)
        let day = int(1...(month == 2 ? 28 : 30))
        return DateComponents(
            year: year, month: month, day: day, hour: int(0...23), minute: pick([0, 0, 15, 30, 45, int(0...59)]),
            second: chance(80) ? 0 : int(0...59))
    }
}

extension RecurrenceRule {
    var hasAnyByPart: Bool {
        !(bySecond.isEmpty && byMinute.isEmpty && byHour.isEmpty && byDay.isEmpty && byMonthDay.isEmpty
            && byYearDay.isEmpty
            && byWeekNumber.isEmpty && byMonth.isEmpty)
    }
}
