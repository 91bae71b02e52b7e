import ChimeCore
import Foundation
import FuzzSupport

// Fuzz target: RFC 5545 recurrence rules (RecurrenceRule(parsing:), rruleString) and their
// occurrences (RecurrenceSchedule.next). The input is the rule's text, then a NUL, then bytes that
// choose the start (a wall time), the zone and the date asked about. Checks:
// - a refusal is a ChimeError `invalidTrigger` whose field is `trigger.rrule` or `trigger.rrule.PART`;
// - an accepted rule passes validate() (nothing is accepted that the validator refuses), and its
//   rruleString — also lower-cased, and with `RRULE:` before it — parses back to an equal rule whose
//   rruleString is the same text;
// - next dates are strictly increasing and after the date asked about; the first k of n are the
//   next k; asking after each occurrence gives the one after it; an occurrence made an exception
//   (EXDATE) is left out and the others stay; a COUNT rule has at most COUNT occurrences from its
//   start, an UNTIL rule none after UNTIL;
// - in UTC (from 1583, where Foundation's calendar is Gregorian) every occurrence matches the rule,
//   checked with Foundation's calendar: BYMONTH,
//   BYMONTHDAY, BYYEARDAY, BYDAY (and its ordinals where they count within a month or a year),
//   BYHOUR, BYMINUTE, BYSECOND, the start's time and day where no BY part replaces them, and INTERVAL
//   (periods from the start's).

