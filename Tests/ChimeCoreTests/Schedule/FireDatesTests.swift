import ChimeCore
import Foundation
import TestThreads
import Testing

private func utc(_ text: String) throws -> Date { try Date(text, strategy: .iso8601) }

private func components(hour: Int, minute: Int, weekday: Int? = nil, zone: String? = nil) -> DateComponents {
    var c = DateComponents()
    c.hour = hour
    c.minute = minute
    c.weekday = weekday
    c.timeZone = zone.flatMap(TimeZone.init(identifier:))
    return c
}

/// Next-fire-date math for calendar and time-interval triggers.
@Suite("Fire dates", .testThreads)
struct FireDatesTests {
    struct WallTimeCase: Sendable, CustomTestStringConvertible {
        var name: String
        var zone: String
        var hour: Int
        var minute: Int
        var after: String
        var expected: String
        var testDescription: String { name }
    }

    /// The first fire date of a wall time on a day with a daylight-saving change.
    static let firstDates: [WallTimeCase] = [
        WallTimeCase(
            name: "Berlin 2026-03-29 02:30 (gap) → 03:00 CEST", zone: "Europe/Berlin", hour: 2, minute: 30,
            after: "2026-03-28T23:00:00Z", expected: "2026-03-29T01:00:00Z"),
        WallTimeCase(
            name: "Berlin 2026-03-29 02:00 (gap start) → 03:00 CEST", zone: "Europe/Berlin", hour: 2, minute: 0,
            after: "2026-03-28T23:00:00Z", expected: "2026-03-29T01:00:00Z"),
        WallTimeCase(
            name: "Berlin 2026-03-29 03:00 (just after the gap) is itself", zone: "Europe/Berlin", hour: 3, minute: 0,
            after: "2026-03-28T23:00:00Z", expected: "2026-03-29T01:00:00Z"),
        WallTimeCase(
            name: "Berlin 2026-10-25 02:30 (twice) → the first, CEST", zone: "Europe/Berlin", hour: 2, minute: 30,
            after: "2026-10-24T22:00:00Z", expected: "2026-10-25T00:30:00Z"),
        WallTimeCase(
            name: "Berlin 2027-03-28 02:30 (gap) → 03:00 CEST", zone: "Europe/Berlin", hour: 2, minute: 30,
            after: "2027-03-27T23:00:00Z", expected: "2027-03-28T01:00:00Z"),
        WallTimeCase(
            name: "Berlin 2027-10-31 02:15 (twice) → the first", zone: "Europe/Berlin", hour: 2, minute: 15,
            after: "2027-10-30T22:00:00Z", expected: "2027-10-31T00:15:00Z"),
        WallTimeCase(
            name: "New York 2026-03-08 02:30 (gap) → 03:00 EDT", zone: "America/New_York", hour: 2, minute: 30,
            after: "2026-03-08T05:00:00Z", expected: "2026-03-08T07:00:00Z"),
        WallTimeCase(
            name: "New York 2026-11-01 01:30 (twice) → the first, EDT", zone: "America/New_York", hour: 1, minute: 30,
            after: "2026-11-01T04:00:00Z", expected: "2026-11-01T05:30:00Z"),
        WallTimeCase(
            name: "New York 2027-03-14 02:59 (gap) → 03:00 EDT", zone: "America/New_York", hour: 2, minute: 59,
            after: "2027-03-14T05:00:00Z", expected: "2027-03-14T07:00:00Z"),
        WallTimeCase(
            name: "Lord Howe 2026-10-04 02:15 (30-min gap) → 02:30 +11", zone: "Australia/Lord_Howe", hour: 2,
            minute: 15,
            after: "2026-10-03T13:00:00Z", expected: "2026-10-03T15:30:00Z"),
        WallTimeCase(
            name: "Lord Howe 2026-04-05 01:45 (twice, 30 min apart) → the first, +11", zone: "Australia/Lord_Howe",
            hour: 1, minute: 45, after: "2026-04-04T13:00:00Z", expected: "2026-04-04T14:45:00Z"),
        WallTimeCase(
            name: "Lord Howe 2026-04-05 02:00 (just after the repeat) → +10:30", zone: "Australia/Lord_Howe",
            hour: 2, minute: 0, after: "2026-04-04T13:00:00Z", expected: "2026-04-04T15:30:00Z"),
    ]

