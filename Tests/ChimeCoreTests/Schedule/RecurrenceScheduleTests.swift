import ChimeCore
import Foundation
import TestThreads
import Testing

/// A schedule from RRULE text and a wall-time start "YYYY-MM-DD HH:MM[:SS]".
private func schedule(_ rule: String, _ start: String, _ zone: String = "America/New_York", exdates: [Date] = []) throws
    -> RecurrenceSchedule
{
    let numbers = start.split(whereSeparator: { "- :".contains($0) }).compactMap { Int($0) }
    let components = DateComponents(
        year: numbers[0], month: numbers[1], day: numbers[2], hour: numbers[3], minute: numbers[4],
        second: numbers.count > 5 ? numbers[5] : 0)
    return try RecurrenceSchedule(
        rule: RecurrenceRule(parsing: rule), start: components,
        timeZone: try #require(TimeZone(identifier: zone)), exceptionDates: exdates)
}

/// "YYYY-MM-DD HH:MM" in the schedule's zone, with the UTC offset when `offset`.
private func wall(_ date: Date, _ zone: TimeZone, offset: Bool = false) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = zone
    let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
    func pad(_ value: Int?) -> String { value.map { $0 < 10 ? "0\($0)" : "\($0)" } ?? "??" }
    var text = "\(c.year ?? 0)-\(pad(c.month))-\(pad(c.day)) \(pad(c.hour)):\(pad(c.minute))"
    if offset {
        let seconds = zone.secondsFromGMT(for: date)
        text += " \(seconds < 0 ? "-" : "+")\(pad(abs(seconds) / 3600)):\(pad(abs(seconds) / 60 % 60))"
    }
    return text
}

/// The first `count` occurrences from the start (the start included when it matches).
private func firsts(_ schedule: RecurrenceSchedule, _ count: Int, offset: Bool = false) throws -> [String] {
    let zone = schedule.timeZone
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = zone
    let start = try #require(calendar.date(from: schedule.start))
    return schedule.next(count, after: start.addingTimeInterval(-7200)).map { wall($0, zone, offset: offset) }
}

/// Occurrences of rules: RFC 5545's examples, daylight-saving changes, leap days, month ends and
/// the bounds of the search.
@Suite("Recurrence schedules", .testThreads)
struct RecurrenceScheduleTests {
    struct Example: Sendable, CustomTestStringConvertible {
        var name: String
        var rule: String
        var start: String
        var expected: [String]
        /// How many the rule has in all, when it ends.
        var total: Int?
        var testDescription: String { name }
    }

