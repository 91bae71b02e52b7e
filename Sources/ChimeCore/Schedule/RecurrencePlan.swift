/// A rule's expansion, prepared once for a start: the BY parts as bit sets, the defaults RFC 5545
/// takes from the start filled in, and the periods generated one at a time as wall-clock seconds
/// (``CivilDays``). Knows nothing of time zones.
struct RecurrencePlan: Sendable {
    let frequency: RecurrenceRule.Frequency
    let interval: Int
    let startWall: Int
    let weekStart: Int

    /// Bit m for month m; 0 for every month.
    let months: UInt16
    /// Bit d for day d of the month (1…31), and for day -d counted from the end.
    let monthDays: UInt32, monthDaysFromEnd: UInt32
    let hasMonthDays: Bool
    /// Bit n for year day n (1…366) and -n; empty when not given.
    let yearDays: [Bool], yearDaysFromEnd: [Bool]
    /// Bit n for week n (1…53) and -n.
    let weekNumbers: UInt64, weekNumbersFromEnd: UInt64
    /// Bit w (Monday 0) for every such weekday; ordinals listed apart.
    let weekdays: UInt8
    let ordinals: [(weekday: Int, ordinal: Int)]
    let hasDays: Bool
    /// Allowed hours, minutes and seconds, sorted; for units finer than the frequency, all.
    let hours: [Int], minutes: [Int], seconds: [Int]
    let hourSet: UInt32, minuteSet: UInt64, secondSet: UInt64
    let setPositions: [Int]
    /// For daily and coarser rules: each occurrence's time of day, sorted.
    let times: [Int]
    /// `false` when the periods' grid can never meet the BY parts: a sub-daily step that never lands
    /// on an allowed time of day (`FREQ=MINUTELY;INTERVAL=2;BYMINUTE=1` from an even minute), a
    /// daily step of whole weeks that never lands on an allowed weekday.
    private(set) var feasible = true

