import ChimeCore
import Foundation
import PostgresTestServer
import Synchronization
import TestThreads
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The cluster as it runs: PostgreSQL and three `chime serve --database` processes. Requests are
/// added through all three while one is killed with SIGKILL and started again.
@Suite("Three chime serve processes on one PostgreSQL database, one killed with SIGKILL", .testThreads)
struct ClusterTests {
    /// A `chime serve` process with a data directory of its own (on the PostgreSQL `database`, or
    /// with SQLite in its directory), with `arguments` besides.
    final class Node: @unchecked Sendable {
        // `process` and `port` change only on the test's task (start, kill); readers run after.
        let name: String
        let directory: String
        let database: String?
        let arguments: [String]
        /// A command that runs `chime` (e.g. `prlimit --nofile=512:512`); empty: chime itself.
        let wrapper: [String]
        private(set) var process: ChildProcess?
        private(set) var port: UInt16 = 0

        init(_ name: String, database: String?, arguments: [String] = [], wrapper: [String] = []) {
            self.name = name
            self.database = database
            self.arguments = arguments
            self.wrapper = wrapper
            directory = ServiceHarness.temporaryDirectory()
        }

        func client(_ token: String?) -> TestClient { TestClient(port: port, token: token) }

        /// Starts the node and waits (at most 30 s) until its `server.json` names it.
        func start() async throws {
            let info = directory + "/server.json"
            unlink(info)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let log = directory + "/node.log"
            if !FileManager.default.fileExists(atPath: log) {
                _ = FileManager.default.createFile(atPath: log, contents: nil)
            }
            let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            output.seekToEndOfFile()
            defer { try? output.close() }
            let chime = try ClusterTests.binary().path
            let process = try ChildProcess(
                executable: wrapper.first ?? chime,
                arguments: (wrapper.isEmpty ? [] : wrapper.dropFirst() + [chime])
                    + ["serve"] + (database.map { ["--database", $0] } ?? [])
                    + ["--data", directory, "--listen", "127.0.0.1:0", "--auto-allow"] + arguments,
                stdout: .file(output), stderr: .file(output))
            self.process = process
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                if let data = FileManager.default.contents(atPath: info), let json = try? JSONValue.parse(data),
                    json["pid"] == .integer(Int64(process.pid)),
                    case .string(let url)? = json["url"], let port = URLComponents(string: url)?.port
                {
                    self.port = UInt16(port)
                    return
                }
                if !process.isRunning { break }
                try await Sleep.for(.milliseconds(20))
            }
            throw TestClientError(description: "\(name) did not start: \(self.log.suffix(2000))")
        }

        /// SIGKILL, and wait (at most 10 s) until it has been reaped.
        func kill9() async throws {
            guard let process else { throw TestClientError(description: "\(name) was never started") }
            process.signal(SIGKILL)
            guard await process.termination(within: .seconds(10)) != nil else {
                throw TestClientError(description: "\(name) outlived SIGKILL by 10 s")
            }
        }

        /// SIGTERM (a graceful stop), then SIGKILL after 10 s; waits (at most 10 s more) until it has been reaped.
        func stop() async {
            guard let process, process.isRunning else { return }
            process.signal(SIGTERM)
            if await process.termination(within: .seconds(10)) != nil { return }
            process.signal(SIGKILL)
            _ = await process.termination(within: .seconds(10))
        }

