import ChimeCore
import Foundation
import Synchronization

// Linux has no UIKit. These are the parts of `UIApplication` and its delegate that registering
// for remote notifications needs, under UIKit's names, so the code that asks for a device token
// and hands it to a provider compiles unchanged. What differs is in docs/differences-from-apple.md.

/// The app's delegate for remote-notification registration: UIKit's `UIApplicationDelegate`,
/// with the two methods `registerForRemoteNotifications()` answers through. Both have empty
/// default implementations (they are optional in UIKit).
///
/// ```swift
/// final class AppDelegate: UIApplicationDelegate {
///     func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
///         let hex = deviceToken.map { String(format: "%02x", $0) }.joined()
///         Provider.upload(deviceToken: hex)  // what the provider puts in /3/device/{token}
///     }
///     func application(_ application: UIApplication, didFailToRegisterForRemoteNotificationsWithError error: any Error) {
///         print("no device token: \(error)")
///     }
/// }
/// ```
public protocol UIApplicationDelegate: AnyObject {
    /// The app's device token (32 bytes; providers send it as 64 hexadecimal characters).
    func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data)
    /// Registration failed (the service could not be reached, the app is not registered with it).
    func application(_ application: UIApplication, didFailToRegisterForRemoteNotificationsWithError error: any Error)
}

extension UIApplicationDelegate {
    public func application(
        _ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data
    ) {}
    public func application(
        _ application: UIApplication, didFailToRegisterForRemoteNotificationsWithError error: any Error
    ) {}
}

/// The app, as UIKit's `UIApplication` offers it for remote notifications: register for a device
/// token, give it up, and whether it is registered.
///
/// ```swift
/// let delegate = AppDelegate()
/// UIApplication.shared.delegate = delegate
/// UIApplication.shared.registerForRemoteNotifications()   // → the delegate's didRegister… with the token
/// // later, to stop pushes: a provider then gets 410 Unregistered for the token
/// UIApplication.shared.unregisterForRemoteNotifications()
/// ```
///
/// There is one per notification center: ``shared`` is the one of
/// `UNUserNotificationCenter.current()` (the app's, or in a test the simulator's). The device token
/// is the app's, the same across restarts; registering again after unregistering gives the same
/// token. The delegate is called on the center's callback queue, in the order the calls were made.
///
/// `@unchecked Sendable` (an `NSObject`): its mutable state is behind a `Mutex` (the delegate under
/// its lock too).
public final class UIApplication: NSObject, @unchecked Sendable {
    /// The app of `UNUserNotificationCenter.current()`.
    public class var shared: UIApplication { UNUserNotificationCenter.current().application }

    private weak var center: UNUserNotificationCenter?
    private struct State {
        var registered = false
        /// How many registration calls were made: a registration's answer marks the app registered
        /// only when no call came after it (an unregistration right after must win).
        var calls = 0
        /// The last registration call's work: each waits for the one before, so answers come in order.
        var chain: Task<Void, Never>?
    }

    private let state = Mutex(State())
    /// The app's object, not Sendable by type (as UIKit's delegates), so outside `State`: read and
    /// written only inside `state.withLock`.
    private weak var _delegate: (any UIApplicationDelegate)?

    init(center: UNUserNotificationCenter) {
        self.center = center
    }

    /// The delegate that gets the device token (held weakly, as UIKit holds it).
    public var delegate: (any UIApplicationDelegate)? {
        get { state.withLock { _ in _delegate } }
        set { state.withLock { _ in _delegate = newValue } }
    }

    /// Whether the app registered in this run and has not unregistered since (false as soon as
    /// ``unregisterForRemoteNotifications()`` is called, as on iOS).
    public var isRegisteredForRemoteNotifications: Bool { state.withLock { $0.registered } }

    /// Asks for the app's device token; the delegate's
    /// `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)` gets it, or
    /// `application(_:didFailToRegisterForRemoteNotificationsWithError:)` says why not. Pushes to
    /// the token are taken again if the app had unregistered.
    public func registerForRemoteNotifications() {
        let call = state.withLock { state -> Int in
            state.calls += 1
            return state.calls
        }
        enqueue { center in
            do {
                let hex = try await center.backend.registerDevice(app: center.bundleIdentifier)
                let token = try Self.bytes(hex)
                self.state.withLock { if $0.calls == call { $0.registered = true } }
                center.callback {
                    self.delegate?.application(self, didRegisterForRemoteNotificationsWithDeviceToken: token)
                }
            } catch {
                center.callback {
                    self.delegate?.application(self, didFailToRegisterForRemoteNotificationsWithError: error)
                }
            }
        }
    }

    /// Gives up the device token: a provider's push to it is answered 410 `Unregistered` until the
    /// app registers again. A failure is reported on standard error (UIKit reports none).
    public func unregisterForRemoteNotifications() {
        state.withLock { state in
            state.calls += 1
            state.registered = false
        }
        enqueue { center in
            do {
                try await center.backend.unregisterDevice(app: center.bundleIdentifier)
            } catch {
                UNUserNotificationCenter.report("unregisterForRemoteNotifications", error)
            }
        }
    }

    private func enqueue(_ work: @escaping @Sendable (UNUserNotificationCenter) async -> Void) {
        state.withLock { state in
            let previous = state.chain
            state.chain = Task { [weak center] in
                await previous?.value
                guard let center else { return }
                await work(center)
            }
        }
    }

    /// A device token's 64 hexadecimal characters as its 32 bytes.
    static func bytes(_ hex: String) throws -> Data {
        let digits = Array(hex.utf8)
        let isHex = { (byte: UInt8) in
            (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) || (0x41...0x46).contains(byte)
        }
        guard digits.count == 64, digits.allSatisfy(isHex) else {
            throw ChimeError(.malformedInput, "the device token \(hex.prefix(80)) is not 64 hexadecimal characters")
        }
        var bytes = Data(capacity: 32)
        for index in stride(from: 0, to: 64, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
                throw ChimeError(.malformedInput, "the device token \(hex) is not 64 hexadecimal characters")
            }
            bytes.append(byte)
        }
        return bytes
    }
}