    init(rule: RecurrenceRule, startWall: Int) {
        frequency = rule.frequency
        interval = rule.interval
        self.startWall = startWall
        weekStart = rule.weekStart.index
        let startDay = startWall.floorDivided(by: 86_400)
        let (_, startMonth, startMonthDay) = CivilDays.date(days: startDay)
        let startTime = startWall.floorModulo(86_400)

        var byMonth = rule.byMonth
        var byMonthDay = rule.byMonthDay
        var byDay = rule.byDay
        if rule.byWeekNumber.isEmpty, rule.byYearDay.isEmpty, rule.byMonthDay.isEmpty, rule.byDay.isEmpty {
            switch rule.frequency {
            case .yearly:
                if byMonth.isEmpty { byMonth = [startMonth] }
                byMonthDay = [startMonthDay]
            case .monthly:
                byMonthDay = [startMonthDay]
            case .weekly:
                byDay = [.init(.init(index: CivilDays.weekday(days: startDay)))]
            default:
                break
            }
        }
        months = byMonth.reduce(0) { $0 | 1 << $1 }
        monthDays = byMonthDay.filter { $0 > 0 }.reduce(0) { $0 | 1 << $1 }
        monthDaysFromEnd = byMonthDay.filter { $0 < 0 }.reduce(0) { $0 | 1 << -$1 }
        hasMonthDays = !byMonthDay.isEmpty
        if rule.byYearDay.isEmpty {
            yearDays = []
            yearDaysFromEnd = []
        } else {
            var positive = [Bool](repeating: false, count: 367)
            var negative = positive
            for day in rule.byYearDay { if day > 0 { positive[day] = true } else { negative[-day] = true } }
            yearDays = positive
            yearDaysFromEnd = negative
        }
        weekNumbers = rule.byWeekNumber.filter { $0 > 0 }.reduce(0) { $0 | 1 << $1 }
        weekNumbersFromEnd = rule.byWeekNumber.filter { $0 < 0 }.reduce(0) { $0 | 1 << -$1 }
        weekdays = byDay.filter { $0.ordinal == nil }.reduce(0) { $0 | 1 << $1.weekday.index }
        ordinals = byDay.compactMap { day in day.ordinal.map { (day.weekday.index, $0) } }
        hasDays = !byDay.isEmpty

        func values(_ given: [Int], default value: Int, all: ClosedRange<Int>, fixed: Bool) -> [Int] {
            if !given.isEmpty { return given.filter { all.contains($0) } }
            return fixed ? [value] : Array(all)
        }
        let coarse = rule.frequency.rank >= RecurrenceRule.Frequency.daily.rank
        hours = values(rule.byHour, default: startTime / 3600, all: 0...23, fixed: coarse)
        minutes = values(
            rule.byMinute, default: startTime / 60 % 60, all: 0...59,
            fixed: rule.frequency.rank >= RecurrenceRule.Frequency.hourly.rank)
        // A leap second (BYSECOND=60) never occurs: there is none in Foundation's time.
        seconds = values(rule.bySecond, default: startTime % 60, all: 0...59, fixed: rule.frequency != .secondly)
        hourSet = hours.reduce(0) { $0 | 1 << $1 }
        minuteSet = minutes.reduce(0) { $0 | 1 << $1 }
        secondSet = seconds.reduce(0) { $0 | 1 << $1 }
        setPositions = rule.bySetPosition
        var times: [Int] = []
        if coarse {
            for hour in hours {
                for minute in minutes { for second in seconds { times.append(hour * 3600 + minute * 60 + second) } }
            }
        }
        self.times = times
        feasible = gridMeetsAllowedTimes() && gridMeetsAllowedWeekdays() && setPositionsCanPick()
        switch rule.end {
        case .never, .count: lastWall = Self.lastDay * 86_400 + 86_399
        case .until(.instant(let date)):
            // No zone is more than a day from UTC.
            lastWall = min(Self.lastDay * 86_400 + 86_399, Int(date.timeIntervalSince1970.rounded(.down)) + 86_400)
        case .until(.date(let year, let month, let day)):
            lastWall = CivilDays.days(year: year, month: month, day: day) * 86_400 + 86_399
        case .until(.localTime(let year, let month, let day, let hour, let minute, let second)):
            lastWall = CivilDays.days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
        }
    }

    /// No occurrence has a later wall time: 9999-12-31 23:59:59, or a day past UNTIL.
    private(set) var lastWall = 0

    /// BYSETPOS picks nothing when every position it names is beyond the most occurrences a period
    /// can have (`FREQ=HOURLY;BYSETPOS=2` with one time an hour).
    private func setPositionsCanPick() -> Bool {
        guard let smallest = setPositions.map(abs).min() else { return true }
        let perDay = hours.count * minutes.count * seconds.count
        let most: Int =
            switch frequency {
            case .secondly: 1
            case .minutely: seconds.count
            case .hourly: minutes.count * seconds.count
            case .daily: perDay
            case .weekly: (hasDays ? weekdays.nonzeroBitCount : 7) * perDay
            case .monthly: mostDays(inMonths: 1, ordinalsPerMonth: true) * perDay
            case .yearly:
                mostDays(inMonths: months == 0 ? 12 : months.nonzeroBitCount, ordinalsPerMonth: months != 0) * perDay
            }
        return smallest <= most
    }

    /// An upper bound of the days a monthly or yearly period has, from its day-level parts.
    private func mostDays(inMonths count: Int, ordinalsPerMonth: Bool) -> Int {
        var most = count == 1 ? 31 : 366
        if hasMonthDays { most = min(most, (monthDays.nonzeroBitCount + monthDaysFromEnd.nonzeroBitCount) * count) }
        if !yearDays.isEmpty { most = min(most, yearDays.filter { $0 }.count + yearDaysFromEnd.filter { $0 }.count) }
        if hasDays {
            let plain = weekdays.nonzeroBitCount * (count == 12 && !ordinalsPerMonth ? 53 : 5 * count)
            most = min(most, plain + ordinals.count * (ordinalsPerMonth ? count : 1))
        }
        return most
    }