    @Test(
        "a wall time in a spring gap fires at the first moment after it; a repeated one at its first occurrence",
        arguments: firstDates)
    func firstDate(_ c: WallTimeCase) throws {
        let zone = try #require(TimeZone(identifier: c.zone))
        let next = FireDates.nextCalendarDate(
            matching: components(hour: c.hour, minute: c.minute), after: try utc(c.after), timeZone: zone)
        #expect(next == (try utc(c.expected)))
        // The same through `first(for:)`, with the zone in the components instead.
        let zoned = try FireDates.first(
            for: .calendar(components(hour: c.hour, minute: c.minute, zone: c.zone), repeats: true),
            now: try utc(c.after), timeZone: TimeZone(identifier: "UTC")!)
        #expect(zoned == (try utc(c.expected)))
    }

    struct RepeatCase: Sendable, CustomTestStringConvertible {
        var name: String
        var zone: String
        var hour: Int
        var minute: Int
        /// The occurrence that just fired.
        var due: String
        var expected: String
        var testDescription: String { name }
    }

    static let repeats: [RepeatCase] = [
        RepeatCase(
            name: "Berlin: after 02:30 CEST on 2026-10-25, next is 02:30 CET on the 26th, not an hour later",
            zone: "Europe/Berlin", hour: 2, minute: 30, due: "2026-10-25T00:30:00Z", expected: "2026-10-26T01:30:00Z"),
        RepeatCase(
            name: "Berlin: after the spring gap's 03:00, next is 02:30 CEST on the 30th",
            zone: "Europe/Berlin", hour: 2, minute: 30, due: "2026-03-29T01:00:00Z", expected: "2026-03-30T00:30:00Z"),
        RepeatCase(
            name: "Berlin: the day before the spring gap, next is 03:00 CEST",
            zone: "Europe/Berlin", hour: 2, minute: 30, due: "2026-03-28T01:30:00Z", expected: "2026-03-29T01:00:00Z"),
        RepeatCase(
            name: "New York: after 01:30 EDT on 2026-11-01, next is 01:30 EST on the 2nd",
            zone: "America/New_York", hour: 1, minute: 30, due: "2026-11-01T05:30:00Z", expected: "2026-11-02T06:30:00Z"
        ),
        RepeatCase(
            name: "New York: the day before the spring gap, next is 03:00 EDT",
            zone: "America/New_York", hour: 2, minute: 30, due: "2026-03-07T07:30:00Z", expected: "2026-03-08T07:00:00Z"
        ),
        RepeatCase(
            name: "Lord Howe: after 01:45 +11 on 2026-04-05, next is 01:45 +10:30 on the 6th",
            zone: "Australia/Lord_Howe", hour: 1, minute: 45, due: "2026-04-04T14:45:00Z",
            expected: "2026-04-05T15:15:00Z"),
        RepeatCase(
            name: "Lord Howe: the day before the October gap, next is 02:30 +11",
            zone: "Australia/Lord_Howe", hour: 2, minute: 15, due: "2026-10-02T15:45:00Z",
            expected: "2026-10-03T15:30:00Z"),
        RepeatCase(
            name: "Berlin 2027: after 02:00 CEST on 2027-10-31, next is 02:00 CET on 1 November",
            zone: "Europe/Berlin", hour: 2, minute: 0, due: "2027-10-31T00:00:00Z", expected: "2027-11-01T01:00:00Z"),
    ]

    @Test("a repeating daily trigger fires once per day across daylight-saving changes", arguments: repeats)
    func repeating(_ c: RepeatCase) throws {
        let zone = try #require(TimeZone(identifier: c.zone))
        let due = try utc(c.due)
        let trigger = NotificationTrigger.calendar(components(hour: c.hour, minute: c.minute), repeats: true)
        let next = FireDates.next(
            for: trigger, due: due, anchor: due.addingTimeInterval(-86_400), now: due, timeZone: zone)
        #expect(next == (try utc(c.expected)))
    }

