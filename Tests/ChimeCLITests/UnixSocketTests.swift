import ChimeCore
import ChimeServer
import Foundation
import Synchronization
import TestThreads
import Testing

@testable import ChimeCLI

#if canImport(Glibc)
    import Glibc
#endif

/// The CLI against a service on a Unix socket (`chime serve --listen unix:/path`).
@Suite("chime: over a Unix socket", .testThreads)
struct UnixSocketTests {
    static let chat = "chat/42 ü?#%"

    /// A short temporary directory: socket paths must stay under 108 bytes.
    static func directory() -> String {
        "/tmp/chime-unix-\(UUID().uuidString.prefix(8))"
    }

    /// Starts a service on `DIR/chime.sock`, runs `body`, stops it and removes the directory.
    static func withService(_ body: (RunningService, String) async throws -> Void) async throws {
        let directory = directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ChimeService.Configuration(
            dataDirectory: directory, listen: .unix(path: directory + "/chime.sock"),
            autoAllow: true, printsBanner: false)
        configuration.connectionTimeout = 10
        let service = try await RunningService.start(configuration: configuration, logger: .silent)
        do {
            try await body(service, directory)
        } catch {
            await service.stop()
            throw error
        }
        await service.stop()
    }

    /// Output of an in-process CLI run.
    final class Output: Sendable {
        let lines = Mutex<[String]>([])
        let errors = Mutex<[String]>([])
        var text: String { lines.withLock { $0.joined(separator: "\n") } }
        var errorText: String { errors.withLock { $0.joined(separator: "\n") } }
        var cli: CLI {
            CLI(
                write: { line in self.lines.withLock { $0.append(line) } },
                writeError: { line in self.errors.withLock { $0.append(line) } })
        }

