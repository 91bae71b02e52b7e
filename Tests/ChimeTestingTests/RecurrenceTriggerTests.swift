import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// Recurrence-rule triggers (a Chime addition) from app code, fired in virtual time: the issue's
/// cases, across daylight-saving changes in Berlin and New York, and across a restart on a real
/// SQLite file.
@Suite("Recurrence triggers in the simulator", .testThreads)
struct RecurrenceTriggerTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!

    static func request(_ identifier: String, _ trigger: UNNotificationTrigger) -> UNNotificationRequest {
        let content = UNMutableNotificationContent()
        content.title = identifier
        return UNNotificationRequest(identifier: identifier, content: content, trigger: trigger)
    }

    /// The dates the simulator presented, as UTC ISO 8601 without fractions.
    static func presentedDates(_ simulator: NotificationSimulator) async -> [String] {
        await simulator.presented.map { $0.notification.date.formatted(.iso8601) }
    }

    @Test(
        "the last workday of every month at 17:00, Berlin: 29 January, 26 February, then 31 March after the clocks went forward"
    )
    func lastWorkday() async throws {
        let simulator = try await grantedSimulator(
            now: try simulatorDate("2027-01-01T00:00:00Z"), timeZone: Self.berlin)
        let trigger = try UNRecurrenceNotificationTrigger(
            rrule: "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1",
            start: DateComponents(year: 2027, month: 1, day: 1, hour: 17), timeZone: Self.berlin)
        #expect(
            trigger.nextTriggerDates(4).map { $0.formatted(.iso8601) }
                == ["2027-01-29T16:00:00Z", "2027-02-26T16:00:00Z", "2027-03-31T15:00:00Z", "2027-04-30T15:00:00Z"])
        try await simulator.center.add(Self.request("report", trigger))
        await simulator.advance(to: try simulatorDate("2027-05-01T00:00:00Z"))
        #expect(
            await Self.presentedDates(simulator)
                == ["2027-01-29T16:00:00Z", "2027-02-26T16:00:00Z", "2027-03-31T15:00:00Z", "2027-04-30T15:00:00Z"])
        let pending = await simulator.pendingRequests
        #expect(pending.count == 1)
        #expect(
            (pending.first?.trigger as? UNRecurrenceNotificationTrigger)?.rrule
                == "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1")
        #expect(pending.first?.trigger?.scheduledDate == (try simulatorDate("2027-05-31T15:00:00Z")))
    }

    @Test(
        "every other Tuesday and Thursday until the year's end, across the October clock change, then the request is gone"
    )
    func everyOtherTuesdayAndThursday() async throws {
        let simulator = try await grantedSimulator(
            now: try simulatorDate("2027-10-01T00:00:00Z"), timeZone: Self.berlin)
        let trigger = try UNRecurrenceNotificationTrigger(
            rrule: "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;UNTIL=20271231T225959Z",
            start: DateComponents(year: 2027, month: 10, day: 19, hour: 9), timeZone: Self.berlin)
        try await simulator.center.add(Self.request("gym", trigger))
        await simulator.advance(to: try simulatorDate("2028-03-01T00:00:00Z"))
        #expect(
            await Self.presentedDates(simulator) == [
                "2027-10-19T07:00:00Z", "2027-10-21T07:00:00Z",  // CEST
                "2027-11-02T08:00:00Z", "2027-11-04T08:00:00Z", "2027-11-16T08:00:00Z", "2027-11-18T08:00:00Z",  // CET
                "2027-11-30T08:00:00Z", "2027-12-02T08:00:00Z", "2027-12-14T08:00:00Z", "2027-12-16T08:00:00Z",
                "2027-12-28T08:00:00Z", "2027-12-30T08:00:00Z",
            ])
        #expect(await simulator.pendingRequests.isEmpty, "UNTIL ended the request")
    }

    @Test("three mornings then stop: 07:00 on 27, 28 and 29 March in Berlin, the clocks going forward between")
    func threeMornings() async throws {
        let simulator = try await grantedSimulator(
            now: try simulatorDate("2027-03-26T12:00:00Z"), timeZone: Self.berlin)
        let trigger = try UNRecurrenceNotificationTrigger(
            rrule: "FREQ=DAILY;COUNT=3", start: DateComponents(year: 2027, month: 3, day: 27, hour: 7),
            timeZone: Self.berlin)
        try await simulator.center.add(Self.request("pill", trigger))
        await simulator.advance(by: 30 * 86_400)
        #expect(
            await Self.presentedDates(simulator) == [
                "2027-03-27T06:00:00Z", "2027-03-28T05:00:00Z", "2027-03-29T05:00:00Z",
            ])
        #expect(await simulator.pendingRequests.isEmpty, "COUNT ended the request")
    }

    @Test("a time the spring change skips fires an hour later that day; the repeated autumn hour fires once (New York)")
    func skippedAndRepeatedTimes() async throws {
        let newYork = TimeZone(identifier: "America/New_York")!
        let simulator = try await grantedSimulator(now: try simulatorDate("2027-03-13T00:00:00Z"), timeZone: newYork)
        try await simulator.center.add(
            Self.request(
                "skipped",
                try UNRecurrenceNotificationTrigger(
                    rrule: "FREQ=DAILY;COUNT=3",
                    start: DateComponents(year: 2027, month: 3, day: 13, hour: 2, minute: 30), timeZone: newYork)))
        try await simulator.center.add(
            Self.request(
                "repeated",
                try UNRecurrenceNotificationTrigger(
                    rrule: "FREQ=YEARLY;COUNT=1",
                    start: DateComponents(year: 2027, month: 11, day: 7, hour: 1, minute: 30), timeZone: newYork)))
        await simulator.advance(to: try simulatorDate("2027-12-01T00:00:00Z"))
        // 02:30 EST on the 13th; on the 14th 02:30 does not exist: 03:30 EDT; 02:30 EDT on the 15th;
        // 01:30 on 7 November happens twice: the first (EDT) only.
        #expect(
            await Self.presentedDates(simulator)
                == ["2027-03-13T07:30:00Z", "2027-03-14T07:30:00Z", "2027-03-15T06:30:00Z", "2027-11-07T05:30:00Z"])
    }

    @Test("exception dates are skipped and a Calendar.RecurrenceRule is accepted")
    func exceptionsAndFoundationRule() async throws {
        let simulator = try await grantedSimulator(
            now: try simulatorDate("2027-01-01T00:00:00Z"), timeZone: Self.berlin)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = Self.berlin
        var rule = Calendar.RecurrenceRule(calendar: calendar, frequency: .monthly)
        rule.weekdays = [.nth(-1, .friday)]
        let start = try simulatorDate("2027-01-29T08:00:00Z")
        let trigger = try UNRecurrenceNotificationTrigger(
            rule, start: start, exceptionDates: [try simulatorDate("2027-02-26T08:00:00Z")])
        // The Gregorian calendar's weeks start on Sunday here: WKST=SU (no matter for a monthly rule).
        #expect(trigger.rrule == "FREQ=MONTHLY;BYDAY=-1FR;WKST=SU")
        try await simulator.center.add(Self.request("review", trigger))
        await simulator.advance(to: try simulatorDate("2027-04-01T00:00:00Z"))
        #expect(await Self.presentedDates(simulator) == ["2027-01-29T08:00:00Z", "2027-03-26T08:00:00Z"])
    }

    @Test("without a zone the trigger takes the current center's; a bad rule is refused naming the part")
    func badRule() async throws {
        let simulator = try await grantedSimulator(timeZone: Self.berlin)
        simulator.install()
        defer { simulator.uninstall() }
        let floating = try UNRecurrenceNotificationTrigger(
            rrule: "FREQ=DAILY", start: DateComponents(year: 2027, month: 1, day: 1, hour: 7))
        #expect(floating.schedule.timeZone == Self.berlin)
        #expect {
            _ = try UNRecurrenceNotificationTrigger(
                rrule: "FREQ=MONTHLY;BYDAY=-1XY", start: DateComponents(year: 2027, month: 1, day: 1))
        } throws: { ($0 as? ChimeError)?.field == "trigger.rrule.BYDAY" }
        #expect {
            _ = try UNRecurrenceNotificationTrigger(
                rrule: "FREQ=DAILY", start: DateComponents(year: 2027, month: 2, day: 30))
        } throws: { ($0 as? ChimeError)?.field == "trigger.start" }
    }

    @Test("across a restart on a real SQLite file the rule goes on at its dates, nothing twice")
    func restart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "chime-rrule-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("chime.sqlite").path
        do {
            let first = try NotificationSimulator(
                bundleIdentifier: "com.example.sim", now: try simulatorDate("2027-01-01T00:00:00Z"),
                timeZone: Self.berlin, storePath: path)
            try #require(try await first.center.requestAuthorization(options: [.alert]))
            try await first.center.add(
                Self.request(
                    "report",
                    try UNRecurrenceNotificationTrigger(
                        rrule: "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;COUNT=4",
                        start: DateComponents(year: 2027, month: 1, day: 1, hour: 17), timeZone: Self.berlin)))
            await first.advance(to: try simulatorDate("2027-02-01T00:00:00Z"))
            #expect(await Self.presentedDates(first) == ["2027-01-29T16:00:00Z"])
            await first.engine.shutdown()
        }
        let second = try NotificationSimulator(
            bundleIdentifier: "com.example.sim", now: try simulatorDate("2027-02-01T00:00:00Z"),
            timeZone: Self.berlin, storePath: path)
        let pending = await second.pendingRequests
        #expect(pending.first?.trigger?.scheduledDate == (try simulatorDate("2027-02-26T16:00:00Z")))
        await second.advance(to: try simulatorDate("2028-01-01T00:00:00Z"))
        #expect(
            await Self.presentedDates(second) == [
                "2027-02-26T16:00:00Z", "2027-03-31T15:00:00Z", "2027-04-30T15:00:00Z",
            ])
        #expect(await second.pendingRequests.isEmpty)
    }
}