let zones = [
    "UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "America/St_Johns",
    "Pacific/Chatham",
    "Pacific/Apia",
].map { TimeZone(identifier: $0)! }
let utc = zones[0]
let calendar: Calendar = {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = utc
    return calendar
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecurrenceRule(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = fuzzBytes(start, count)
    let split = bytes.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
    let text = String(decoding: split[0], as: UTF8.self)
    var choices = split.count > 1 ? Array(split[1]) : []
    choices += [UInt8](repeating: 0, count: max(0, 12 - choices.count))

    let rule: RecurrenceRule
    do {
        rule = try RecurrenceRule(parsing: text)
    } catch let error as ChimeError {
        require(error.code == .invalidTrigger && !error.message.isEmpty, "refused with \(error)")
        // By scalars: an unknown part's name is the field's last piece, and a combining mark at its
        // start joins the "." before it into one Character (finding 9).
        require(
            error.field == "trigger.rrule"
                || error.field?.unicodeScalars.starts(with: "trigger.rrule.".unicodeScalars) == true,
            "a refusal without its part: \(error)")
        return 0
    } catch {
        fatalError("parsing threw \(type(of: error)): \(error)")
    }
    checkText(rule)

    // The start: mostly 1970-2069, sometimes any year 1-9999; the zone; the date asked about.
    let year =
        choices[0] & 0x80 != 0
        ? 1 + Int(UInt16(choices[0] & 0x7F) << 8 | UInt16(choices[1])) % 9999 : 1970 + Int(choices[1]) % 100
    let month = 1 + Int(choices[2]) % 12
    let startComponents = DateComponents(
        year: year, month: month, day: 1 + Int(choices[3]) % 31, hour: Int(choices[4]) % 24,
        minute: Int(choices[5]) % 60, second: choices[6] & 0x80 != 0 ? Int(choices[6]) % 60 : 0)
    let zone = zones[Int(choices[7]) % zones.count]
    let schedule: RecurrenceSchedule
    do {
        schedule = try RecurrenceSchedule(rule: rule, start: startComponents, timeZone: zone)
    } catch let error as ChimeError {
        // Only a day past the month's end is refused.
        require(error.field == "trigger.start", "the start \(startComponents) refused: \(error)")
        return 0
    } catch {
        fatalError("the schedule threw \(type(of: error)): \(error)")
    }
    // As a wall time in UTC, then back by up to a day, or on by up to about 500 days.
    var startUTC = calendar
    startUTC.timeZone = zone
    guard let startInstant = startUTC.date(from: startComponents) else { return 0 }
    let shift = (Int(choices[8]) << 8 | Int(choices[9])) - 256
    let after = startInstant.addingTimeInterval(TimeInterval(shift) * (choices[10] & 1 == 0 ? 337 : 86_400 * 2))
    checkOccurrences(schedule, after: after, startInstant: startInstant, checkMatching: zone == utc)
    return 0
}

func checkText(_ rule: RecurrenceRule) {
    do { try rule.validate() } catch { fatalError("an accepted rule fails validate(): \(error) — \(rule.rruleString)") }
    let text = rule.rruleString
    for form in [text, text.lowercased(), "RRULE:" + text] {
        do {
            let again = try RecurrenceRule(parsing: form)
            require(again == rule, "\(form) parses to another rule: \(again.rruleString)")
            require(again.rruleString == text, "\(form) is written back as \(again.rruleString)")
        } catch {
            fatalError("the rule's own text \(form) is refused: \(error)")
        }
    }
}

func seconds(_ date: Date) -> Int { Int(date.timeIntervalSince1970.rounded(.down)) }

func checkOccurrences(_ schedule: RecurrenceSchedule, after: Date, startInstant: Date, checkMatching: Bool) {
    let rule = schedule.rule
    let dates = schedule.next(6, after: after)
    for (index, date) in dates.enumerated() {
        require(date > after, "occurrence \(date) is not after \(after) — \(rule.rruleString)")
        require(
            date.timeIntervalSince1970.rounded(.down) == date.timeIntervalSince1970,
            "occurrence \(date) is not a whole second")
        if index > 0 { require(date > dates[index - 1], "occurrences not increasing: \(dates) — \(rule.rruleString)") }
    }
    require(
        schedule.next(2, after: after) == Array(dates.prefix(2)),
        "the first 2 are not the first 2 of 6 — \(rule.rruleString)")
    for index in 0..<min(2, dates.count) {
        let next = schedule.next(after: dates[index])
        if index + 1 < dates.count {
            require(
                next == dates[index + 1],
                "after \(dates[index]) comes \(String(describing: next)), not the next of \(dates) — \(rule.rruleString)"
            )
        } else {
            // The search from the first date may have spent its budget (RecurrenceSchedule.searchBudget)
            // where this one, from a later period, does not.
            require(
                next.map { $0 > dates[index] } ?? true,
                "after \(dates[index]) comes the earlier \(String(describing: next))")
        }
    }
    if let skipped = dates.first {
        do {
            let without = try RecurrenceSchedule(
                rule: rule, start: schedule.start, timeZone: schedule.timeZone, exceptionDates: [skipped])
            require(
                without.next(5, after: after) == Array(dates.dropFirst()),
                "EXDATE \(skipped) changes the others — \(rule.rruleString)")
        } catch {
            fatalError("the same schedule with an EXDATE is refused: \(error)")
        }
    }
    switch rule.end {
    case .count(let count) where count <= 5:
        let all = schedule.next(count + 1, after: startInstant.addingTimeInterval(-1))
        require(all.count <= count, "COUNT=\(count) gave \(all.count) occurrences — \(rule.rruleString)")
    case .until(.instant(let until)):
        require(dates.allSatisfy { $0 <= until }, "an occurrence after UNTIL \(until): \(dates)")
    default: break
    }
    // Foundation's Gregorian calendar is Julian before 1582-10-15; RFC 5545's (and Chime's) is
    // Gregorian throughout. So the matching is checked from 1583 on.
    if checkMatching, schedule.start.year! >= 1583 {
        for date in dates where date.timeIntervalSince1970 >= -12_212_553_600 { checkMatches(date, schedule) }
    }
}

func daysIn(year: Int, month: Int) -> Int {
    calendar.range(of: .day, in: .month, for: calendar.date(from: DateComponents(year: year, month: month, day: 1))!)!
        .count
}

/// An occurrence in UTC matches every part of its rule.
func checkMatches(_ date: Date, _ schedule: RecurrenceSchedule) {
    let rule = schedule.rule
    let start = schedule.start
    let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
    let (year, month, day, hour, minute, second) = (c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!)
    let weekday = RecurrenceRule.Weekday.allCases[(c.weekday! + 5) % 7]  // Foundation: 1 is Sunday
    let monthLength = daysIn(year: year, month: month)
    let yearLength = calendar.range(of: .day, in: .year, for: date)!.count
    let dayOfYear = calendar.ordinality(of: .day, in: .year, for: date)!
    func fail(_ what: String) -> Never {
        fatalError("\(date) does not match \(what) of \(rule.rruleString) from \(start)")
    }
    func inList(_ value: Int, _ list: [Int], length: Int) -> Bool {
        list.contains { $0 > 0 ? $0 == value : length + $0 + 1 == value }
    }
    if !rule.byMonth.isEmpty, !rule.byMonth.contains(month) { fail("BYMONTH") }
    if !rule.byMonthDay.isEmpty, !inList(day, rule.byMonthDay, length: monthLength) { fail("BYMONTHDAY") }
    if !rule.byYearDay.isEmpty, !inList(dayOfYear, rule.byYearDay, length: yearLength) { fail("BYYEARDAY") }
    if !rule.byDay.isEmpty {
        let withinMonth = rule.frequency == .monthly || (rule.frequency == .yearly && !rule.byMonth.isEmpty)
        let ordinalsCount =
            rule.byMonthDay.isEmpty && rule.byYearDay.isEmpty && rule.byWeekNumber.isEmpty
            && (rule.frequency == .monthly || rule.frequency == .yearly)
        let (position, length) = withinMonth ? (day, monthLength) : (dayOfYear, yearLength)
        let nth = (position - 1) / 7 + 1
        let nthFromEnd = -((length - position) / 7 + 1)
        let matched = rule.byDay.contains { entry in
            guard entry.weekday == weekday else { return false }
            guard let ordinal = entry.ordinal, ordinalsCount else { return true }
            return ordinal == nth || ordinal == nthFromEnd
        }
        if !matched { fail("BYDAY") }
    }
    let order: [RecurrenceRule.Frequency] = [.secondly, .minutely, .hourly, .daily, .weekly, .monthly, .yearly]
    let rank = order.firstIndex(of: rule.frequency)!
    if rule.byHour.isEmpty ? rank >= 3 && hour != start.hour! : !rule.byHour.contains(hour) {
        fail("the hour (BYHOUR)")
    }
    if rule.byMinute.isEmpty ? rank >= 2 && minute != start.minute! : !rule.byMinute.contains(minute) {
        fail("the minute (BYMINUTE)")
    }
    if rule.bySecond.isEmpty ? rank >= 1 && second != start.second! : !rule.bySecond.contains(second) {
        fail("the second (BYSECOND)")
    }
    let noDayParts =
        rule.byMonthDay.isEmpty && rule.byYearDay.isEmpty && rule.byWeekNumber.isEmpty && rule.byDay.isEmpty
    if noDayParts {
        if rule.frequency == .weekly,
            weekday
                != RecurrenceRule.Weekday.allCases[
                    (calendar.component(.weekday, from: calendar.date(from: start)!) + 5) % 7]
        {
            fail("the start's weekday")
        }
        if rule.frequency == .monthly || rule.frequency == .yearly, day != start.day! { fail("the start's day") }
        if rule.frequency == .yearly, rule.byMonth.isEmpty, month != start.month! { fail("the start's month") }
    }
    // INTERVAL: whole periods from the start's period.
    let startDate = calendar.date(from: start)!
    let startDay = Int((startDate.timeIntervalSince1970 / 86_400).rounded(.down))
    let thisDay = Int((date.timeIntervalSince1970 / 86_400).rounded(.down))
    let periods: Int
    switch rule.frequency {
    case .yearly: periods = year - start.year!
    case .monthly: periods = (year - start.year!) * 12 + month - start.month!
    case .weekly:
        // Weeks begin on WKST; 1970-01-01 was a Thursday (index 3, Monday 0).
        func weekBegin(_ day: Int) -> Int { day - ((day + 3 - rule.weekStart.index) % 7 + 7) % 7 }
        periods = (weekBegin(thisDay) - weekBegin(startDay)) / 7
    case .daily: periods = thisDay - startDay
    case .hourly: periods = seconds(date).floorDiv(3600) - seconds(startDate).floorDiv(3600)
    case .minutely: periods = seconds(date).floorDiv(60) - seconds(startDate).floorDiv(60)
    case .secondly: periods = seconds(date) - seconds(startDate)
    }
    // (A yearly rule's week 1 may begin in December and its week 53 end in January: its year is
    // not the calendar year, so BYWEEKNO's are left out.)
    if periods % rule.interval != 0, !(rule.frequency == .yearly && !rule.byWeekNumber.isEmpty) {
        fail("INTERVAL (\(periods) periods from the start)")
    }
}

extension Int {
    func floorDiv(_ other: Int) -> Int { (self - ((self % other) + other) % other) / other }
}

extension RecurrenceRule.Weekday {
    /// Monday 0 … Sunday 6.
    var index: Int { Self.allCases.firstIndex(of: self)! }
}
