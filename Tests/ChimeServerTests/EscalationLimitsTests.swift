import ChimeCore
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// Escalation (a Chime addition) on the one-line send — the `Escalate-Every` and `Escalate-For`
/// headers — and the service's limits as `chime serve` takes them: the `--escalation-min-every` and
/// `--escalation-max-for` flags and the same keys in a configuration file, each refusing requests
/// outside them; flags that make no sense refused at start.
@Suite("Escalation headers and the service's escalation limits", .testThreads)
struct EscalationLimitsTests {
    static let start = JSONMapping.parseDate("2027-06-01T07:00:00Z")!

    @Test(
        "Escalate-Every and Escalate-For on POST …/send: the notification is alerted again; bad or missing ones refused naming the header"
    )
    func sendHeaders() async throws {
        let clock = ManualClock(now: Self.start)
        try await ServiceHarness.with(clock: clock) { harness in
            let token = try await harness.createApp("com.example.door")
            let app = harness.client(token: token)
            let base = "http://127.0.0.1:\(harness.service.port)/v1/apps/com.example.door"
            #expect(
                try await app.post("/v1/apps/com.example.door/authorization", json: #"{"options": ["alert", "sound"]}"#)
                    .status == 200)
            let events = try await SSEClient.open(
                harness.endpoint, path: "/v1/apps/com.example.door/events", token: token)
            #expect(events.status == 200)

            let sent = try await ExpiryAPITests.curl(
                "POST", base + "/send", token: token, body: "Someone is at the door",
                headers: [
                    ("Content-Type", "text/plain"), ("Identifier", "door"), ("Escalate-Every", "1m"),
                    ("X-Escalate-For", "30m"),
                ])
            #expect(sent.status == 201, "\(String(describing: sent.json))")
            #expect(
                sent.json?["escalateEvery"] == .number(60) && sent.json?["escalateFor"] == .number(1800),
                "\(String(describing: sent.json))")
            // Bare numbers are seconds, as for Delay.
            let seconds = try await ExpiryAPITests.curl(
                "POST", base + "/send", token: token, body: "Kettle",
                headers: [
                    ("Content-Type", "text/plain"), ("Identifier", "kettle"), ("Escalate-Every", "90"),
                    ("Escalate-For", "600"),
                ])
            #expect(
                seconds.status == 201 && seconds.json?["escalateEvery"] == .number(90)
                    && seconds.json?["escalateFor"] == .number(600))

