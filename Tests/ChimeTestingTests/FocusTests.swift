import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// Focus modes — quiet hours, a Chime addition — in virtual time: a schedule starts and ends as
/// time passes (across daylight-saving changes), notifications are held quietly while it is on
/// except time-sensitive ones and those it allows, and one summary says what was held when it ends.
@Suite("Focus in the simulator", .testThreads)
struct FocusTests {
    static func request(
        _ identifier: String, after seconds: TimeInterval, level: UNNotificationInterruptionLevel = .active,
        thread: String = ""
    ) -> UNNotificationRequest {
        let content = UNMutableNotificationContent()
        content.title = identifier
        content.sound = .default
        content.interruptionLevel = level
        content.threadIdentifier = thread
        return UNNotificationRequest(
            identifier: identifier, content: content,
            trigger: UNTimeIntervalNotificationTrigger(timeInterval: seconds, repeats: false))
    }

    static func sleep(days: Set<FocusDay> = FocusDay.everyDay, allowThreads: [String] = []) throws -> FocusMode {
        try FocusMode(
            name: "Sleep", schedule: FocusSchedule(from: "22:00", to: "07:00", days: days, timeZone: "Europe/Berlin"),
            allowedThreads: allowThreads)
    }

    static func options(_ simulator: NotificationSimulator, _ identifier: String) async
        -> UNNotificationPresentationOptions?
    {
        await simulator.presented.last { $0.notification.request.identifier == identifier }?.options
    }

    static func summaries(_ simulator: NotificationSimulator) async -> [(body: String, date: Date)] {
        await simulator.presented.filter { $0.notification.request.identifier == "chime.focus.Sleep" }
            .map { ($0.notification.request.content.body, $0.notification.date) }
    }

    @Test(
        "Sleep 22:00-07:00 in Berlin: an active one held quietly, a time-sensitive one and an allowed thread let through, one summary at 07:00"
    )
    func sleepNight() async throws {
        // Monday 2027-06-07, 21:00 in Berlin (CEST, UTC+2).
        let start = try simulatorDate("2027-06-07T19:00:00Z")
        let simulator = try await grantedSimulator(now: start)
        let status = try await simulator.putFocusMode(Self.sleep(days: FocusDay.weekdays, allowThreads: ["family"]))
        let starts = try simulatorDate("2027-06-07T20:00:00Z")
        #expect(!status.isActive && status.nextChange == starts)
        let center = simulator.center
        try await center.add(Self.request("before", after: 1800))  // 21:30
        try await center.add(Self.request("late", after: 7200))  // 23:00
        try await center.add(Self.request("later", after: 9000))  // 23:30
        try await center.add(Self.request("urgent", after: 10_800, level: .timeSensitive))  // 00:00
        try await center.add(Self.request("mum", after: 12_600, thread: "family"))  // 00:30
        try await center.add(Self.request("quiet", after: 14_400, level: .passive))  // 01:00
        try await center.add(Self.request("morning", after: 37_800))  // 07:30

        await simulator.advance(to: try simulatorDate("2027-06-07T23:00:00Z"))  // 01:00
        #expect(await Self.options(simulator, "before") == [.list, .banner, .sound])
        #expect(await Self.options(simulator, "late") == [.list], "held: in the list, no banner, no sound")
        #expect(await Self.options(simulator, "later") == [.list])
        #expect(await Self.options(simulator, "urgent") == [.list, .banner, .sound])
        #expect(await Self.options(simulator, "mum") == [.list, .banner, .sound])
        let decisions = await simulator.focusDecisions
        #expect(decisions.map(\.identifier) == ["late", "later", "urgent", "mum"], "the passive one was quiet anyway")
        #expect(decisions.map(\.decision.reason) == [.focus, .focus, .timeSensitive, .allowedThread])
        #expect(decisions.map(\.decision.quiet) == [true, true, false, false])
        #expect(decisions.allSatisfy { $0.decision.focus == "Sleep" })
        let on = try #require(try await simulator.focusModes.first)
        let ends = try simulatorDate("2027-06-08T05:00:00Z")
        #expect(on.isActive && on.held == ["com.example.sim": 2] && on.nextChange == ends)
        #expect(await Self.summaries(simulator).isEmpty)

        await simulator.advance(to: try simulatorDate("2027-06-08T06:00:00Z"))  // 08:00
        let summaries = await Self.summaries(simulator)
        #expect(summaries.map(\.body) == ["2 notifications during Sleep"])
        #expect(summaries.map(\.date) == [try simulatorDate("2027-06-08T05:00:00Z")], "at 07:00 Berlin")
        #expect(await Self.options(simulator, "chime.focus.Sleep") == [.list, .banner])
        #expect(await Self.options(simulator, "morning") == [.list, .banner, .sound])
        #expect(await simulator.focusDecisions.count == 4, "nothing after the focus ended")
        let delivered = await simulator.deliveredNotifications.map(\.request.identifier)
        #expect(
            Set(delivered) == ["before", "late", "later", "urgent", "mum", "quiet", "morning", "chime.focus.Sleep"])
        #expect(try await simulator.focusModes.first?.held.isEmpty == true)

