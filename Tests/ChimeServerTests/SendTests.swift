import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

/// One-line sends: `curl -d "Backup done" …/send` delivers at once; headers set the rest.
@Suite("POST /v1/apps/{app}/send", .testThreads)
struct SendTests {
    static let app = "com.example.backup"

    static func send(
        _ client: TestClient, _ text: String?, headers: [(String, String)] = [],
        contentType: String? = "application/x-www-form-urlencoded"
    ) async throws -> TestResponse {
        try await client.request(
            .send, ["app": app], body: text.map { Array($0.utf8) }, contentType: contentType, headers: headers)
    }

    @Test("curl -d: the text is the body, an identifier is made, it is delivered at once")
    func oneLine() async throws {
        try await ServiceHarness.with { harness in
            let token = try await harness.createApp(Self.app)
            let client = harness.client(token: token)
            #expect(try await client.post("/v1/apps/\(Self.app)/authorization").status == 200)
            let sent = try await Self.send(client, "Backup done\n")
            #expect(sent.status == 201, "\(sent.text)")
            guard case .string(let identifier)? = sent.json?["identifier"] else {
                Issue.record("no identifier: \(sent.text)")
                return
            }
            #expect(UUID(uuidString: identifier) != nil)
            let delivered = try await harness.service.engine.delivered(app: Self.app)
            #expect(delivered.map(\.request.identifier) == [identifier])
            #expect(delivered.first?.request.content.body == "Backup done", "the trailing newline is dropped")
            #expect(delivered.first?.request.content.title == "")
        }
    }

    @Test(
        "headers named after the JSON fields: title, subtitle, category, thread, sound, badge, interruption level, identifier"
    )
    func headers() async throws {
        try await ServiceHarness.with { harness in
            let token = try await harness.createApp(Self.app)
            let client = harness.client(token: token)
            _ = try await client.post("/v1/apps/\(Self.app)/authorization")
            let sent = try await Self.send(
                client, "All 3 disks are fine.",
                headers: [
                    ("Title", "Backup"), ("X-Subtitle", "nightly"), ("Category", "backup"), ("Thread", "nas"),
                    ("Sound", "default"),
                    ("Badge", "2"), ("Interruption-Level", "timeSensitive"), ("Identifier", "backup/2026-12-01"),
                ], contentType: "text/plain; charset=utf-8")
            #expect(sent.status == 201, "\(sent.text)")
            #expect(sent.json?["identifier"] == "backup/2026-12-01")
            let content = try #require(try await harness.service.engine.delivered(app: Self.app).first?.request.content)
            #expect(
                content.title == "Backup" && content.subtitle == "nightly" && content.body == "All 3 disks are fine.")
            #expect(content.categoryIdentifier == "backup" && content.threadIdentifier == "nas")
            #expect(content.sound == .default && content.badge == 2 && content.interruptionLevel == .timeSensitive)
        }
    }

    /// The service's clock in `later`: a fixed instant, so Delay's dates are exact and At's date
    /// (2031) stays in the future whatever the day the suite runs on.
    static let start = JSONMapping.parseDate("2026-12-02T12:00:00Z")!

    @Test("Delay and At schedule it instead")
    func later() async throws {
        try await ServiceHarness.with(clock: ManualClock(now: Self.start)) { harness in
            let token = try await harness.createApp(Self.app)
            let client = harness.client(token: token)
            _ = try await client.post("/v1/apps/\(Self.app)/authorization")
            #expect(
                try await Self.send(client, "in ten minutes", headers: [("Delay", "10m"), ("Identifier", "a")]).status
                    == 201)
            #expect(
                try await Self.send(client, "in 90 seconds", headers: [("Delay", "90"), ("Identifier", "b")]).status
                    == 201)
            #expect(
                try await Self.send(
                    client, "at a moment", headers: [("At", "2031-06-01T08:30:00+02:00"), ("Identifier", "c")]
                ).status == 201)
            let pending = try await harness.service.engine.pending(app: Self.app)
            let fires = Dictionary(uniqueKeysWithValues: pending.map { ($0.request.identifier, $0.nextFireDate) })
            #expect(fires["a"] == Self.start.addingTimeInterval(600))
            #expect(fires["b"] == Self.start.addingTimeInterval(90))
            #expect(fires["c"] == Date(timeIntervalSince1970: 1_938_061_800))
            #expect(try await harness.service.engine.delivered(app: Self.app).isEmpty)
        }
    }

    @Test(
        "bad input is answered naming the header or the body",
        arguments: [
            ([("Delay", "soon")], "Delay"), ([("At", "tomorrow")], "At"),
            ([("Delay", "1m"), ("At", "2031-06-01T08:30:00Z")], "Delay"),
            ([("Badge", "many")], "Badge"), ([("Interruption-Level", "loud")], "Interruption-Level"),
            ([("Identifier", "")], "Identifier"),
        ] as [([(String, String)], String)])
    func bad(headers: [(String, String)], field: String) async throws {
        try await ServiceHarness.with { harness in
            let token = try await harness.createApp(Self.app)
            let client = harness.client(token: token)
            _ = try await client.post("/v1/apps/\(Self.app)/authorization")
            let answer = try await Self.send(client, "text", headers: headers)
            #expect(answer.status == 400, "\(answer.text)")
            #expect(answer.json?["error"]?["field"] == .string(field), "\(answer.text)")
            let delivered = try await harness.service.engine.delivered(app: Self.app)
            let pending = try await harness.service.engine.pending(app: Self.app)
            #expect(delivered.isEmpty && pending.isEmpty, "nothing stored for a refused send")
        }
    }

    @Test("JSON goes to …/requests; an empty send and text that is not UTF-8 are refused")
    func refused() async throws {
        try await ServiceHarness.with { harness in
            let token = try await harness.createApp(Self.app)
            let client = harness.client(token: token)
            _ = try await client.post("/v1/apps/\(Self.app)/authorization")
            let json = try await Self.send(client, #"{"title": "x"}"#, contentType: "application/json")
            #expect(json.status == 415 && json.text.contains("/requests"))
            let empty = try await Self.send(client, "")
            #expect(empty.status == 400 && empty.json?["error"]?["field"] == "body")
            let latin1 = try await client.request(
                "POST", "/v1/apps/\(Self.app)/send", body: [0x63, 0x61, 0x66, 0xE9], contentType: "text/plain")
            #expect(latin1.status == 400 && latin1.json?["error"]?["code"] == "invalidEncoding")
            let other = try await harness.createApp("com.example.other")
            #expect(try await Self.send(harness.client(token: other), "hijack").status == 403)
            #expect(try await Self.send(harness.client(token: nil), "anonymous").status == 401)
        }
    }
}
