import ChimeCore
import Foundation

/// Fires at each occurrence of an RFC 5545 recurrence rule (`RRULE`) from a start in a named time
/// zone, skipping exception dates (EXDATE), until the rule's `COUNT` or `UNTIL` ends it.
///
/// **A Chime addition**, not part of Apple's UserNotifications: Apple's triggers repeat only at an
/// interval or whenever date components match, so "every other Tuesday and Thursday until the
/// year's end", "the last workday of every month" or "three mornings, then stop" cannot be said
/// with them. The occurrences are RFC 5545's, computed by Chime's own engine (``RecurrenceSchedule``,
/// held to python-dateutil), not by Foundation's `Calendar.RecurrenceRule`, which on Linux gets
/// some monthly rules wrong; a `Calendar.RecurrenceRule` is accepted for familiarity and converted.
///
/// ```swift
/// let lastFriday = try UNRecurrenceNotificationTrigger(
///     rrule: "FREQ=MONTHLY;BYDAY=-1FR",
///     start: DateComponents(year: 2027, month: 1, day: 29, hour: 9),
///     timeZone: TimeZone(identifier: "Europe/Berlin")!)
/// let request = UNNotificationRequest(identifier: "review", content: content, trigger: lastFriday)
/// try await UNUserNotificationCenter.current().add(request)
/// print(lastFriday.nextTriggerDates(3))   // the next three last Fridays, 09:00 in Berlin
/// ```
open class UNRecurrenceNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {
    // `@unchecked Sendable`: immutable after init, as its superclass.

    /// A trigger from a schedule built in code.
    public convenience init(schedule: RecurrenceSchedule) {
        self.init(value: .recurrence(schedule), scheduledDate: nil)
    }

    /// A trigger from RRULE text (with or without `RRULE:`) and the first occurrence's wall time.
    ///
    /// - Parameters:
    ///   - start: DTSTART, as a wall time (year, month, day, hour, minute, second) in `timeZone`.
    ///   - timeZone: the zone the rule's times are in; `nil` for the center's (the device's) zone now.
    ///   - exceptionDates: EXDATE, occurrences that do not happen.
    /// - Throws: ``ChimeError`` `invalidTrigger` naming the part at fault (`trigger.rrule.BYDAY`), or
    ///   `trigger.start`.
    ///
    /// ```swift
    /// let standUp = try UNRecurrenceNotificationTrigger(rrule: "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
    ///                                                   start: DateComponents(year: 2027, month: 1, day: 4, hour: 9, minute: 30))
    /// ```
    public convenience init(
        rrule: String, start: DateComponents, timeZone: TimeZone? = nil, exceptionDates: [Date] = []
    ) throws {
        let schedule = try RecurrenceSchedule(
            rule: RecurrenceRule(parsing: rrule), start: start,
            timeZone: timeZone ?? ChimeEnvironment.timeZone(), exceptionDates: exceptionDates)
        self.init(schedule: schedule)
    }

    /// A trigger from RRULE text, starting at `start`'s wall time in `timeZone` (to the second).
    ///
    /// ```swift
    /// let daily = try UNRecurrenceNotificationTrigger(rrule: "FREQ=DAILY;COUNT=3", start: tomorrowMorning)
    /// ```
    public convenience init(rrule: String, start: Date, timeZone: TimeZone? = nil, exceptionDates: [Date] = []) throws {
        let schedule = try RecurrenceSchedule(
            rule: RecurrenceRule(parsing: rrule), start: start,
            timeZone: timeZone ?? ChimeEnvironment.timeZone(), exceptionDates: exceptionDates)
        self.init(schedule: schedule)
    }

    /// A trigger from Foundation's `Calendar.RecurrenceRule`, for code written against it: its
    /// frequency, interval, end, months, days of the month and year, weeks, weekdays, hours, minutes,
    /// seconds and set positions, the calendar's time zone and first weekday (`WKST`), starting at
    /// `start`. The occurrences are then Chime's (RFC 5545's), not Foundation's.
    ///
    /// - Throws: ``ChimeError`` `invalidTrigger` for what RFC 5545 has no word for: a calendar other
    ///   than the Gregorian one, a leap month, or a rule RFC 5545 refuses.
    ///
    /// ```swift
    /// var rule = Calendar.RecurrenceRule(calendar: berlinCalendar, frequency: .monthly)
    /// rule.weekdays = [.nth(-1, .friday)]
    /// let trigger = try UNRecurrenceNotificationTrigger(rule, start: firstFriday)
    /// ```
    public convenience init(_ recurrenceRule: Calendar.RecurrenceRule, start: Date, exceptionDates: [Date] = []) throws
    {
        let rule = try RecurrenceRule(recurrenceRule)
        let schedule = try RecurrenceSchedule(
            rule: rule, start: start, timeZone: recurrenceRule.calendar.timeZone,
            exceptionDates: exceptionDates)
        self.init(schedule: schedule)
    }

