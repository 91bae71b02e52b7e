import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

@Suite("Time-interval triggers", .testThreads)
struct TimeIntervalTriggerTests {
    @Test("the trigger keeps its interval and repeats flag")
    func fields() {
        let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 90, repeats: true)
        #expect(trigger.timeInterval == 90)
        #expect(trigger.repeats)
        #expect(!UNTimeIntervalNotificationTrigger(timeInterval: 0.5, repeats: false).repeats)
    }

    @Test("an interval of 0 or less stops the program with Apple's message")
    func zeroIntervalTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = UNTimeIntervalNotificationTrigger(timeInterval: 0, repeats: false)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("time interval must be greater than 0"), "\(stderr)")
    }

    @Test("a negative interval stops the program")
    func negativeIntervalTraps() async {
        await #expect(processExitsWith: .failure) {
            _ = UNTimeIntervalNotificationTrigger(timeInterval: -5, repeats: false)
        }
    }

    @Test("a repeating interval under 60 s stops the program with Apple's message")
    func shortRepeatTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = UNTimeIntervalNotificationTrigger(timeInterval: 59, repeats: true)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("time interval must be at least 60 if repeating"), "\(stderr)")
    }

    @Test("a repeating interval of exactly 60 s is accepted")
    func sixtyRepeats() async {
        await #expect(processExitsWith: .success) {
            _ = UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: true)
        }
    }

    @Test("a non-repeating request fires once, after its interval")
    func firesOnce() async throws {
        let simulator = try await authorizedSimulator()
        let start = simulator.now
        try await simulator.center.add(request("once", after: 10))
        await simulator.advance(by: 9.5)
        #expect(await simulator.deliveredNotifications.isEmpty)
        await simulator.advance(by: 0.5)
        #expect(await simulator.deliveredNotifications.map(\.date) == [start.addingTimeInterval(10)])
        #expect(await simulator.pendingRequests.isEmpty)
        await simulator.advance(by: 100)
        #expect(await simulator.presented.count == 1)
    }

    @Test("a repeating request fires every N seconds and stays pending")
    func repeats() async throws {
        let simulator = try await authorizedSimulator()
        let start = simulator.now
        try await simulator.center.add(request("tick", after: 60, repeats: true))
        await simulator.advance(by: 60 * 3 + 30)
        let presented = await simulator.presented
        #expect(presented.map(\.notification.date) == [60.0, 120, 180].map { start.addingTimeInterval($0) })
        let delivered = await simulator.deliveredNotifications
        #expect(delivered.count == 1, "the delivered list holds the identifier once")
        #expect(delivered.first?.date == start.addingTimeInterval(180))
        let pending = try #require(await simulator.pendingRequests.first)
        let trigger = try #require(pending.trigger as? UNTimeIntervalNotificationTrigger)
        #expect(trigger.timeInterval == 60 && trigger.repeats)
        #expect(trigger.scheduledDate == start.addingTimeInterval(240))
    }

    @Test(
        "a pending trigger's nextTriggerDate is now plus the interval, as iOS answers; scheduledDate is when it fires")
    func pendingNextTriggerDate() async throws {
        let simulator = try await authorizedSimulator()
        simulator.install()
        defer { simulator.uninstall() }
        let start = simulator.now
        try await simulator.center.add(request("a", after: 3600))
        await simulator.advance(by: 600)
        let trigger = try #require(await simulator.pendingRequests.first?.trigger as? UNTimeIntervalNotificationTrigger)
        #expect(trigger.nextTriggerDate() == start.addingTimeInterval(600 + 3600))
        #expect(trigger.scheduledDate == start.addingTimeInterval(3600))
        let made = UNTimeIntervalNotificationTrigger(timeInterval: 3600, repeats: false)
        #expect(made.scheduledDate == nil && made.nextTriggerDate() == start.addingTimeInterval(600 + 3600))
        // Apps sort their pending requests by it, as on iOS.
        try await simulator.center.add(request("b", after: 60))
        let sorted = await simulator.center.pendingNotificationRequests().sorted {
            ($0.trigger as! UNTimeIntervalNotificationTrigger).nextTriggerDate()!
                < ($1.trigger as! UNTimeIntervalNotificationTrigger).nextTriggerDate()!
        }
        #expect(sorted.map(\.identifier) == ["b", "a"])
    }
}
