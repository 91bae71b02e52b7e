import ChimeCore
import Foundation
import PostgresTestServer
import Synchronization
import TestThreads
import Testing

@testable import ChimePostgres

/// What only a shared store has to get right: migrating once, refusing what it cannot read,
/// claiming due requests once, numbering events in commit order, refusing lost updates, and the
/// feed. (What every store does is in `StoreConformanceTests`.)
@Suite("PostgreSQL store: schema, claims, commit order, conflicts, feed", .testThreads)
struct PostgresStoreTests {
    static let base = Date(timeIntervalSince1970: 1_800_000_000)

    static func pending(_ identifier: String, fire: Double?) -> PendingRequest {
        PendingRequest(
            request: NotificationRequest(
                identifier: identifier, content: NotificationContent(title: identifier),
                trigger: .timeInterval(60, repeats: false)),
            nextFireDate: fire.map { base.addingTimeInterval($0) }, anchor: base)
    }

    static func event(_ app: String, _ identifier: String) -> EngineEvent {
        EngineEvent(app: app, date: base, payload: .removed(identifiers: [identifier], scope: .pending))
    }

    /// Two stores (two nodes, each with its own connection) on one fresh schema; closed at the end.
    static func withTwoStores(_ body: (PostgresStore, PostgresStore) throws -> Void) throws {
        let url = try PostgresTestServer.shared().makeSchema()
        let first = try PostgresStore(url: url)
        let second = try PostgresStore(url: url)
        defer {
            first.close()
            second.close()
        }
        try body(first, second)
    }

    /// The schema name in a URL made by `makeSchema()`.
    static func schema(of url: String) -> String {
        String(url.split(separator: "%3D").last ?? "")
    }

