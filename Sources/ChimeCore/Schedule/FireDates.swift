import Foundation

/// Next-fire-date math. Pure: "now" and the time zone are passed in.
public enum FireDates {
    /// The date a newly added request first fires, or `nil` for triggers that fire on events
    /// (location, push) and for no trigger (delivered at once).
    ///
    /// - Throws: ``ChimeError`` `invalidTrigger` when a calendar trigger matches no future date
    ///   (see ``matchesNoFutureDate(_:)``).
    public static func first(for trigger: NotificationTrigger?, now: Date, timeZone: TimeZone) throws -> Date? {
        switch trigger {
        case .none, .location, .push:
            return nil
        case .timeInterval(let interval, _):
            return now.addingTimeInterval(interval)
        case .calendar(let components, _):
            guard let date = nextCalendarDate(matching: components, after: now, timeZone: timeZone) else {
                throw ChimeError(
                    .invalidTrigger, field: noFutureDateField,
                    "the date components \(describe(components)) match no date after \(now); give components that occur in the future"
                )
            }
            return date
        case .recurrence(let schedule):
            guard let date = schedule.next(after: now) else {
                throw ChimeError(
                    .invalidTrigger, field: "trigger.rrule",
                    "the recurrence rule \(schedule.rule.rruleString) from \(describe(schedule.start)) in \(schedule.timeZone.identifier) has no occurrence after \(now) (it ended, or every later one is an exception date); give a rule or start with occurrences to come"
                )
            }
            return date
        }
    }

    /// The field ``first(for:now:timeZone:)`` names when a calendar trigger matches no future date.
    static let noFutureDateField = "trigger.dateComponents"

    /// Whether `error` is ``first(for:now:timeZone:)``'s refusal of a calendar trigger that matches
    /// no future date ("today at 09:00" added after 09:00), which iOS accepts and never fires.
    public static func matchesNoFutureDate(_ error: ChimeError) -> Bool {
        error.code == .invalidTrigger && error.field == noFutureDateField
    }

    /// The next occurrence of a repeating trigger strictly after `now`, given the occurrence that
    /// was due (`due`) and the request's anchor (when it was added). Missed occurrences coalesce:
    /// the result is always in the future.
    public static func next(for trigger: NotificationTrigger, due: Date, anchor: Date, now: Date, timeZone: TimeZone)
        -> Date?
    {
        switch trigger {
        case .timeInterval(let interval, true):
            // Occurrences are anchor + k·interval; take the first one after now.
            let elapsed = now.timeIntervalSince(anchor)
            var k = (elapsed / interval).rounded(.down) + 1
            var candidate = anchor.addingTimeInterval(k * interval)
            while candidate <= now || candidate <= due {
                k += 1
                candidate = anchor.addingTimeInterval(k * interval)
            }
            return candidate
        case .calendar(let components, true):
            let reference = max(now, due)
            return nextCalendarDate(matching: components, after: reference, timeZone: timeZone, previous: due)
        case .recurrence(let schedule):
            // From the period around the later of the two: missed occurrences coalesce, and
            // COUNT, UNTIL and the exception dates end or skip as the rule says.
            return schedule.next(after: max(now, due))
        default:
            return nil
        }
    }

    /// The most upcoming dates ``upcoming(_:count:timeZone:)`` lists for one request.
    public static let maximumUpcoming = 100

    /// A pending request's next `count` fire dates (at most ``maximumUpcoming``), its next fire
    /// date first: one for a trigger that does not repeat, none for one that fires on an event.
    /// Each is what the scheduler would compute if it fired at the one before.
    ///
    /// ```swift
    /// let dates = FireDates.upcoming(pending, count: 5, timeZone: .current)
    /// ```
    public static func upcoming(_ pending: PendingRequest, count: Int, timeZone: TimeZone) -> [Date] {
        let count = min(count, maximumUpcoming)
        guard count > 0, let first = pending.nextFireDate else { return [] }
        guard let trigger = pending.request.trigger, trigger.repeats else { return [first] }
        if case .recurrence(let schedule) = trigger { return [first] + schedule.next(count - 1, after: first) }
        var dates = [first]
        var anchor = pending.anchor
        while dates.count < count, let due = dates.last,
            let next = next(for: trigger, due: due, anchor: anchor, now: due, timeZone: timeZone)
        {
            if case .calendar = trigger { anchor = due }
            dates.append(next)
        }
        return dates
    }