        var log: String { (try? String(contentsOfFile: directory + "/node.log", encoding: .utf8)) ?? "" }
    }

    /// The built `chime`, next to the test bundle.
    static func binary() throws -> URL {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL.deletingLastPathComponent(),
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath + "/.build/debug"),
        ]
        guard
            let found = candidates.map({ $0.appendingPathComponent("chime") }).first(where: {
                FileManager.default.isExecutableFile(atPath: $0.path)
            })
        else {
            throw TestClientError(description: "the chime binary was not found in \(candidates.map(\.path))")
        }
        return found
    }

    /// An event stream read into a list until stopped; when its node goes away it resumes on
    /// another with `Last-Event-ID`.
    final class Subscriber: Sendable {
        struct Seen: Sendable {
            var ids: [Int64] = []
            var delivered: [String] = []
            var resumed = 0
            /// Streams opened (answered 200), the first and each resumption.
            var opened = 0
        }

        let seen = Mutex(Seen())
        private let stopping = Atomic<Bool>(false)
        private let task = Mutex<Task<Void, Never>?>(nil)

        /// Follows `/v1/apps/APP/events` from the start of the log (`Last-Event-ID: 0`); `fallback`
        /// gives the node to resume on when the stream ends.
        init(app: String, token: String, port: UInt16, fallback: @escaping @Sendable () -> UInt16) {
            let started = Task { [self] in
                var port = port
                while !stopping.load(ordering: .relaxed) {
                    let last = seen.withLock { $0.ids.last ?? 0 }
                    guard
                        let stream = try? await SSEClient.open(
                            .tcp(port: port), .appEvents, ["app": app], token: token,
                            lastEventID: String(last)), stream.status == 200
                    else {
                        // The first stream is opened on its own node, however long that takes on a busy
                        // machine; only one that was open and ended moves on.
                        if seen.withLock({ $0.opened > 0 }) { port = fallback() }
                        try? await Sleep.for(.milliseconds(50))
                        continue
                    }
                    seen.withLock { $0.opened += 1 }
                    while !stopping.load(ordering: .relaxed) {
                        do {
                            let event = try await stream.next(timeout: 0.5)
                            seen.withLock { seen in
                                seen.ids.append(Int64(event.id ?? "") ?? -1)
                                if event.event == "delivered",
                                    case .string(let identifier)? = event.json?["notification"]?["identifier"]
                                {
                                    seen.delivered.append(identifier)
                                }
                            }
                        } catch let error as TestClientError where error.description.hasPrefix("no event within") {
                            continue
                        } catch {
                            break
                        }
                    }
                    stream.close()
                    if !stopping.load(ordering: .relaxed) {
                        seen.withLock { $0.resumed += 1 }
                        port = fallback()
                    }
                }
            }
            task.withLock { $0 = started }
        }

        func stop() async {
            stopping.store(true, ordering: .relaxed)
            await task.withLock { $0 }?.value
        }
    }

    /// What the adding tasks share.
    final class Progress: Sendable {
        let acknowledged = Mutex<Set<String>>([])
        let sent = Mutex<Set<String>>([])
        let killed = Atomic<Bool>(false)
        let restarted = Atomic<Bool>(false)
    }

    /// Waits for `condition`, at most `seconds`; returns whether it held.
    static func eventually(_ seconds: Double, _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try await condition() { return true }
            try await Sleep.for(.milliseconds(50))
        }
        return try await condition()
    }

    @Test(
        "every acknowledged request is delivered exactly once; every node's subscribers see every delivery; Last-Event-ID resumes across nodes; a rotated token is refused everywhere"
    )
    func cluster() async throws {
        let database = try PostgresTestServer.shared().makeDatabase()
        let nodes = (1...3).map { Node("node \($0)", database: database) }
        defer { for node in nodes { try? FileManager.default.removeItem(atPath: node.directory) } }
        do {
            try await run(nodes)
        } catch {
            for node in nodes { await node.stop() }
            let logs = nodes.map { node in "--- \(node.name)\n" + String(node.log.suffix(3000)) }.joined(
                separator: "\n")
            Issue.record("node logs:\n\(logs)")
            throw error
        }
        for node in nodes { await node.stop() }
    }

    private func run(_ nodes: [Node]) async throws {
        try await nodes[0].start()
        for node in nodes.dropFirst() {
            try FileManager.default.createDirectory(atPath: node.directory, withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                atPath: nodes[0].directory + "/owner-token", toPath: node.directory + "/owner-token")
            try await node.start()
        }
        let owner = try String(contentsOfFile: nodes[0].directory + "/owner-token", encoding: .utf8).trimmingCharacters(
            in: .whitespacesAndNewlines)

        // Register through one node.
        let app = "com.example.cluster"
        let registered = try await nodes[0].client(owner).post("/v1/apps", json: #"{"bundleIdentifier": "\#(app)"}"#)
        guard registered.status == 201, case .string(let token)? = registered.json?["token"] else {
            throw TestClientError(description: "register: \(registered.status) \(registered.text)")
        }
        #expect(try await nodes[1].client(token).post("/v1/apps/\(app)/authorization").status == 200)

        // A subscriber on every node, from the start of the log. The second node's resumes on the
        // third when the second is killed.
        let subscribers = [
            Subscriber(app: app, token: token, port: nodes[0].port) { nodes[0].port },
            Subscriber(app: app, token: token, port: nodes[1].port) { nodes[2].port },
            Subscriber(app: app, token: token, port: nodes[2].port) { nodes[2].port },
        ]

        // Every subscriber is following its node before anything is added or killed (else the second
        // node's could first connect after its node came back, and never resume).
        #expect(
            try await Self.eventually(60) { subscribers.allSatisfy { $0.seen.withLock { $0.opened } >= 1 } },
            "a subscriber never got its stream open")

        // Thousands of requests through all three, each due 1 to 3 s after it is added; the second
        // node is killed halfway through its share and started again.
        let perNode = 1500
        let batch = 50
        let killAt = perNode / batch / 2
        let progress = Progress()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, node) in nodes.enumerated() {
                group.addTask {
                    for round in 0..<(perNode / batch) {
                        if index == 1 && round == killAt {
                            progress.killed.store(true, ordering: .releasing)
                            while !progress.restarted.load(ordering: .acquiring) {
                                try await Sleep.for(.milliseconds(10))
                            }
                        }
                        let identifiers = (0..<batch).map { "n\(index + 1)-\(round * batch + $0)" }
                        let body =
                            "["
                            + identifiers.enumerated().map { offset, identifier in
                                #"{"identifier": "\#(identifier)", "content": {"title": "\#(identifier)"}, "trigger": {"type": "timeInterval", "timeInterval": \#(1 + offset % 3)}}"#
                            }.joined(separator: ",") + "]"
                        progress.sent.withLock { $0.formUnion(identifiers) }
                        if let response = try? await node.client(token).post("/v1/apps/\(app)/requests", json: body),
                            response.status == 201
                        {
                            progress.acknowledged.withLock { $0.formUnion(identifiers) }
                        }
                    }
                }
            }
            group.addTask {
                while !progress.killed.load(ordering: .acquiring) { try await Sleep.for(.milliseconds(5)) }
                // Killed while the other nodes add and everyone fires.
                try await nodes[1].kill9()
                try await Sleep.for(.milliseconds(300))
                try await nodes[1].start()
                progress.restarted.store(true, ordering: .releasing)
            }
            try await group.waitForAll()
        }

        let expected = progress.acknowledged.withLock { $0 }
        #expect(expected.count >= perNode * 3 - batch * 2)
        // Everything due has fired (nothing is left pending) and every subscriber has caught up.
        #expect(
            try await Self.eventually(60) {
                let pending = try await nodes[0].client(token).get("/v1/apps/\(app)/requests")
                return pending.json == .array([])
            })
        let deliveredCount = try await nodes[2].client(token).pages("/v1/apps/\(app)/notifications?limit=1000").items
            .count
        #expect(
            try await Self.eventually(60) {
                subscribers.allSatisfy { $0.seen.withLock { $0.delivered.count } >= deliveredCount }
            })
        for subscriber in subscribers { await subscriber.stop() }

        let views = subscribers.map { $0.seen.withLock { $0 } }
        let reference = views[0]
        #expect(
            Set(reference.delivered).isSuperset(of: expected),
            "acknowledged but not delivered: \(expected.subtracting(reference.delivered).sorted().prefix(10))")
        #expect(Set(reference.delivered).isSubset(of: progress.sent.withLock { $0 }))
        #expect(reference.delivered.count == Set(reference.delivered).count, "delivered twice")
        #expect(reference.delivered.count == deliveredCount)
        for (index, view) in views.enumerated() {
            #expect(view.ids == reference.ids, "subscriber \(index + 1) saw another sequence of events")
            #expect(
                view.ids == view.ids.sorted() && Set(view.ids).count == view.ids.count,
                "subscriber \(index + 1): out of order or twice")
            #expect(view.delivered == reference.delivered)
        }
        #expect(
            views[1].resumed >= 1,
            "the killed node's subscriber resumed on another node (opened \(views[1].opened) streams, saw \(views[1].ids.count) events)"
        )

        // The restarted node replays the same log.
        let replay = Subscriber(app: app, token: token, port: nodes[1].port) { nodes[1].port }
        #expect(try await Self.eventually(60) { replay.seen.withLock { $0.ids.count } >= reference.ids.count })
        await replay.stop()
        #expect(replay.seen.withLock { $0.ids } == reference.ids)

        // A token rotated through one node is refused by all three (each had it cached).
        for node in nodes { #expect(try await node.client(token).get("/v1/apps/\(app)/settings").status == 200) }
        let rotated = try await nodes[1].client(owner).post("/v1/apps/\(app)/token")
        guard case .string(let fresh)? = rotated.json?["token"] else {
            throw TestClientError(description: rotated.text)
        }
        for node in nodes {
            #expect(
                try await Self.eventually(60) {
                    try await node.client(token).get("/v1/apps/\(app)/settings").status == 401
                }, "\(node.name)")
            #expect(try await node.client(fresh).get("/v1/apps/\(app)/settings").status == 200)
        }
    }
}