    /// RFC 5545 section 3.8.5.3's examples (America/New_York), the cases written from their
    /// descriptions.
    static let examples: [Example] = [
        Example(
            name: "daily for 10 occurrences", rule: "FREQ=DAILY;COUNT=10", start: "1997-09-02 09:00",
            expected: (2...11).map { "1997-09-\($0 < 10 ? "0" : "")\($0) 09:00" }, total: 10),
        Example(
            name: "daily until 24 December 1997", rule: "FREQ=DAILY;UNTIL=19971224T000000Z", start: "1997-09-02 09:00",
            expected: ["1997-09-02 09:00", "1997-09-03 09:00"], total: 113),
        Example(
            name: "every other day", rule: "FREQ=DAILY;INTERVAL=2", start: "1997-09-02 09:00",
            expected: ["1997-09-02 09:00", "1997-09-04 09:00", "1997-09-06 09:00"]),
        Example(
            name: "every 10 days, 5 occurrences", rule: "FREQ=DAILY;INTERVAL=10;COUNT=5", start: "1997-09-02 09:00",
            expected: [
                "1997-09-02 09:00", "1997-09-12 09:00", "1997-09-22 09:00", "1997-10-02 09:00", "1997-10-12 09:00",
            ], total: 5),
        Example(
            name: "every day in January for 3 years (yearly)",
            rule: "FREQ=YEARLY;UNTIL=20000131T140000Z;BYMONTH=1;BYDAY=SU,MO,TU,WE,TH,FR,SA", start: "1998-01-01 09:00",
            expected: ["1998-01-01 09:00", "1998-01-02 09:00"], total: 93),
        Example(
            name: "every day in January for 3 years (daily)", rule: "FREQ=DAILY;UNTIL=20000131T140000Z;BYMONTH=1",
            start: "1998-01-01 09:00", expected: ["1998-01-01 09:00", "1998-01-02 09:00"], total: 93),
        Example(
            name: "weekly for 10 occurrences, across the end of daylight saving", rule: "FREQ=WEEKLY;COUNT=10",
            start: "1997-09-02 09:00",
            expected: [
                "1997-09-02 09:00", "1997-09-09 09:00", "1997-09-16 09:00", "1997-09-23 09:00", "1997-09-30 09:00",
                "1997-10-07 09:00", "1997-10-14 09:00", "1997-10-21 09:00", "1997-10-28 09:00", "1997-11-04 09:00",
            ], total: 10),
        Example(
            name: "every other week on Monday, Wednesday and Friday until 24 December 1997",
            rule: "FREQ=WEEKLY;INTERVAL=2;UNTIL=19971224T000000Z;WKST=SU;BYDAY=MO,WE,FR", start: "1997-09-01 09:00",
            expected: [
                "1997-09-01 09:00", "1997-09-03 09:00", "1997-09-05 09:00", "1997-09-15 09:00", "1997-09-17 09:00",
                "1997-09-19 09:00", "1997-09-29 09:00", "1997-10-01 09:00",
            ], total: 25),
        Example(
            name: "every other week on Tuesday and Thursday, 8 occurrences",
            rule: "FREQ=WEEKLY;INTERVAL=2;COUNT=8;WKST=SU;BYDAY=TU,TH",
            start: "1997-09-02 09:00",
            expected: [
                "1997-09-02 09:00", "1997-09-04 09:00", "1997-09-16 09:00", "1997-09-18 09:00", "1997-09-30 09:00",
                "1997-10-02 09:00", "1997-10-14 09:00", "1997-10-16 09:00",
            ], total: 8),
        Example(
            name: "monthly on the first Friday, 10 occurrences", rule: "FREQ=MONTHLY;COUNT=10;BYDAY=1FR",
            start: "1997-09-05 09:00",
            expected: [
                "1997-09-05 09:00", "1997-10-03 09:00", "1997-11-07 09:00", "1997-12-05 09:00", "1998-01-02 09:00",
                "1998-02-06 09:00", "1998-03-06 09:00", "1998-04-03 09:00", "1998-05-01 09:00", "1998-06-05 09:00",
            ], total: 10),
        Example(
            name: "every other month on the first and last Sunday",
            rule: "FREQ=MONTHLY;INTERVAL=2;COUNT=10;BYDAY=1SU,-1SU",
            start: "1997-09-07 09:00",
            expected: [
                "1997-09-07 09:00", "1997-09-28 09:00", "1997-11-02 09:00", "1997-11-30 09:00", "1998-01-04 09:00",
                "1998-01-25 09:00", "1998-03-01 09:00", "1998-03-29 09:00", "1998-05-03 09:00", "1998-05-31 09:00",
            ], total: 10),
        Example(
            name: "monthly on the second-to-last Monday, 6 occurrences", rule: "FREQ=MONTHLY;COUNT=6;BYDAY=-2MO",
            start: "1997-09-22 09:00",
            expected: [
                "1997-09-22 09:00", "1997-10-20 09:00", "1997-11-17 09:00", "1997-12-22 09:00", "1998-01-19 09:00",
                "1998-02-16 09:00",
            ], total: 6),
        Example(
            name: "monthly on the third-to-last day", rule: "FREQ=MONTHLY;BYMONTHDAY=-3", start: "1997-09-28 09:00",
            expected: [
                "1997-09-28 09:00", "1997-10-29 09:00", "1997-11-28 09:00", "1997-12-29 09:00", "1998-01-29 09:00",
                "1998-02-26 09:00",
            ]),
        Example(
            name: "monthly on the 2nd and 15th", rule: "FREQ=MONTHLY;COUNT=10;BYMONTHDAY=2,15",
            start: "1997-09-02 09:00",
            expected: [
                "1997-09-02 09:00", "1997-09-15 09:00", "1997-10-02 09:00", "1997-10-15 09:00", "1997-11-02 09:00",
                "1997-11-15 09:00", "1997-12-02 09:00", "1997-12-15 09:00", "1998-01-02 09:00", "1998-01-15 09:00",
            ], total: 10),
        Example(
            name: "monthly on the first and last day", rule: "FREQ=MONTHLY;COUNT=10;BYMONTHDAY=1,-1",
            start: "1997-09-30 09:00",
            expected: [
                "1997-09-30 09:00", "1997-10-01 09:00", "1997-10-31 09:00", "1997-11-01 09:00", "1997-11-30 09:00",
                "1997-12-01 09:00", "1997-12-31 09:00", "1998-01-01 09:00", "1998-01-31 09:00", "1998-02-01 09:00",
            ], total: 10),
        Example(
            name: "every 18 months on the 10th to 15th",
            rule: "FREQ=MONTHLY;INTERVAL=18;COUNT=10;BYMONTHDAY=10,11,12,13,14,15",
            start: "1997-09-10 09:00",
            expected: [
                "1997-09-10 09:00", "1997-09-11 09:00", "1997-09-12 09:00", "1997-09-13 09:00", "1997-09-14 09:00",
                "1997-09-15 09:00", "1999-03-10 09:00", "1999-03-11 09:00", "1999-03-12 09:00", "1999-03-13 09:00",
            ], total: 10),
        Example(
            name: "every Tuesday, every other month (every Tuesday of the month, not only the first)",
            rule: "FREQ=MONTHLY;INTERVAL=2;BYDAY=TU", start: "1997-09-02 09:00",
            expected: [
                "1997-09-02 09:00", "1997-09-09 09:00", "1997-09-16 09:00", "1997-09-23 09:00", "1997-09-30 09:00",
                "1997-11-04 09:00", "1997-11-11 09:00", "1997-11-18 09:00", "1997-11-25 09:00", "1998-01-06 09:00",
            ]),
        Example(
            name: "yearly in June and July", rule: "FREQ=YEARLY;COUNT=10;BYMONTH=6,7", start: "1997-06-10 09:00",
            expected: (1997...2001).flatMap { ["\($0)-06-10 09:00", "\($0)-07-10 09:00"] }, total: 10),
        Example(
            name: "every other year in January, February and March",
            rule: "FREQ=YEARLY;INTERVAL=2;COUNT=10;BYMONTH=1,2,3",
            start: "1997-03-10 09:00",
            expected: [
                "1997-03-10 09:00", "1999-01-10 09:00", "1999-02-10 09:00", "1999-03-10 09:00", "2001-01-10 09:00",
                "2001-02-10 09:00", "2001-03-10 09:00", "2003-01-10 09:00", "2003-02-10 09:00", "2003-03-10 09:00",
            ], total: 10),
        Example(
            name: "every third year on days 1, 100 and 200",
            rule: "FREQ=YEARLY;INTERVAL=3;COUNT=10;BYYEARDAY=1,100,200",
            start: "1997-01-01 09:00",
            expected: [
                "1997-01-01 09:00", "1997-04-10 09:00", "1997-07-19 09:00", "2000-01-01 09:00", "2000-04-09 09:00",
                "2000-07-18 09:00", "2003-01-01 09:00", "2003-04-10 09:00", "2003-07-19 09:00", "2006-01-01 09:00",
            ], total: 10),
        Example(
            name: "every 20th Monday of the year", rule: "FREQ=YEARLY;BYDAY=20MO", start: "1997-05-19 09:00",
            expected: ["1997-05-19 09:00", "1998-05-18 09:00", "1999-05-17 09:00"]),
        Example(
            name: "Monday of week 20", rule: "FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO", start: "1997-05-12 09:00",
            expected: ["1997-05-12 09:00", "1998-05-11 09:00", "1999-05-17 09:00"]),
        Example(
            name: "every Thursday in March", rule: "FREQ=YEARLY;BYMONTH=3;BYDAY=TH", start: "1997-03-13 09:00",
            expected: [
                "1997-03-13 09:00", "1997-03-20 09:00", "1997-03-27 09:00", "1998-03-05 09:00", "1998-03-12 09:00",
                "1998-03-19 09:00", "1998-03-26 09:00", "1999-03-04 09:00",
            ]),
        Example(
            name: "every Thursday in June, July and August", rule: "FREQ=YEARLY;BYDAY=TH;BYMONTH=6,7,8",
            start: "1997-06-05 09:00",
            expected: [
                "1997-06-05 09:00", "1997-06-12 09:00", "1997-06-19 09:00", "1997-06-26 09:00", "1997-07-03 09:00",
            ]),
        Example(
            name: "every Friday the 13th", rule: "FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13", start: "1997-09-02 09:00",
            expected: [
                "1998-02-13 09:00", "1998-03-13 09:00", "1998-11-13 09:00", "1999-08-13 09:00", "2000-10-13 09:00",
            ]),
        Example(
            name: "the first Saturday after the first Sunday",
            rule: "FREQ=MONTHLY;BYDAY=SA;BYMONTHDAY=7,8,9,10,11,12,13",
            start: "1997-09-13 09:00",
            expected: [
                "1997-09-13 09:00", "1997-10-11 09:00", "1997-11-08 09:00", "1997-12-13 09:00", "1998-01-10 09:00",
                "1998-02-07 09:00", "1998-03-07 09:00", "1998-04-11 09:00", "1998-05-09 09:00", "1998-06-13 09:00",
            ]),
        Example(
            name: "US presidential election day",
            rule: "FREQ=YEARLY;INTERVAL=4;BYMONTH=11;BYDAY=TU;BYMONTHDAY=2,3,4,5,6,7,8",
            start: "1996-11-05 09:00", expected: ["1996-11-05 09:00", "2000-11-07 09:00", "2004-11-02 09:00"]),
        Example(
            name: "the third Tuesday, Wednesday or Thursday of the month",
            rule: "FREQ=MONTHLY;COUNT=3;BYDAY=TU,WE,TH;BYSETPOS=3",
            start: "1997-09-04 09:00", expected: ["1997-09-04 09:00", "1997-10-07 09:00", "1997-11-06 09:00"], total: 3),
        Example(
            name: "the second-to-last weekday of the month", rule: "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-2",
            start: "1997-09-29 09:00",
            expected: [
                "1997-09-29 09:00", "1997-10-30 09:00", "1997-11-27 09:00", "1997-12-30 09:00", "1998-01-29 09:00",
                "1998-02-26 09:00", "1998-03-30 09:00",
            ]),
        Example(
            name: "every 3 hours from 09:00 to 17:00 on one day", rule: "FREQ=HOURLY;INTERVAL=3;UNTIL=19970902T210000Z",
            start: "1997-09-02 09:00", expected: ["1997-09-02 09:00", "1997-09-02 12:00", "1997-09-02 15:00"], total: 3),
        Example(
            name: "every 15 minutes, 6 occurrences", rule: "FREQ=MINUTELY;INTERVAL=15;COUNT=6",
            start: "1997-09-02 09:00",
            expected: [
                "1997-09-02 09:00", "1997-09-02 09:15", "1997-09-02 09:30", "1997-09-02 09:45", "1997-09-02 10:00",
                "1997-09-02 10:15",
            ], total: 6),
        Example(
            name: "every hour and a half, 4 occurrences", rule: "FREQ=MINUTELY;INTERVAL=90;COUNT=4",
            start: "1997-09-02 09:00",
            expected: ["1997-09-02 09:00", "1997-09-02 10:30", "1997-09-02 12:00", "1997-09-02 13:30"], total: 4),
        Example(
            name: "every 20 minutes from 09:00 to 16:40 (daily)",
            rule: "FREQ=DAILY;BYHOUR=9,10,11,12,13,14,15,16;BYMINUTE=0,20,40",
            start: "1997-09-02 09:00",
            expected: ["1997-09-02 09:00", "1997-09-02 09:20", "1997-09-02 09:40", "1997-09-02 10:00"]
                + ["1997-09-02 16:00", "1997-09-02 16:20", "1997-09-02 16:40", "1997-09-03 09:00"]),
        Example(
            name: "every 20 minutes from 09:00 to 16:40 (minutely)",
            rule: "FREQ=MINUTELY;INTERVAL=20;BYHOUR=9,10,11,12,13,14,15,16",
            start: "1997-09-02 09:00",
            expected: ["1997-09-02 09:00", "1997-09-02 09:20", "1997-09-02 09:40", "1997-09-02 10:00"]
                + ["1997-09-02 16:00", "1997-09-02 16:20", "1997-09-02 16:40", "1997-09-03 09:00"]),
        Example(
            name: "WKST=MO: every other week on Tuesday and Sunday",
            rule: "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO",
            start: "1997-08-05 09:00",
            expected: ["1997-08-05 09:00", "1997-08-10 09:00", "1997-08-19 09:00", "1997-08-24 09:00"], total: 4),
        Example(
            name: "WKST=SU: every other week on Tuesday and Sunday",
            rule: "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU",
            start: "1997-08-05 09:00",
            expected: ["1997-08-05 09:00", "1997-08-17 09:00", "1997-08-19 09:00", "1997-08-31 09:00"], total: 4),
        Example(
            name: "the 15th and 30th, February's 30th skipped", rule: "FREQ=MONTHLY;BYMONTHDAY=15,30;COUNT=5",
            start: "2007-01-15 09:00",
            expected: [
                "2007-01-15 09:00", "2007-01-30 09:00", "2007-02-15 09:00", "2007-03-15 09:00", "2007-03-30 09:00",
            ], total: 5),
    ]

