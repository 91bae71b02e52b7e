import Foundation
import TestThreads
import Testing

@testable import ChimeCore

/// The JSON shape of recurrence-rule triggers, its refusals, and the upcoming dates a listing shows.
@Suite("Recurrence triggers in JSON", .testThreads)
struct RecurrenceJSONTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    static let utc = TimeZone(identifier: "UTC")!

    static func request(_ trigger: String) throws(ChimeError) -> NotificationRequest {
        try NotificationRequest(
            json: try JSONValue.parse(#"{"identifier": "r", "title": "T", "trigger": \#(trigger)}"#))
    }

    static func refusal(_ json: String) -> ChimeError? {
        do { _ = try JSONMapping.requests(try JSONValue.parse(json)) } catch { return error }
        return nil
    }

    @Test("decodes rrule, a wall-time start, the zone and exception dates; the encoder's output reads back equal")
    func roundTrip() throws {
        let request = try Self.request(
            #"""
            {"type": "recurrence", "rrule": "RRULE:FREQ=MONTHLY;BYDAY=-1FR", "start": "2027-01-29T09:00", "timeZone": "Europe/Berlin",
             "exceptionDates": ["2027-02-26T09:00", "2027-03-26T08:00:00Z"]}
            """#)
        guard case .recurrence(let schedule)? = request.trigger else {
            Issue.record("not a recurrence")
            return
        }
        #expect(schedule.rule.rruleString == "FREQ=MONTHLY;BYDAY=-1FR")
        #expect(schedule.start == DateComponents(year: 2027, month: 1, day: 29, hour: 9, minute: 0, second: 0))
        #expect(schedule.timeZone == Self.berlin)
        // The wall-time exception is read in the rule's zone (CET: 08:00Z).
        #expect(
            schedule.exceptionDates == [
                JSONMapping.parseDate("2027-02-26T08:00:00Z")!, JSONMapping.parseDate("2027-03-26T08:00:00Z")!,
            ])
        let json = try #require(request.trigger?.json)
        #expect(json["start"] == .string("2027-01-29T09:00:00"))
        #expect(
            json["exceptionDates"]
                == .array([.string("2027-02-26T08:00:00.000Z"), .string("2027-03-26T08:00:00.000Z")]))
        #expect(try NotificationTrigger(json: json) == request.trigger)
        #expect(
            schedule.next(2, after: JSONMapping.parseDate("2027-01-01T00:00:00Z")!)
                == [JSONMapping.parseDate("2027-01-29T08:00:00Z")!, JSONMapping.parseDate("2027-04-30T07:00:00Z")!])
        #expect(
            try Self.request(
                #"{"type": "recurrence", "rrule": "FREQ=DAILY", "start": "20270129T090000", "timeZone": "UTC"}"#
            ).trigger
                == Self.request(
                    #"{"type": "recurrence", "rrule": "FREQ=DAILY", "start": "2027-01-29 09:00:00", "timeZone": "UTC"}"#
                ).trigger)
    }

    @Test(
        "a bad rule, start, zone or exception date is refused naming the field, inside arrays too",
        arguments: [
            (
                #"{"type": "recurrence", "rrule": "FREQ=MONTHLY;BYDAY=-1XY", "start": "2027-01-29T09:00", "timeZone": "UTC"}"#,
                "[0].trigger.rrule.BYDAY"
            ),
            (
                #"{"type": "recurrence", "rrule": "FREQ=MONTHLY;COUNT=2;UNTIL=20270101", "start": "2027-01-29T09:00", "timeZone": "UTC"}"#,
                "[0].trigger.rrule.COUNT"
            ),
            (
                #"{"type": "recurrence", "rrule": "BYDAY=MO", "start": "2027-01-29T09:00", "timeZone": "UTC"}"#,
                "[0].trigger.rrule.FREQ"
            ),
            (#"{"type": "recurrence", "start": "2027-01-29T09:00", "timeZone": "UTC"}"#, "[0].trigger.rrule"),
            (
                #"{"type": "recurrence", "rrule": "FREQ=DAILY", "start": "2027-02-30T09:00", "timeZone": "UTC"}"#,
                "[0].trigger.start"
            ),
            (
                #"{"type": "recurrence", "rrule": "FREQ=DAILY", "start": "2027-01-29T09:00Z", "timeZone": "UTC"}"#,
                "[0].trigger.start"
            ),
            (#"{"type": "recurrence", "rrule": "FREQ=DAILY", "start": "2027-01-29T09:00"}"#, "[0].trigger.timeZone"),
            (
                #"{"type": "recurrence", "rrule": "FREQ=DAILY", "start": "2027-01-29T09:00", "timeZone": "Mars/Olympus"}"#,
                "[0].trigger.timeZone"
            ),
            (
                #"{"type": "recurrence", "rrule": "FREQ=DAILY", "start": "2027-01-29T09:00", "timeZone": "UTC", "exceptionDates": ["soon"]}"#,
                "[0].trigger.exceptionDates[0]"
            ),
            (
                #"{"type": "recurrence", "rrule": "FREQ=DAILY", "start": "2027-01-29T09:00", "timeZone": "UTC", "repeats": true}"#,
                "[0].trigger.repeats"
            ),
        ])
    func refusals(trigger: String, field: String) throws {
        let error = try #require(Self.refusal(#"[{"identifier": "r", "title": "T", "trigger": \#(trigger)}]"#))
        #expect(error.code == .invalidTrigger || error.code == .invalidValue)
        #expect(error.field == field, "\(error.message)")
    }

    @Test("a rule with no occurrence after now is refused when added, naming the rule")
    func ended() throws {
        let request = try Self.request(
            #"{"type": "recurrence", "rrule": "FREQ=DAILY;COUNT=2", "start": "2020-01-01T09:00", "timeZone": "UTC"}"#)
        let first = PreparedAdd.first(
            of: request.trigger, now: Date(timeIntervalSince1970: 1_800_000_000), timeZone: Self.utc)
        guard case .failure(let error) = first else {
            Issue.record("accepted")
            return
        }
        #expect(error.field == "trigger.rrule")
        #expect(error.message.contains("no occurrence after"))
        #expect(!FireDates.matchesNoFutureDate(error), "refused even where a past calendar trigger is accepted")
    }

    @Test(
        "upcoming dates: a rule's next N, an interval's, a calendar trigger's, and one for a trigger that does not repeat"
    )
    func upcoming() throws {
        let now = JSONMapping.parseDate("2027-01-01T00:00:00Z")!
        let request = try Self.request(
            #"{"type": "recurrence", "rrule": "FREQ=DAILY;COUNT=3", "start": "2027-03-27T07:00", "timeZone": "Europe/Berlin"}"#
        )
        let first = try #require(try FireDates.first(for: request.trigger, now: now, timeZone: Self.utc))
        let pending = PendingRequest(request: request, nextFireDate: first, anchor: now)
        #expect(
            FireDates.upcoming(pending, count: 5, timeZone: Self.utc).map(JSONMapping.formatDate)
                == ["2027-03-27T06:00:00.000Z", "2027-03-28T05:00:00.000Z", "2027-03-29T05:00:00.000Z"])
        let json = pending.json(upcoming: 2, timeZone: Self.utc)
        #expect(
            json["nextTriggerDates"]
                == .array([.string("2027-03-27T06:00:00.000Z"), .string("2027-03-28T05:00:00.000Z")]))
        // A listed request can be added again as it is.
        #expect(try NotificationRequest(json: json) == request)

        let hourly = PendingRequest(
            request: NotificationRequest(
                identifier: "h", content: .init(), trigger: .timeInterval(3600, repeats: true)),
            nextFireDate: now.addingTimeInterval(3600), anchor: now)
        #expect(
            FireDates.upcoming(hourly, count: 3, timeZone: Self.utc)
                == [3600.0, 7200, 10800].map { now.addingTimeInterval($0) })
        let morning = PendingRequest(
            request: NotificationRequest(
                identifier: "m", content: .init(),
                trigger: .calendar(DateComponents(hour: 8), repeats: true)),
            nextFireDate: now.addingTimeInterval(8 * 3600), anchor: now)
        #expect(
            FireDates.upcoming(morning, count: 3, timeZone: Self.utc)
                == [8.0, 32, 56].map { now.addingTimeInterval($0 * 3600) })
        let once = PendingRequest(
            request: NotificationRequest(identifier: "o", content: .init(), trigger: .timeInterval(60, repeats: false)),
            nextFireDate: now.addingTimeInterval(60), anchor: now)
        #expect(FireDates.upcoming(once, count: 3, timeZone: Self.utc) == [now.addingTimeInterval(60)])
        #expect(FireDates.upcoming(once, count: 0, timeZone: Self.utc).isEmpty)
    }

    @Test("a COUNT rule's last occurrence is found once; answers from late dates agree with counting from the start")
    func countEnd() throws {
        let schedule = try RecurrenceSchedule(
            rule: RecurrenceRule(parsing: "FREQ=WEEKLY;BYDAY=MO,WE;COUNT=300"),
            start: DateComponents(year: 2027, month: 1, day: 4, hour: 9), timeZone: Self.berlin)
        let all = schedule.next(400, after: JSONMapping.parseDate("2027-01-01T00:00:00Z")!)
        #expect(all.count == 300)
        #expect(schedule.countEnd != nil)
        for index in [0, 1, 150, 298] {
            #expect(schedule.next(5, after: all[index]) == Array(all[(index + 1)...].prefix(5)))
        }
        #expect(schedule.next(after: all[299]) == nil)
    }
}