    /// The rule, its start, time zone and exception dates.
    public var schedule: RecurrenceSchedule {
        if case .recurrence(let schedule) = value { return schedule }
        preconditionFailure("a UNRecurrenceNotificationTrigger holds a recurrence")
    }

    /// The rule as RFC 5545 text: `FREQ=MONTHLY;BYDAY=-1FR`.
    public var rrule: String { schedule.rule.rruleString }

    /// The first occurrence after the current center's "now" (the simulator's virtual clock in a
    /// test), or `nil` when the rule has ended.
    open func nextTriggerDate() -> Date? { schedule.next(after: ChimeEnvironment.now()) }

    /// The next `count` occurrences after the current center's "now", in order (fewer when the rule
    /// ends first).
    ///
    /// ```swift
    /// for date in trigger.nextTriggerDates(5) { print(date) }
    /// ```
    open func nextTriggerDates(_ count: Int) -> [Date] { schedule.next(count, after: ChimeEnvironment.now()) }

    open override var description: String {
        "<UNRecurrenceNotificationTrigger rrule: \(rrule), start: \(JSONMapping.formatWallTime(schedule.start)), timeZone: \(schedule.timeZone.identifier)>"
    }
}

extension RecurrenceRule {
    /// The RFC 5545 rule a Foundation `Calendar.RecurrenceRule` describes.
    ///
    /// - Throws: ``ChimeError`` `invalidTrigger` (field `trigger.rrule`) for a non-Gregorian calendar
    ///   or a leap month, or what ``validate()`` refuses.
    ///
    /// ```swift
    /// let rule = try RecurrenceRule(Calendar.RecurrenceRule.monthly(calendar: .current, weekdays: [.nth(-1, .friday)]))
    /// ```
    public init(_ foundation: Calendar.RecurrenceRule) throws {
        guard foundation.calendar.identifier == .gregorian else {
            throw ChimeError(
                .invalidTrigger, field: "trigger.rrule",
                "the rule's calendar is \(foundation.calendar.identifier); RFC 5545 rules are Gregorian: use Calendar(identifier: .gregorian)"
            )
        }
        let frequency: Frequency =
            switch foundation.frequency {
            case .minutely: .minutely
            case .hourly: .hourly
            case .daily: .daily
            case .weekly: .weekly
            case .monthly: .monthly
            case .yearly: .yearly
            }
        self.init(frequency: frequency, interval: foundation.interval)
        if let count = foundation.end.occurrences {
            end = .count(count)
        } else if let date = foundation.end.date {
            end = .until(.instant(Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))))
        }
        bySecond = foundation.seconds
        byMinute = foundation.minutes
        byHour = foundation.hours
        byMonthDay = foundation.daysOfTheMonth
        byYearDay = foundation.daysOfTheYear
        byWeekNumber = foundation.weeks
        bySetPosition = foundation.setPositions
        if foundation.months.contains(where: \.isLeap) {
            throw ChimeError(
                .invalidTrigger, field: "trigger.rrule.BYMONTH", "leap months are not Gregorian; give months 1 to 12")
        }
        byMonth = foundation.months.map(\.index)
        byDay = foundation.weekdays.map { weekday in
            switch weekday {
            case .every(let day): WeekdayNumber(Weekday(day))
            case .nth(let ordinal, let day): WeekdayNumber(Weekday(day), ordinal: ordinal)
            }
        }
        weekStart = Weekday(Locale.Weekday.allCasesInAppleOrder[(foundation.calendar.firstWeekday - 1 + 7) % 7])
        try validate()
    }
}

extension RecurrenceRule.Weekday {
    init(_ day: Locale.Weekday) {
        self =
            switch day {
            case .monday: .monday
            case .tuesday: .tuesday
            case .wednesday: .wednesday
            case .thursday: .thursday
            case .friday: .friday
            case .saturday: .saturday
            case .sunday: .sunday
            }
    }
}

extension Locale.Weekday {
    /// Sunday first, as `Calendar.firstWeekday` numbers them (1 = Sunday).
    static let allCasesInAppleOrder: [Locale.Weekday] = [
        .sunday, .monday, .tuesday, .wednesday, .thursday, .friday, .saturday,
    ]
}