    @Test("a new database gets the schema; stores opening at once migrate it once")
    func migrateOnce() throws {
        let server = try PostgresTestServer.shared()
        let url = try server.makeSchema()
        let opened = Mutex<[Result<String, ChimeError>]>([])
        let threads = (0..<4).map { _ in
            Thread {
                let result: Result<String, ChimeError>
                do {
                    let store = try PostgresStore(url: url)
                    defer { store.close() }
                    result = .success(store.described)
                } catch {
                    result = .failure(error as? ChimeError ?? ChimeError(.storeFailure, "\(error)"))
                }
                opened.withLock { $0.append(result) }
            }
        }
        for thread in threads { thread.start() }
        let deadline = Date().addingTimeInterval(60)
        while opened.withLock({ $0.count }) < 4 && Date() < deadline { usleep(10_000) }
        let results = opened.withLock { $0 }
        #expect(results.count == 4)
        for result in results { _ = try result.get() }
        let schema = Self.schema(of: url)
        #expect(
            try server.sql("SELECT value FROM \(schema).chime_meta WHERE key = 'schema_version'").trimmingCharacters(
                in: .whitespacesAndNewlines)
                == "\(PostgresSchema.current.version)")
        #expect(
            try server.sql("SELECT count(*) FROM pg_tables WHERE schemaname = '\(schema)'").trimmingCharacters(
                in: .whitespacesAndNewlines) == "13")
    }

    @Test(
        "a database of a newer schema version is refused untouched, with an error naming the version and the database")
    func newerRefused() throws {
        let server = try PostgresTestServer.shared()
        let url = try server.makeSchema()
        let schema = Self.schema(of: url)
        let store = try PostgresStore(url: url)
        try store.putPending(Self.pending("kept", fire: 1), app: "a")
        store.close()
        try server.sql("UPDATE \(schema).chime_meta SET value = 99 WHERE key = 'schema_version'")
        let error = #expect(throws: ChimeError.self) { try PostgresStore(url: url) }
        #expect(error?.code == .storeTooNew)
        #expect(error?.message.contains("schema version 99") == true)
        #expect(error?.message.contains("postgres (schema \(schema))") == true)
        #expect(try server.sql("SELECT value FROM \(schema).chime_meta WHERE key = 'schema_version'").contains("99"))
        #expect(try server.sql("SELECT identifier FROM \(schema).chime_pending").contains("kept"))
    }

    @Test("a database of schema version 1 (every release before the quarantine) is upgraded with everything in it kept")
    func upgradeFromVersion1() throws {
        let server = try PostgresTestServer.shared()
        let url = try server.makeSchema()
        let schema = Self.schema(of: url)
        let app = "com.example.upgrade"
        let calendar = NotificationRequest(
            identifier: "calendar", content: NotificationContent(title: "c"),
            trigger: .calendar(DateComponents(hour: 9, minute: 30), repeats: true))
        var record = AppRecord(
            bundleIdentifier: app, created: Self.base, deviceToken: String(repeating: "ab", count: 32))
        record.tokenHash = String(repeating: "cd", count: 32)
        let store = try PostgresStore(url: url)
        let response = NotificationResponse(
            notification: DeliveredNotification(request: calendar, date: Self.base),
            actionIdentifier: "snooze", userText: nil, date: Self.base)
        try store.transaction {
            try store.putApp(record)
            try store.setCategories(
                [
                    NotificationCategory(
                        identifier: "alarm", actions: [NotificationAction(identifier: "snooze", title: "Snooze")])
                ],
                app: app)
            try store.putPending(Self.pending("interval", fire: 60), app: app)
            try store.putPending(
                PendingRequest(request: calendar, nextFireDate: Self.base.addingTimeInterval(3600), anchor: Self.base),
                app: app)
            try store.putDelivered(DeliveredNotification(request: calendar, date: Self.base), app: app)
            _ = try store.appendResponse(response, app: app)
            _ = try store.appendEvent(Self.event(app, "interval"))
        }
        store.close()
        // Back to version 1 as it was released: the same tables, without the quarantine.
        try server.sql(
            Self.dropWebPush(schema)
                + "DROP TABLE \(schema).chime_quarantine; DROP SEQUENCE \(schema).chime_quarantine_seq; "
                + "UPDATE \(schema).chime_meta SET value = 1 WHERE key = 'schema_version'")
        let upgraded = try PostgresStore(url: url)
        defer { upgraded.close() }
        #expect(
            try server.sql("SELECT value FROM \(schema).chime_meta WHERE key = 'schema_version'").trimmingCharacters(
                in: .whitespacesAndNewlines)
                == "\(PostgresSchema.current.version)")
        #expect(try upgraded.app(app) == record)
        #expect(try upgraded.categories(app: app).map(\.identifier) == ["alarm"])
        #expect(try upgraded.pending(app: app).map(\.request.identifier) == ["interval", "calendar"])
        #expect(try upgraded.pending(app: app, identifier: "calendar")?.request == calendar)
        #expect(try upgraded.delivered(app: app, thread: nil).map(\.request.identifier) == ["calendar"])
        #expect(try upgraded.responses(app: app).map(\.actionIdentifier) == ["snooze"])
        #expect(try upgraded.events(after: 0, app: app, limit: 10).count == 1)
        // And the new table works.
        #expect(
            try upgraded.transaction {
                try upgraded.quarantinePending(app: app, identifier: "interval", reason: "test", date: Self.base)
            } != nil)
        #expect(try upgraded.quarantinedCount() == 1)
    }

    /// Version 5's table dropped, as a version 4 database had none.
    static func dropReceipts(_ schema: String) -> String {
        "DROP TABLE \(schema).chime_receipts; "
    }

    /// Version 4's column (and its index, and version 5's table) dropped, as a version 3 database had none.
    static func dropAutoDismiss(_ schema: String) -> String {
        dropReceipts(schema) + "ALTER TABLE \(schema).chime_delivered DROP COLUMN dismiss_at; "
    }

    /// Version 3's tables (and version 4's column) dropped, as a version 2 database had none of them.
    static func dropWebPush(_ schema: String) -> String {
        dropAutoDismiss(schema)
            + "DROP TABLE \(schema).chime_web_push_queue; DROP TABLE \(schema).chime_web_push_messages; DROP SEQUENCE \(schema).chime_web_push_message_seq; "
            + "DROP TABLE \(schema).chime_web_push_subscriptions; "
    }

    @Test(
        "a database of schema version 2 (before Web Push) is upgraded with everything kept, and takes subscriptions and queued pushes"
    )
    func upgradeFromVersion2() throws {
        let server = try PostgresTestServer.shared()
        let url = try server.makeSchema()
        let schema = Self.schema(of: url)
        let app = "com.example.upgrade"
        let store = try PostgresStore(url: url)
        try store.transaction {
            try store.putApp(
                AppRecord(bundleIdentifier: app, created: Self.base, deviceToken: String(repeating: "ab", count: 32)))
            try store.putPending(Self.pending("kept", fire: 60), app: app)
        }
        store.close()
        try server.sql(
            Self.dropWebPush(schema) + "UPDATE \(schema).chime_meta SET value = 2 WHERE key = 'schema_version'")
        let upgraded = try PostgresStore(url: url)
        defer { upgraded.close() }
        #expect(
            try server.sql("SELECT value FROM \(schema).chime_meta WHERE key = 'schema_version'").trimmingCharacters(
                in: .whitespacesAndNewlines)
                == "\(PostgresSchema.current.version)")
        #expect(try upgraded.pending(app: app).map(\.request.identifier) == ["kept"])
        let subscription = WebPushSubscription(
            id: "s", endpoint: "https://fcm.googleapis.com/fcm/send/s", p256dh: [4] + Array(repeating: 1, count: 64),
            auth: Array(repeating: 2, count: 16), created: Self.base)
        try upgraded.putWebPushSubscription(subscription)
        #expect(try upgraded.webPushSubscriptions() == [subscription])
        let message = try upgraded.queueWebPush("{}", app: app, subscriptions: ["s"], claimedUntil: Self.base)
        #expect(
            try upgraded.claimWebPushes(before: Self.base, claimUntil: Self.base.addingTimeInterval(60), limit: 5).map(
                \.message) == [message])
    }

    @Test(
        "a database of schema version 3 (before auto-dismissal) is upgraded: delivered rows kept without an end of relevance, new ones take one"
    )
    func upgradeFromVersion3() throws {
        let server = try PostgresTestServer.shared()
        let url = try server.makeSchema()
        let schema = Self.schema(of: url)
        let app = "com.example.upgrade"
        let old = DeliveredNotification(
            request: NotificationRequest(identifier: "old", content: NotificationContent(title: "o")), date: Self.base)
        let store = try PostgresStore(url: url)
        _ = try store.transaction { try store.putDelivered(old, app: app) }
        store.close()
        try server.sql(
            Self.dropAutoDismiss(schema) + "UPDATE \(schema).chime_meta SET value = 3 WHERE key = 'schema_version'")
        let upgraded = try PostgresStore(url: url)
        defer { upgraded.close() }
        #expect(
            try server.sql("SELECT value FROM \(schema).chime_meta WHERE key = 'schema_version'").trimmingCharacters(
                in: .whitespacesAndNewlines)
                == "\(PostgresSchema.current.version)")
        #expect(try upgraded.delivered(app: app, thread: nil).map(\.request.identifier) == ["old"])
        #expect(try upgraded.soonestDismissals(limit: 5).isEmpty)
        #expect(try upgraded.soonestFireDate() == nil)
        let dismissAt = Self.base.addingTimeInterval(300)
        let new = DeliveredNotification(
            request: NotificationRequest(
                identifier: "new", content: NotificationContent(title: "n"),
                autoDismiss: .at(dismissAt)), date: Self.base)
        _ = try upgraded.transaction { try upgraded.putDelivered(new, app: app) }
        #expect(try upgraded.soonestDismissals(limit: 5).map(\.identifier) == ["new"])
        #expect(try upgraded.soonestFireDate() == dismissAt)
        #expect(
            try upgraded.transaction { try upgraded.dueDismissals(before: dismissAt, limit: 5).map(\.identifier) } == [
                "new"
            ])
        #expect(
            try upgraded.transaction { try upgraded.dueDismissals(before: dismissAt.addingTimeInterval(-1), limit: 5) }
                .isEmpty)
    }

    @Test(
        "a database of schema version 4 (before escalation) is upgraded: no receipts; new escalations keep theirs and wake the scheduler"
    )
    func upgradeFromVersion4() throws {
        let server = try PostgresTestServer.shared()
        let url = try server.makeSchema()
        let schema = Self.schema(of: url)
        try PostgresStore(url: url).close()
        try server.sql(
            Self.dropReceipts(schema) + "UPDATE \(schema).chime_meta SET value = 4 WHERE key = 'schema_version'")
        let upgraded = try PostgresStore(url: url)
        defer { upgraded.close() }
        #expect(
            try server.sql("SELECT value FROM \(schema).chime_meta WHERE key = 'schema_version'").trimmingCharacters(
                in: .whitespacesAndNewlines)
                == "\(PostgresSchema.current.version)")
        #expect(try upgraded.soonestEscalations(limit: 5).isEmpty)
        let next = Self.base.addingTimeInterval(60)
        let receipt = EscalationReceipt(
            app: "com.example.upgrade", identifier: "wake", sequence: 3, deliveredAt: Self.base,
            escalation: NotificationEscalation(every: 60, for: 600), nextAlertAt: next, surface: "ünïcödé")
        try upgraded.transaction { try upgraded.putReceipt(receipt) }
        #expect(try upgraded.receipt(app: "com.example.upgrade", identifier: "wake") == receipt)
        #expect(try upgraded.soonestFireDate() == next)
        #expect(try upgraded.transaction { try upgraded.dueEscalations(before: next, limit: 5) } == [receipt])
    }

    @Test("a due escalation step is claimed by one node: the other skips it while the first holds it")
    func escalationClaimedOnce() throws {
        try Self.withTwoStores { first, second in
            let next = Self.base.addingTimeInterval(60)
            for identifier in ["a", "b"] {
                let receipt = EscalationReceipt(
                    app: "com.example.claim", identifier: identifier, sequence: identifier == "a" ? 1 : 2,
                    deliveredAt: Self.base, escalation: NotificationEscalation(every: 60, for: 600), nextAlertAt: next)
                try first.transaction { try first.putReceipt(receipt) }
            }
            try first.transaction {
                let held = try first.dueEscalations(before: next, limit: 1).map(\.identifier)
                #expect(held == ["a"])
                // While the first node holds "a", the second takes "b" only.
                let taken = try second.transaction {
                    try second.dueEscalations(before: next, limit: 5).map(\.identifier)
                }
                #expect(taken == ["b"])
            }
        }
    }

    @Test("a due dismissal is claimed by one node: the other skips it while the first holds it")
    func dismissalClaimedOnce() throws {
        try Self.withTwoStores { first, second in
            let app = "com.example.claim"
            let dismissAt = Self.base.addingTimeInterval(60)
            for identifier in ["a", "b"] {
                let notification = DeliveredNotification(
                    request: NotificationRequest(
                        identifier: identifier, content: NotificationContent(title: identifier),
                        autoDismiss: .at(dismissAt)), date: Self.base)
                _ = try first.transaction { try first.putDelivered(notification, app: app) }
            }
            try first.transaction {
                let held = try first.dueDismissals(before: dismissAt, limit: 1).map(\.identifier)
                #expect(held == ["a"])
                // While the first node holds "a", the second takes "b" only.
                let taken = try second.transaction {
                    try second.dueDismissals(before: dismissAt, limit: 5).map(\.identifier)
                }
                #expect(taken == ["b"])
                _ = try first.removeDelivered(app: app, identifiers: ["a"])
            }
            #expect(try second.soonestDismissals(limit: 5).map(\.identifier) == ["b"])
        }
    }

    @Test("a chime_meta table that is not Chime's is refused untouched")
    func foreignRefused() throws {
        let server = try PostgresTestServer.shared()
        let url = try server.makeSchema()
        let schema = Self.schema(of: url)
        try server.sql("CREATE TABLE \(schema).chime_meta (key text PRIMARY KEY, value bigint NOT NULL)")
        let error = #expect(throws: ChimeError.self) { try PostgresStore(url: url) }
        #expect(error?.code == .notAStore)
        #expect(try server.sql("SELECT count(*) FROM pg_tables WHERE schemaname = '\(schema)'").contains("1"))
    }

    @Test("a bad URL or an unreachable server is a clear error naming where")
    func unreachable() throws {
        let port = try PostgresTestServer.freePort()
        let error = #expect(throws: ChimeError.self) {
            try PostgresStore(url: "postgresql://chime@127.0.0.1:\(port)/chime?connect_timeout=2")
        }
        #expect(error?.code == .storeFailure)
        #expect(error?.message.contains("cannot connect to PostgreSQL") == true)
        #expect(error?.message.contains("\(port)") == true)
    }

    @Test(
        "a due request is claimed once: another store skips what a transaction holds, and gets it when that connection dies"
    )
    func claims() throws {
        try Self.withTwoStores { first, second throws in
            try first.putPending((0..<10).map { Self.pending("r\($0)", fire: Double($0)) }, app: "a")
            let now = Self.base.addingTimeInterval(100)
            var othersSaw: [String] = []
            var afterDeath: [String] = []
            do {
                try first.transaction {
                    let claimed = try first.due(before: now, limit: 6).map(\.pending.request.identifier)
                    #expect(claimed == (0..<6).map { "r\($0)" })
                    // The other store, meanwhile, gets only what is not claimed, and fires it.
                    try second.transaction {
                        othersSaw = try second.due(before: now, limit: 10).map(\.pending.request.identifier)
                        _ = try second.removePending(app: "a", identifiers: othersSaw)
                    }
                    #expect(try second.due(before: now, limit: 10).isEmpty)
                    // The first one dies in the middle of its transaction: its claim goes back.
                    first.close()
                    let deadline = Date().addingTimeInterval(60)
                    while afterDeath.isEmpty && Date() < deadline {
                        afterDeath = try second.due(before: now, limit: 10).map(\.pending.request.identifier)
                        if afterDeath.isEmpty { usleep(10_000) }
                    }
                }
            } catch let error as ChimeError {
                #expect(error.code == .storeFailure)
            }
            #expect(othersSaw == (6..<10).map { "r\($0)" })
            #expect(afterDeath == (0..<6).map { "r\($0)" })
            #expect(try second.soonestFireDate() == Self.base)
        }
    }

    @Test("event numbers follow commit order, not the order events were written")
    func commitOrder() throws {
        try Self.withTwoStores { first, second throws in
            let (provisional, committed) = try first.transaction {
                let provisional = try first.appendEvent(Self.event("a", "written first"))
                // Written after, committed before: numbered before.
                return (provisional, try second.appendEvent(Self.event("b", "committed first")))
            }
            #expect(provisional < 0)
            #expect(committed == 1)
            let events = try second.events(after: 0, app: nil, limit: 10)
            #expect(events.map(\.sequence) == [1, 2])
            #expect(events.map(\.app) == ["b", "a"])
        }
    }

    @Test("under concurrent committers a reader never sees a number before every number below it")
    func noGapsUnderConcurrency() throws {
        let url = try PostgresTestServer.shared().makeSchema()
        let writers = 4
        let transactions = 40
        let failures = Mutex<[String]>([])
        let running = Atomic<Int>(writers)
        for writer in 0..<writers {
            Thread {
                defer { running.subtract(1, ordering: .releasing) }
                do {
                    let store = try PostgresStore(url: url)
                    defer { store.close() }
                    for index in 0..<transactions {
                        try store.transaction {
                            for part in 0...(index % 3) {
                                _ = try store.appendEvent(Self.event("w\(writer)", "\(index).\(part)"))
                            }
                            if index % 4 == 0 { usleep(2_000) }
                        }
                    }
                } catch {
                    failures.withLock { $0.append("writer \(writer): \(error)") }
                }
            }.start()
        }
        let reader = try PostgresStore(url: url)
        defer { reader.close() }
        var seen: [Int64] = []
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            let done = running.load(ordering: .acquiring) == 0
            let batch = try reader.events(after: seen.last ?? 0, app: nil, limit: 50)
            for event in batch {
                if event.sequence != (seen.last ?? 0) + 1 {
                    failures.withLock { $0.append("saw \(event.sequence) after \(seen.last ?? 0)") }
                }
                seen.append(event.sequence)
            }
            if done && batch.isEmpty { break }
        }
        #expect(failures.withLock { $0 } == [])
        let expected = writers * (0..<transactions).reduce(0) { $0 + ($1 % 3) + 1 }
        #expect(seen == Array(1...Int64(expected)))
    }

    @Test("writing an app record another store changed since this transaction read it is a conflict")
    func appConflict() throws {
        try Self.withTwoStores { first, second throws in
            try first.putApp(AppRecord(bundleIdentifier: "a", created: Self.base, deviceToken: "t"))
            struct Missing: Error {}
            var thrown: (any Error)?
            do {
                try first.transaction {
                    guard var record = try first.app("a") else { throw Missing() }
                    var rotated = record
                    rotated.tokenHash = "rotated elsewhere"
                    try second.putApp(rotated)
                    record.badge = 3
                    try first.putApp(record)
                }
            } catch {
                thrown = error
            }
            let error = thrown as? ChimeError
            #expect(error?.code == .storeConflict)
            #expect(try second.app("a")?.tokenHash == "rotated elsewhere")
            #expect(try second.app("a")?.badge == 0)
            // A fresh read sees the other's write, and the write goes through.
            try first.transaction {
                guard var record = try first.app("a") else { throw Missing() }
                record.badge = 3
                try first.putApp(record)
            }
            #expect(try second.app("a")?.tokenHash == "rotated elsewhere")
            #expect(try second.app("a")?.badge == 3)
            // Creating a record another store created meanwhile is a conflict too.
            let created = #expect(throws: ChimeError.self) {
                try first.transaction {
                    #expect(try first.app("b") == nil)
                    try second.putApp(AppRecord(bundleIdentifier: "b", created: Self.base, deviceToken: "other"))
                    try first.putApp(AppRecord(bundleIdentifier: "b", created: Self.base, deviceToken: "mine"))
                }
            }
            #expect(created?.code == .storeConflict)
            #expect(try first.app("b")?.deviceToken == "other")
        }
    }

    @Test("takeValue hands a value to one taker; insertValue keeps the first")
    func values() throws {
        try Self.withTwoStores { first, second throws in
            #expect(try first.insertValue("one", forKey: "k") == "one")
            #expect(try second.insertValue("two", forKey: "k") == "one")
            #expect(try second.takeValue(forKey: "k") == "one")
            #expect(try first.takeValue(forKey: "k") == nil)
        }
    }

    @Test("the feed hands over every store's events in order, and other stores' changes as hints")
    func feed() throws {
        try Self.withTwoStores { listener, writer throws in
            let received = Mutex<(events: [EngineEvent], dates: [Date?], device: Int)>(([], [], 0))
            listener.startFeed(
                SharedStoreFeed(
                    events: { events in received.withLock { $0.events += events } },
                    scheduleChanged: { date in received.withLock { $0.dates.append(date) } },
                    deviceChanged: { received.withLock { $0.device += 1 } }))
            // The feed starts from the log's end: wait until it listens.
            let ready = Date().addingTimeInterval(60)
            while Date() < ready {
                _ = try writer.appendEvent(Self.event("probe", "x"))
                usleep(50_000)
                if received.withLock({ !$0.events.isEmpty }) { break }
            }
            received.withLock { $0 = ([], [], 0) }
            try writer.transaction {
                try writer.putApp(AppRecord(bundleIdentifier: "w", created: Self.base, deviceToken: "t"))
                try writer.setCategories([NotificationCategory(identifier: "C")], app: "w")
                try writer.putPending([Self.pending("late", fire: 50), Self.pending("soon", fire: 5)], app: "w")
                _ = try writer.appendEvent(Self.event("w", "one"))
                _ = try writer.appendEvent(Self.event("w", "two"))
                try writer.setValue("Europe/Paris", forKey: "device.timeZone")
            }
            _ = try listener.appendEvent(Self.event("l", "own"))
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline
                && received.withLock({
                    $0.events.filter { $0.sequence > 0 && $0.app != "probe" }.count < 3 || $0.device == 0
                })
            {
                usleep(10_000)
            }
            let got = received.withLock { $0 }
            let logged = got.events.filter { $0.sequence > 0 && $0.app != "probe" }
            #expect(logged.map(\.app) == ["w", "w", "l"])
            #expect(logged.map(\.sequence) == logged.map(\.sequence).sorted())
            let hints = got.events.filter { $0.sequence == 0 }.map { "\($0.app) \($0.kind.rawValue)" }
            #expect(hints == ["w app", "w categories", "w scheduled"])
            if case .categories(let categories)? = got.events.first(where: { $0.kind == .categories })?.payload {
                #expect(categories.map(\.identifier) == ["C"])
            } else {
                Issue.record("no categories hint")
            }
            #expect(got.dates == [Self.base.addingTimeInterval(5)])
            #expect(got.device == 1)
        }
    }

    @Test("after its connection is cut, the feed announces every app's record, categories and requests again")
    func feedResynchronizes() throws {
        try Self.withTwoStores { listener, writer throws in
            try writer.transaction {
                try writer.putApp(AppRecord(bundleIdentifier: "a", created: Self.base, deviceToken: "t1"))
                try writer.putApp(AppRecord(bundleIdentifier: "b", created: Self.base, deviceToken: "t2"))
                try writer.setCategories([NotificationCategory(identifier: "C")], app: "a")
            }
            let received = Mutex<[EngineEvent]>([])
            listener.startFeed(
                SharedStoreFeed(
                    events: { events in received.withLock { $0 += events } }, scheduleChanged: { _ in },
                    deviceChanged: {}))
            let pid = try #require(listener.feedBackendPID, "the feed listens")
            let cut = try PostgresTestServer.shared().sql("SELECT pg_terminate_backend(\(pid))")
            #expect(cut.trimmingCharacters(in: .whitespacesAndNewlines) == "t", "the feed's connection was cut: \(cut)")
            // What another node changed while the feed was away is unknown: each app's hints come again.
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline && received.withLock({ $0.filter { $0.sequence == 0 }.count < 6 }) {
                usleep(20_000)
            }
            let hints = received.withLock { $0 }.filter { $0.sequence == 0 }
            #expect(
                hints.map { "\($0.app) \($0.kind.rawValue)" } == [
                    "a app", "b app", "a categories", "b categories", "a scheduled", "b scheduled",
                ])
            let categories = hints.compactMap { hint -> [String]? in
                if case .categories(let categories) = hint.payload {
                    return categories.map(\.identifier)
                } else {
                    return nil
                }
            }
            #expect(categories == [["C"], []])
        }
    }

    @Test("notification payloads stay under PostgreSQL's limit and read back whole")
    func payloads() throws {
        var changes = PostgresChanges()
        changes.events = true
        changes.earliest = 1_800_000_000.125
        changes.device = true
        changes.webPush = true
        changes.apps = Set((0..<600).map { "com.example.app\($0)" })
        changes.removed = ["gone\nwith a newline"]
        let payloads = changes.payloads(node: "n1")
        #expect(payloads.count > 1)
        #expect(payloads.allSatisfy { $0.utf8.count <= 8000 })
        var merged = PostgresChanges()
        for payload in payloads {
            let (node, part) = try #require(PostgresChanges.parse(payload))
            #expect(node == "n1")
            merged.events = merged.events || part.events
            merged.device = merged.device || part.device
            merged.webPush = merged.webPush || part.webPush
            merged.earliest = part.earliest ?? merged.earliest
            merged.apps.formUnion(part.apps)
            merged.removed.formUnion(part.removed)
        }
        #expect(merged.events && merged.device && merged.webPush)
        #expect(merged.earliest == changes.earliest)
        #expect(merged.apps == changes.apps)
        #expect(merged.removed == changes.removed)
        #expect(PostgresChanges().payloads(node: "n1").isEmpty)
        #expect(PostgresChanges.parse("someone else's notification") == nil)
    }

    @Test("the database clock measures this machine's clock against the server's")
    func clock() throws {
        let measured = Mutex<[TimeInterval]>([])
        // One measurement only (the next is an hour away), however slow this machine is today.
        let clock = try DatabaseClock(
            url: try PostgresTestServer.shared().url(), interval: 3600,
            onMeasure: { offset in measured.withLock { $0.append(offset) } })
        defer { clock.stop() }
        // Same machine, same clock: the server read its clock between the query's sending and its
        // answer, so the offset from their middle is within half the round trip (and a
        // microsecond, the server's precision) — on a busy machine as on an idle one, without a
        // bound in seconds.
        #expect(clock.roundTrip > 0)
        #expect(
            abs(clock.offset) <= clock.roundTrip / 2 + 0.000_01, "offset \(clock.offset), round trip \(clock.roundTrip)"
        )
        #expect(measured.withLock { $0 } == [clock.offset])
        // `now` is this machine's time plus the offset.
        let before = Date()
        let now = clock.now
        let after = Date()
        let local = now.addingTimeInterval(-clock.offset)  // good to a rounding of the sum (under a microsecond)
        #expect(local >= before.addingTimeInterval(-0.000_001) && local <= after.addingTimeInterval(0.000_001))
    }
}
