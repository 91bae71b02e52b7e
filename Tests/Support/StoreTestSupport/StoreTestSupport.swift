import ChimeCore
import ChimePostgres
import ChimeSQLite
import Foundation
import PostgresTestServer
import Testing

// What the store tests share: the three stores (``StoreKind``), a temporary directory for a SQLite
// file, and representative values (``Samples``). Used by StoreConformanceTests and ChimeSQLiteTests.

/// The stores under test. Every scenario runs against the in-memory reference, the SQLite store and
/// the PostgreSQL store (on a server the tests start, a fresh schema each), and expects the same
/// answers from all three.
package enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory, sqlite, postgres
    package var testDescription: String { rawValue }

    package func withStore(_ body: (NotificationStore) throws -> Void) throws {
        switch self {
        case .memory:
            try body(MemoryStore())
        case .sqlite:
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = try SQLiteStore(path: directory.path("store.sqlite"))
            try body(store)
            store.close()
        case .postgres:
            let store = try PostgresStore(url: try PostgresTestServer.shared().makeSchema())
            defer { store.close() }
            try body(store)
        }
    }

    /// Whether a number taken in a rolled-back transaction is handed out again. PostgreSQL's
    /// sequences are not transactional — so that nodes never wait for each other's counters —
    /// except the event log's, which must follow commit order.
    package var reusesRolledBackNumbers: Bool { self != .postgres }
}

/// A pending sample request due `fire` seconds after ``Samples/base`` (never, with `nil`).
package func pending(
    _ identifier: String, fire: Double?, trigger: NotificationTrigger? = .timeInterval(60, repeats: false),
    sequence: Int64 = 0, inside: Bool? = nil
) -> PendingRequest {
    PendingRequest(
        request: Samples.request(identifier, trigger: trigger),
        nextFireDate: fire.map { Samples.base.addingTimeInterval($0) },
        anchor: Samples.base.addingTimeInterval(-1), inside: inside, sequence: sequence)
}

extension StoreKind {
    /// An engine over a fresh store of this kind (on `clock`, the real one by default; the tests
    /// fire with explicit dates).
    package func withEngine(
        clock: any NotificationClock = SystemClock(), _ body: (NotificationEngine) async throws -> Void
    ) async throws {
        let store: NotificationStore
        var directory: TemporaryDirectory?
        switch self {
        case .memory: store = MemoryStore()
        case .sqlite:
            directory = try TemporaryDirectory()
            store = try SQLiteStore(path: directory!.path("store.sqlite"))
        case .postgres: store = try PostgresStore(url: try PostgresTestServer.shared().makeSchema())
        }
        let engine = NotificationEngine(store: store, clock: clock, timeZone: TimeZone(identifier: "Europe/Berlin")!)
        do { try await body(engine) } catch {
            await engine.shutdown()
            throw error
        }
        await engine.shutdown()
        (store as? SQLiteStore)?.close()
        (store as? PostgresStore)?.close()
        directory?.remove()
    }
}

