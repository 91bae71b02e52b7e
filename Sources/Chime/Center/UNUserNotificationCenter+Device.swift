import ChimeCore
import Foundation

// Chime additions: what the device does on iOS (receive a remote notification, report where it
// is), for apps running the embedded center. The simulator has its own forms (`push`, `move(to:)`).
extension UNUserNotificationCenter {
    /// Delivers a remote notification from an APNs JSON payload, as if it arrived from APNs:
    /// `aps.alert`, `sound`, `badge`, `category`, `thread-id`, …; other top-level keys become
    /// `userInfo`. A delivered notification with the same identifier (APNs' collapse id) is replaced.
    ///
    /// ```swift
    /// let payload = Data(#"{"aps": {"alert": {"title": "Stay hydrated"}, "category": "drinkingReminderCategory"}}"#.utf8)
    /// try await UNUserNotificationCenter.current().deliverRemoteNotification(payload)
    /// ```
    ///
    /// - Throws: ``APNsPayloadError`` for a payload APNs would refuse (with Apple's reason),
    ///   ``UNError`` `notificationsNotAllowed` when the app is not authorized.
    ///
    /// A payload with `mutable-content: 1` and an alert goes through the app's
    /// ``notificationServiceExtension`` first; this returns when the notification is delivered.
    public func deliverRemoteNotification(_ payload: Data, identifier: String = UUID().uuidString) async throws {
        try await backend.push(
            payload, identifier: identifier, app: bundleIdentifier, serviceExtension: serviceExtensionHandler)
    }

    /// Tells the center where the device is: location triggers whose region was entered or left fire.
    ///
    /// ```swift
    /// try await center.updateDeviceLocation(CLLocationCoordinate2D(latitude: 52.52, longitude: 13.40))
    /// ```
    public func updateDeviceLocation(_ coordinate: CLLocationCoordinate2D) async throws {
        try await backend.moveDevice(to: Coordinate(latitude: coordinate.latitude, longitude: coordinate.longitude))
    }
}