        /// Waits until the output holds `text`.
        func wait(for text: String, timeout: Duration = .seconds(60)) async -> Bool {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if self.text.contains(text) { return true }
                try? await Sleep.for(.milliseconds(20))
            }
            return false
        }
    }

    /// Runs `chime ARGUMENTS --data DIR` in-process.
    static func run(_ arguments: [String], _ directory: String) async -> (Int32, Output) {
        let output = Output()
        let status = await output.cli.main(arguments + ["--data", directory])
        return (status, output)
    }

    @Test("apps, categories, add, delivered, respond, remove, status and a followed event stream, in-process")
    func inProcess() async throws {
        try await Self.withService { service, directory in
            let client = try ServiceClient(dataDirectory: directory)
            #expect(client.socketPath == directory + "/chime.sock")
            #expect(client.location == "unix:\(directory)/chime.sock")

            let (added, addOutput) = await Self.run(["apps", "add", "com.example.chat", "--json"], directory)
            #expect(added == 0, "\(addOutput.errorText)")
            #expect(try JSONValue.parse(addOutput.text)["bundleIdentifier"] == .string("com.example.chat"))
            _ = try await service.engine.requestAuthorization(app: "com.example.chat", options: [.alert])
            let categories = directory + "/categories.json"
            try Data(
                #"[{"identifier": "chat", "actions": [{"identifier": "snooze", "title": "Snooze", "options": []}]}]"#
                    .utf8
            )
            .write(to: URL(fileURLWithPath: categories))
            #expect(await Self.run(["categories", "set", categories], directory).0 == 0)

            // Follow the events while a notification is delivered and answered.
            let events = Output()
            let follower = Task { await events.cli.main(["events", "--data", directory]) }
            // The stream is open before the delivery: the service counts it.
            let opened = ContinuousClock.now + .seconds(60)
            while service.server.openStreams == 0, ContinuousClock.now < opened {
                try await Sleep.for(.milliseconds(10))
            }
            #expect(service.server.openStreams > 0, "chime events did not open its stream: \(events.errorText)")
            let (scheduled, scheduledOutput) = await Self.run(
                ["add", "--id", Self.chat, "--title", "Chat", "--category", "chat"], directory)
            #expect(scheduled == 0, "\(scheduledOutput.errorText)")
            #expect(scheduledOutput.text.contains("Added \(Self.chat) to com.example.chat: delivered now."))
            #expect(
                await events.wait(for: "delivered  com.example.chat  \(Self.chat)  \"Chat\""),
                "events: \(events.text) \(events.errorText)")

            let (_, delivered) = await Self.run(["delivered"], directory)
            #expect(delivered.text.contains(Self.chat) && delivered.text.contains("actions: snooze"))
            let (answered, answer) = await Self.run(["respond", Self.chat, "snooze"], directory)
            #expect(answered == 0, "\(answer.errorText)")
            #expect(
                try await service.engine.outbox(app: "com.example.chat").map(\.notification.request.identifier) == [
                    Self.chat
                ])
            #expect(
                await events.wait(for: "response  com.example.chat  \(Self.chat)  →  snooze"), "events: \(events.text)")
            follower.cancel()
            #expect(await follower.value == 0)

            // Identifiers with reserved characters in query strings.
            for identifier in ["a&identifier=b", "x y+z", "50%/#"] {
                #expect(
                    await Self.run(["add", "--id", identifier, "--title", "Later", "--in", "1h"], directory).0 == 0)
            }
            let (removed, removedOutput) = await Self.run(
                ["remove", "--id", "a&identifier=b", "--id", "x y+z", "--id", "50%/#"], directory)
            #expect(removed == 0)
            #expect(removedOutput.text == "Removed a&identifier=b, x y+z, 50%/#.")

            let (status, statusOutput) = await Self.run(["status"], directory)
            #expect(status == 0)
            #expect(statusOutput.text.contains("Chime service at unix:\(directory)/chime.sock: running"))
        }
    }

    @Test("a large answer: 500 pending requests, added in two bodies and listed")
    func largeResponse() async throws {
        try await Self.withService { service, directory in
            #expect(await Self.run(["apps", "add", "com.example.many"], directory).0 == 0)
            _ = try await service.engine.requestAuthorization(app: "com.example.many", options: [.alert])
            let client = try ServiceClient(dataDirectory: directory)
            for batch in [0..<250, 250..<500] {
                let requests = batch.map { index -> JSONValue in
                    [
                        "identifier": .string("r/\(index) ü"), "title": .string("Request \(index)"),
                        "body": .string(String(repeating: "x", count: 40)),
                        "trigger": ["type": "timeInterval", "timeInterval": 3600],
                    ]
                }
                let added = try await client.send(.addRequests, ["app": "com.example.many"], json: .array(requests))
                #expect(added.status == 201)
                #expect(added.json?.arrayValue.count == 250)
            }

            let (listed, output) = await Self.run(["list", "--json"], directory)
            #expect(listed == 0, "\(output.errorText)")
            let items = try JSONValue.parse(output.text).arrayValue
            #expect(items.count == 500)
            #expect(Set(items.compactMap { $0["identifier"]?.stringValue }) == Set((0..<500).map { "r/\($0) ü" }))
            #expect(output.text.utf8.count > 100_000)
        }
    }

    @Test("no service on the socket, or TLS on one: clear errors, exit 1")
    func failures() async throws {
        let directory = Self.directory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socketPath = directory + "/chime.sock"
        try Data("owner\n".utf8).write(to: URL(fileURLWithPath: directory + "/owner-token"))
        try Data(#"{"url": "http://localhost", "unixSocket": "\#(socketPath)", "tls": false}"#.utf8)
            .write(to: URL(fileURLWithPath: directory + "/server.json"))

        let (status, output) = await Self.run(["status"], directory)
        #expect(status == 1)
        #expect(
            output.errorText.contains(
                "no chime serve at unix:\(socketPath) (No such file or directory); start it with `chime serve --listen unix:\(socketPath) --data \(directory)`"
            ),
            "\(output.errorText)")

        // The web center needs TCP; TLS on a Unix socket is refused clearly.
        try Data(#"{"url": "https://localhost", "unixSocket": "\#(socketPath)", "tls": true}"#.utf8)
            .write(to: URL(fileURLWithPath: directory + "/server.json"))
        #expect(throws: CommandError.self) { try ServiceClient(dataDirectory: directory) }
    }

    @Test(
        "the event parser: any line ends, pieces splitting lines and characters, comments skipped or reported in order")
    func eventParser() {
        let text =
            ": heartbeat\r\n\r\nid: 1\r\nevent: delivered\r\ndata: {\"title\": \"ü\"}\r\n\r\nid:2\ndata: a\n:inside\ndata: b\n\nevent: x\r\r"
        let bytes = Array(text.utf8)
        let delivered = ServerSentEventParser.Event(kind: "delivered", id: "1", data: #"{"title": "ü"}"#)
        let message = ServerSentEventParser.Event(kind: "message", id: "2", data: "a\nb")
        for size in [1, 3, 5, bytes.count] {
            var parser = ServerSentEventParser()
            var events: [ServerSentEventParser.Event] = []
            var itemParser = ServerSentEventParser()
            var items: [ServerSentEventParser.Item] = []
            for start in stride(from: 0, to: bytes.count, by: size) {
                events += parser.feed(bytes[start..<min(start + size, bytes.count)])
                items += itemParser.items(bytes[start..<min(start + size, bytes.count)])
            }
            #expect(events == [delivered, message])
            #expect(items == [.comment("heartbeat"), .event(delivered), .comment("inside"), .event(message)])
        }
    }

    @Test("the chime binary over a Unix socket: commands, reserved characters, and events until stopped")
    func binary() async throws {
        try await Self.withService { service, directory in
            let data = ["--data", directory]
            func run(_ arguments: [String]) async throws -> (Int32, String, String) {
                try await BinaryTests.chime(arguments + data)
            }
            #expect(try await run(["apps", "add", "com.example.bin"]).0 == 0)
            _ = try await service.engine.requestAuthorization(app: "com.example.bin", options: [.alert])

            // `chime events` as a process, read line by line until it shows the delivery.
            let out = Pipe()
            let seen = Mutex("")
            let subscribers = service.engine.hub.subscriberCount
            let events = try ChildProcess(
                executable: BinaryTests.binary().path, arguments: ["events"] + data, stdout: .pipe(out),
                stderr: .pipe(out))
            // Read by a thread that owns the pipe until `chime events` ends (not readabilityHandler,
            // whose dispatch source could outlive the pipe).
            _ = PipeReader(out) { chunk in seen.withLock { $0 += String(decoding: chunk, as: UTF8.self) } }
            defer {
                // Ended and reaped, also when the test fails on the way.
                events.signal(SIGKILL)
                events.wait(timeout: 10)
            }
            // Its stream is listening once the engine has one more subscriber.
            let listening = ContinuousClock.now + .seconds(60)
            while service.engine.hub.subscriberCount <= subscribers, events.isRunning, ContinuousClock.now < listening {
                try await Sleep.for(.milliseconds(10))
            }
            #expect(
                service.engine.hub.subscriberCount > subscribers,
                "chime events did not start listening: \(seen.withLock { $0 })")

            let (added, addedText, addedError) = try await run(["add", "--id", Self.chat, "--title", "From the binary"])
            #expect(added == 0, "\(addedError)")
            #expect(addedText.contains("Added \(Self.chat)"))
            let deadline = ContinuousClock.now + .seconds(60)
            while !seen.withLock({ $0.contains("delivered  com.example.bin  \(Self.chat)  \"From the binary\"") }),
                ContinuousClock.now < deadline
            {
                try await Sleep.for(.milliseconds(20))
            }
            #expect(
                seen.withLock { $0.contains("delivered  com.example.bin  \(Self.chat)  \"From the binary\"") },
                "\(seen.withLock { $0 })")

            let (respondStatus, _, respondError) = try await run(["respond", Self.chat, "open"])
            #expect(respondStatus == 0, "\(respondError)")
            #expect(try await run(["add", "--id", "later/1?", "--title", "Later", "--in", "1h"]).0 == 0)
            let (_, listed, _) = try await run(["list"])
            #expect(listed.contains("later/1?"))
            let (removed, removedText, _) = try await run(["remove", "--id", "later/1?"])
            #expect(removed == 0 && removedText.contains("Removed later/1?."))
            let (status, statusText, _) = try await run(["status", "--json"])
            #expect(status == 0)
            #expect(try JSONValue.parse(statusText)["url"] == .string("unix:\(directory)/chime.sock"))

            events.signal(SIGTERM)
            #expect(await events.termination(within: .seconds(60)) == .signaled(SIGTERM))
        }
    }
}
