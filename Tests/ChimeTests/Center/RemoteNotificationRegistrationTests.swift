import Chime
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// `UIApplication.shared.registerForRemoteNotifications()` hands the app delegate the device token
/// as iOS does; `unregisterForRemoteNotifications()` gives it up; registering again gives it back.
@Suite("Remote-notification registration", .testThreads, .notificationSimulator(bundleIdentifier: "com.example.chat"))
struct RemoteNotificationRegistrationTests {
    /// Records what the application tells it, for the test to wait on.
    final class Delegate: UIApplicationDelegate, Sendable {
        let tokens: AsyncStream<Data>
        private let continuation: AsyncStream<Data>.Continuation
        init() { (tokens, continuation) = AsyncStream.makeStream() }
        func application(
            _ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data
        ) {
            continuation.yield(deviceToken)
        }
        func application(
            _ application: UIApplication, didFailToRegisterForRemoteNotificationsWithError error: any Error
        ) {
            Issue.record("registration failed: \(error)")
            continuation.finish()
        }
    }

    @Test(
        "the delegate gets the app's 32-byte device token; after unregistering the app is unregistered; registering again gives the same token"
    )
    func registerUnregisterRegister() async throws {
        let simulator = NotificationSimulator.current
        let delegate = Delegate()
        var tokens = delegate.tokens.makeAsyncIterator()
        UIApplication.shared.delegate = delegate
        #expect(
            UIApplication.shared === UIApplication.shared && !UIApplication.shared.isRegisteredForRemoteNotifications)

        UIApplication.shared.registerForRemoteNotifications()
        let token = try #require(await tokens.next())
        let hex = token.map { String(format: "%02x", $0) }.joined()
        let stored = try await simulator.engine.app("com.example.chat").deviceToken
        #expect(token.count == 32 && hex == stored)
        #expect(UIApplication.shared.isRegisteredForRemoteNotifications)

        UIApplication.shared.unregisterForRemoteNotifications()
        // Calls are answered in order: the next registration's token comes after the unregistration.
        UIApplication.shared.registerForRemoteNotifications()
        #expect(try #require(await tokens.next()) == token)
        #expect(try await simulator.engine.app("com.example.chat").deviceTokenUnregistered == nil)

        UIApplication.shared.unregisterForRemoteNotifications()
        let deadline = ContinuousClock.now + .seconds(60)
        while try await simulator.engine.app("com.example.chat").deviceTokenUnregistered == nil,
            ContinuousClock.now < deadline
        {
            await Task.yield()
        }
        #expect(try await simulator.engine.app("com.example.chat").deviceTokenUnregistered == simulator.now)
        #expect(!UIApplication.shared.isRegisteredForRemoteNotifications)
    }
}