    @Test("RFC 5545's examples", arguments: examples)
    func example(_ example: Example) throws {
        let schedule = try schedule(example.rule, example.start)
        let all = try firsts(schedule, 40)
        if example.expected.contains(where: { $0.hasPrefix("1997-09-02 16") }) {
            // The 20-minute examples list the day's first and last four.
            #expect(Array(all.prefix(4)) == Array(example.expected.prefix(4)))
            #expect(Array(all[21..<25]) == Array(example.expected.suffix(4)), "\(all)")
        } else {
            #expect(Array(all.prefix(example.expected.count)) == example.expected)
        }
        if let total = example.total {
            #expect(try firsts(schedule, 500).count == total)
        }
    }

    @Test("skipped dates (EXDATE) still count toward COUNT")
    func exceptionsCountTowardCount() throws {
        let plain = try schedule("FREQ=DAILY;COUNT=5", "2027-03-01 08:00", "Europe/Berlin")
        let all = plain.next(10, after: .distantPast)
        #expect(all.count == 5)
        let skipping = try schedule(
            "FREQ=DAILY;COUNT=5", "2027-03-01 08:00", "Europe/Berlin", exdates: [all[0], all[2]])
        #expect(skipping.next(10, after: .distantPast) == [all[1], all[3], all[4]])
        #expect(skipping.next(after: all[0]) == all[1])
        #expect(skipping.next(after: all[4]) == nil)
    }

