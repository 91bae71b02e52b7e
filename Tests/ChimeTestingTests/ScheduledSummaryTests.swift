import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// Scheduled summaries (iOS 15's) in virtual time: an app's passive and active notifications are
/// held quietly, and one summary at each time picked lists them by relevance and counts the rest
/// with summaryArgument and summaryArgumentCount.
@Suite("Scheduled summary in the simulator", .testThreads)
struct ScheduledSummaryTests {
    static func request(
        _ identifier: String, after seconds: TimeInterval, level: UNNotificationInterruptionLevel = .active,
        score: Double = 0, argument: String = "", count: Int = 0, category: String = ""
    ) -> UNNotificationRequest {
        let content = UNMutableNotificationContent()
        content.title = identifier
        content.sound = .default
        content.interruptionLevel = level
        content.relevanceScore = score
        content.summaryArgument = argument
        content.summaryArgumentCount = count
        content.categoryIdentifier = category
        return UNNotificationRequest(
            identifier: identifier, content: content,
            trigger: UNTimeIntervalNotificationTrigger(timeInterval: seconds, repeats: false))
    }

    static func options(_ simulator: NotificationSimulator, _ identifier: String) async
        -> UNNotificationPresentationOptions?
    {
        await simulator.presented.last { $0.notification.request.identifier == identifier }?.options
    }

    static func summaries(_ simulator: NotificationSimulator) async -> [UNNotification] {
        await simulator.presented.filter { $0.notification.request.identifier == "chime.summary" }.map(\.notification)
    }

