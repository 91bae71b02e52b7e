import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// Calendar triggers through the simulator: wall times, daylight-saving changes, time-zone changes.
@Suite("Calendar triggers", .testThreads)
struct CalendarTriggerTests {
    /// A repeating daily trigger at a wall time, followed through a daylight-saving change.
    struct DSTCase: Sendable, CustomTestStringConvertible {
        var name: String
        var zone: String
        var hour: Int
        var minute: Int
        /// When the simulator starts (UTC).
        var start: String
        /// The first three deliveries (UTC).
        var expected: [String]
        var testDescription: String { name }
    }

    static let dstCases: [DSTCase] = [
        DSTCase(
            name: "Berlin spring 2026: 02:30 in the gap fires at 03:00", zone: "Europe/Berlin", hour: 2, minute: 30,
            start: "2026-03-27T12:00:00Z",
            expected: ["2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"]),
        DSTCase(
            name: "Berlin autumn 2026: repeated 02:30 fires once", zone: "Europe/Berlin", hour: 2, minute: 30,
            start: "2026-10-23T12:00:00Z",
            expected: ["2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"]),
        DSTCase(
            name: "New York spring 2026: 02:30 in the gap fires at 03:00", zone: "America/New_York", hour: 2,
            minute: 30,
            start: "2026-03-06T17:00:00Z",
            expected: ["2026-03-07T07:30:00Z", "2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"]),
        DSTCase(
            name: "New York autumn 2026: repeated 01:30 fires once", zone: "America/New_York", hour: 1, minute: 30,
            start: "2026-10-30T16:00:00Z",
            expected: ["2026-10-31T05:30:00Z", "2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"]),
        DSTCase(
            name: "Lord Howe April 2026 (30 min back): repeated 01:45 fires once", zone: "Australia/Lord_Howe", hour: 1,
            minute: 45,
            start: "2026-04-03T00:00:00Z",
            expected: ["2026-04-03T14:45:00Z", "2026-04-04T14:45:00Z", "2026-04-05T15:15:00Z"]),
        DSTCase(
            name: "Lord Howe October 2026 (30 min forward): 02:15 in the gap fires at 02:30",
            zone: "Australia/Lord_Howe",
            hour: 2, minute: 15, start: "2026-10-02T00:00:00Z",
            expected: ["2026-10-02T15:45:00Z", "2026-10-03T15:30:00Z", "2026-10-04T15:15:00Z"]),
        DSTCase(
            name: "Berlin autumn 2027: repeated 02:00 fires once", zone: "Europe/Berlin", hour: 2, minute: 0,
            start: "2027-10-29T12:00:00Z",
            expected: ["2027-10-30T00:00:00Z", "2027-10-31T00:00:00Z", "2027-11-01T01:00:00Z"]),
    ]

    @Test(
        "a repeating daily trigger across a daylight-saving change, in the device's zone (floating)",
        arguments: dstCases)
    func floatingAcrossDST(_ c: DSTCase) async throws {
        let zone = try #require(TimeZone(identifier: c.zone))
        let simulator = try await authorizedSimulator(now: try date(c.start), timeZone: zone)
        try await addDaily(simulator, hour: c.hour, minute: c.minute, zone: nil)
        try await expectDeliveries(simulator, c)
    }

    @Test("a repeating daily trigger across a daylight-saving change, in the components' own zone", arguments: dstCases)
    func zonedAcrossDST(_ c: DSTCase) async throws {
        let zone = try #require(TimeZone(identifier: c.zone))
        let simulator = try await authorizedSimulator(
            now: try date(c.start), timeZone: TimeZone(identifier: "Asia/Tokyo")!)
        try await addDaily(simulator, hour: c.hour, minute: c.minute, zone: zone)
        try await expectDeliveries(simulator, c)
    }