/// A fresh temporary directory, removed by the caller with `remove()`.
package struct TemporaryDirectory {
    package let url: URL
    package init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("chime-sqlite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    package func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    package func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Representative values, with every field set to something other than its default.
package enum Samples {
    package static let base = Date(timeIntervalSince1970: 1_750_000_000.25)

    package static let userInfo: [String: PropertyListValue] = [
        "string": .string("héllo wörld ✓ 🎉"),
        "integer": .integer(-9_223_372_036_854_775_807),
        "big": .integer(Int64.max),
        "double": .double(-0.000_123_456_789),
        "nan-free": .double(.infinity),
        "true": .bool(true),
        "false": .bool(false),
        "data": .data(Data([0, 1, 2, 0xFF, 0x80])),
        "empty-data": .data(Data()),
        "date": .date(Date(timeIntervalSinceReferenceDate: 123_456_789.123_456_7)),
        "array": .array([.integer(1), .string("two"), .array([.bool(true), .dictionary(["k": .double(3.5)])])]),
        "dictionary": .dictionary([
            "nested": .dictionary(["deeper": .array([.data(Data("x".utf8)), .date(base)])]), "": .string(""),
        ]),
        "": .string("empty key"),
    ]

    package static func content(_ title: String = "Title", thread: String = "thread-a") -> NotificationContent {
        var content = NotificationContent(title: title, subtitle: "Sub ✓", body: "Body\nwith lines and ünïcödé 日本語")
        content.badge = 7
        content.sound = NotificationSound(name: "chime.caf", isCritical: true, volume: 0.75)
        content.launchImageName = "launch"
        content.userInfo = userInfo
        content.attachments = [
            NotificationAttachment(
                identifier: "image", url: URL(fileURLWithPath: "/tmp/picture.png"), type: "public.png"),
            NotificationAttachment(
                identifier: "web", url: URL(string: "https://example.com/a%20b?q=1#frag")!, type: "public.url"),
        ]
        content.categoryIdentifier = "MEETING"
        content.threadIdentifier = thread
        content.targetContentIdentifier = "target"
        content.summaryArgument = "Alice"
        content.summaryArgumentCount = 3
        content.interruptionLevel = .timeSensitive
        content.relevanceScore = 0.5
        content.filterCriteria = "work"
        return content
    }

    package static var components: DateComponents {
        var components = DateComponents()
        components.era = 1
        components.year = 2027
        components.month = 3
        components.day = 14
        components.hour = 9
        components.minute = 26
        components.second = 53
        components.nanosecond = 589_793
        components.weekday = 2
        components.weekdayOrdinal = 2
        components.quarter = 1
        components.weekOfMonth = 3
        components.weekOfYear = 11
        components.yearForWeekOfYear = 2027
        components.timeZone = TimeZone(identifier: "Europe/Paris")
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = TimeZone(identifier: "Asia/Tokyo")!
        components.calendar = calendar
        return components
    }

    package static let triggers: [NotificationTrigger?] = [
        nil,
        .timeInterval(90.5, repeats: true),
        .calendar(components, repeats: false),
        .calendar(DateComponents(hour: 8, minute: 30), repeats: true),
        .location(
            CircularRegion(
                identifier: "office", center: Coordinate(latitude: 48.8566, longitude: 2.3522),
                radius: 150, notifyOnEntry: true, notifyOnExit: false), repeats: true),
        .push,
    ]

    package static func request(
        _ identifier: String, trigger: NotificationTrigger? = .timeInterval(60, repeats: false),
        thread: String = "thread-a"
    ) -> NotificationRequest {
        NotificationRequest(
            identifier: identifier, content: content("Title \(identifier)", thread: thread), trigger: trigger)
    }

    package static func delivered(_ identifier: String, at offset: Double, thread: String = "thread-a")
        -> DeliveredNotification
    {
        DeliveredNotification(request: request(identifier, thread: thread), date: base.addingTimeInterval(offset))
    }

    package static func response(_ identifier: String) -> NotificationResponse {
        NotificationResponse(
            notification: delivered(identifier, at: 5), actionIdentifier: "REPLY",
            userText: "On my way 🚗", date: base.addingTimeInterval(10))
    }

    package static var categories: [NotificationCategory] {
        [
            NotificationCategory(
                identifier: "MEETING",
                actions: [
                    NotificationAction(
                        identifier: "ACCEPT", title: "Accept", options: [.foreground], icon: .system("checkmark")),
                    NotificationAction(
                        identifier: "REPLY", title: "Reply", options: [.authenticationRequired, .destructive],
                        icon: .template("reply"), textInput: .init(buttonTitle: "Send", placeholder: "Message")),
                ],
                intentIdentifiers: ["intent.a", "intent.b"], options: [.customDismissAction, .hiddenPreviewsShowTitle],
                hiddenPreviewsBodyPlaceholder: "%u messages", categorySummaryFormat: "%u more from %@"),
            NotificationCategory(identifier: "EMPTY"),
        ]
    }

    package static func app(_ bundleIdentifier: String) -> AppRecord {
        var app = AppRecord(
            bundleIdentifier: bundleIdentifier, created: base, deviceToken: String(repeating: "ab", count: 32))
        app.settings.authorizationStatus = .provisional
        app.settings.soundSetting = .enabled
        app.settings.badgeSetting = .disabled
        app.settings.alertSetting = .enabled
        app.settings.notificationCenterSetting = .enabled
        app.settings.lockScreenSetting = .disabled
        app.settings.carPlaySetting = .enabled
        app.settings.alertStyle = .alert
        app.settings.showPreviewsSetting = .whenAuthenticated
        app.settings.criticalAlertSetting = .enabled
        app.settings.providesAppNotificationSettings = true
        app.settings.announcementSetting = .disabled
        app.settings.timeSensitiveSetting = .enabled
        app.settings.scheduledDeliverySetting = .disabled
        app.settings.directMessagesSetting = .enabled
        app.requestedOptions = [.alert, .sound, .badge, .timeSensitive]
        app.promptPending = true
        app.badge = -3
        app.tokenHash = "sha256:abc"
        return app
    }

    /// An event of each kind, with every field of its payload set.
    package static func event(_ app: String, kind: EngineEvent.Kind = .delivered) -> EngineEvent {
        let settings = Samples.app(app).settings
        let payload: EngineEvent.Payload
        switch kind {
        case .delivered:
            payload = .delivered(
                Delivery(
                    notification: delivered("e", at: 1), category: categories[0], settings: settings,
                    presentation: [.banner, .list, .sound], badge: 3))
        case .response: payload = .response(response("e"))
        case .removed: payload = .removed(identifiers: ["x", "y"], scope: .pending)
        case .silentPush: payload = .silentPush(delivered("s", at: 2))
        case .settings: payload = .settings(settings)
        case .scheduled: payload = .scheduled(identifiers: ["x"])
        case .categories: payload = .categories(categories)
        case .app: payload = .app(.removed)
        case .quarantined:
            payload = .quarantined(
                QuarantinedRequest(
                    id: 7, app: app, identifier: "q", reason: "its app is not a bundle identifier",
                    date: base, request: nil))
        case .expired:
            var request = request("x")
            request.expiration = .at(base)
            payload = .expired(ExpiredRequest(request: request, dueDate: base.addingTimeInterval(60)))
        case .realerted:
            var notification = delivered("e", at: 1)
            notification.request.escalation = NotificationEscalation(every: 60, for: 1800)
            var delivery = Delivery(
                notification: notification, category: categories[0], settings: settings,
                presentation: [.banner, .list, .sound], badge: 3)
            delivery.alert = 4
            payload = .realerted(delivery)
        case .focus:
            let schedule = try? FocusSchedule(
                from: "22:00", to: "07:00", days: FocusDay.weekdays, timeZone: "Europe/Berlin")
            let sleep = try? FocusMode(
                name: "Sleep", schedule: schedule, allowedApps: [app], allowedThreads: ["t"],
                allowedFilterCriteria: ["family"], manual: FocusOverride(isOn: true, since: base))
            let work = try? FocusMode(name: "Work")
            payload = .focus(
                [sleep, work].compactMap { $0 }.enumerated().map { index, mode in
                    FocusStatus(
                        mode: mode, isActive: index == 0, nextChange: index == 0 ? base.addingTimeInterval(3600) : nil,
                        held: index == 0 ? [app: 12] : [:], byHand: index == 0)
                })
        }
        return EngineEvent(app: app, date: base, payload: payload)
    }
}
