import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// Content with a badge (and a title unless `badgeOnly`).
private func badged(_ count: Int, badgeOnly: Bool = false) -> UNMutableNotificationContent {
    let content = UNMutableNotificationContent()
    if !badgeOnly { content.title = "Inbox" }
    content.badge = NSNumber(value: count)
    return content
}

@Suite("Badges as iOS applies them", .testThreads)
@MainActor
struct BadgeRulesTests {
    func badge(_ simulator: NotificationSimulator) async throws -> Int {
        try await simulator.engine.app(simulator.bundleIdentifier).badge
    }

    @Test("in the background the delivery sets the badge")
    func background() async throws {
        let simulator = try await authorizedSimulator()
        try await simulator.center.add(UNNotificationRequest(identifier: "n", content: badged(4), trigger: nil))
        #expect(try await badge(simulator) == 4)
        #expect(await simulator.presented.first?.options.contains(.badge) == true)
    }

    @Test(
        "in front the badge is applied only when willPresent answers with .badge",
        arguments: [
            (UNNotificationPresentationOptions([.banner, .sound]), 0), ([.banner, .badge], 4), ([.badge], 4),
        ] as [(UNNotificationPresentationOptions, Int)])
    func foreground(answer: UNNotificationPresentationOptions, expected: Int) async throws {
        let simulator = try await authorizedSimulator()
        simulator.appState = .foreground
        let delegate = RecordingDelegate(presenting: answer)
        simulator.center.delegate = delegate
        try await simulator.center.add(UNNotificationRequest(identifier: "n", content: badged(4), trigger: nil))
        #expect(await simulator.deliveredNotifications.map(\.request.identifier) == ["n"])
        #expect(try await badge(simulator) == expected)
        #expect(delegate.willPresent == ["n"])
    }

    @Test("in front without a delegate nothing is shown and the badge stays")
    func foregroundWithoutDelegate() async throws {
        let simulator = try await authorizedSimulator()
        simulator.appState = .foreground
        try await simulator.center.add(UNNotificationRequest(identifier: "n", content: badged(2), trigger: nil))
        #expect(await simulator.presented.isEmpty)
        #expect(try await badge(simulator) == 0)
    }

    @Test("in front, .badge in the answer with badges switched off leaves the badge")
    func foregroundBadgesOff() async throws {
        let simulator = try await authorizedSimulator([.alert, .sound])
        simulator.appState = .foreground
        let delegate = RecordingDelegate(presenting: [.banner, .badge])
        simulator.center.delegate = delegate
        try await simulator.center.add(UNNotificationRequest(identifier: "n", content: badged(2), trigger: nil))
        #expect(try await badge(simulator) == 0)
        #expect(await simulator.presented.first?.options == [.banner])
        #expect(delegate.willPresent == ["n"])
    }

    @Test(
        "a badge-only request sets the badge and is neither listed nor shown, in the background and in front",
        arguments: [false, true])
    func badgeOnly(inFront: Bool) async throws {
        let simulator = try await authorizedSimulator()
        let delegate = RecordingDelegate(presenting: [.banner])
        simulator.center.delegate = delegate
        if inFront { simulator.appState = .foreground }
        try await simulator.center.add(
            UNNotificationRequest(
                identifier: "count", content: badged(9, badgeOnly: true),
                trigger: UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false)))
        await simulator.advance(by: 5)
        #expect(try await badge(simulator) == 9)
        #expect(await simulator.deliveredNotifications.isEmpty)
        #expect(await simulator.presented.isEmpty)
        #expect(await simulator.pendingRequests.isEmpty, "it fired")
        #expect(delegate.willPresent.isEmpty)
    }

    @Test("a badge-only push sets the badge without a notification")
    func badgeOnlyPush() async throws {
        let simulator = try await authorizedSimulator()
        try await simulator.push(Data(#"{"aps": {"badge": 12}}"#.utf8), identifier: "b")
        #expect(try await badge(simulator) == 12)
        #expect(await simulator.deliveredNotifications.isEmpty)
        try await simulator.push(Data(#"{"aps": {"badge": 0}}"#.utf8))
        #expect(try await badge(simulator) == 0, "0 clears it")
    }
}