    /// Sub-daily periods start at `base + k·step`; their times of day are those ≡ base (mod
    /// gcd(step, 86400)).
    private func gridMeetsAllowedTimes() -> Bool {
        guard [.hourly, .minutely, .secondly].contains(frequency) else { return true }
        let step = frequency.unit * interval
        var a = step
        var b = 86_400
        while b != 0 { (a, b) = (b, a % b) }
        let phase = (startWall.floorDivided(by: frequency.unit) * frequency.unit).floorModulo(a)
        return allowedPeriodStarts().contains { $0 % a == phase }
    }

    /// A daily step of whole weeks stays on the start's weekday.
    private func gridMeetsAllowedWeekdays() -> Bool {
        guard frequency == .daily, interval % 7 == 0, hasDays else { return true }
        return weekdays & 1 << CivilDays.weekday(days: startWall.floorDivided(by: 86_400)) != 0
    }

    /// The next day after `day` that BYMONTH allows (the next day when there is no BYMONTH).
    private func nextDayWorthChecking(after day: Int) -> Int {
        guard months != 0 else { return day + 1 }
        var (year, month, _) = CivilDays.date(days: day)
        if months & 1 << month != 0 { return day + 1 }
        repeat {
            month += 1
            if month > 12 { (year, month) = (year + 1, 1) }
        } while months & 1 << month == 0
        return CivilDays.days(year: year, month: month, day: 1)
    }

    /// The last day the engine generates: 9999-12-31.
    static let lastDay = CivilDays.days(year: 9999, month: 12, day: 31)

    // MARK: - Periods

    /// The index, counted in periods from the start's (0) and rounded down to a multiple of the
    /// interval, of the period holding `wall`; 0 for a wall time before the start's period.
    func period(containing wall: Int) -> Int {
        let startDay = startWall.floorDivided(by: 86_400)
        let day = wall.floorDivided(by: 86_400)
        let raw: Int
        switch frequency {
        case .yearly:
            raw = CivilDays.date(days: day).year - CivilDays.date(days: startDay).year
        case .monthly:
            let (year, month, _) = CivilDays.date(days: day)
            let (startYear, startMonth, _) = CivilDays.date(days: startDay)
            raw = (year * 12 + month) - (startYear * 12 + startMonth)
        case .weekly:
            raw = (weekBeginning(day) - weekBeginning(startDay)) / 7
        case .daily:
            raw = day - startDay
        case .hourly, .minutely, .secondly:
            raw = wall.floorDivided(by: frequency.unit) - startWall.floorDivided(by: frequency.unit)
        }
        return max(0, raw.floorDivided(by: interval) * interval)
    }

    private func weekBeginning(_ day: Int) -> Int { day - (CivilDays.weekday(days: day) - weekStart).floorModulo(7) }

    /// Calls `body` with each occurrence's wall time in order, from period `first` on, until it
    /// returns `false`, the year 9999 ends, one 400-year cycle of periods passes without an
    /// occurrence, or `budget` checks are spent.
    func generate(fromPeriod first: Int, budget: Int, _ body: (Int) -> Bool) {
        guard feasible else { return }
        var budget = budget
        switch frequency {
        case .hourly, .minutely, .secondly:
            generateWithinDays(fromPeriod: first, budget: &budget, body)
        default:
            generateDaysAndTimes(fromPeriod: first, budget: &budget, body)
        }
    }