    /// Foundation's `nextDate(after:matching:matchingPolicy: .nextTime, repeatedTimePolicy: .first)`
    /// in the components' time zone, or `timeZone` when they have none (a floating schedule).
    ///
    /// When `previous` is given (a repeating trigger that just fired), a wall-clock time that
    /// occurs twice (the hour repeated when clocks go back) fires only once: the second
    /// occurrence of the same wall time is skipped.
    public static func nextCalendarDate(
        matching components: DateComponents, after date: Date, timeZone: TimeZone,
        previous: Date? = nil
    ) -> Date? {
        var calendar = Calendar(identifier: components.calendar?.identifier ?? .gregorian)
        calendar.timeZone = components.timeZone ?? timeZone
        var matching = components
        matching.calendar = nil
        matching.timeZone = nil
        if previous == nil, let exact = exactInstant(matching, calendar: calendar) {
            return exact > date ? exact : nil
        }
        // Foundation's search can hand back an instant before `date` (a one-moment date earlier in
        // the current month); no such instant is a next date.
        guard let found = search(matching, calendar: calendar, after: date, previous: previous), found > date else {
            return nil
        }
        return found
    }

    /// The search behind ``nextCalendarDate(matching:after:timeZone:previous:)``, for components
    /// without their calendar and zone (they are `calendar`'s).
    static func search(_ matching: DateComponents, calendar: Calendar, after date: Date, previous: Date?) -> Date? {
        var reference = date
        for _ in 0..<16 {
            let found = calendar.nextDate(
                after: reference, matching: matching, matchingPolicy: .nextTime,
                repeatedTimePolicy: .first, direction: .forward)
            var candidate: Date
            if let gap = gapMatch(matching, calendar: calendar, after: reference, before: found) {
                candidate = gap
            } else if let found {
                candidate = found
                if let unrounded = lastInstantOfSecond(before: found, ifRoundedUpFrom: matching, calendar: calendar) {
                    // Already handed out (a repeating trigger that just fired): look past it.
                    guard unrounded > reference else {
                        reference = found
                        continue
                    }
                    candidate = unrounded
                }
            } else {
                return nil
            }
            if let previous, isRepeatedWallTime(candidate, of: previous, calendar: calendar) {
                reference = candidate
                continue
            }
            // `.nextTime` also rolls a day that does not exist (the 31st of April, the 29th of
            // February in a common year) over to the next day's midnight. Only times skipped by a
            // clock change should move; such days are skipped instead, as on Apple's platforms.
            if !dayMatches(candidate, matching, calendar: calendar) {
                reference = candidate
                continue
            }
            return candidate
        }
        return nil
    }