    @Test("a daily 02:30 in Berlin: moved forward by the spring gap, once when clocks go back")
    func berlinDaylightSaving() throws {
        let spring = try schedule("FREQ=DAILY", "2026-03-27 02:30", "Europe/Berlin")
        #expect(
            try firsts(spring, 4, offset: true)
                == [
                    "2026-03-27 02:30 +01:00", "2026-03-28 02:30 +01:00", "2026-03-29 03:30 +02:00",
                    "2026-03-30 02:30 +02:00",
                ])
        let autumn = try schedule("FREQ=DAILY", "2026-10-24 02:30", "Europe/Berlin")
        #expect(
            try firsts(autumn, 3, offset: true) == [
                "2026-10-24 02:30 +02:00", "2026-10-25 02:30 +02:00", "2026-10-26 02:30 +01:00",
            ])
    }

    @Test("a daily 02:30 (and 01:30) in New York across spring-forward and fall-back")
    func newYorkDaylightSaving() throws {
        let spring = try schedule("FREQ=DAILY", "2026-03-07 02:30")
        #expect(
            try firsts(spring, 3, offset: true) == [
                "2026-03-07 02:30 -05:00", "2026-03-08 03:30 -04:00", "2026-03-09 02:30 -04:00",
            ])
        let autumn = try schedule("FREQ=DAILY", "2026-10-31 02:30")
        #expect(
            try firsts(autumn, 3, offset: true) == [
                "2026-10-31 02:30 -04:00", "2026-11-01 02:30 -05:00", "2026-11-02 02:30 -05:00",
            ])
        let repeated = try schedule("FREQ=DAILY", "2026-10-31 01:30")
        #expect(
            try firsts(repeated, 3, offset: true) == [
                "2026-10-31 01:30 -04:00", "2026-11-01 01:30 -04:00", "2026-11-02 01:30 -05:00",
            ])
        // Hourly periods are wall-clock hours: the repeated 01:00 hour is one period.
        let hourly = try schedule("FREQ=HOURLY;COUNT=4", "2026-11-01 00:00")
        #expect(
            try firsts(hourly, 4, offset: true)
                == [
                    "2026-11-01 00:00 -04:00", "2026-11-01 01:00 -04:00", "2026-11-01 02:00 -05:00",
                    "2026-11-01 03:00 -05:00",
                ])
    }

    @Test("times moved by a gap are handed out in order of their instants, each instant once")
    func movedTimesInOrder() throws {
        // Lord Howe's clocks go from 02:00 to 02:30 on 2026-10-04: 02:00 and 02:15 move to 02:30
        // and 02:45, after 02:40, which exists.
        let lordHowe = try schedule("FREQ=DAILY;BYHOUR=2;BYMINUTE=0,15,40", "2026-10-03 02:00", "Australia/Lord_Howe")
        #expect(
            try firsts(lordHowe, 7, offset: true)
                == [
                    "2026-10-03 02:00 +10:30", "2026-10-03 02:15 +10:30", "2026-10-03 02:40 +10:30",
                    "2026-10-04 02:30 +11:00",
                    "2026-10-04 02:40 +11:00", "2026-10-04 02:45 +11:00", "2026-10-05 02:00 +11:00",
                ])
        // In Berlin 02:20 moves to 03:20, which the rule also names: one occurrence.
        let berlin = try schedule("FREQ=DAILY;BYHOUR=2,3;BYMINUTE=20", "2026-03-28 02:20", "Europe/Berlin")
        #expect(
            try firsts(berlin, 5, offset: true)
                == [
                    "2026-03-28 02:20 +01:00", "2026-03-28 03:20 +01:00", "2026-03-29 03:20 +02:00",
                    "2026-03-30 02:20 +02:00",
                    "2026-03-30 03:20 +02:00",
                ])
    }

    @Test("the 29th of February, yearly: leap years only, 2100 skipped")
    func leapDay() throws {
        let leap = try schedule("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", "2024-02-29 09:00", "Europe/Berlin")
        #expect(try firsts(leap, 3) == ["2024-02-29 09:00", "2028-02-29 09:00", "2032-02-29 09:00"])
        let march2096 = try #require(ISO8601DateFormatter().date(from: "2096-03-01T00:00:00Z"))
        let after2096 = try #require(leap.next(after: march2096))
        #expect(wall(after2096, leap.timeZone) == "2104-02-29 09:00")
        // A start on the 29th: its default day.
        #expect(
            try firsts(try schedule("FREQ=YEARLY", "2024-02-29 09:00", "Europe/Berlin"), 2) == [
                "2024-02-29 09:00", "2028-02-29 09:00",
            ])
    }

    @Test("month ends: the last day with BYMONTHDAY=-1; the 31st only in months that have one")
    func monthEnds() throws {
        let last = try schedule("FREQ=MONTHLY;BYMONTHDAY=-1", "2027-01-31 18:00", "Europe/Berlin")
        #expect(
            try firsts(last, 4) == ["2027-01-31 18:00", "2027-02-28 18:00", "2027-03-31 18:00", "2027-04-30 18:00"])
        let thirtyFirst = try schedule("FREQ=MONTHLY", "2027-01-31 18:00", "Europe/Berlin")
        #expect(
            try firsts(thirtyFirst, 5) == [
                "2027-01-31 18:00", "2027-03-31 18:00", "2027-05-31 18:00", "2027-07-31 18:00", "2027-08-31 18:00",
            ])
    }

    @Test("the last workday of every month at 17:00 (BYSETPOS=-1)")
    func lastWorkday() throws {
        let workday = try schedule("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", "2027-01-01 17:00", "Europe/Berlin")
        #expect(
            try firsts(workday, 12).map { String($0.prefix(10)) }
                == [
                    "2027-01-29", "2027-02-26", "2027-03-31", "2027-04-30", "2027-05-31", "2027-06-30", "2027-07-30",
                    "2027-08-31",
                    "2027-09-30", "2027-10-29", "2027-11-30", "2027-12-31",
                ])
    }

    @Test(
        "a rule that can never match answers nil, and quickly",
        arguments: [
            "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=31", "FREQ=MONTHLY;BYMONTH=2;BYMONTHDAY=30,31",
            "FREQ=DAILY;BYMONTH=4;BYMONTHDAY=31",
            "FREQ=DAILY;INTERVAL=7;BYDAY=TU", "FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=30",
            "FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYMONTHDAY=29",
            "FREQ=MINUTELY;INTERVAL=2;BYMINUTE=1", "FREQ=YEARLY;BYYEARDAY=366;BYMONTH=1",
            // Positions past a period's only occurrence; an UNTIL before the start.
            "FREQ=HOURLY;BYHOUR=21;BYSETPOS=-2,2", "FREQ=DAILY;BYDAY=TU,TH;BYSETPOS=-2",
            "FREQ=HOURLY;UNTIL=20200101T000000Z;BYDAY=MO",
        ])
    func neverMatches(_ rule: String) throws {
        // 2025 is not a leap year: every fourth year from it is not either. 1 January 2025 is a
        // Wednesday: every seventh day from it is too.
        let schedule = try schedule(rule, "2025-01-01 00:00", "UTC")
        let clock = ContinuousClock()
        let elapsed = clock.measure { #expect(schedule.next(after: .distantPast) == nil) }
        print("\(rule): nil in \(elapsed)")
    }

    @Test("a date far in the future: the answer is computed from the periods around it")
    func farFuture() throws {
        let far = try #require(ISO8601DateFormatter().date(from: "9000-06-15T12:00:07Z"))
        let minutely = try schedule("FREQ=MINUTELY;INTERVAL=7", "2026-01-01 00:00", "UTC")
        let next = try #require(minutely.next(after: far))
        #expect(next > far && next.timeIntervalSince(far) <= 7 * 60)
        let start = try #require(ISO8601DateFormatter().date(from: "2026-01-01T00:00:00Z"))
        #expect(Int(next.timeIntervalSince(start)) % 420 == 0)
        let secondly = try schedule("FREQ=SECONDLY;INTERVAL=3", "2026-01-01 00:00", "Europe/Berlin")
        #expect(try #require(secondly.next(after: far)).timeIntervalSince(far) <= 3)
        let weekly = try schedule("FREQ=WEEKLY;INTERVAL=3;BYDAY=FR", "2026-01-02 09:00", "Europe/Berlin")
        let friday = try #require(weekly.next(after: far))
        #expect(friday.timeIntervalSince(far) <= 21 * 86_400)
        let firstFriday = try #require(ISO8601DateFormatter().date(from: "2026-01-02T08:00:00Z"))
        // Whole days (the far date is in summer time, the first Friday in winter time).
        #expect(Int((friday.timeIntervalSince(firstFriday) / 86_400).rounded()) % 21 == 0)
        let lastYear = try #require(ISO8601DateFormatter().date(from: "9999-06-01T00:00:00Z"))
        #expect(try schedule("FREQ=YEARLY", "2026-01-02 09:00", "UTC").next(after: lastYear) == nil)
    }

    @Test("UNTIL is inclusive: a date, a UTC time and a local time")
    func untilInclusive() throws {
        #expect(
            try firsts(try schedule("FREQ=DAILY;UNTIL=20270103", "2027-01-01 23:00", "Europe/Berlin"), 10).count == 3)
        #expect(
            try firsts(try schedule("FREQ=DAILY;UNTIL=20270103T220000Z", "2027-01-01 23:00", "Europe/Berlin"), 10).count
                == 3)
        #expect(
            try firsts(try schedule("FREQ=DAILY;UNTIL=20270103T215959Z", "2027-01-01 23:00", "Europe/Berlin"), 10).count
                == 2)
        #expect(
            try firsts(try schedule("FREQ=DAILY;UNTIL=20270103T230000", "2027-01-01 23:00", "Europe/Berlin"), 10).count
                == 3)
    }
}