    /// Daily and coarser: each period is a set of days, each day the same times.
    private func generateDaysAndTimes(fromPeriod first: Int, budget: inout Int, _ body: (Int) -> Bool) {
        let startDay = startWall.floorDivided(by: 86_400)
        let (startYear, startMonth, _) = CivilDays.date(days: startDay)
        // One Gregorian cycle (400 years) of empty periods: the pattern can only repeat after it.
        let emptyLimit: Int =
            switch frequency {
            case .yearly: 400
            case .monthly: 4_800
            case .weekly: 20_871
            default: 146_097
            }
        var empty = 0
        var period = first
        var days: [Int] = []
        days.reserveCapacity(366)
        let lastDay = lastWall.floorDivided(by: 86_400)
        while budget > 0 {
            days.removeAll(keepingCapacity: true)
            switch frequency {
            case .yearly:
                let year = startYear + period
                guard year <= 9999, CivilDays.days(year: year, month: 1, day: 1) <= lastDay else { return }
                yearDays(year, into: &days, budget: &budget)
            case .monthly:
                let index = startYear * 12 + (startMonth - 1) + period
                let year = index.floorDivided(by: 12)
                let month = index.floorModulo(12) + 1
                guard year <= 9999, CivilDays.days(year: year, month: month, day: 1) <= lastDay else { return }
                budget -= 1
                if months == 0 || months & 1 << month != 0 {
                    monthDays(year, month, ordinalsInMonth: true, into: &days, budget: &budget)
                }
            case .weekly:
                let begin = weekBeginning(startDay) + period * 7
                guard begin <= lastDay else { return }
                for day in begin..<begin + 7 where day <= Self.lastDay {
                    budget -= 1
                    if matchesWithoutOrdinals(day) { days.append(day) }
                }
            default:
                let day = startDay + period
                guard day <= lastDay else { return }
                budget -= 1
                if matchesWithoutOrdinals(day) {
                    days.append(day)
                } else {
                    // Straight to the first period in a month BYMONTH allows.
                    let next = nextDayWorthChecking(after: day)
                    if next > day + interval {
                        period = (next - startDay + interval - 1) / interval * interval - interval
                    }
                }
            }
            if days.isEmpty || times.isEmpty {
                empty += 1
                if empty >= emptyLimit { return }
            } else {
                empty = 0
                let total = days.count * times.count
                budget -= total
                if setPositions.isEmpty {
                    for day in days {
                        for time in times where !body(day * 86_400 + time) { return }
                    }
                } else {
                    for index in positions(among: total)
                    where !body(days[index / times.count] * 86_400 + times[index % times.count]) {
                        return
                    }
                }
            }
            period += interval
        }
    }

    /// BYSETPOS applied to a period of `total` occurrences: the indices kept, in order.
    private func positions(among total: Int) -> [Int] {
        var kept: [Int] = []
        for position in setPositions {
            let index = position > 0 ? position - 1 : total + position
            if index >= 0, index < total { kept.append(index) }
        }
        kept.sort()
        var unique: [Int] = []
        for index in kept where index != unique.last { unique.append(index) }
        return unique
    }

    /// The days of a yearly period.
    private func yearDays(_ year: Int, into days: inout [Int], budget: inout Int) {
        if !ordinals.isEmpty, months == 0 {
            // Ordinals count within the year.
            let begin = CivilDays.days(year: year, month: 1, day: 1)
            let marked = ordinalDays(from: begin, to: begin + CivilDays.daysIn(year: year))
            for month in 1...12 {
                monthDays(year, month, ordinalsInMonth: false, marked: marked, into: &days, budget: &budget)
            }
        } else {
            for month in 1...12 where months == 0 || months & 1 << month != 0 {
                monthDays(year, month, ordinalsInMonth: true, into: &days, budget: &budget)
            }
        }
    }

    /// The days of one month that pass the day-level parts. Ordinals count within the month when
    /// `ordinalsInMonth`, otherwise they are the `marked` days.
    private func monthDays(
        _ year: Int, _ month: Int, ordinalsInMonth: Bool, marked: [Int] = [], into days: inout [Int], budget: inout Int
    ) {
        let begin = CivilDays.days(year: year, month: month, day: 1)
        let length = CivilDays.daysIn(month: month, year: year)
        let ordinalDays = ordinalsInMonth && !ordinals.isEmpty ? ordinalDays(from: begin, to: begin + length) : marked
        let yearBegin = CivilDays.days(year: year, month: 1, day: 1)
        let yearLength = CivilDays.daysIn(year: year)
        let weeks = weekNumbers | weekNumbersFromEnd != 0 ? WeekNumbers(year: year, weekStart: weekStart) : nil
        // Only the days a BYMONTHDAY names, when it is given and nothing else narrows the month.
        budget -= length
        for monthDay in 1...length {
            if hasMonthDays, monthDays & 1 << monthDay == 0, monthDaysFromEnd & 1 << (length - monthDay + 1) == 0 {
                continue
            }
            let day = begin + monthDay - 1
            if !yearDays.isEmpty {
                let yearDay = day - yearBegin + 1
                if !yearDays[yearDay], !yearDaysFromEnd[yearLength - yearDay + 1] { continue }
            }
            if let weeks, !weeks.matches(day, weekNumbers, weekNumbersFromEnd) { continue }
            if hasDays, weekdays & 1 << CivilDays.weekday(days: day) == 0, !ordinalDays.contains(day) { continue }
            days.append(day)
        }
    }

