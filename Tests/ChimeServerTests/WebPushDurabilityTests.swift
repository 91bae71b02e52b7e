import ChimeCore
import ChimeSQLite
import Foundation
import PostgresTestServer
import TestThreads
import Testing

@testable import ChimeServer

#if canImport(Glibc)
    import Glibc
#endif

/// Nothing lost across a restart while pushes are pending: the pushes of a delivery committed just
/// before a crash (no queue row yet) are queued from the event log at the next start, once; a node
/// that stops gives its claims back and another sends them at once; kill -9 of `chime serve`.
@Suite("Web Push across crashes, restarts and nodes", .testThreads, .timeLimit(.minutes(5)))
struct WebPushDurabilityTests {
    static let app = WebPushSendingTests.app

    /// The pushes of one kind (`show`, `close`) the double received, decrypted.
    static func pushes(_ all: [JSONValue], kind: String) -> [JSONValue] {
        all.filter { $0["payload"]?["kind"] == .string(kind) }
    }

    @Test(
        "a delivery and a removal committed with no queue row (a crash in between) are pushed once at the next start, and not again after another"
    )
    func crashWindow() async throws {
        let double = try await PushServiceDouble.start()
        defer { Task { await double.stop() } }
        let directory = ServiceHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await ServiceHarness.with(webPushEndpoints: [double.origin], directory: directory) { harness in
            let (token, _) = try await WebPushSendingTests.prepare(harness, double)
            try await WebPushSendingTests.deliver(harness.client(token: token), identifier: "Old", body: "Earlier")
            _ = try await double.requests(atLeast: 1)
            await harness.service.webPush.idle()
        }
        // What a kill -9 between a commit and its queue rows leaves: the engine alone, with no
        // sender following it, delivers one notification and removes another.
        let store = try SQLiteStore(path: directory + "/chime.sqlite")
        let engine = NotificationEngine(store: store)
        var content = NotificationContent(title: "Alarm")
        content.subtitle = "Kitchen"
        content.body = "Wake up"
        content.categoryIdentifier = "alarm.category"
        _ = try await engine.add([NotificationRequest(identifier: "Alarm", content: content)], app: Self.app)
        #expect(try await engine.removeDelivered(app: Self.app, identifiers: ["Old"]) == ["Old"])
        #expect(try await engine.queuedWebPushCount() == 0)
        await engine.shutdown()
        store.close()

        try await ServiceHarness.with(webPushEndpoints: [double.origin], directory: directory) { harness in
            let all = try await double.requests(atLeast: 3)
            await harness.service.webPush.idle()
            #expect(all.count == 3, "\(all)")
            #expect(
                all.allSatisfy { $0["status"] == 201 && $0["decryptError"] == nil && $0["vapid"]?["ok"] == true },
                "\(all)")
            let shows = Self.pushes(all, kind: "show")
            #expect(shows.map { $0["payload"]?["id"] } == ["Old", "Alarm"])
            let alarm = try #require(shows.last?["payload"])
            #expect(alarm["title"] == "Alarm" && alarm["subtitle"] == "Kitchen" && alarm["body"] == "Wake up")
            guard case .array(let actions)? = alarm["actions"] else {
                throw TestClientError(description: "no actions in \(alarm)")
            }
            #expect(actions.map { $0["title"] } == ["Snooze 5 Sec", "Add Comment"])
            let closes = Self.pushes(all, kind: "close")
            #expect(closes.map { $0["payload"]?["ids"] } == [.array(["Old"])])
            #expect(try await harness.service.engine.queuedWebPushCount() == 0)
        }
        // Once: a start after they were sent finds nothing to queue (idle includes the start's look at the log).
        try await ServiceHarness.with(webPushEndpoints: [double.origin], directory: directory) { harness in
            await harness.service.webPush.idle()
            let received = try await double.requests(atLeast: 0)
            #expect(received.count == 3)
            #expect(try await harness.service.engine.queuedWebPushCount() == 0)
        }
    }

    @Test("a device subscribed after notifications were logged is not sent them at the next start")
    func subscribedLater() async throws {
        let double = try await PushServiceDouble.start()
        defer { Task { await double.stop() } }
        let directory = ServiceHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await ServiceHarness.with(webPushEndpoints: [double.origin], directory: directory) { harness in
            let token = try await harness.createApp(Self.app)
            let client = harness.client(token: token)
            #expect(
                try await client.post(
                    "/v1/apps/\(Self.app)/authorization", json: #"{"options": ["alert", "sound", "badge"]}"#
                ).status == 200)
            for identifier in ["a", "b", "c"] {
                try await WebPushSendingTests.deliver(harness.client(token: token), identifier: identifier)
            }
            await harness.service.webPush.idle()
            // Subscribed now: what was logged before is not this device's.
            let registered = try await harness.owner.request(
                .createWebPushSubscription, json: try await double.subscribe())
            #expect(registered.status == 201)
        }
        try await ServiceHarness.with(webPushEndpoints: [double.origin], directory: directory) { harness in
            await harness.service.webPush.idle()
            let received = try await double.requests(atLeast: 0)
            #expect(received.isEmpty, "\(received)")
            #expect(try await harness.service.engine.queuedWebPushCount() == 0)
        }
    }

    @Test(
        "chime serve killed with SIGKILL right after a bulk of deliveries: after a restart each is pushed, once unless it was queued and in flight at the kill"
    )
    func killed() async throws {
        let double = try await PushServiceDouble.start()
        defer { Task { await double.stop() } }
        let node = ClusterTests.Node("killed", database: nil, arguments: ["--web-push-endpoints", double.origin])
        defer { try? FileManager.default.removeItem(atPath: node.directory) }
        try await node.start()
        let owner = try String(
            contentsOfFile: ChimeService.ownerTokenPath(dataDirectory: node.directory), encoding: .utf8
        )
        .trimmingCharacters(in: .whitespacesAndNewlines)
        let created = try await node.client(owner).request(.createApp, json: #"{"bundleIdentifier": "\#(Self.app)"}"#)
        guard case .string(let token)? = created.json?["token"] else {
            throw TestClientError(description: created.text)
        }
        let client = node.client(token)
        #expect(
            try await client.post(
                "/v1/apps/\(Self.app)/authorization", json: #"{"options": ["alert", "sound", "badge"]}"#
            ).status == 200)
        let registered = try await node.client(owner).request(
            .createWebPushSubscription, json: try await double.subscribe())
        #expect(registered.status == 201, "\(registered.text)")
        let identifiers = Set((0..<100).map { "n\($0)" })
        let requests = JSONValue.array(
            identifiers.sorted().map { ["identifier": .string($0), "title": "Alarm", "body": .string($0)] })
        let added = try await client.post("/v1/apps/\(Self.app)/requests", json: requests.serialized())
        #expect(added.status == 201, "\(added.text)")
        // Committed and acknowledged; killed while the sender queues and sends them (in six runs,
        // 84 to 100 of the 100 were not queued yet).
        try await node.kill9()
        // What was queued at the kill may have been in flight (sent, its answer not recorded): it
        // is sent again after the restart. Everything else must arrive exactly once: sent before
        // the kill and finished, or queued from the log after the restart.
        let store = try SQLiteStore(path: node.directory + "/chime.sqlite")
        let queuedAtKill = Set(
            try store.claimWebPushes(before: .distantFuture, claimUntil: .distantPast, limit: 1000).compactMap { push in
                (try? JSONValue.parse(push.body))?["payload"]?["id"]?.text
            })
        store.close()
        try await node.start()
        var sent: [String] = []
        let deadline = ContinuousClock.now + .seconds(60)
        while Set(sent) != identifiers {
            guard ContinuousClock.now < deadline else { break }
            try await Sleep.for(.milliseconds(50))
            sent = try await double.requests(atLeast: 0).filter { $0["status"] == 201 }.compactMap {
                $0["payload"]?["id"]?.text
            }
        }
        await node.stop()
        let all = try await double.requests(atLeast: 0)
        sent = all.filter { $0["status"] == 201 }.compactMap { $0["payload"]?["id"]?.text }
        #expect(Set(sent) == identifiers, "missing: \(identifiers.subtracting(sent).sorted())")
        let twice = Dictionary(sent.map { ($0, 1) }, uniquingKeysWith: +).filter { $0.value > 1 }.keys
        #expect(
            twice.allSatisfy(queuedAtKill.contains),
            "sent more than once though not queued at the kill: \(twice.sorted())")
        #expect(all.allSatisfy { $0["decryptError"] == nil && $0["vapid"]?["ok"] == true })
    }

    // MARK: PostgreSQL

    /// A `chime serve --database` node in this process that may push to the double.
    static func node(_ database: String, _ directory: String, _ double: PushServiceDouble) async throws
        -> RunningService
    {
        var configuration = ChimeService.Configuration(
            dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0), autoAllow: true,
            printsBanner: false, database: database)
        configuration.webPushEndpoints = try WebPushEndpoints(listed: [double.origin])
        return try await RunningService.start(configuration: configuration, logger: .silent)
    }

    /// Waits (at most 60 s) until the node's sender has looked at the log through `sequence`.
    static func followed(_ node: RunningService, through sequence: Int64) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while node.webPush.queuedThrough < sequence {
            guard ContinuousClock.now < deadline else {
                throw TestClientError(
                    description:
                        "the node's sender did not reach event \(sequence) within 60 s (at \(node.webPush.queuedThrough))"
                )
            }
            try await Sleep.for(.milliseconds(20))
        }
        await node.webPush.idle()
    }

    /// The sequence of the newest `delivered` event in the log.
    static func lastDelivery(_ node: RunningService) async throws -> Int64 {
        try #require(
            try await node.engine.events(after: 0, app: Self.app, limit: 10_000).last { $0.kind == .delivered }?
                .sequence)
    }

    @Test(
        "two nodes on PostgreSQL follow every delivery and send its push once; a node stopped with a push in flight gives its claim back and the other sends it at once"
    )
    func twoNodes() async throws {
        let double = try await PushServiceDouble.start()
        defer { Task { await double.stop() } }
        let database = try PostgresTestServer.shared().makeDatabase()
        let first = ServiceHarness.temporaryDirectory()
        let second = ServiceHarness.temporaryDirectory()
        defer { for directory in [first, second] { try? FileManager.default.removeItem(atPath: directory) } }
        let one = try await Self.node(database, first, double)
        try FileManager.default.createDirectory(atPath: second, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: ChimeService.ownerTokenPath(dataDirectory: first),
            toPath: ChimeService.ownerTokenPath(dataDirectory: second))
        var two: RunningService?
        do {
            let harness = ServiceHarness(service: one, directory: first)
            let (token, _) = try await WebPushSendingTests.prepare(harness, double)
            two = try await Self.node(database, second, double)
            // Both nodes follow the delivery; one queues it (the other finds it queued) and sends it.
            try await WebPushSendingTests.deliver(harness.client(token: token), identifier: "First")
            let sequence = try await Self.lastDelivery(one)
            try await Self.followed(one, through: sequence)
            try await Self.followed(try #require(two), through: sequence)
            let once = try await double.requests(atLeast: 1)
            #expect(once.count == 1 && once.first?["payload"]?["id"] == "First", "\(once)")

            // Only the first node runs; its push is held in flight by the push service.
            await two?.stop()
            two = nil
            try await double.hold(1)
            try await WebPushSendingTests.deliver(harness.client(token: token), identifier: "Second")
            _ = try await double.held(atLeast: 1)
            // The second node starts: the push is queued, claimed by the first.
            let started = try await Self.node(database, second, double)
            two = started
            await started.webPush.idle()
            #expect(try await started.engine.queuedWebPushCount() == 1)
            #expect(try await double.requests(atLeast: 0).count == 1)
            // The first stops: after its grace it cuts the push off and gives the claim back; the
            // second is told and sends it now, not when the 2-minute claim would have ended.
            await one.stop()
            let all = try await double.requests(atLeast: 2, timeout: 60)
            #expect(all.count == 2, "\(all)")
            #expect(
                all.last?["payload"]?["id"] == "Second" && all.last?["status"] == 201
                    && all.last?["decryptError"] == nil, "\(all)")
            #expect(try await double.held(atLeast: 0, released: 1).released == 1)
            await started.webPush.idle()
            #expect(try await started.engine.queuedWebPushCount() == 0)
        } catch {
            await one.stop()
            await two?.stop()
            throw error
        }
        await one.stop()
        await two?.stop()
    }
}