            // Refused, naming the header and saying what is accepted; nothing added.
            for (headers, field, says) in [
                ([("Escalate-Every", "1m")], "Escalate-For", "takes both Escalate-Every"),
                ([("Escalate-For", "30m")], "Escalate-Every", "takes both Escalate-Every"),
                ([("Escalate-Every", "often"), ("Escalate-For", "30m")], "Escalate-Every", "not a duration"),
                ([("Escalate-Every", "1m"), ("Escalate-For", "-5")], "Escalate-For", "not longer than escalateEvery"),
                // The service's limits (here its defaults: every 10 s or more, for at most 24 h), checked by the engine.
                ([("Escalate-Every", "5s"), ("Escalate-For", "10m")], "Escalate-Every", "give 10 or more seconds"),
                ([("Escalate-Every", "1m"), ("Escalate-For", "25h")], "Escalate-For", "give at most 86400"),
                ([("Escalate-Every", "10m"), ("Escalate-For", "5m")], "Escalate-For", "not longer than escalateEvery"),
            ] {
                let refused = try await ExpiryAPITests.curl(
                    "POST", base + "/send", token: token, body: "x",
                    headers: [("Content-Type", "text/plain"), ("Identifier", "refused")] + headers)
                #expect(refused.status == 400, "\(headers)")
                #expect(
                    refused.json?["error"]?["field"] == .string(field),
                    "\(headers): \(String(describing: refused.json))")
                let message = refused.json?["error"]?["message"]?.stringValue ?? ""
                #expect(message.contains(says) && message.contains(field), "\(headers): \(message)")
            }
            let listed = try await ExpiryAPITests.curl("GET", base + "/notifications", token: token)
            #expect(ExpiryAPITests.identifiers(listed.json) == ["kettle", "door"])

            // A minute on: the door is alerted again, as its own realerted event (alert 2).
            clock.set(Self.start.addingTimeInterval(60))
            let realerted = try await EscalationAPITests.next("realerted", on: events)
            #expect(
                realerted?["notification"]?["identifier"] == .string("door") && realerted?["alert"] == .integer(2),
                "\(String(describing: realerted))")
            let receipt = try await ExpiryAPITests.curl("GET", base + "/notifications/door/receipt", token: token)
            #expect(
                receipt.json?["alerts"] == .integer(2) && receipt.json?["acknowledged"] == .bool(false),
                "\(String(describing: receipt.json))")
            events.close()
        }
    }

    /// Adds one request with `escalateEvery` and `escalateFor` to a node; its status and error field.
    static func add(every: Double, for window: Double, node: ClusterTests.Node, token: String) async throws -> (
        Int, String?, String
    ) {
        let response = try await node.client(token).post(
            "/v1/apps/com.example.limits/requests",
            json: #"{"identifier": "x", "title": "X", "escalateEvery": \#(every), "escalateFor": \#(window)}"#)
        return (
            response.status, response.json?["error"]?["field"]?.stringValue,
            response.json?["error"]?["message"]?.stringValue ?? ""
        )
    }

    @Test(
        "chime serve --escalation-min-every 30s --escalation-max-for 10m, and the same keys in a configuration file, refuse requests outside them",
        arguments: ["flags", "TOML", "JSON"])
    func serveLimits(given: String) async throws {
        var arguments = ["--desktop", "off"]
        let configuration = ServiceHarness.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: configuration, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: configuration) }
        switch given {
        case "flags":
            arguments += ["--escalation-min-every", "30s", "--escalation-max-for", "10m"]
        case "TOML":
            let path = configuration + "/chime.toml"
            try Data("[serve]\nescalation-min-every = \"30s\"\nescalation-max-for = \"10m\"\n".utf8).write(
                to: URL(fileURLWithPath: path))
            arguments += ["--config", path]
        default:
            let path = configuration + "/chime.json"
            try Data(#"{"escalation-min-every": "30s", "escalation-max-for": "10m"}"#.utf8).write(
                to: URL(fileURLWithPath: path))
            arguments += ["--config", path]
        }
        let node = ClusterTests.Node("limits", database: nil, arguments: arguments)
        try await node.start()
        defer { try? FileManager.default.removeItem(atPath: node.directory) }
        do {
            let owner = try String(contentsOfFile: node.directory + "/owner-token", encoding: .utf8).trimmingCharacters(
                in: .whitespacesAndNewlines)
            let registered = try await node.client(owner).post(
                "/v1/apps", json: #"{"bundleIdentifier": "com.example.limits"}"#)
            let token = try #require(registered.json?["token"]?.stringValue, "\(registered.text)")
            #expect(try await node.client(token).post("/v1/apps/com.example.limits/authorization").status == 200)

            let tooOften = try await Self.add(every: 20, for: 300, node: node, token: token)
            #expect(
                tooOften.0 == 400 && tooOften.1 == "escalateEvery"
                    && tooOften.2.contains("give 30 or more seconds between alerts"), "\(tooOften)")
            let tooLong = try await Self.add(every: 30, for: 700, node: node, token: token)
            #expect(
                tooLong.0 == 400 && tooLong.1 == "escalateFor" && tooLong.2.contains("give at most 600 seconds"),
                "\(tooLong)")
            // Within them, at both ends: taken. (Over 24 h the default would refuse; under 10 s too.)
            let within = try await Self.add(every: 30, for: 600, node: node, token: token)
            #expect(within.0 == 201, "\(within)")
            let header = try await node.client(token).post(
                "/v1/apps/com.example.limits/send", json: "Door",
                headers: [("Content-Type", "text/plain"), ("Escalate-Every", "15s"), ("Escalate-For", "5m")])
            #expect(
                header.status == 400 && header.json?["error"]?["field"] == .string("Escalate-Every"), "\(header.text)")
        } catch {
            Issue.record("\(error); the node's log: \(node.log.suffix(2000))")
        }
        await node.stop()
    }

    @Test(
        "chime serve refuses limits that make no sense before it starts, naming the flag",
        arguments: [
            (["--escalation-min-every", "0s"], "--escalation-min-every must be more than 0"),
            (["--escalation-min-every", "1h", "--escalation-max-for", "30m"], "less than --escalation-max-for"),
            (["--escalation-max-for", "5s"], "less than --escalation-max-for"),
            (["--escalation-max-for", "soon"], "--escalation-max-for:"),
            (["--escalation-min-every", "10"], "--escalation-min-every: '10' has no unit"),
        ])
    func badLimits(flags: [String], says: String) async throws {
        let directory = ServiceHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try await ChildProcess.run(
            try ClusterTests.binary().path,
            arguments: ["serve", "--data", directory, "--listen", "127.0.0.1:0", "--desktop", "off"] + flags,
            timeout: 60)
        #expect(result.termination == .exited(2), "\(flags): \(result.termination) \(result.errorText)")
        #expect(result.errorText.contains(says), "\(flags): \(result.errorText)")
    }
}

extension JSONValue {
    fileprivate var stringValue: String? { if case .string(let text) = self { text } else { nil } }
}