    /// The days the BYDAY ordinals pick in `begin ..< end` (a month or a year).
    private func ordinalDays(from begin: Int, to end: Int) -> [Int] {
        ordinals.compactMap { weekday, ordinal in
            let day: Int
            if ordinal > 0 {
                day = begin + (weekday - CivilDays.weekday(days: begin)).floorModulo(7) + (ordinal - 1) * 7
            } else {
                day = end - 1 - (CivilDays.weekday(days: end - 1) - weekday).floorModulo(7) + (ordinal + 1) * 7
            }
            return day >= begin && day < end ? day : nil
        }
    }

    /// Whether a day passes BYMONTH, BYMONTHDAY, BYYEARDAY and BYDAY (without ordinals: the
    /// frequencies that check single days allow none).
    private func matchesWithoutOrdinals(_ day: Int) -> Bool {
        let needsDate = months != 0 || hasMonthDays || !yearDays.isEmpty
        if needsDate {
            let (year, month, monthDay) = CivilDays.date(days: day)
            if months != 0, months & 1 << month == 0 { return false }
            if hasMonthDays {
                let length = CivilDays.daysIn(month: month, year: year)
                if monthDays & 1 << monthDay == 0, monthDaysFromEnd & 1 << (length - monthDay + 1) == 0 { return false }
            }
            if !yearDays.isEmpty {
                let yearDay = day - CivilDays.days(year: year, month: 1, day: 1) + 1
                if !yearDays[yearDay], !yearDaysFromEnd[CivilDays.daysIn(year: year) - yearDay + 1] { return false }
            }
        }
        if hasDays, weekdays & 1 << CivilDays.weekday(days: day) == 0 { return false }
        return true
    }

    /// Hourly, minutely and secondly: periods on a grid from the start, taken a day at a time so
    /// that a day the day-level parts exclude is skipped whole.
    private func generateWithinDays(fromPeriod first: Int, budget: inout Int, _ body: (Int) -> Bool) {
        let unit = frequency.unit
        let step = unit * interval
        let base = startWall.floorDivided(by: unit) * unit
        /// The first grid point at or after `wall`.
        func gridPoint(atOrAfter wall: Int) -> Int {
            wall <= base ? base : base + (wall - base + step - 1).floorDivided(by: step) * step
        }
        var point = base + first * unit
        var emptyDays = 0
        while budget > 0 {
            let day = point.floorDivided(by: 86_400)
            guard point <= lastWall else { return }
            let dayEnd = (day + 1) * 86_400
            budget -= 1
            var found = false
            if matchesWithoutOrdinals(day) {
                let gridCount = (dayEnd - point + step - 1) / step
                // Walk whichever is shorter: the grid points of the day, or the allowed times.
                let allowed: Int =
                    switch frequency {
                    case .hourly: hours.count
                    case .minutely: hours.count * minutes.count
                    default: hours.count * minutes.count * seconds.count
                    }
                if gridCount <= allowed {
                    var periodStart = point
                    while periodStart < dayEnd {
                        budget -= 1
                        let time = periodStart - day * 86_400
                        if allows(time) {
                            found = true
                            if !emitPeriod(at: periodStart, budget: &budget, body) { return }
                        }
                        periodStart += step
                    }
                } else {
                    for time in allowedPeriodStarts() {
                        budget -= 1
                        let periodStart = day * 86_400 + time
                        guard periodStart >= point, (periodStart - base).floorModulo(step) == 0 else { continue }
                        found = true
                        if !emitPeriod(at: periodStart, budget: &budget, body) { return }
                    }
                }
            }
            if found {
                emptyDays = 0
            } else {
                emptyDays += 1
                if emptyDays >= 146_097 { return }
            }
            point = gridPoint(atOrAfter: found ? dayEnd : nextDayWorthChecking(after: day) * 86_400)
        }
    }

