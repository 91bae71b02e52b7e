#if canImport(XCTest)
    import Chime
    import Foundation
    import XCTest

    extension XCTestCase {
        /// A fresh simulator that `UNUserNotificationCenter.current()` returns until the test ends
        /// (it is uninstalled by a teardown block). Call it in `setUp` or at the start of a test.
        ///
        /// ```swift
        /// final class AlarmTests: XCTestCase {
        ///     var simulator: NotificationSimulator!
        ///     override func setUp() {
        ///         simulator = installNotificationSimulator(bundleIdentifier: "com.example.alarm")
        ///     }
        ///     func testSnooze() async throws {
        ///         try await Alarm().start()
        ///         await simulator.advance(by: 10)
        ///         XCTAssertEqual(await simulator.deliveredNotifications.count, 1)
        ///     }
        /// }
        /// ```
        ///
        /// XCTest runs a process's tests one at a time, so `current()` finds this simulator from any
        /// thread, `DispatchQueue` blocks included.
        public func installNotificationSimulator(
            bundleIdentifier: String = "com.example.app",
            now: Date = Date(timeIntervalSince1970: 1_780_000_000),
            timeZone: TimeZone = TimeZone(identifier: "UTC")!
        ) -> NotificationSimulator {
            let simulator = NotificationSimulator(bundleIdentifier: bundleIdentifier, now: now, timeZone: timeZone)
            simulator.install()
            addTeardownBlock { simulator.uninstall() }
            return simulator
        }
    }
#endif
