import Chime
import ChimeTesting
import Foundation
import XCTest

/// The XCTest form: a simulator installed in `setUp`, uninstalled when the test ends.
final class XCTestSupportTests: XCTestCase {
    private var simulator: NotificationSimulator!

    override func setUp() {
        super.setUp()
        simulator = installNotificationSimulator(bundleIdentifier: "com.example.xctest")
    }

    func testCurrentIsTheSimulatorFromAnyThread() async throws {
        XCTAssertTrue(UNUserNotificationCenter.current() === simulator.center)
        // XCTest runs one test at a time, so even a DispatchQueue block finds it.
        let onQueue = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: UNUserNotificationCenter.current()) }
        }
        XCTAssertTrue(onQueue === simulator.center)
        let granted = try await UNUserNotificationCenter.current().requestAuthorization(options: [.alert])
        XCTAssertTrue(granted)
        try await UNUserNotificationCenter.current().add(timed("xc", after: 2))
        await simulator.advance(by: 2)
        let delivered = await simulator.deliveredNotifications.map(\.request.identifier)
        XCTAssertEqual(delivered, ["xc"])
    }

    func testEachTestHasAFreshSimulator() async {
        let pending = await simulator.pendingRequests
        XCTAssertTrue(pending.isEmpty)
    }
}
