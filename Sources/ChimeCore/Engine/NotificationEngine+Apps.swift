import Foundation
import Synchronization

extension NotificationEngine {
    // MARK: - Apps and authorization

    /// The app's record, created on first use.
    public func app(_ app: String) async throws -> AppRecord {
        if let record = try await read({ try $0.app(app) }) { return record }
        return try await perform { try $0.appRecord(app) }
    }

    /// Every app the engine knows.
    public func apps() async throws -> [AppRecord] {
        try await read { try $0.apps() }
    }

    /// A page of the apps: those after `bundleIdentifier` (nil: from the first), at most `limit`.
    public func apps(after bundleIdentifier: String?, limit: Int) async throws -> [AppRecord] {
        try await read { try $0.apps(after: bundleIdentifier, limit: limit) }
    }

    /// `registerForRemoteNotifications()`: the app's record (created on first use) with its device
    /// token, taking pushes again if the app had unregistered; the token stays the same.
    ///
    /// ```swift
    /// let token = try await engine.registerForRemoteNotifications(app: "com.example.chat").deviceToken
    /// ```
    public func registerForRemoteNotifications(app: String) async throws -> AppRecord {
        try await perform { try $0.registerForRemoteNotifications(app: app) }
    }

    /// `unregisterForRemoteNotifications()`: from now a push to the app's device token is answered
    /// 410 `Unregistered`, with the date in ``AppRecord/deviceTokenUnregistered``, until the app
    /// registers again.
    public func unregisterForRemoteNotifications(app: String) async throws -> AppRecord {
        try await perform { try $0.unregisterForRemoteNotifications(app: app) }
    }

    /// Creates or replaces an app's record (service mode: registration, token rotation).
    public func putApp(_ record: AppRecord) async throws {
        try await perform { try $0.putApp(record) }
    }

    /// Sets (or with `nil` clears) the command the service starts to hand the app an answer while
    /// it is not running. Only the owner may call this: it runs code on the user's machine.
    ///
    /// - Returns: the app's record after the change.
    /// - Throws: ``ChimeError`` `notFound` when the app is not registered.
    @discardableResult
    public func setLaunchCommand(_ command: LaunchCommand?, app: String) async throws -> AppRecord {
        try await perform { try $0.setLaunchCommand(command, app: app) }
    }

    /// Removes an app and everything it owns.
    public func removeApp(_ app: String) async throws {
        try await perform { try $0.removeApp(app) }
    }

    /// Asks the user once; later calls return the stored answer.
    ///
    /// - Returns: whether notifications are allowed, and the resulting settings.
    public func requestAuthorization(app: String, options: UNAuthorizationOptions) async throws -> (
        granted: Bool, settings: NotificationSettings
    ) {
        try await perform { try $0.requestAuthorization(app: app, options: options) }
    }

    /// Answers a waiting question (`chime apps allow|deny`, the web center), or changes the answer.
    public func answerAuthorization(app: String, allow: Bool) async throws -> NotificationSettings {
        try await perform { try $0.answerAuthorization(app: app, allow: allow) }
    }

    /// The app's current settings.
    public func settings(app: String) async throws -> NotificationSettings {
        try await self.app(app).settings
    }

    /// Changes individual settings (what a settings screen does): alerts, sounds, badges, previews.
    public func updateSettings(app: String, _ change: @escaping @Sendable (inout NotificationSettings) -> Void)
        async throws -> NotificationSettings
    {
        try await perform { try $0.updateSettings(app: app, change) }
    }

    /// Applies the user's change to an app's settings (see ``SettingsChange`` for what may change).
    public func changeSettings(app: String, _ change: SettingsChange) async throws -> NotificationSettings {
        try await perform { try $0.changeSettings(app: app, change) }
    }

    // MARK: - Categories

    /// Replaces the app's categories.
    public func setCategories(_ categories: [NotificationCategory], app: String) async throws {
        try await withCheckedThrowingContinuation { continuation in
            setCategories(categories, app: app) { continuation.resume(with: $0) }
        }
    }

    /// `setCategories`, with a completion handler; the call order is the processing order.
    public func setCategories(
        _ categories: [NotificationCategory], app: String,
        completion: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        submit(
            { core in
                try Validation.validate(categories)
                try core.setCategories(categories, app: app)
            }, completion: completion)
    }

    /// The app's categories.
    public func categories(app: String) async throws -> [NotificationCategory] {
        try await read { try $0.categories(app: app) }
    }
}
