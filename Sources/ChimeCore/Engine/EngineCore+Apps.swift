import Foundation

extension EngineCore {
    // MARK: Apps

    package func appRecord(_ app: String) throws -> AppRecord {
        // Before the cache: only a valid (ASCII) bundle identifier names an app, whichever adapter
        // passed it, so nothing is ever stored under a name the store would not find again.
        try Validation.validateBundleIdentifier(app)
        let key = LiteralKey(app)
        if let cached = appCache[key] { return cached }
        if let stored = try store.app(app) {
            appCache[key] = stored
            return stored
        }
        let record = AppRecord(bundleIdentifier: app, created: clock.now, deviceToken: Self.makeDeviceToken())
        try store.putApp(record)
        appCache[key] = record
        return record
    }

    package func putApp(_ record: AppRecord) throws {
        try save(record)
        announce(.app(.updated, record: record), app: record.bundleIdentifier)
    }

    /// Sets or clears the app's background-launch command (the owner's call, never the app's).
    package func setLaunchCommand(_ command: LaunchCommand?, app: String) throws -> AppRecord {
        guard var record = try store.app(app) else {
            throw ChimeError(.notFound, field: "app", "no app \(app); register it with `chime apps add \(app)`")
        }
        record.launchCommand = command
        try putApp(record)
        return record
    }

    func removeApp(_ app: String) throws {
        try store.removeApp(app)
        dismissals.removeApp(app)
        escalations.removeApp(app)
        appCache[LiteralKey(app)] = nil
        categoryCache[LiteralKey(app)] = nil
        usage[LiteralKey(app)] = nil
        window.removeApp(app)
        announce(.app(.removed), app: app)
    }

    func save(_ record: AppRecord) throws {
        try store.putApp(record)
        appCache[LiteralKey(record.bundleIdentifier)] = record
    }

    // MARK: Categories

    package func categories(app: String) throws -> [NotificationCategory] {
        try store.categories(app: app)
    }

    package func setCategories(_ categories: [NotificationCategory], app: String) throws {
        try store.setCategories(categories, app: app)
        categoryCache[LiteralKey(app)] = Dictionary(
            categories.map { (LiteralKey($0.identifier), $0) }, uniquingKeysWith: { first, _ in first })
        announce(.categories(categories), app: app)
    }

    /// The app's category with this identifier, from the cache (filled from the store once).
    func category(_ identifier: String, app: String) throws -> NotificationCategory? {
        guard !identifier.isEmpty else { return nil }
        if let cached = categoryCache[LiteralKey(app)] { return cached[LiteralKey(identifier)] }
        let all = Dictionary(
            try store.categories(app: app).map { (LiteralKey($0.identifier), $0) },
            uniquingKeysWith: { first, _ in first })
        categoryCache[LiteralKey(app)] = all
        return all[LiteralKey(identifier)]
    }

    /// `registerForRemoteNotifications()`: the app's record, registered again if it had
    /// unregistered (with the same device token, as iOS gives an app that stays installed).
    package func registerForRemoteNotifications(app: String) throws -> AppRecord {
        var record = try appRecord(app)
        if record.deviceTokenUnregistered != nil {
            record.deviceTokenUnregistered = nil
            try putApp(record)
        }
        return record
    }

    /// `unregisterForRemoteNotifications()`: pushes to the app's device token are answered 410
    /// `Unregistered` from now (the first unregistration's date is kept until it registers again).
    package func unregisterForRemoteNotifications(app: String) throws -> AppRecord {
        var record = try appRecord(app)
        if record.deviceTokenUnregistered == nil {
            record.deviceTokenUnregistered = clock.now
            try putApp(record)
        }
        return record
    }

    static func makeDeviceToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    package func requestAuthorization(app: String, options: UNAuthorizationOptions) throws -> (
        granted: Bool, settings: NotificationSettings
    ) {
        var record = try appRecord(app)
        let status = record.settings.authorizationStatus
        if status == .notDetermined || (status == .provisional && !options.contains(.provisional)) {
            let decision: AuthorizationDecision =
                options.contains(.provisional) ? .grant : policy.decide(app: app, options: options)
            record.requestedOptions = options
            record.promptPending = decision == .ask
            record.settings = Presentation.settings(after: decision, options: options, previous: record.settings)
            applyScheduledDelivery(&record.settings, app: app)
            // The record's change (a prompt waits, what was asked for) as well as the settings.
            try putApp(record)
            try log(.settings(record.settings), app: app)
        }
        return (record.settings.authorizationStatus.allowsDelivery, record.settings)
    }

    package func answerAuthorization(app: String, allow: Bool) throws -> NotificationSettings {
        var record = try appRecord(app)
        var options = record.requestedOptions
        if options.isEmpty { options = [.alert, .sound, .badge] }
        options.remove(.provisional)
        record.settings = Presentation.settings(
            after: allow ? .grant : .deny, options: options, previous: record.settings)
        applyScheduledDelivery(&record.settings, app: app)
        record.promptPending = false
        try putApp(record)
        try log(.settings(record.settings), app: app)
        return record.settings
    }

    package func updateSettings(app: String, _ change: (inout NotificationSettings) -> Void) throws
        -> NotificationSettings
    {
        var record = try appRecord(app)
        change(&record.settings)
        try save(record)
        try log(.settings(record.settings), app: app)
        return record.settings
    }

    package func changeSettings(app: String, _ change: SettingsChange) throws -> NotificationSettings {
        var record = try appRecord(app)
        record.settings = try record.settings.applying(change, app: app, requested: record.requestedOptions)
        try save(record)
        try log(.settings(record.settings), app: app)
        return record.settings
    }

    package func setBadge(_ count: Int, app: String) throws {
        if let refusal = Validation.badgeRefusal(count, field: "badge") { throw UNError(.badgeInputInvalid, refusal) }
        var record = try appRecord(app)
        guard record.badge != count else { return }
        record.badge = count
        try putApp(record)
    }

    /// A delivery's badge, applied after the app in front answered `willPresent` with `.badge` (or
    /// stopped being in front): only if the user still allows badges.
    package func applyDeferredBadge(_ count: Int, app: String) throws {
        guard try appRecord(app).settings.badgeSetting == .enabled else { return }
        try setBadge(count, app: app)
    }
}