        // Friday night is a weekday start; Saturday night is not.
        await simulator.advance(to: try simulatorDate("2027-06-13T12:00:00Z"))
        try await center.add(Self.request("sunday", after: 3600))
        await simulator.advance(by: 7200)
        #expect(await Self.options(simulator, "sunday") == [.list, .banner, .sound])
        #expect(await Self.summaries(simulator).count == 1, "no spell held anything since")
    }

    @Test(
        "across both daylight-saving changes the spell ends at 07:00 on the wall clock: 8 h in March, 10 h in October")
    func daylightSaving() async throws {
        for (evening, end) in [
            ("2027-03-27T20:30:00Z", "2027-03-28T05:00:00Z"), ("2027-10-30T19:30:00Z", "2027-10-31T06:00:00Z"),
        ] {
            let simulator = try await grantedSimulator(now: try simulatorDate(evening))
            try await simulator.putFocusMode(Self.sleep())
            // Due an hour after the start, whichever offset the evening has.
            try await simulator.center.add(Self.request("night", after: 5400))
            await simulator.advance(by: 12 * 3600)
            let summaries = await Self.summaries(simulator)
            #expect(summaries.map(\.body) == ["1 notification during Sleep"], "\(evening)")
            #expect(summaries.map(\.date) == [try simulatorDate(end)], "\(evening)")
            #expect(await Self.options(simulator, "night") == [.list])
        }
    }

    @Test(
        "by hand: on holds until turned off, off delivers the summary at once; off in a scheduled spell lasts until its end"
    )
    func byHand() async throws {
        let start = try simulatorDate("2027-06-07T08:00:00Z")
        let simulator = try await grantedSimulator(now: start)
        try await simulator.putFocusMode(FocusMode(name: "Work", allowedApps: ["com.example.other"]))
        #expect(try await simulator.setFocus("Work", on: true).isActive)
        try await simulator.center.add(Self.request("one", after: 60))
        try await simulator.center.add(Self.request("two", after: 120))
        await simulator.advance(by: 86_400 * 3)
        #expect(await Self.options(simulator, "two") == [.list])
        #expect(await simulator.presented.filter { $0.notification.request.identifier == "chime.focus.Work" }.isEmpty)
        #expect(try await simulator.setFocus("Work", on: false).isActive == false)
        let summary = await simulator.presented.filter { $0.notification.request.identifier == "chime.focus.Work" }
        #expect(summary.map(\.notification.request.content.body) == ["2 notifications during Work"])
        #expect(summary.first?.notification.request.content.userInfo["chime.held"] as? Int == 2)

        // Sleep turned off at 23:00 stays off until 07:00, then the schedule decides again.
        try await simulator.putFocusMode(Self.sleep())
        await simulator.advance(to: try simulatorDate("2027-06-10T21:00:00Z"))
        #expect(try await simulator.focusModes.first { $0.mode.name == "Sleep" }?.isActive == true)
        #expect(
            try await simulator.setFocus("Sleep", on: false).nextChange == (try simulatorDate("2027-06-11T05:00:00Z")))
        try await simulator.center.add(Self.request("off", after: 60))
        await simulator.advance(to: try simulatorDate("2027-06-11T21:00:00Z"))
        try await simulator.center.add(Self.request("on again", after: 60))
        await simulator.advance(by: 120)
        #expect(await Self.options(simulator, "off") == [.list, .banner, .sound])
        #expect(await Self.options(simulator, "on again") == [.list])

        #expect(try await simulator.removeFocusMode("Sleep"))
        #expect(
            await Self.summaries(simulator).map(\.body) == ["1 notification during Sleep"],
            "removed: summarized at once")
        #expect(try await simulator.removeFocusMode("Sleep") == false)
    }

    @Test("a bad focus is refused naming the field")
    func refused() async throws {
        let cases: [(() throws -> FocusMode, String)] = [
            ({ try FocusMode(name: "") }, "name"),
            ({ try FocusMode(name: " Sleep") }, "name"),
            ({ try FocusMode(name: "Sleep/Night") }, "name"),
            (
                {
                    try FocusMode(
                        name: "S", schedule: FocusSchedule(from: "25:00", to: "07:00", days: [.mon], timeZone: "UTC"))
                }, "schedule.from"
            ),
            (
                {
                    try FocusMode(
                        name: "S", schedule: FocusSchedule(from: "22:00", to: "7", days: [.mon], timeZone: "UTC"))
                }, "schedule.to"
            ),
            (
                {
                    try FocusMode(
                        name: "S", schedule: FocusSchedule(from: "22:00", to: "22:00", days: [.mon], timeZone: "UTC"))
                }, "schedule.to"
            ),
            (
                {
                    try FocusMode(
                        name: "S", schedule: FocusSchedule(from: "22:00", to: "07:00", days: [], timeZone: "UTC"))
                }, "schedule.days"
            ),
            (
                {
                    try FocusMode(
                        name: "S",
                        schedule: FocusSchedule(from: "22:00", to: "07:00", days: [.mon], timeZone: "Mars/Olympus"))
                }, "schedule.timeZone"
            ),
            ({ try FocusMode(name: "S", allowedApps: ["not an app"]) }, "allowedApps[0]"),
            ({ try FocusMode(name: "S", allowedThreads: [""]) }, "allowedThreads[0]"),
        ]
        for (make, field) in cases {
            #expect { _ = try make() } throws: { ($0 as? ChimeError)?.field == field }
        }
        #expect(try FocusDay.parseList("mon-fri") == FocusDay.weekdays)
        #expect(try FocusDay.parseList("fri-mon") == [.fri, .sat, .sun, .mon])
        #expect(try FocusDay.parseList("Saturday, sun") == [.sat, .sun])
        #expect { _ = try FocusDay.parseList("mon-funday") } throws: { ($0 as? ChimeError)?.field == "days" }
        let simulator = try await grantedSimulator()
        await #expect { _ = try await simulator.setFocus("Nothing", on: true) } throws: {
            ($0 as? ChimeError)?.code == .notFound
        }
    }

    @Test("across a restart mid-focus on a real SQLite file: the spell goes on, its summary comes once at its end")
    func restart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "chime-focus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("chime.sqlite").path
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        do {
            let first = try NotificationSimulator(
                bundleIdentifier: "com.example.sim", now: try simulatorDate("2027-06-07T20:30:00Z"),
                timeZone: berlin, storePath: path)
            try #require(try await first.center.requestAuthorization(options: [.alert, .sound]))
            try await first.putFocusMode(Self.sleep())
            try await first.center.add(Self.request("a", after: 60))
            try await first.center.add(Self.request("b", after: 120))
            await first.advance(by: 600)
            #expect(await first.focusDecisions.map(\.decision.reason) == [.focus, .focus])
            await first.engine.shutdown()
        }
        do {
            // Restarted mid-focus: still on, the count goes on.
            let second = try NotificationSimulator(
                bundleIdentifier: "com.example.sim", now: try simulatorDate("2027-06-07T23:00:00Z"),
                timeZone: berlin, storePath: path)
            #expect(try await second.focusModes.first?.held == ["com.example.sim": 2])
            try await second.center.add(Self.request("c", after: 60))
            await second.advance(by: 120)
            #expect(await Self.options(second, "c") == [.list])
            await second.engine.shutdown()
        }
        // Started again after the end, while nothing ran: summarized at the first firing, once.
        let third = try NotificationSimulator(
            bundleIdentifier: "com.example.sim", now: try simulatorDate("2027-06-08T09:00:00Z"),
            timeZone: berlin, storePath: path)
        await third.advance(by: 1)
        #expect(await Self.summaries(third).map(\.body) == ["3 notifications during Sleep"])
        await third.engine.shutdown()
        let fourth = try NotificationSimulator(
            bundleIdentifier: "com.example.sim", now: try simulatorDate("2027-06-08T10:00:00Z"),
            timeZone: berlin, storePath: path)
        await fourth.advance(by: 3600)
        #expect(await Self.summaries(fourth).isEmpty)
        #expect(await fourth.deliveredNotifications.filter { $0.request.identifier == "chime.focus.Sleep" }.count == 1)
    }
}