    /// Whether a period starting at `time` (seconds into its day) passes the BY parts of units at
    /// least as long as the frequency's.
    private func allows(_ time: Int) -> Bool {
        if hourSet & 1 << (time / 3600) == 0 { return false }
        if frequency != .hourly, minuteSet & 1 << (time / 60 % 60) == 0 { return false }
        if frequency == .secondly, secondSet & 1 << (time % 60) == 0 { return false }
        return true
    }

    /// The period starts within a day the BY parts allow, in order (seconds into the day).
    private func allowedPeriodStarts() -> [Int] {
        switch frequency {
        case .hourly: return hours.map { $0 * 3600 }
        case .minutely: return hours.flatMap { hour in minutes.map { hour * 3600 + $0 * 60 } }
        default:
            return hours.flatMap { hour in minutes.flatMap { minute in seconds.map { hour * 3600 + minute * 60 + $0 } }
            }
        }
    }

    /// The occurrences of one sub-daily period: an hour's minutes and seconds, a minute's seconds.
    private func emitPeriod(at periodStart: Int, budget: inout Int, _ body: (Int) -> Bool) -> Bool {
        var offsets: [Int]
        switch frequency {
        case .hourly: offsets = minutes.flatMap { minute in seconds.map { minute * 60 + $0 } }
        case .minutely: offsets = seconds
        default: offsets = [0]
        }
        budget -= offsets.count
        if !setPositions.isEmpty { offsets = positions(among: offsets.count).map { offsets[$0] } }
        for offset in offsets where !body(periodStart + offset) { return false }
        return true
    }
}

/// Week numbers of one year as RFC 5545's BYWEEKNO counts them (weeks start on WKST; week 1 has at
/// least four days of the year). A day early in January that belongs to the last week of the year
/// before, or late in December to week 1 of the next, matches that week's number counted from the
/// start only (as python-dateutil does).
private struct WeekNumbers {
    let firstWeek: Int, nextFirstWeek: Int, previousFirstWeek: Int

    init(year: Int, weekStart: Int) {
        firstWeek = CivilDays.firstWeek(of: year, weekStart: weekStart)
        nextFirstWeek = CivilDays.firstWeek(of: year + 1, weekStart: weekStart)
        previousFirstWeek = CivilDays.firstWeek(of: year - 1, weekStart: weekStart)
    }

    func matches(_ day: Int, _ fromStart: UInt64, _ fromEnd: UInt64) -> Bool {
        if day < firstWeek { return fromStart & 1 << ((day - previousFirstWeek) / 7 + 1) != 0 }
        if day >= nextFirstWeek { return fromStart & 1 << 1 != 0 }
        let number = (day - firstWeek) / 7 + 1
        let weeks = (nextFirstWeek - firstWeek) / 7
        return fromStart & 1 << number != 0 || fromEnd & 1 << (weeks - number + 1) != 0
    }
}

extension RecurrenceRule.Frequency {
    /// Seconds in one period of the sub-daily frequencies.
    var unit: Int {
        switch self {
        case .secondly: 1
        case .minutely: 60
        default: 3600
        }
    }

    /// Longer frequencies rank higher.
    var rank: Int {
        switch self {
        case .secondly: 0
        case .minutely: 1
        case .hourly: 2
        case .daily: 3
        case .weekly: 4
        case .monthly: 5
        case .yearly: 6
        }
    }
}
