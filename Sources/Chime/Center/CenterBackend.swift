import ChimeCore
import Foundation

/// What a ``UNUserNotificationCenter`` stands on: an engine in this process (the default, and the
/// simulator), or a `chime serve` service reached over HTTP (``ServiceBackend``).
///
/// Operations with a completion run in the order they were called: a backend starts them in call
/// order and completes each after its change is committed.
///
/// (The app's notification service extension, run on a notification before it is delivered, is a
/// ``ServiceExtensionHandler``.)
package protocol CenterBackend: AnyObject, Sendable {
    /// The backend's clock: "now", and what the service extension's time limit runs on.
    var clock: any NotificationClock { get }

    /// Starts what delivers events for `app` (the engine's scheduler, the service's event stream).
    func start(app: String)
    /// Stops it again.
    func stop(app: String)
    /// Where the app's events arrive: the engine's hub, or one fed from the service's event stream.
    var hub: NotificationHub { get }
    /// Returns once every operation started before has completed.
    func barrier() async

    func requestAuthorization(
        app: String, options: UNAuthorizationOptions, completion: @escaping @Sendable (Result<Bool, any Error>) -> Void)
    func settings(app: String, completion: @escaping @Sendable (Result<NotificationSettings, any Error>) -> Void)
    func setCategories(
        _ categories: [NotificationCategory], app: String,
        completion: @escaping @Sendable (Result<Void, any Error>) -> Void)
    func categories(app: String, completion: @escaping @Sendable (Result<[NotificationCategory], any Error>) -> Void)
    func add(
        _ requests: [NotificationRequest], app: String,
        completion: @escaping @Sendable (Result<[Date?], any Error>) -> Void)
    /// Completes with `error` in its turn (an operation that failed before it started).
    func fail(_ error: any Error, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)
    func pending(app: String, completion: @escaping @Sendable (Result<[PendingRequest], any Error>) -> Void)
    func removePending(
        app: String, identifiers: [String]?, completion: @escaping @Sendable (Result<[String], any Error>) -> Void)
    func delivered(app: String, completion: @escaping @Sendable (Result<[DeliveredNotification], any Error>) -> Void)
    func removeDelivered(
        app: String, identifiers: [String]?, completion: @escaping @Sendable (Result<[String], any Error>) -> Void)
    func setBadge(_ count: Int, app: String, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)

    /// The app's outbox: answers not yet acknowledged.
    func outbox(app: String) async throws -> [NotificationResponse]
    /// Takes an answer out of the outbox.
    func acknowledgeResponse(_ id: Int64, app: String) async throws
    /// The user's answer; `false` when it goes nowhere (a dismiss without `.customDismissAction`).
    func answer(app: String, notification: String, action: String, userText: String?) async throws -> Bool
    /// An escalating notification's receipt, or `nil` when it has none.
    func receipt(app: String, notification: String) async throws -> EscalationReceipt?
    /// An APNs payload, delivered as if APNs had sent it; `identifier` is the notification's
    /// (APNs' collapse id). A push for the app's notification service extension goes through
    /// `serviceExtension` first (in this process; a service asks the app over its event stream).
    func push(_ payload: Data, identifier: String, app: String, serviceExtension: ServiceExtensionHandler?) async throws
    /// The app registered (or, with `nil`, removed) its notification service extension.
    func serviceExtensionChanged(_ handler: ServiceExtensionHandler?, app: String)
    /// The app came to the front or left it (a service then asks it, and waits for its
    /// `willPresent` answer, before showing its notifications).
    func foregroundChanged(_ inFront: Bool, app: String)
    /// The app in front answered `willPresent` for a notification it received (for a service's
    /// surfaces and badge; in this process the hub has the answer already).
    func reportPresentation(_ options: UNNotificationPresentationOptions, for identifier: String, app: String)
    /// The device's location, for location triggers.
    func moveDevice(to coordinate: Coordinate) async throws
    /// `registerForRemoteNotifications()`: the app's device token (64 hexadecimal characters), the
    /// app taking pushes again if it had unregistered.
    func registerDevice(app: String) async throws -> String
    /// `unregisterForRemoteNotifications()`: pushes to the app's device token are answered 410.
    func unregisterDevice(app: String) async throws
}

/// Runs the app's notification service extension on a notification that arrived and returns the
/// content to deliver. The time limit is the center's, or `limit` when shorter (a service's).
package typealias ServiceExtensionHandler =
    @Sendable (_ request: NotificationRequest, _ limit: TimeInterval?) async -> NotificationContent

extension CenterBackend {
    /// "Now", on the backend's clock.
    var now: Date { clock.now }

    /// The async form of a completion-handler operation.
    func run<T: Sendable>(_ start: (@escaping @Sendable (Result<T, any Error>) -> Void) -> Void) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            start { continuation.resume(with: $0) }
        }
    }
}

// MARK: - The engine in this process

extension NotificationEngine: CenterBackend {
    package func start(app: String) { startScheduler() }
    package func stop(app: String) { stopScheduler() }

    package func requestAuthorization(
        app: String, options: UNAuthorizationOptions,
        completion: @escaping @Sendable (Result<Bool, any Error>) -> Void
    ) {
        requestAuthorization(app: app, options: options, ordered: completion)
    }

    package func settings(
        app: String, completion: @escaping @Sendable (Result<NotificationSettings, any Error>) -> Void
    ) {
        settings(app: app, ordered: completion)
    }

    package func categories(
        app: String, completion: @escaping @Sendable (Result<[NotificationCategory], any Error>) -> Void
    ) {
        categories(app: app, ordered: completion)
    }

    package func fail(_ error: any Error, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        fail(error, ordered: completion)
    }

    package func pending(app: String, completion: @escaping @Sendable (Result<[PendingRequest], any Error>) -> Void) {
        pending(app: app, ordered: completion)
    }

    package func delivered(
        app: String, completion: @escaping @Sendable (Result<[DeliveredNotification], any Error>) -> Void
    ) {
        delivered(app: app, ordered: completion)
    }

    package func setBadge(_ count: Int, app: String, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)
    {
        setBadge(count, app: app, ordered: completion)
    }

    package func acknowledgeResponse(_ id: Int64, app: String) async throws {
        _ = try await acknowledge(response: id, app: app)
    }

    package func answer(app: String, notification: String, action: String, userText: String?) async throws -> Bool {
        try await respond(app: app, notification: notification, action: action, userText: userText, surface: "app")
            != nil
    }

    package func push(_ payload: Data, identifier: String, app: String, serviceExtension: ServiceExtensionHandler?)
        async throws
    {
        let decoded = try APNsPayload.decode(payload)
        var content = decoded.content
        if decoded.goesThroughServiceExtension, let serviceExtension {
            content = await serviceExtension(
                NotificationRequest(identifier: identifier, content: content, trigger: .push), nil)
        }
        try await deliverPush(content, identifier: identifier, silent: decoded.isSilent, app: app)
    }

    package func serviceExtensionChanged(_ handler: ServiceExtensionHandler?, app: String) {}
    package func foregroundChanged(_ inFront: Bool, app: String) {}
    package func reportPresentation(_ options: UNNotificationPresentationOptions, for identifier: String, app: String) {
    }

    package func moveDevice(to coordinate: Coordinate) async throws {
        _ = try await updateLocation(coordinate)
    }

    package func registerDevice(app: String) async throws -> String {
        try await registerForRemoteNotifications(app: app).deviceToken
    }

    package func unregisterDevice(app: String) async throws {
        _ = try await unregisterForRemoteNotifications(app: app)
    }
}
