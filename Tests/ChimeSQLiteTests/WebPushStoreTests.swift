import ChimeCore
import ChimePostgres
import Foundation
import PostgresTestServer
import StoreTestSupport
import TestThreads
import Testing

@testable import ChimeSQLite

func webPushSubscription(_ id: String, created: Double, apps: [String]? = nil) -> WebPushSubscription {
    WebPushSubscription(
        id: id, endpoint: "https://fcm.googleapis.com/fcm/send/\(id)",
        p256dh: [4] + Array(repeating: UInt8(id.count), count: 64),
        auth: Array(repeating: 7, count: 16), apps: apps, name: "device \(id)", userAgent: "Firefox/133",
        created: Samples.base.addingTimeInterval(created))
}

@Suite("Store conformance: Web Push subscriptions and the push queue", .testThreads)
struct WebPushStoreTests {
    @Test("subscriptions: put, replace by id, oldest first, endpoints unique, remove", arguments: StoreKind.allCases)
    func subscriptions(kind: StoreKind) throws {
        try kind.withStore { store in
            try store.putWebPushSubscription(webPushSubscription("b", created: 2))
            try store.putWebPushSubscription(webPushSubscription("a", created: 1, apps: ["com.example.alarm"]))
            var replaced = webPushSubscription("b", created: 2)
            replaced.lastSuccess = Samples.base.addingTimeInterval(10.25)
            replaced.lastFailure = Samples.base.addingTimeInterval(11.5)
            replaced.lastFailureReason = "HTTP 429"
            replaced.name = "Anna’s phone"
            try store.putWebPushSubscription(replaced)
            #expect(
                try store.webPushSubscriptions() == [
                    webPushSubscription("a", created: 1, apps: ["com.example.alarm"]), replaced,
                ])
            // One by id and one by endpoint, as the outcome of each push and a registration read them.
            #expect(try store.webPushSubscription(id: "b") == replaced)
            #expect(try store.webPushSubscription(endpoint: replaced.endpoint) == replaced)
            #expect(try store.webPushSubscription(id: "z") == nil)
            #expect(try store.webPushSubscription(endpoint: replaced.endpoint + "x") == nil)
            // Another id with the endpoint of "a" is refused, and nothing changes.
            var clash = webPushSubscription("c", created: 3)
            clash.endpoint = webPushSubscription("a", created: 1).endpoint
            let error = #expect(throws: ChimeError.self) {
                try store.transaction { try store.putWebPushSubscription(clash) }
            }
            #expect(error?.field == "endpoint")
            #expect(try store.webPushSubscriptions().map(\.id) == ["a", "b"])
            #expect(try store.removeWebPushSubscription(id: "a"))
            #expect(try !store.removeWebPushSubscription(id: "a"))
            #expect(try store.webPushSubscriptions().map(\.id) == ["b"])
        }
    }

    @Test(
        "queue: claimed until a date, retried later, finished; a message goes with its last push",
        arguments: StoreKind.allCases)
    func queue(kind: StoreKind) throws {
        try kind.withStore { store in
            let at = { (seconds: Double) in Samples.base.addingTimeInterval(seconds) }
            for id in ["s1", "s2", "s3"] { try store.putWebPushSubscription(webPushSubscription(id, created: 0)) }
            let first = try store.queueWebPush(
                "{\"m\":1}", app: "com.a", subscriptions: ["s1", "s2"], claimedUntil: at(60))
            let second = try store.queueWebPush("{\"m\":2}", app: "com.b", subscriptions: ["s3"], claimedUntil: at(30))
            #expect(first != second)
            #expect(try store.queuedWebPushCount() == 3)
            // Claimed by the queuer: nothing is due before its claim ends.
            #expect(try store.claimWebPushes(before: at(29), claimUntil: at(200), limit: 10).isEmpty)
            let due = try store.claimWebPushes(before: at(60), claimUntil: at(120), limit: 2)
            #expect(due.map(\.subscription) == ["s3", "s1"])
            #expect(due.map(\.body) == ["{\"m\":2}", "{\"m\":1}"])
            #expect(due.map(\.app) == ["com.b", "com.a"])
            #expect(due.allSatisfy { $0.attempts == 0 })
            // Taken ones are claimed: only s2 is left before 60.
            #expect(
                try store.claimWebPushes(before: at(60), claimUntil: at(120), limit: 10).map(\.subscription) == ["s2"])
            try store.retryWebPush(message: first, subscription: "s1", attempts: 1, notBefore: at(90))
            let retried = try store.claimWebPushes(before: at(100), claimUntil: at(300), limit: 10)
            #expect(retried.map(\.subscription) == ["s1"])
            #expect(retried.first?.attempts == 1)
            try store.finishWebPush(message: first, subscription: "s1")
            try store.finishWebPush(message: second, subscription: "s3")
            #expect(try store.queuedWebPushCount() == 1)
            // Removing a subscription takes its queued pushes (and the message with its last one).
            #expect(try store.removeWebPushSubscription(id: "s2"))
            #expect(try store.queuedWebPushCount() == 0)
            #expect(try store.claimWebPushes(before: .distantFuture, claimUntil: .distantFuture, limit: 10).isEmpty)
            // And removing an app takes what was queued for its notifications.
            _ = try store.queueWebPush("{}", app: "com.gone", subscriptions: ["s1"], claimedUntil: at(0))
            _ = try store.queueWebPush("{}", app: "com.kept", subscriptions: ["s1"], claimedUntil: at(0))
            try store.transaction { try store.removeApp("com.gone") }
            #expect(try store.claimWebPushes(before: at(1), claimUntil: at(2), limit: 10).map(\.app) == ["com.kept"])
        }
    }

    @Test(
        "claims given back are due at once with their attempts kept; whether any device is subscribed; the log's newest event",
        arguments: StoreKind.allCases)
    func releaseAndQueries(kind: StoreKind) throws {
        try kind.withStore { store in
            let at = { (seconds: Double) in Samples.base.addingTimeInterval(seconds) }
            #expect(try !store.hasWebPushSubscriptions())
            #expect(try store.newestEventSequence() == 0)
            for id in ["s1", "s2", "s3"] { try store.putWebPushSubscription(webPushSubscription(id, created: 0)) }
            #expect(try store.hasWebPushSubscriptions())
            let message = try store.queueWebPush(
                "{\"m\":1}", app: "com.a", subscriptions: ["s1", "s2", "s3"], claimedUntil: at(120))
            try store.retryWebPush(message: message, subscription: "s2", attempts: 3, notBefore: at(500))
            try store.transaction {
                try store.releaseWebPushes(
                    [
                        QueuedWebPushID(message: message, subscription: "s1"),
                        QueuedWebPushID(message: message, subscription: "s2"),
                    ],
                    at: at(-120))
            }
            let due = try store.claimWebPushes(before: at(0), claimUntil: at(200), limit: 10)
            #expect(due.map(\.subscription) == ["s1", "s2"])
            #expect(due.map(\.attempts) == [0, 3])
            #expect(
                due.map(\.id) == [
                    QueuedWebPushID(message: message, subscription: "s1"),
                    QueuedWebPushID(message: message, subscription: "s2"),
                ])
            // s3's claim stands.
            #expect(try store.claimWebPushes(before: at(119), claimUntil: at(200), limit: 10).isEmpty)
            for id in ["s1", "s2", "s3"] { _ = try store.removeWebPushSubscription(id: id) }
            #expect(try !store.hasWebPushSubscriptions())
            let event = EngineEvent(
                app: "com.a", date: Samples.base, payload: .removed(identifiers: ["x"], scope: .delivered))
            let first = try store.appendEvent(event)
            let second = try store.appendEvent(event)
            #expect(second > first)
            #expect(try store.newestEventSequence() == second)
        }
    }

    @Test("a stored subscription reads back the same, and a damaged record is a store failure naming it")
    func storedRecord() throws {
        var subscription = webPushSubscription("x", created: 0.125, apps: [])
        subscription.expires = Samples.base.addingTimeInterval(86_400)
        subscription.lastFailureReason = "HTTP 500 \"quoted\""
        #expect(try WebPushSubscription(storedRecord: subscription.storedRecord) == subscription)
        let error = #expect(throws: ChimeError.self) { try WebPushSubscription(storedRecord: "{\"id\": 3}") }
        #expect(error?.code == .storeFailure)
        #expect(error?.message.contains("web push subscription") == true)
    }

    @Test("a version 4 store (the fixture) is upgraded and takes subscriptions and queued pushes")
    func upgradeFromVersion4() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let copy = directory.path("store.sqlite")
        try FileManager.default.copyItem(
            atPath: StoreFixtureTests.fixtures.appendingPathComponent("store-v4.sqlite").path, toPath: copy)
        let store = try SQLiteStore(path: copy)
        #expect(try store.pending(app: "com.example.fixture").isEmpty == false)
        try store.putWebPushSubscription(webPushSubscription("s", created: 0))
        _ = try store.queueWebPush("{}", app: "com.example.fixture", subscriptions: ["s"], claimedUntil: Samples.base)
        store.close()
        let reopened = try SQLiteStore(path: copy)
        defer { reopened.close() }
        #expect(try reopened.webPushSubscriptions().map(\.id) == ["s"])
        #expect(try reopened.queuedWebPushCount() == 1)
        #expect(try DamagedStoreTests.integer(copy, "PRAGMA user_version") == Int64(Schema.current.version))
    }
}