    /// Components that name one instant (year, month, day, hour, minute and second, nothing of
    /// weeks or weekdays) far from any daylight-saving change of the zone: the instant itself, which
    /// is what the search below would find, found without searching (calendar triggers for one
    /// moment are common, and the search costs tens of microseconds). `nil` when the components do
    /// not qualify or the instant does not round-trip to the same wall time (a day that does not
    /// exist, a time a clock change skips or repeats, nanoseconds Foundation rounds into the next
    /// second): then the search decides.
    static func exactInstant(_ matching: DateComponents, calendar: Calendar) -> Date? {
        guard let year = matching.year, let month = matching.month, let day = matching.day, let hour = matching.hour,
            let minute = matching.minute, let second = matching.second,
            matching.era == nil, matching.weekday == nil, matching.weekdayOrdinal == nil, matching.quarter == nil,
            matching.weekOfMonth == nil, matching.weekOfYear == nil, matching.yearForWeekOfYear == nil,
            calendar.identifier == .gregorian,
            let instant = calendar.date(from: matching)
        else { return nil }
        let found = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: instant)
        guard found.year == year, found.month == month, found.day == day, found.hour == hour, found.minute == minute,
            found.second == second, (found.nanosecond ?? 0) / 1_000_000 == (matching.nanosecond ?? 0) / 1_000_000
        else { return nil }
        let zone = calendar.timeZone
        if let transition = zone.nextDaylightSavingTimeTransition(after: instant.addingTimeInterval(-2 * 86_400)),
            transition < instant.addingTimeInterval(2 * 86_400)
        {
            return nil
        }
        return instant
    }

    /// Foundation adds the nanoseconds to a `Double` of seconds, so a value near a whole second
    /// (999,999,999 ns) rounds up into the next second — at 23:59:59 into the next day, which then
    /// matches no date. When that happened to `found`, the last instant before it (still in the
    /// second asked for); otherwise `nil`.
    private static func lastInstantOfSecond(
        before found: Date, ifRoundedUpFrom matching: DateComponents,
        calendar: Calendar
    ) -> Date? {
        guard let nanosecond = matching.nanosecond, nanosecond >= 500_000_000,
            calendar.component(.nanosecond, from: found) < 500_000_000
        else { return nil }
        return Date(timeIntervalSinceReferenceDate: found.timeIntervalSinceReferenceDate.nextDown)
    }

    /// Whether the candidate falls on a day the date-level components ask for.
    private static func dayMatches(_ candidate: Date, _ matching: DateComponents, calendar: Calendar) -> Bool {
        let found = calendar.dateComponents([.year, .month, .day, .weekday], from: candidate)
        if let day = matching.day, found.day != day { return false }
        if let month = matching.month, found.month != month { return false }
        if let year = matching.year, found.year != year { return false }
        if let weekday = matching.weekday, found.weekday != weekday { return false }
        return true
    }

    /// The first moment after a daylight-saving gap, when a wall time the components match lies
    /// inside a gap between `date` and `limit` (or within the components' year, or a year, when
    /// `limit` is `nil`).
    ///
    /// Foundation's `.nextTime` is meant to give exactly this, but swift-foundation misses gaps that
    /// are not a whole hour (Australia/Lord_Howe's 30-minute change): it skips to the next day, or
    /// finds no date at all for a one-off date.
    private static func gapMatch(_ matching: DateComponents, calendar: Calendar, after date: Date, before limit: Date?)
        -> Date?
    {
        let zone = calendar.timeZone
        var wallClock = calendar
        wallClock.timeZone = TimeZone(secondsFromGMT: 0)!
        let end: Date
        if let limit {
            end = limit
        } else if let year = matching.year {
            end =
                calendar.date(from: DateComponents(year: year + 1, month: 1, day: 2))
                ?? date.addingTimeInterval(400 * 86_400)
        } else {
            end = date.addingTimeInterval(400 * 86_400)
        }
        var from = date
        for _ in 0..<64 {
            guard let transition = zone.nextDaylightSavingTimeTransition(after: from), transition < end else {
                return nil
            }
            from = transition
            let before = zone.secondsFromGMT(for: transition.addingTimeInterval(-1))
            let after = zone.secondsFromGMT(for: transition)
            guard after > before else { continue }  // clocks went back: no gap
            // The skipped wall-clock times, written as if they were UTC.
            let gapStart = transition.addingTimeInterval(Double(before))
            let gapEnd = transition.addingTimeInterval(Double(after))
            if let wall = wallClock.nextDate(
                after: gapStart.addingTimeInterval(-0.001), matching: matching, matchingPolicy: .strict,
                direction: .forward),
                wall < gapEnd
            {
                return transition
            }
        }
        return nil
    }

    /// Whether `candidate` shows the same wall-clock time on the same day as `previous` (the
    /// second pass through an hour repeated by a daylight-saving change).
    private static func isRepeatedWallTime(_ candidate: Date, of previous: Date, calendar: Calendar) -> Bool {
        guard candidate > previous, candidate.timeIntervalSince(previous) <= 3 * 3600 else { return false }
        let units: Set<Calendar.Component> = [.year, .month, .day, .hour, .minute, .second]
        return calendar.dateComponents(units, from: candidate) == calendar.dateComponents(units, from: previous)
    }

    /// A readable form of date components for messages: `hour=8 minute=30 weekday=2 timeZone=Europe/Berlin`.
    public static func describe(_ components: DateComponents) -> String {
        var parts: [String] = []
        let fields: [(String, Int?)] = [
            ("era", components.era), ("year", components.year), ("month", components.month), ("day", components.day),
            ("hour", components.hour), ("minute", components.minute), ("second", components.second),
            ("nanosecond", components.nanosecond), ("weekday", components.weekday),
            ("weekdayOrdinal", components.weekdayOrdinal), ("quarter", components.quarter),
            ("weekOfMonth", components.weekOfMonth), ("weekOfYear", components.weekOfYear),
            ("yearForWeekOfYear", components.yearForWeekOfYear),
        ]
        for (name, value) in fields { if let value { parts.append("\(name)=\(value)") } }
        if let zone = components.timeZone { parts.append("timeZone=\(zone.identifier)") }
        return parts.isEmpty ? "(none)" : parts.joined(separator: " ")
    }
}
