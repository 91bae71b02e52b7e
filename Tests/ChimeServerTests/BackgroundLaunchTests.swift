import ChimeCore
import Foundation
import Synchronization
import TestThreads
import Testing

@testable import ChimeServer

/// Background launch: an answer for an app that is not running starts the app's launch command,
/// whose `UNUserNotificationCenter` hands it to the delegate, as iOS launches an app for an action.
@Suite("Background launch", .testThreads)
struct BackgroundLaunchTests {
    static let app = "com.example.organizer"

    /// The stand-in app, built next to the test bundle.
    static func launchedApp() throws -> String {
        let candidates =
            [Bundle.main.executableURL, URL(fileURLWithPath: CommandLine.arguments[0])]
            .compactMap { $0?.deletingLastPathComponent() } + [Bundle.main.bundleURL.deletingLastPathComponent()]
        for directory in candidates {
            let url = directory.appendingPathComponent("ChimeLaunchedApp")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url.path }
        }
        throw TestClientError(
            description: "ChimeLaunchedApp was not found next to the test bundle in \(candidates.map(\.path))")
    }

    /// A registered, authorized app whose launch command is the stand-in app, writing to `record`
    /// and doing what `mode` says; with one notification `task-1` delivered in category `organizer`.
    struct Setup {
        let harness: ServiceHarness
        let token: String
        let record: String
        let mode: String

        init(_ harness: ServiceHarness, mode: String) async throws {
            self.harness = harness
            record = harness.directory + "/record.txt"
            self.mode = harness.directory + "/mode.txt"
            try mode.write(toFile: self.mode, atomically: true, encoding: .utf8)
            let command = [try BackgroundLaunchTests.launchedApp(), record, self.mode]
            let body = JSONValue.object([
                "bundleIdentifier": .string(app), "launch": .array(command.map(JSONValue.string)),
            ])
            let created = try await harness.owner.request(.createApp, json: body.serialized())
            try #require(created.status == 201, "\(created.text)")
            #expect(created.json?["launch"] == .array(command.map(JSONValue.string)))
            guard case .string(let token)? = created.json?["token"] else {
                throw TestClientError(description: "no token: \(created.text)")
            }
            self.token = token
            let client = harness.client(token: token)
            try #require(try await client.request(.requestAuthorization, ["app": app]).status == 200)
            let categories =
                #"[{"identifier": "organizer", "actions": [{"identifier": "markAsDone", "title": "Mark As Done"}, {"identifier": "note", "title": "Note", "textInputButtonTitle": "Save"}]}]"#
            try #require(try await client.request(.setCategories, ["app": app], json: categories).status == 200)
            try await deliver("task-1")
        }

        func deliver(_ identifier: String) async throws {
            let request = #"{"identifier": "\#(identifier)", "title": "Buy milk", "categoryIdentifier": "organizer"}"#
            try #require(
                try await harness.client(token: token).request(.addRequests, ["app": app], json: request).status == 201)
        }

        /// The user's answer, as the web center or `chime respond` gives it.
        func answer(_ identifier: String, _ action: String, text: String? = nil) async throws {
            var body: JSONObject = ["actionIdentifier": .string(action)]
            if let text { body["userText"] = .string(text) }
            let response = try await harness.owner.request(
                .respond, ["app": app, "identifier": identifier],
                json: JSONValue.object(body).serialized())
            try #require(response.status == 201, "\(response.text)")
        }

        var lines: [String] {
            ((try? String(contentsOfFile: record, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }

        func outbox() async throws -> Int {
            guard case .array(let items)? = try await harness.owner.request(.outbox, ["app": app]).json else {
                return -1
            }
            return items.count
        }
    }

    /// Waits (at most 60 s) for `condition`.
    static func eventually(_ condition: () async throws -> Bool) async rethrows -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try? await Sleep.for(.milliseconds(50))
        }
        return try await condition()
    }

    @Test(
        "an answer given while the app is not running starts its command, whose delegate gets it; it leaves the outbox")
    func launchesAndHandsOver() async throws {
        try await ServiceHarness.with { harness in
            let setup = try await Setup(harness, mode: "handle")
            try await setup.answer("task-1", "note", text: "semi-skimmed")
            #expect(
                try await Self.eventually { try await setup.outbox() == 0 }, "the launched app acknowledged the answer")
            let lines = setup.lines
            #expect(lines.count == 2, "\(lines)")
            #expect(lines.first?.hasPrefix("launch reason=response bundle=\(Self.app) token=") == true)
            #expect(lines.last == "answer task-1 note semi-skimmed")
            #expect(await Self.eventually { await !harness.service.launcher.isRunning(Self.app) })
            // The launch's token was for that process only.
            let launchToken = String(lines[0].split(separator: "=").last ?? "")
            #expect(!launchToken.isEmpty)
            #expect(try await harness.client(token: launchToken).get("/v1/apps/\(Self.app)/settings").status == 401)
        }
    }

    @Test(
        "a command that fails is logged with its status and retried with back-off; the answer waits in the outbox until handled"
    )
    func retriesAfterFailure() async throws {
        let log = LogLines()
        try await ServiceHarness.with(logger: log.logger) { harness in
            let setup = try await Setup(harness, mode: "fail")
            try await setup.answer("task-1", "markAsDone")
            #expect(await Self.eventually { log.contains("status 3 without acknowledging") }, "\(log.all)")
            #expect(try await setup.outbox() == 1, "a failed launch loses nothing")
            try "handle".write(toFile: setup.mode, atomically: true, encoding: .utf8)
            #expect(
                try await Self.eventually { try await setup.outbox() == 0 },
                "the next attempt, after the back-off, handles it")
            #expect(setup.lines.filter { $0.hasPrefix("answer") } == ["answer task-1 markAsDone "], "handed over once")
            #expect(setup.lines.filter { $0.hasPrefix("launch") }.count >= 2)
            #expect(log.contains("failing on purpose"), "the process's output reaches the log")
        }
    }

    @Test(
        "a process still running after the launch timeout is stopped, and the answer is handed over by a later launch")
    func timeout() async throws {
        let log = LogLines()
        try await ServiceHarness.with(launchTimeout: .seconds(1), logger: log.logger) { harness in
            let setup = try await Setup(harness, mode: "hang")
            try await setup.answer("task-1", "markAsDone")
            #expect(await Self.eventually { log.contains("ran too long") })
            #expect(await Self.eventually { log.contains("ended by signal") })
            try "handle".write(toFile: setup.mode, atomically: true, encoding: .utf8)
            #expect(try await Self.eventually { try await setup.outbox() == 0 })
        }
    }

    @Test("one launch at a time: answers given while the launched app runs go to that same process")
    func oneAtATime() async throws {
        try await ServiceHarness.with { harness in
            let setup = try await Setup(harness, mode: "wait")
            try await setup.deliver("task-2")
            try await setup.answer("task-1", "markAsDone")
            #expect(await Self.eventually { setup.lines.contains { $0.hasPrefix("launch") } })
            try await setup.answer("task-2", "markAsDone")
            // The launcher has looked at the second answer while the first process waits: it started no other.
            await harness.service.launcher.settled()
            #expect(await harness.service.launcher.isRunning(Self.app))
            #expect(setup.lines.filter { $0.hasPrefix("launch") }.count == 1, "\(setup.lines)")
            // Now the waiting process takes both answers.
            try "".write(toFile: setup.record + ".go", atomically: true, encoding: .utf8)
            #expect(try await Self.eventually { try await setup.outbox() == 0 })
            #expect(setup.lines.filter { $0.hasPrefix("launch") }.count == 1, "\(setup.lines)")
            #expect(
                Set(setup.lines.filter { $0.hasPrefix("answer") }) == [
                    "answer task-1 markAsDone ", "answer task-2 markAsDone ",
                ])
        }
    }

    @Test("an app whose own process is connected is not launched; when it goes away with an answer unhandled, it is")
    func runningAppIsNotLaunched() async throws {
        // A short heartbeat: the server notices the closed stream at its next write.
        try await ServiceHarness.with(heartbeat: .seconds(1)) { harness in
            let setup = try await Setup(harness, mode: "handle")
            let stream = try await SSEClient.open(
                harness.endpoint, path: "/v1/apps/\(Self.app)/events", token: setup.token)
            try await setup.answer("task-1", "markAsDone")
            var kinds: [String] = []
            while !kinds.contains("response") { kinds.append(try await stream.next().event ?? "") }
            // The launcher has looked at the answer (the look was queued before the answer's 201).
            await harness.service.launcher.settled()
            #expect(setup.lines.isEmpty, "nothing was started while the app's own stream is open")
            #expect(await !harness.service.launcher.isRunning(Self.app))
            stream.close()
            // The app went away with the answer unhandled: now it is launched.
            #expect(try await Self.eventually { try await setup.outbox() == 0 })
        }
    }

    @Test("only the owner sets a launch command: an app's own token cannot; bad commands are refused naming the field")
    func ownerOnly() async throws {
        try await ServiceHarness.with { harness in
            let token = try await harness.createApp(Self.app)
            let byApp = try await harness.client(token: token).request(
                "PATCH", "/v1/apps/\(Self.app)",
                body: Array(#"{"launch": "/bin/sh -c 'rm -rf ~'"}"#.utf8),
                contentType: "application/json")
            #expect(byApp.status == 403)
            #expect(try await harness.service.engine.app(Self.app).launchCommand == nil)
            for (body, expected) in [
                (#"{"launch": "organizer 'unclosed"}"#, "not closed"), (#"{"launch": []}"#, "empty"),
                (#"{"launch": 3}"#, "expected a command line"), (#"{}"#, "launch is missing"),
            ] {
                let refused = try await harness.owner.request(
                    "PATCH", "/v1/apps/\(Self.app)", body: Array(body.utf8), contentType: "application/json")
                #expect(refused.status == 400, "\(body)")
                #expect(refused.json?["error"]?["field"] == "launch", "\(body): \(refused.text)")
                #expect(refused.text.contains(expected), "\(body): \(refused.text)")
            }
            let set = try await harness.owner.request(
                "PATCH", "/v1/apps/\(Self.app)",
                body: Array(#"{"launch": "organizer --tasks \"my tasks.json\""}"#.utf8),
                contentType: "application/json")
            #expect(set.json?["launch"] == ["organizer", "--tasks", "my tasks.json"])
            let cleared = try await harness.owner.request(
                "PATCH", "/v1/apps/\(Self.app)", body: Array(#"{"launch": null}"#.utf8),
                contentType: "application/json")
            #expect(cleared.json?["launch"] == .null)
        }
    }
}

/// Log lines a service writes, collected for assertions.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    var logger: ServerLogger { ServerLogger(sink: { [self] line in lines.withLock { $0.append(line) } }) }
    func contains(_ text: String) -> Bool { lines.withLock { $0.contains { $0.contains(text) } } }
    var all: [String] { lines.withLock { $0 } }
}