    @Test("an hourly trigger (minute 30) fires once during a repeated hour")
    func hourlyThroughRepeatedHour() throws {
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        var minute30 = DateComponents()
        minute30.minute = 30
        let trigger = NotificationTrigger.calendar(minute30, repeats: true)
        var due = try utc("2026-10-24T23:30:00Z")  // 01:30 CEST
        var fired = [due]
        for _ in 0..<3 {
            due = try #require(FireDates.next(for: trigger, due: due, anchor: due, now: due, timeZone: berlin))
            fired.append(due)
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = berlin
        let wall = fired.map { "\(calendar.component(.hour, from: $0)):\(calendar.component(.minute, from: $0))" }
        #expect(wall == ["1:30", "2:30", "3:30", "4:30"], "02:30 fires once even though it happens twice")
    }

    @Test("weekday 2, 08:30 in Europe/Berlin gives Mondays at 08:30, before and after the spring change")
    func mondays() throws {
        let trigger = NotificationTrigger.calendar(
            components(hour: 8, minute: 30, weekday: 2, zone: "Europe/Berlin"), repeats: true)
        let utcZone = TimeZone(identifier: "UTC")!
        var due = try #require(
            try FireDates.first(for: trigger, now: try utc("2026-03-18T12:00:00Z"), timeZone: utcZone))
        var dates = [due]
        for _ in 0..<3 {
            due = try #require(FireDates.next(for: trigger, due: due, anchor: due, now: due, timeZone: utcZone))
            dates.append(due)
        }
        #expect(
            dates
                == (try [
                    "2026-03-23T07:30:00Z", "2026-03-30T06:30:00Z", "2026-04-06T06:30:00Z", "2026-04-13T06:30:00Z",
                ].map(utc)))
    }

    @Test(
        "a floating schedule follows the zone it is computed in; a zoned one ignores it",
        arguments: [
            ("Europe/Berlin", "2026-06-01T06:30:00Z"), ("America/New_York", "2026-06-01T12:30:00Z"),
            ("Asia/Kolkata", "2026-06-01T03:00:00Z"),
        ])
    func floatingVersusZoned(zone: String, expected: String) throws {
        let now = try utc("2026-06-01T00:00:00Z")
        let tz = try #require(TimeZone(identifier: zone))
        #expect(
            FireDates.nextCalendarDate(matching: components(hour: 8, minute: 30), after: now, timeZone: tz)
                == (try utc(expected)))
        #expect(
            FireDates.nextCalendarDate(
                matching: components(hour: 8, minute: 30, zone: "Europe/Berlin"), after: now, timeZone: tz)
                == (try utc("2026-06-01T06:30:00Z")))
    }

    @Test("only the supplied components take part: day 15, 09:00 fires every month")
    func onlySuppliedComponents() throws {
        var c = DateComponents()
        c.day = 15
        c.hour = 9
        let utcZone = TimeZone(identifier: "UTC")!
        let trigger = NotificationTrigger.calendar(c, repeats: true)
        var due = try #require(
            try FireDates.first(for: trigger, now: try utc("2026-01-20T00:00:00Z"), timeZone: utcZone))
        var dates = [due]
        for _ in 0..<2 {
            due = try #require(FireDates.next(for: trigger, due: due, anchor: due, now: due, timeZone: utcZone))
            dates.append(due)
        }
        #expect(dates == (try ["2026-02-15T09:00:00Z", "2026-03-15T09:00:00Z", "2026-04-15T09:00:00Z"].map(utc)))
    }

    @Test(
        "a one-off date inside a daylight-saving gap fires at the first moment after the gap",
        arguments: [
            ("Australia/Lord_Howe", 2026, 10, 4, 2, 15, "2026-10-03T15:30:00Z"),
            ("Europe/Berlin", 2026, 3, 29, 2, 30, "2026-03-29T01:00:00Z"),
            ("America/New_York", 2027, 3, 14, 2, 10, "2027-03-14T07:00:00Z"),
        ] as [(String, Int, Int, Int, Int, Int, String)])
    func oneOffInGap(zone: String, year: Int, month: Int, day: Int, hour: Int, minute: Int, expected: String) throws {
        let c = DateComponents(
            timeZone: TimeZone(identifier: zone), year: year, month: month, day: day, hour: hour, minute: minute)
        let first = try FireDates.first(
            for: .calendar(c, repeats: false), now: try utc("2026-01-01T00:00:00Z"), timeZone: .gmt)
        #expect(first == (try utc(expected)))
    }

    @Test("components that match no future date are an error naming trigger.dateComponents")
    func noFutureDate() throws {
        var c = DateComponents()
        c.year = 2020
        c.month = 1
        c.day = 1
        let error = #expect(throws: ChimeError.self) {
            try FireDates.first(for: .calendar(c, repeats: false), now: try utc("2026-01-01T00:00:00Z"), timeZone: .gmt)
        }
        #expect(error?.field == "trigger.dateComponents")
    }

    @Test("a time-interval trigger first fires after its interval; no trigger, location and push have no date")
    func firstForOtherTriggers() throws {
        let now = try utc("2026-01-01T00:00:00Z")
        #expect(
            try FireDates.first(for: .timeInterval(90, repeats: false), now: now, timeZone: .gmt)
                == now.addingTimeInterval(90))
        #expect(try FireDates.first(for: nil, now: now, timeZone: .gmt) == nil)
        #expect(try FireDates.first(for: .push, now: now, timeZone: .gmt) == nil)
        let region = CircularRegion(identifier: "r", center: Coordinate(latitude: 0, longitude: 0), radius: 10)
        #expect(try FireDates.first(for: .location(region, repeats: false), now: now, timeZone: .gmt) == nil)
    }

    @Test(
        "a repeating time interval's next occurrence keeps the anchor's rhythm and is always in the future",
        arguments: [
            // (seconds after the anchor when the scheduler runs, expected next occurrence after the anchor)
            (60.0, 120.0), (61, 120), (119.5, 120), (120, 180), (3630, 3660), (86_400, 86_460),
        ])
    func intervalNext(now offset: Double, expected: Double) {
        let anchor = Date(timeIntervalSince1970: 1_780_000_000)
        let next = FireDates.next(
            for: .timeInterval(60, repeats: true), due: anchor.addingTimeInterval(60), anchor: anchor,
            now: anchor.addingTimeInterval(offset), timeZone: .gmt)
        #expect(next == anchor.addingTimeInterval(expected))
    }

    @Test("non-repeating triggers have no next occurrence")
    func nonRepeatingNext() {
        let now = Date(timeIntervalSince1970: 1_780_000_000)
        #expect(
            FireDates.next(for: .timeInterval(60, repeats: false), due: now, anchor: now, now: now, timeZone: .gmt)
                == nil)
        #expect(
            FireDates.next(
                for: .calendar(components(hour: 1, minute: 0), repeats: false), due: now, anchor: now, now: now,
                timeZone: .gmt) == nil)
    }
}