    @Test(
        "08:00 and 18:00 in Berlin: held quietly, one summary at 18:00 ordered by relevanceScore, the rest counted by summaryArgumentCount"
    )
    func summaryDay() async throws {
        // Monday 2027-06-07, 08:30 in Berlin (CEST, UTC+2).
        let simulator = try await grantedSimulator(now: try simulatorDate("2027-06-07T06:30:00Z"))
        #expect(await simulator.center.notificationSettings().scheduledDeliverySetting == .disabled)
        let status = try await simulator.setScheduledSummary(
            ScheduledSummary(times: ["18:00", "08:00"], timeZone: "Europe/Berlin"))
        #expect(status.summary.timeTexts == ["08:00", "18:00"])
        let evening = try simulatorDate("2027-06-07T16:00:00Z")
        #expect(status.nextDelivery == evening && status.held == 0)
        #expect(await simulator.center.notificationSettings().scheduledDeliverySetting == .enabled)

        let center = simulator.center
        try await center.add(Self.request("low", after: 600, score: 0.1))
        try await center.add(Self.request("alice1", after: 1200, argument: "Alice", count: 2))
        try await center.add(Self.request("high", after: 1800, level: .passive, score: 0.9))
        try await center.add(Self.request("bob", after: 2400, argument: "Bob"))
        try await center.add(Self.request("urgent", after: 3000, level: .timeSensitive, score: 1))
        try await center.add(Self.request("mid", after: 3600, score: 0.5))
        try await center.add(Self.request("alice2", after: 4200, argument: "Alice", count: 3))
        await simulator.advance(to: try simulatorDate("2027-06-07T10:00:00Z"))  // 12:00

        #expect(await Self.options(simulator, "low") == [.list], "held: in the list, no banner, no sound")
        #expect(await Self.options(simulator, "mid") == [.list])
        #expect(
            await Self.options(simulator, "urgent") == [.list, .banner, .sound], "time-sensitive: delivered at once")
        let decisions = await simulator.focusDecisions
        #expect(decisions.map(\.identifier) == ["low", "alice1", "high", "bob", "mid", "alice2"])
        #expect(
            decisions.allSatisfy {
                $0.decision == FocusDecision(focus: "Scheduled Summary", quiet: true, reason: .scheduledSummary)
            })
        #expect(try await simulator.scheduledSummary?.held == 6)
        #expect(await Self.summaries(simulator).isEmpty)
        #expect(await simulator.deliveredNotifications.count == 7, "every one is in the list")

        await simulator.advance(to: try simulatorDate("2027-06-07T17:00:00Z"))  // 19:00
        let summaries = await Self.summaries(simulator)
        try #require(summaries.count == 1)
        let summary = try #require(summaries.first)
        #expect(summary.date == (try simulatorDate("2027-06-07T16:00:00Z")), "at 18:00 Berlin")
        #expect(summary.request.content.title == "Scheduled Summary")
        #expect(
            summary.request.content.body == "high\nmid\nlow\n6 more notifications from Alice and Bob",
            "by relevanceScore, then the rest: 2 + 1 + 3 items")
        #expect(
            summary.request.content.userInfo["chime.summary"] as? [String] == [
                "high", "mid", "low", "alice1", "bob", "alice2",
            ])
        #expect(summary.request.content.userInfo["chime.held"] as? Int == 6)
        #expect(await Self.options(simulator, "chime.summary") == [.list, .banner], "the summary itself is presented")
        let next = try await simulator.scheduledSummary
        let morning = try simulatorDate("2027-06-08T06:00:00Z")
        #expect(next?.held == 0 && next?.nextDelivery == morning)

        // The next day: a category's categorySummaryFormat words the rest; 08:00 delivers it.
        center.setNotificationCategories([
            UNNotificationCategory(
                identifier: "chat", actions: [], intentIdentifiers: [],
                hiddenPreviewsBodyPlaceholder: nil,
                categorySummaryFormat: "%u new messages from %@")
        ])
        for (index, name) in ["Carol", "Dan", "Carol", "Erin", "Dan"].enumerated() {
            try await center.add(
                Self.request("m\(index)", after: Double(60 * (index + 1)), argument: name, category: "chat"))
        }
        await simulator.advance(to: try simulatorDate("2027-06-08T07:00:00Z"))
        let second = try #require(await Self.summaries(simulator).last)
        #expect(second.date == (try simulatorDate("2027-06-08T06:00:00Z")))
        #expect(second.request.content.body == "m0\nm1\nm2\n2 new messages from Erin and Dan")

        // Out of the summary: what it holds comes at once, then notifications are shown as usual.
        try await center.add(Self.request("evening", after: 60))
        await simulator.advance(by: 120)
        #expect(await Self.options(simulator, "evening") == [.list])
        #expect(try await simulator.removeScheduledSummary())
        #expect(await Self.summaries(simulator).last?.request.content.body == "evening")
        #expect(await Self.summaries(simulator).count == 3)
        #expect(await simulator.center.notificationSettings().scheduledDeliverySetting == .disabled)
        #expect(try await simulator.removeScheduledSummary() == false)
        try await center.add(Self.request("after", after: 60))
        await simulator.advance(by: 120)
        #expect(await Self.options(simulator, "after") == [.list, .banner, .sound])
    }

    @Test(
        "across daylight-saving changes: 02:30 skipped in March comes at 03:30, repeated in October comes once at its first pass; 08:00 stays 08:00"
    )
    func daylightSaving() async throws {
        // "dawn" comes after the 02:30 summary: in October, between its two passes (00:30Z and 01:30Z).
        let cases = [
            ("2027-03-27T20:00:00Z", 6.0, ["2027-03-28T01:30:00Z", "2027-03-28T06:00:00Z"]),
            ("2027-10-30T20:00:00Z", 5.0, ["2027-10-31T00:30:00Z", "2027-10-31T07:00:00Z"]),
        ]
        for (evening, hours, expected) in cases {
            let simulator = try await grantedSimulator(now: try simulatorDate(evening))
            try await simulator.setScheduledSummary(
                ScheduledSummary(times: ["02:30", "08:00"], timeZone: "Europe/Berlin"))
            for index in 1...4 { try await simulator.center.add(Self.request("n\(index)", after: Double(600 * index))) }
            await simulator.advance(by: hours * 3600)
            try await simulator.center.add(Self.request("dawn", after: 60))
            await simulator.advance(by: (12 - hours) * 3600)
            let summaries = await Self.summaries(simulator)
            #expect(summaries.map(\.date) == (try expected.map(simulatorDate)), "\(evening)")
            #expect(summaries.map(\.request.content.body) == ["n1\nn2\nn3\n1 more notification", "dawn"], "\(evening)")
        }
    }

    @Test("a bad summary is refused naming the field")
    func refused() async throws {
        let cases: [(() throws -> ScheduledSummary, String)] = [
            ({ try ScheduledSummary(times: [], timeZone: "UTC") }, "times"),
            ({ try ScheduledSummary(times: ["08:00", "25:00"], timeZone: "UTC") }, "times[1]"),
            ({ try ScheduledSummary(times: ["8"], timeZone: "UTC") }, "times[0]"),
            ({ try ScheduledSummary(times: ["08:00", "8:00"], timeZone: "UTC") }, "times[1]"),
            ({ try ScheduledSummary(minutes: Array(0..<13), timeZone: "UTC") }, "times"),
            ({ try ScheduledSummary(times: ["08:00"], timeZone: "Mars/Olympus") }, "timeZone"),
        ]
        for (make, field) in cases {
            #expect { _ = try make() } throws: { ($0 as? ChimeError)?.field == field }
        }
        let simulator = try await grantedSimulator()
        let summary = try ScheduledSummary(times: ["08:00"], timeZone: "UTC")
        await #expect { _ = try await simulator.setScheduledSummary(summary, app: "not an app") } throws: {
            ($0 as? ChimeError)?.field == "app"
        }
    }

    @Test("across restarts on a real SQLite file: what is held stays held, its summary comes once")
    func restart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "chime-summary-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("chime.sqlite").path
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        func simulator(at text: String) throws -> NotificationSimulator {
            try NotificationSimulator(
                bundleIdentifier: "com.example.sim", now: try simulatorDate(text), timeZone: berlin, storePath: path)
        }
        do {
            let first = try simulator(at: "2027-06-07T06:30:00Z")
            try #require(try await first.center.requestAuthorization(options: [.alert, .sound]))
            try await first.setScheduledSummary(ScheduledSummary(times: ["18:00"], timeZone: "Europe/Berlin"))
            try await first.center.add(Self.request("a", after: 60, score: 0.2))
            try await first.center.add(Self.request("b", after: 120, score: 0.8))
            await first.advance(by: 600)
            #expect(await first.focusDecisions.count == 2)
            await first.engine.shutdown()
        }
        do {
            // Restarted mid-spell: still in the summary, the count goes on.
            let second = try simulator(at: "2027-06-07T12:00:00Z")
            #expect(try await second.scheduledSummary?.held == 2)
            #expect(await second.center.notificationSettings().scheduledDeliverySetting == .enabled)
            try await second.center.add(Self.request("c", after: 60, score: 0.5))
            await second.advance(by: 120)
            #expect(await Self.options(second, "c") == [.list])
            await second.engine.shutdown()
        }
        // Started again after 18:00, while nothing ran: delivered at the first firing, once.
        let third = try simulator(at: "2027-06-07T19:00:00Z")
        await third.advance(by: 1)
        #expect(await Self.summaries(third).map(\.request.content.body) == ["b\nc\na"])
        await third.engine.shutdown()
        let fourth = try simulator(at: "2027-06-07T20:00:00Z")
        await fourth.advance(by: 86_400)
        #expect(await Self.summaries(fourth).isEmpty)
        #expect(await fourth.deliveredNotifications.filter { $0.request.identifier == "chime.summary" }.count == 1)
        #expect(try await fourth.scheduledSummary?.held == 0)
    }
}
