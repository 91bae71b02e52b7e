import ChimeCore
import ChimeSQLite
import ChimeTesting
import TestThreads
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A fresh temporary directory, removed by the caller with `remove()`.
struct TemporaryDirectory {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("chime-sqlite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    func remove() { try? FileManager.default.removeItem(at: url) }
}

extension FileHandle {
    /// What can be read after waiting at most `timeout` seconds for something to read; empty when
    /// nothing came in time or the other end is closed.
    func available(within timeout: TimeInterval) -> Data {
        var ready = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, Int32(max(0, timeout) * 1000)) > 0 else { return Data() }
        return availableData
    }
}

/// An engine on the SQLite file at `path` on a manual clock standing at `date` (UTC), its scheduler
/// started when `scheduler`, for `body`; shut down and closed after it, as a service restarting.
func withSQLiteEngine(path: String, at date: Date, scheduler: Bool = false, _ body: (NotificationEngine) async throws -> Void) async throws {
    let store = try SQLiteStore(path: path)
    let engine = NotificationEngine(store: store, clock: ManualClock(now: date), timeZone: TimeZone(identifier: "UTC")!)
    if scheduler { engine.startScheduler() }
    try await body(engine)
    await engine.shutdown()
    store.close()
}

/// Waits (at most 30 s) until `condition` no longer holds.
func waitWhile(_ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(30)
    while try await condition(), ContinuousClock.now < deadline {
        try await Sleep.for(.milliseconds(20))
    }
}

/// A helper process that did not end in time (it was killed).
struct HelperTimeout: Error, CustomStringConvertible {
    var description: String
}

/// Representative values, with every field set to something other than its default.
enum Samples {
    static let base = Date(timeIntervalSince1970: 1_750_000_000.25)

    static let userInfo: [String: PropertyListValue] = [
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
        "dictionary": .dictionary(["nested": .dictionary(["deeper": .array([.data(Data("x".utf8)), .date(base)])]), "": .string("")]),
        "": .string("empty key"),
    ]

    static func content(_ title: String = "Title", thread: String = "thread-a") -> NotificationContent {
        var content = NotificationContent(title: title, subtitle: "Sub ✓", body: "Body\nwith lines and ünïcödé 日本語")
        content.badge = 7
        content.sound = NotificationSound(name: "chime.caf", isCritical: true, volume: 0.75)
        content.launchImageName = "launch"
        content.userInfo = userInfo
        content.attachments = [
            NotificationAttachment(identifier: "image", url: URL(fileURLWithPath: "/tmp/picture.png"), type: "public.png"),
            NotificationAttachment(identifier: "web", url: URL(string: "https://example.com/a%20b?q=1#frag")!, type: "public.url"),
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

    static var components: DateComponents {
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

    static let triggers: [NotificationTrigger?] = [
        nil,
        .timeInterval(90.5, repeats: true),
        .calendar(components, repeats: false),
        .calendar(DateComponents(hour: 8, minute: 30), repeats: true),
        .location(CircularRegion(identifier: "office", center: Coordinate(latitude: 48.8566, longitude: 2.3522),
                                 radius: 150, notifyOnEntry: true, notifyOnExit: false), repeats: true),
        .push,
    ]

    static func request(_ identifier: String, trigger: NotificationTrigger? = .timeInterval(60, repeats: false),
                        thread: String = "thread-a") -> NotificationRequest {
        NotificationRequest(identifier: identifier, content: content("Title \(identifier)", thread: thread), trigger: trigger)
    }

    static func delivered(_ identifier: String, at offset: Double, thread: String = "thread-a") -> DeliveredNotification {
        DeliveredNotification(request: request(identifier, thread: thread), date: base.addingTimeInterval(offset))
    }

    static func response(_ identifier: String) -> NotificationResponse {
        NotificationResponse(notification: delivered(identifier, at: 5), actionIdentifier: "REPLY",
                             userText: "On my way 🚗", date: base.addingTimeInterval(10))
    }

    static var categories: [NotificationCategory] {
        [
            NotificationCategory(
                identifier: "MEETING",
                actions: [
                    NotificationAction(identifier: "ACCEPT", title: "Accept", options: [.foreground], icon: .system("checkmark")),
                    NotificationAction(identifier: "REPLY", title: "Reply", options: [.authenticationRequired, .destructive],
                                       icon: .template("reply"), textInput: .init(buttonTitle: "Send", placeholder: "Message")),
                ],
                intentIdentifiers: ["intent.a", "intent.b"], options: [.customDismissAction, .hiddenPreviewsShowTitle],
                hiddenPreviewsBodyPlaceholder: "%u messages", categorySummaryFormat: "%u more from %@"),
            NotificationCategory(identifier: "EMPTY"),
        ]
    }

    static func app(_ bundleIdentifier: String) -> AppRecord {
        var app = AppRecord(bundleIdentifier: bundleIdentifier, created: base, deviceToken: String(repeating: "ab", count: 32))
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
    static func event(_ app: String, kind: EngineEvent.Kind = .delivered) -> EngineEvent {
        let settings = Samples.app(app).settings
        let payload: EngineEvent.Payload
        switch kind {
        case .delivered:
            payload = .delivered(Delivery(notification: delivered("e", at: 1), category: categories[0], settings: settings,
                                          presentation: [.banner, .list, .sound], badge: 3))
        case .response: payload = .response(response("e"))
        case .removed: payload = .removed(identifiers: ["x", "y"], scope: .pending)
        case .silentPush: payload = .silentPush(delivered("s", at: 2))
        case .settings: payload = .settings(settings)
        case .scheduled: payload = .scheduled(identifiers: ["x"])
        case .categories: payload = .categories(categories)
        case .app: payload = .app(.removed)
        case .quarantined:
            payload = .quarantined(QuarantinedRequest(id: 7, app: app, identifier: "q", reason: "its app is not a bundle identifier",
                                                      date: base, request: nil))
        case .expired:
            var request = request("x")
            request.expiration = .at(base)
            payload = .expired(ExpiredRequest(request: request, dueDate: base.addingTimeInterval(60)))
        case .realerted:
            var notification = delivered("e", at: 1)
            notification.request.escalation = NotificationEscalation(every: 60, for: 1800)
            var delivery = Delivery(notification: notification, category: categories[0], settings: settings,
                                    presentation: [.banner, .list, .sound], badge: 3)
            delivery.alert = 4
            payload = .realerted(delivery)
        }
        return EngineEvent(app: app, date: base, payload: payload)
    }
}