@Suite("FireDates: days that do not exist in every month", .testThreads)
struct MissingDayTests {
    @Test("day 31 fires only in months that have a 31st; 29 February only in leap years")
    func missingDays() throws {
        let utc = try #require(TimeZone(identifier: "UTC"))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = utc
        var monthly = DateComponents()
        monthly.day = 31
        monthly.hour = 9
        var date = try #require(calendar.date(from: DateComponents(year: 2026, month: 3, day: 31, hour: 10)))
        var fired: [DateComponents] = []
        for _ in 0..<4 {
            date = try #require(
                FireDates.nextCalendarDate(matching: monthly, after: date, timeZone: utc, previous: date))
            fired.append(calendar.dateComponents([.month, .day, .hour], from: date))
        }
        #expect(fired.map(\.month) == [5, 7, 8, 10])
        #expect(fired.allSatisfy { $0.day == 31 && $0.hour == 9 })

        var leap = DateComponents()
        leap.month = 2
        leap.day = 29
        leap.hour = 8
        let start = try #require(calendar.date(from: DateComponents(year: 2026, month: 1, day: 1)))
        let next = try #require(FireDates.nextCalendarDate(matching: leap, after: start, timeZone: utc))
        #expect(
            calendar.dateComponents([.year, .month, .day, .hour], from: next)
                == DateComponents(year: 2028, month: 2, day: 29, hour: 8))
    }
}