    func addDaily(_ simulator: NotificationSimulator, hour: Int, minute: Int, zone: TimeZone?) async throws {
        var components = DateComponents()
        components.hour = hour
        components.minute = minute
        components.timeZone = zone
        try await simulator.center.add(
            UNNotificationRequest(
                identifier: "daily", content: content("Daily"),
                trigger: UNCalendarNotificationTrigger(dateMatching: components, repeats: true)))
    }

    func expectDeliveries(_ simulator: NotificationSimulator, _ c: DSTCase) async throws {
        let last = try date(c.expected.last!)
        await simulator.advance(to: last.addingTimeInterval(3 * 3600))
        let fired = await simulator.presented.map(\.notification.date)
        #expect(fired == (try c.expected.map(date)), "\(c.name)")
        #expect(await simulator.pendingRequests.count == 1, "a repeating trigger keeps going")
    }

    @Test("daily 08:30 repeats every day at 08:30 local time")
    func daily() async throws {
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        let simulator = try await authorizedSimulator(now: try date("2026-06-01T10:00:00Z"), timeZone: berlin)
        try await addDaily(simulator, hour: 8, minute: 30, zone: nil)
        await simulator.advance(by: 5 * 86_400)
        let fired = await simulator.presented.map(\.notification.date)
        #expect(
            fired
                == (try ["2026-06-02", "2026-06-03", "2026-06-04", "2026-06-05", "2026-06-06"].map {
                    try date("\($0)T06:30:00Z")
                }))
    }

    @Test("weekday 2, 08:30 in Europe/Berlin fires on Mondays, also across the spring change")
    func mondays() async throws {
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        let simulator = try await authorizedSimulator(
            now: try date("2026-03-18T00:00:00Z"), timeZone: TimeZone(identifier: "UTC")!)
        var components = DateComponents()
        components.weekday = 2
        components.hour = 8
        components.minute = 30
        components.timeZone = berlin
        try await simulator.center.add(
            UNNotificationRequest(
                identifier: "monday", content: content("Monday"),
                trigger: UNCalendarNotificationTrigger(dateMatching: components, repeats: true)))
        await simulator.advance(by: 21 * 86_400)
        let fired = await simulator.presented.map(\.notification.date)
        #expect(fired == (try ["2026-03-23T07:30:00Z", "2026-03-30T06:30:00Z", "2026-04-06T06:30:00Z"].map(date)))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = berlin
        #expect(
            fired.allSatisfy { calendar.component(.weekday, from: $0) == 2 && calendar.component(.hour, from: $0) == 8 }
        )
    }

    @Test("a non-repeating calendar trigger fires once and leaves the pending list")
    func once() async throws {
        let simulator = try await authorizedSimulator(now: try date("2026-06-01T00:00:00Z"))
        var components = DateComponents()
        components.year = 2026
        components.month = 6
        components.day = 2
        components.hour = 9
        try await simulator.center.add(
            UNNotificationRequest(
                identifier: "once", content: content("Once"),
                trigger: UNCalendarNotificationTrigger(dateMatching: components, repeats: false)))
        await simulator.advance(by: 10 * 86_400)
        #expect(await simulator.presented.map(\.notification.date) == [try date("2026-06-02T09:00:00Z")])
        #expect(await simulator.pendingRequests.isEmpty)
    }

    @Test("date components that match no future date are accepted and never fire, as on iOS")
    func past() async throws {
        let simulator = try await authorizedSimulator(now: try date("2026-06-01T00:00:00Z"))
        simulator.install()
        defer { simulator.uninstall() }
        var components = DateComponents()
        components.year = 2020
        components.month = 1
        components.day = 1
        let trigger = UNCalendarNotificationTrigger(dateMatching: components, repeats: false)
        try await simulator.center.add(
            UNNotificationRequest(identifier: "past", content: content("Past"), trigger: trigger))
        #expect(trigger.nextTriggerDate() == nil)
        #expect(await simulator.center.pendingNotificationRequests().isEmpty)
        await simulator.advance(by: 400 * 86_400)
        #expect(await simulator.center.deliveredNotifications().isEmpty)
        #expect(await simulator.presented.isEmpty)
    }

    @Test("a request for today at 09:00 added at 17:00 replaces the pending one of its identifier and never fires")
    func todayAtNineAfterNine() async throws {
        let simulator = try await authorizedSimulator(now: try date("2026-06-01T08:00:00Z"))
        var nine = Calendar(identifier: .gregorian).dateComponents(
            in: TimeZone(identifier: "UTC")!, from: simulator.now)
        nine.hour = 9
        nine.minute = 0
        nine.second = 0
        nine.nanosecond = nil
        let bill = UNNotificationRequest(
            identifier: "bill", content: content("Pay the bill"),
            trigger: UNCalendarNotificationTrigger(dateMatching: nine, repeats: false))
        try await simulator.center.add(bill)
        #expect(await simulator.center.pendingNotificationRequests().map(\.identifier) == ["bill"])
        await simulator.advance(by: 9 * 3600)  // 17:00: the app schedules "today at 09:00" again
        #expect(await simulator.deliveredNotifications.count == 1)
        try await simulator.center.add(bill)
        #expect(await simulator.center.pendingNotificationRequests().isEmpty)
        await simulator.advance(by: 2 * 86_400)
        #expect(await simulator.deliveredNotifications.count == 1, "delivered once, at 09:00, and not again")
    }

    @Test("a floating trigger moves when the device's time zone changes; a zoned one does not")
    func timeZoneChange() async throws {
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        let simulator = try await authorizedSimulator(now: try date("2026-06-01T00:00:00Z"), timeZone: berlin)
        var floating = DateComponents()
        floating.hour = 8
        floating.minute = 0
        var zoned = floating
        zoned.timeZone = berlin
        try await simulator.center.add(
            UNNotificationRequest(
                identifier: "floating", content: content("Floating"),
                trigger: UNCalendarNotificationTrigger(dateMatching: floating, repeats: true)))
        try await simulator.center.add(
            UNNotificationRequest(
                identifier: "zoned", content: content("Zoned"),
                trigger: UNCalendarNotificationTrigger(dateMatching: zoned, repeats: true)))
        await simulator.setTimeZone(TimeZone(identifier: "America/New_York")!)
        await simulator.advance(to: try date("2026-06-02T13:00:00Z"))
        let fired = await simulator.presented.map {
            "\($0.notification.request.identifier)@\($0.notification.date.formatted(.iso8601))"
        }
        #expect(
            fired == [
                "zoned@2026-06-01T06:00:00Z", "floating@2026-06-01T12:00:00Z",
                "zoned@2026-06-02T06:00:00Z", "floating@2026-06-02T12:00:00Z",
            ])
    }

    @Test("nextTriggerDate inside a delegate callback answers from the simulator's clock and zone")
    @MainActor
    func nextTriggerDateInCallback() async throws {
        @MainActor final class Probe: UNUserNotificationCenterDelegate {
            var answers: [Date?] = []
            func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse)
                async
            {
                var components = DateComponents()
                components.hour = 8
                components.minute = 30
                answers.append(UNCalendarNotificationTrigger(dateMatching: components, repeats: true).nextTriggerDate())
                answers.append(UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false).nextTriggerDate())
            }
        }
        let simulator = try await authorizedSimulator(
            now: try date("2026-06-01T10:00:00Z"), timeZone: TimeZone(identifier: "Europe/Berlin")!)
        let probe = Probe()
        simulator.center.delegate = probe
        try await simulator.center.add(UNNotificationRequest(identifier: "n", content: content("n"), trigger: nil))
        try await simulator.tap("n")
        #expect(probe.answers == [try date("2026-06-02T06:30:00Z"), try date("2026-06-01T10:01:00Z")])
    }
}
