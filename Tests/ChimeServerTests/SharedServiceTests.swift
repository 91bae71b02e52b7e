import ChimeCore
import Foundation
import PostgresTestServer
import TestThreads
import Testing

@testable import ChimeServer

/// Two services in this process on one PostgreSQL database, as two `chime serve --database` nodes
/// behind a load balancer: one truth for tokens, sessions and events. (Separate processes, killed
/// with SIGKILL, are `ClusterTests`.)
@Suite("Services sharing a PostgreSQL database", .testThreads)
struct SharedServiceTests {
    /// Starts a node on `database` with the data directory `directory`.
    static func node(_ database: String, _ directory: String) async throws -> RunningService {
        try await RunningService.start(
            configuration: ChimeService.Configuration(
                dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0), autoAllow: true,
                printsBanner: false, database: database),
            logger: .silent)
    }

    /// Two nodes on a fresh database, the second with a copy of the first's owner token.
    static func withTwoNodes(_ body: (RunningService, RunningService) async throws -> Void) async throws {
        let database = try PostgresTestServer.shared().makeDatabase()
        let first = ServiceHarness.temporaryDirectory()
        let second = ServiceHarness.temporaryDirectory()
        defer { for directory in [first, second] { try? FileManager.default.removeItem(atPath: directory) } }
        let one = try await node(database, first)
        try FileManager.default.createDirectory(atPath: second, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: ChimeService.ownerTokenPath(dataDirectory: first),
            toPath: ChimeService.ownerTokenPath(dataDirectory: second))
        let two: RunningService
        do { two = try await node(database, second) } catch {
            await one.stop()
            throw error
        }
        do {
            try await body(one, two)
        } catch {
            await one.stop()
            await two.stop()
            throw error
        }
        await one.stop()
        await two.stop()
    }

    /// Asks `client` for `path` until the status is `status`, at most 60 s; returns the last status.
    static func eventually(_ client: TestClient, _ path: String, is status: Int) async throws -> Int {
        let deadline = Date().addingTimeInterval(60)
        var last = 0
        repeat {
            last = try await client.get(path).status
            if last == status { return last }
            try await Sleep.for(.milliseconds(20))
        } while Date() < deadline
        return last
    }

    static func register(_ app: String, on node: RunningService) async throws -> String {
        let response = try await TestClient(port: node.port, token: node.ownerToken).request(
            .createApp, json: #"{"bundleIdentifier": "\#(app)"}"#)
        guard response.status == 201, case .string(let token)? = response.json?["token"] else {
            throw TestClientError(description: "registering \(app): \(response.status) \(response.text)")
        }
        _ = try await TestClient(port: node.port, token: token).request(.requestAuthorization, ["app": app])
        return token
    }

    @Test("the first node makes the owner token; a node without it or with another is refused, saying what to copy")
    func ownerToken() async throws {
        let database = try PostgresTestServer.shared().makeDatabase()
        let directories = (0..<3).map { _ in ServiceHarness.temporaryDirectory() }
        defer { for directory in directories { try? FileManager.default.removeItem(atPath: directory) } }
        let first = try await Self.node(database, directories[0])
        defer { Task { await first.stop() } }
        let token = try String(
            contentsOfFile: ChimeService.ownerTokenPath(dataDirectory: directories[0]), encoding: .utf8)
        #expect(token.trimmingCharacters(in: .whitespacesAndNewlines) == first.ownerToken)

        let missing = await #expect(throws: ServerError.self) { try await Self.node(database, directories[1]) }
        #expect(missing?.message.contains("copy that node's owner-token file") == true)
        #expect(!FileManager.default.fileExists(atPath: ChimeService.ownerTokenPath(dataDirectory: directories[1])))

        try FileManager.default.createDirectory(atPath: directories[2], withIntermediateDirectories: true)
        try "another\n".write(
            toFile: ChimeService.ownerTokenPath(dataDirectory: directories[2]), atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o600], ofItemAtPath: ChimeService.ownerTokenPath(dataDirectory: directories[2]))
        let other = await #expect(throws: ServerError.self) { try await Self.node(database, directories[2]) }
        #expect(other?.message.contains("not this database's") == true)

        try FileManager.default.copyItem(
            atPath: ChimeService.ownerTokenPath(dataDirectory: directories[0]),
            toPath: ChimeService.ownerTokenPath(dataDirectory: directories[1]))
        let second = try await Self.node(database, directories[1])
        #expect(second.ownerToken == first.ownerToken)
        #expect(try await TestClient(port: second.port, token: first.ownerToken).get("/v1/apps").status == 200)
        #expect(second.banner.contains("PostgreSQL"))
        await second.stop()
    }

    @Test(
        "nodes starting at once on an empty database agree on one owner token and one Web Push key: the first stores them, the others take them"
    )
    func startingAtOnce() async throws {
        let database = try PostgresTestServer.shared().makeDatabase()
        let directories = (0..<3).map { _ in ServiceHarness.temporaryDirectory() }
        defer { for directory in directories { try? FileManager.default.removeItem(atPath: directory) } }
        // The same owner token in every node's directory, as an operator copies it; each node makes a
        // Web Push key of its own and offers it to the database.
        let token = Tokens.make()
        for directory in directories {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            #expect(
                FileManager.default.createFile(
                    atPath: ChimeService.ownerTokenPath(dataDirectory: directory), contents: Data((token + "\n").utf8),
                    attributes: [.posixPermissions: 0o600]))
        }
        let started = await withTaskGroup(of: Result<RunningService, any Error>.self) { group in
            for directory in directories {
                group.addTask {
                    do { return .success(try await Self.node(database, directory)) } catch { return .failure(error) }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let nodes = started.compactMap { try? $0.get() }
        for case .failure(let error) in started { Issue.record("a node did not start: \(error)") }
        var keys: [String] = []
        for node in nodes {
            #expect(node.ownerToken == token)
            let response = try await TestClient(port: node.port, token: node.ownerToken).request(.webPushKey)
            guard case .string(let key)? = response.json?["publicKey"] else {
                Issue.record("no publicKey in \(response.status) \(response.text)")
                continue
            }
            keys.append(key)
        }
        for node in nodes { await node.stop() }
        #expect(keys.count == directories.count && Set(keys).count == 1, "\(keys)")
        let files = try directories.map {
            try String(contentsOfFile: WebPushKey.path(dataDirectory: $0), encoding: .utf8)
        }
        #expect(Set(files).count == 1, "every node keeps the database's key in its own file")
    }

    @Test("a token rotated, an app removed or a browser signed out through one node is refused through the other")
    func oneTruth() async throws {
        try await Self.withTwoNodes { one, two in
            let app = "com.example.shared"
            let token = try await Self.register(app, on: one)
            // Used (and cached) on both nodes.
            #expect(try await TestClient(port: one.port, token: token).get("/v1/apps/\(app)/settings").status == 200)
            #expect(try await TestClient(port: two.port, token: token).get("/v1/apps/\(app)/settings").status == 200)
            let rotated = try await TestClient(port: one.port, token: one.ownerToken).post("/v1/apps/\(app)/token")
            guard case .string(let fresh)? = rotated.json?["token"] else {
                throw TestClientError(description: rotated.text)
            }
            #expect(
                try await Self.eventually(TestClient(port: two.port, token: token), "/v1/apps/\(app)/settings", is: 401)
                    == 401)
            #expect(try await TestClient(port: one.port, token: token).get("/v1/apps/\(app)/settings").status == 401)
            #expect(try await TestClient(port: two.port, token: fresh).get("/v1/apps/\(app)/settings").status == 200)

            #expect(try await TestClient(port: two.port, token: two.ownerToken).delete("/v1/apps/\(app)").status == 204)
            #expect(
                try await Self.eventually(TestClient(port: one.port, token: fresh), "/v1/apps/\(app)/settings", is: 401)
                    == 401)

            // A sign-in link made through one node signs in through the other, once; the session
            // works on both; signing out on one ends it on both.
            let link = try await TestClient(port: one.port, token: one.ownerToken).post("/v1/session/links")
            guard case .string(let code)? = link.json?["code"] else { throw TestClientError(description: link.text) }
            let session = try await TestClient(port: two.port).post("/v1/session", json: #"{"code": "\#(code)"}"#)
            #expect(session.status == 201)
            #expect(
                try await TestClient(port: one.port).post("/v1/session", json: #"{"code": "\#(code)"}"#).status == 401)
            guard let cookie = session.headers["set-cookie"]?.split(separator: ";").first.map(String.init),
                case .string(let csrf)? = session.json?["csrfToken"]
            else { throw TestClientError(description: session.text) }
            #expect(
                try await TestClient(port: one.port).get("/v1/session", headers: [("Cookie", cookie)]).status == 200)
            #expect(try await TestClient(port: one.port).get("/v1/apps", headers: [("Cookie", cookie)]).status == 200)
            let out = try await TestClient(port: one.port).request(
                "DELETE", "/v1/session", headers: [("Cookie", cookie), ("X-CSRF-Token", csrf)])
            #expect(out.status == 204)
            #expect(
                try await TestClient(port: two.port).get("/v1/session", headers: [("Cookie", cookie)]).status == 401)
        }
    }

    @Test("events caused on one node reach streams on the other, and Last-Event-ID resumes on either")
    func eventsEverywhere() async throws {
        try await Self.withTwoNodes { one, two in
            let app = "com.example.events"
            let token = try await Self.register(app, on: one)
            let stream = try await SSEClient.open(.tcp(port: two.port), path: "/v1/apps/\(app)/events", token: token)
            defer { stream.close() }
            func add(_ identifier: String, on node: RunningService) async throws {
                let response = try await TestClient(port: node.port, token: token)
                    .request(
                        .addRequests, ["app": app],
                        json: #"{"identifier": "\#(identifier)", "content": {"title": "\#(identifier)"}}"#)
                #expect(response.status == 201)
            }
            func delivered(_ event: SSEEvent) -> String? {
                guard event.event == "delivered",
                    case .string(let identifier)? = event.json?["notification"]?["identifier"]
                else { return nil }
                return identifier
            }
            try await add("first", on: one)
            var event = try await stream.next()
            while delivered(event) == nil { event = try await stream.next() }
            #expect(delivered(event) == "first")
            let firstID = try #require(event.id)
            try await add("second", on: two)
            try await add("third", on: one)
            let resumed = try await SSEClient.open(
                .tcp(port: one.port), path: "/v1/apps/\(app)/events", token: token, lastEventID: firstID)
            defer { resumed.close() }
            var after: [String] = []
            var ids: [Int64] = []
            while after.count < 2 {
                let next = try await resumed.next()
                if let identifier = delivered(next) {
                    after.append(identifier)
                    ids.append(Int64(next.id ?? "") ?? 0)
                }
            }
            #expect(after == ["second", "third"])
            #expect(ids.allSatisfy { $0 > Int64(firstID) ?? 0 } && ids == ids.sorted())
        }
    }

    @Test(
        "an answer given through one node reaches the app's stream on the other and stays in the outbox until acknowledged there"
    )
    func outboxAcrossNodes() async throws {
        try await Self.withTwoNodes { one, two in
            let app = "com.example.outbox"
            let token = try await Self.register(app, on: one)
            let appOnTwo = TestClient(port: two.port, token: token)
            #expect(
                try await appOnTwo.put(
                    "/v1/apps/\(app)/categories",
                    json: #"[{"identifier": "c", "actions": [{"identifier": "done", "title": "Done"}]}]"#
                ).status == 200)
            #expect(
                try await TestClient(port: one.port, token: token)
                    .post(
                        "/v1/apps/\(app)/requests",
                        json: #"{"identifier": "task", "title": "Task", "categoryIdentifier": "c"}"#
                    ).status == 201)
            let stream = try await SSEClient.open(
                .tcp(port: two.port), path: "/v1/apps/\(app)/events", token: token, lastEventID: "0")
            defer { stream.close() }
            // The user answers through the first node.
            let answered = try await TestClient(port: one.port, token: one.ownerToken)
                .post("/v1/apps/\(app)/notifications/task/responses", json: #"{"actionIdentifier": "done"}"#)
            #expect(answered.status == 201)
            var event = try await stream.next()
            while event.event != "response" { event = try await stream.next() }
            guard case .integer(let id)? = event.json?["response"]?["id"] else {
                throw TestClientError(description: event.data)
            }
            guard case .array(let outbox)? = try await appOnTwo.get("/v1/apps/\(app)/responses").json else {
                throw TestClientError(description: "no outbox")
            }
            #expect(outbox.map { $0["id"] } == [.integer(id)])
            // Acknowledged on the second node: gone on both.
            #expect(try await appOnTwo.post("/v1/apps/\(app)/responses/\(id)/ack").status == 200)
            #expect(
                try await TestClient(port: one.port, token: token).get("/v1/apps/\(app)/responses").json == .array([]))
            #expect(
                try await TestClient(port: one.port, token: token).post("/v1/apps/\(app)/responses/\(id)/ack").status
                    == 404)
        }
    }

    @Test("a token made on one node works on the other at once, though that node's feed has not told it yet")
    func tokenBeforeFeed() async throws {
        try await Self.withTwoNodes { one, two in
            // The second node hears nothing more from the first: its token index learns a new
            // token only by reading the store.
            two.engine.stopFeed()
            let app = "com.example.fresh"
            let token = try await Self.register(app, on: one)
            let onTwo = TestClient(port: two.port, token: token)
            for attempt in 0..<50 {
                let status = try await onTwo.get("/v1/apps/\(app)/settings").status
                #expect(status == 200, "attempt \(attempt)")
                if status != 200 { break }
            }
            // Read once, then answered from the index.
            #expect(two.metrics.tokenReads(.found) == 1)
            let device = try await TestClient(port: one.port, token: token).get("/v1/apps/\(app)/device-token")
            guard case .string(let deviceToken)? = device.json?["deviceToken"] else {
                throw TestClientError(description: device.text)
            }

            // A push with a token the second node has not seen yet: its topic names the app.
            let pusher = "com.example.pusher"
            let pusherToken = try await Self.register(pusher, on: one)
            let pushed = try await TestClient(port: two.port, token: pusherToken).request(
                "POST", "/3/device/\(deviceToken)", headers: [("apns-topic", app)],
                body: Array(#"{"aps": {"alert": "hi"}}"#.utf8))
            #expect(pushed.status == 403 || pushed.status == 400, "\(pushed.status) \(pushed.text)")
            let ownPush = try await TestClient(port: two.port, token: token).request(
                "POST", "/3/device/\(deviceToken)", headers: [("apns-topic", app)],
                body: Array(#"{"aps": {"alert": "hi"}}"#.utf8))
            #expect(ownPush.status == 200, "\(ownPush.text)")

            // A wrong token stays refused, and its misses are not each a read of the database:
            // after the store confirmed one, the app's misses are refused without a read for a second.
            let readsBefore = two.metrics.tokenReads(.missing)
            let skippedBefore = two.metrics.tokenReads(.skipped)
            let started = ContinuousClock.now
            let wrong = TestClient(port: two.port, token: Tokens.make())
            for _ in 0..<100 {
                #expect(try await wrong.get("/v1/apps/\(app)/settings").status == 401)
                #expect(try await wrong.get("/v1/apps/com.example.nobody/settings").status == 401)
            }
            let seconds = started.duration(to: .now) / .seconds(1)
            let missing = two.metrics.tokenReads(.missing) - readsBefore
            let skipped = two.metrics.tokenReads(.skipped) - skippedBefore
            #expect(missing + skipped == 200)
            // One read per app, then at most one a second each.
            #expect(Double(missing) <= 2 * (1 + seconds.rounded(.up)), "\(missing) reads in \(seconds) s")
        }
    }

    @Test("tokens registered on one node and used at once on the other are accepted every time")
    func tokensAcrossNodes() async throws {
        try await Self.withTwoNodes { one, two in
            let owner = TestClient(port: one.port, token: one.ownerToken)
            for index in 0..<30 {
                let app = "com.example.race\(index)"
                let made = try await owner.request(.createApp, json: #"{"bundleIdentifier": "\#(app)"}"#)
                guard made.status == 201, case .string(let token)? = made.json?["token"] else {
                    throw TestClientError(description: made.text)
                }
                let used = try await TestClient(port: two.port, token: token).get("/v1/apps/\(app)/settings")
                #expect(used.status == 200, "\(app): \(used.status) \(used.text)")
            }
        }
    }

    @Test("/metrics on a node of a shared database shows its clock's offset from the database's")
    func clockOffsetMetric() async throws {
        try await Self.withTwoNodes { one, _ in
            let metrics = try await TestClient(port: one.port).get("/metrics").text
            let line = try #require(
                metrics.split(separator: "\n").first { $0.hasPrefix("chime_clock_offset_seconds ") })
            let offset = try #require(Double(line.split(separator: " ")[1]))
            #expect(abs(offset) < 1)
        }
    }
}
