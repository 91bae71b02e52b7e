import ChimeCore
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// Request expiry (a Chime addition) over HTTP, with the real `curl` binary against a running
/// service on a manual clock: `expiresIn`/`expirationDate` in JSON, `Expires-In`/`Expires-At` on
/// the one-line send, `apns-expiration` on a push; the `expired` event on the stream and
/// `chime_expired_total` in /metrics; bad values refused naming the field.
@Suite("Request expiry over HTTP", .testThreads)
struct ExpiryAPITests {
    static let start = JSONMapping.parseDate("2027-06-01T12:00:00Z")!
    static func curl(
        _ method: String, _ url: String, token: String, body: String? = nil,
        headers: [(String, String)] = []
    ) async throws -> (status: Int, json: JSONValue?) {
        try await RecurrenceAPITests.curl(method, url, token: token, body: body, headers: headers)
    }

    static func identifiers(_ list: JSONValue?) -> [String] {
        guard case .array(let items)? = list else { return [] }
        return items.compactMap { if case .string(let id)? = $0["identifier"] { id } else { nil } }
    }

    @Test("curl adds expiring requests, the late one expires on the stream and in /metrics, the other is delivered")
    func overHTTP() async throws {
        let clock = ManualClock(now: Self.start)
        try await ServiceHarness.with(clock: clock) { harness in
            let token = try await harness.createApp("com.example.expiry")
            let app = harness.client(token: token)
            let root = "http://127.0.0.1:\(harness.service.port)"
            let base = root + "/v1/apps/com.example.expiry"
            #expect(
                try await app.post("/v1/apps/com.example.expiry/authorization", json: #"{"options": ["alert"]}"#).status
                    == 200)

            let added = try await Self.curl(
                "POST", base + "/requests", token: token,
                body: #"""
                    [{"identifier": "late", "title": "Your ride", "expiresIn": 300, "trigger": {"type": "timeInterval", "timeInterval": 600}},
                     {"identifier": "fresh", "title": "Report", "expirationDate": "2027-06-01T13:00:00Z",
                      "trigger": {"type": "timeInterval", "timeInterval": 600}}]
                    """#)
            #expect(added.status == 201)
            #expect(
                added.json?[0]?["expirationDate"] == .string("2027-06-01T12:05:00.000Z"),
                "the duration became a date at the add")
            #expect(added.json?[1]?["expirationDate"] == .string("2027-06-01T13:00:00.000Z"))
            let sent = try await Self.curl(
                "POST", base + "/send", token: token, body: "Backup done",
                headers: [
                    ("Content-Type", "text/plain"), ("Identifier", "backup"), ("Delay", "20m"),
                    ("Expires-In", "15m"),
                ])
            #expect(sent.status == 201, "\(String(describing: sent.json))")
            let listed = try await Self.curl("GET", base + "/requests", token: token)
            #expect(listed.json?[2]?["identifier"] == .string("backup"))
            #expect(listed.json?[2]?["expirationDate"] == .string("2027-06-01T12:15:00.000Z"))

            // Refusals name the field (or the header) and say what is accepted.
            for (body, field) in [
                (#"{"identifier": "n", "title": "N", "expiresIn": -5}"#, "expiresIn"),
                (#"{"identifier": "s", "title": "S", "expiresIn": "10m"}"#, "expiresIn"),
                (#"{"identifier": "d", "title": "D", "expirationDate": "tomorrow"}"#, "expirationDate"),
                (
                    #"{"identifier": "b", "title": "B", "expiresIn": 5, "expirationDate": "2027-06-01T13:00:00Z"}"#,
                    "expiresIn"
                ),
                (
                    #"[{"identifier": "ok", "title": "OK"}, {"identifier": "x", "title": "X", "expiresIn": -1}]"#,
                    "[1].expiresIn"
                ),
            ] {
                let refused = try await Self.curl("POST", base + "/requests", token: token, body: body)
                #expect(refused.status == 400, "\(body)")
                #expect(
                    refused.json?["error"]?["field"] == .string(field), "\(body): \(String(describing: refused.json))")
            }
            let badHeader = try await Self.curl(
                "POST", base + "/send", token: token, body: "x",
                headers: [("Content-Type", "text/plain"), ("Expires-In", "soon")])
            #expect(badHeader.status == 400)
            #expect(badHeader.json?["error"]?["field"] == .string("Expires-In"))

            // Due at 12:10: "late" expired at 12:05 and is not delivered; "fresh" is.
            let events = try await SSEClient.open(
                harness.endpoint, path: "/v1/apps/com.example.expiry/events", token: token)
            #expect(events.status == 200)
            clock.set(Self.start.addingTimeInterval(600))
            var expired: JSONValue?
            var delivered: [String] = []
            for _ in 0..<20 where expired == nil || delivered.isEmpty {
                let event = try await events.next()
                if event.event == "expired" { expired = event.json }
                if event.event == "delivered", case .string(let id)? = event.json?["notification"]?["identifier"] {
                    delivered.append(id)
                }
            }
            #expect(expired?["request"]?["identifier"] == .string("late"))
            #expect(expired?["request"]?["expirationDate"] == .string("2027-06-01T12:05:00.000Z"))
            #expect(expired?["dueDate"] == .string("2027-06-01T12:10:00.000Z"))
            #expect(delivered == ["fresh"])
            let remaining = try await Self.curl("GET", base + "/requests", token: token)
            #expect(Self.identifiers(remaining.json) == ["backup"])

            let metrics = try await ChildProcess.run(
                "/usr/bin/curl",
                arguments: ["-sS", root + "/metrics", "-H", "Authorization: Bearer \(harness.service.ownerToken)"],
                timeout: 30)
            #expect(metrics.text.contains("# TYPE chime_expired_total counter"))
            #expect(metrics.text.contains("\nchime_expired_total 1\n"), "\(metrics.text.prefix(2000))")

            // A push keeps its apns-expiration (0: its arrival), delivered at once.
            guard
                case .string(let device)? = try await app.get("/v1/apps/com.example.expiry/device-token").json?[
                    "deviceToken"]
            else {
                Issue.record("no device token")
                return
            }
            for (id, header, expected) in [
                ("p0", "0", "2027-06-01T12:10:00.000Z"), ("p1", "1811854800", "2027-06-01T13:00:00.000Z"),
            ] {
                let pushed = try await Self.curl(
                    "POST", root + "/3/device/\(device)", token: token, body: #"{"aps": {"alert": "Score"}}"#,
                    headers: [
                        ("apns-topic", "com.example.expiry"), ("apns-collapse-id", id), ("apns-expiration", header),
                    ])
                #expect(pushed.status == 200)
                let notifications = try await Self.curl("GET", base + "/notifications", token: token)
                guard case .array(let items)? = notifications.json else {
                    throw TestClientError(description: "no list")
                }
                let item = items.first { $0["identifier"] == .string(id) }
                #expect(item?["expirationDate"] == .string(expected), "\(String(describing: notifications.json))")
            }
        }
    }
}
