import ChimeCore
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// Escalation — repeat until acknowledged, a Chime addition — over HTTP, with the real `curl`
/// binary against a running service on a manual clock: `escalateEvery`/`escalateFor` in JSON, the
/// `realerted` event on the stream, the answer's `surface`, the receipt (kept after the
/// notification is gone) and `chime_realerted_total`; bad values refused naming the field.
@Suite("Escalation over HTTP", .testThreads)
struct EscalationAPITests {
    static let start = JSONMapping.parseDate("2027-06-01T07:00:00Z")!

    /// The next event of `kind` on the stream (at most 20 events read).
    static func next(_ kind: String, on events: SSEClient) async throws -> JSONValue? {
        for _ in 0..<20 {
            let event = try await events.next(timeout: 60)
            if event.event == kind { return event.json }
        }
        return nil
    }

    @Test(
        "curl adds an alarm that rings every minute; it is alerted again on the stream until answered on the web; the receipt says so"
    )
    func overHTTP() async throws {
        let clock = ManualClock(now: Self.start)
        try await ServiceHarness.with(clock: clock) { harness in
            let token = try await harness.createApp("com.example.alarm")
            let app = harness.client(token: token)
            let owner = harness.service.ownerToken
            let root = "http://127.0.0.1:\(harness.service.port)"
            let base = root + "/v1/apps/com.example.alarm"
            #expect(
                try await app.post(
                    "/v1/apps/com.example.alarm/authorization", json: #"{"options": ["alert", "sound"]}"#
                ).status == 200)
            let events = try await SSEClient.open(
                harness.endpoint, path: "/v1/apps/com.example.alarm/events", token: token)
            #expect(events.status == 200)

            let added = try await ExpiryAPITests.curl(
                "POST", base + "/requests", token: token,
                body: #"""
                    [{"identifier": "wake", "title": "Wake up", "sound": "default", "escalateEvery": 60, "escalateFor": 1800},
                     {"identifier": "plain", "title": "Just once"}]
                    """#)
            #expect(added.status == 201, "\(String(describing: added.json))")
            #expect(added.json?[0]?["escalateEvery"] == .number(60) && added.json?[0]?["escalateFor"] == .number(1800))
            let listed = try await ExpiryAPITests.curl("GET", base + "/notifications", token: token)
            #expect(
                listed.json?[1]?["identifier"] == .string("wake") && listed.json?[1]?["escalateEvery"] == .number(60))

            // Refusals name the field and say what is accepted.
            for (body, field, says) in [
                (
                    #"{"identifier": "a", "title": "A", "escalateEvery": 5, "escalateFor": 600}"#, "escalateEvery",
                    "10 or more seconds"
                ),
                (#"{"identifier": "b", "title": "B", "escalateEvery": 60}"#, "escalateFor", "both escalateEvery"),
                (#"{"identifier": "c", "title": "C", "escalateFor": 600}"#, "escalateEvery", "both escalateEvery"),
                (
                    #"{"identifier": "d", "title": "D", "escalateEvery": 60, "escalateFor": 100000}"#, "escalateFor",
                    "at most 86400"
                ),
                (
                    #"{"identifier": "e", "title": "E", "escalateEvery": "1m", "escalateFor": 600}"#, "escalateEvery",
                    "expected a number"
                ),
                (
                    #"[{"identifier": "ok", "title": "OK"}, {"identifier": "f", "title": "F", "escalateEvery": 60, "escalateFor": 30}]"#,
                    "[1].escalateFor", "longer than one interval"
                ),
            ] {
                let refused = try await ExpiryAPITests.curl("POST", base + "/requests", token: token, body: body)
                #expect(refused.status == 400, "\(body)")
                #expect(
                    refused.json?["error"]?["field"] == .string(field), "\(body): \(String(describing: refused.json))")
                guard case .string(let message)? = refused.json?["error"]?["message"] else {
                    Issue.record("no message: \(body)")
                    continue
                }
                #expect(message.contains(says), "\(body): \(message)")
            }
            let none = try await ExpiryAPITests.curl("GET", base + "/notifications/plain/receipt", token: token)
            #expect(none.status == 404 && none.json?["error"]?["field"] == .string("identifier"))
            let first = try await ExpiryAPITests.curl("GET", base + "/notifications/wake/receipt", token: token)
            #expect(first.status == 200)
            #expect(first.json?["alerts"] == .integer(1) && first.json?["acknowledged"] == .bool(false))
            #expect(
                first.json?["nextAlertAt"] == .string("2027-06-01T07:01:00.000Z")
                    && first.json?["endsAt"] == .string("2027-06-01T07:30:00.000Z"))

            // 07:01 and 07:02: alerted again, twice, with what a delivery carries.
            for minute in 1...2 {
                clock.set(Self.start.addingTimeInterval(Double(minute) * 60))
                let again = try await Self.next("realerted", on: events)
                #expect(again?["alert"] == .integer(Int64(minute + 1)))
                #expect(again?["notification"]?["identifier"] == .string("wake"))
                guard case .array(let presentation)? = again?["presentation"] else {
                    Issue.record("no presentation: \(String(describing: again))")
                    continue
                }
                #expect(presentation.contains(.string("sound")), "\(presentation)")
            }

            // Answered on the web at 07:02:30 (the owner answers as the user).
            clock.set(Self.start.addingTimeInterval(150))
            let badSurface = try await ExpiryAPITests.curl(
                "POST", base + "/notifications/wake/responses", token: owner,
                body:
                    #"{"actionIdentifier": "com.apple.UNNotificationDefaultActionIdentifier", "surface": "my web page!"}"#
            )
            #expect(badSurface.status == 400 && badSurface.json?["error"]?["field"] == .string("surface"))
            let answered = try await ExpiryAPITests.curl(
                "POST", base + "/notifications/wake/responses", token: owner,
                body: #"{"actionIdentifier": "com.apple.UNNotificationDefaultActionIdentifier", "surface": "web"}"#)
            #expect(answered.status == 201, "\(String(describing: answered.json))")
            let receipt = try await ExpiryAPITests.curl("GET", base + "/notifications/wake/receipt", token: token)
            #expect(receipt.json?["acknowledged"] == .bool(true))
            #expect(receipt.json?["acknowledgedAt"] == .string("2027-06-01T07:02:30.000Z"))
            #expect(receipt.json?["actionIdentifier"] == .string("com.apple.UNNotificationDefaultActionIdentifier"))
            #expect(receipt.json?["surface"] == .string("web") && receipt.json?["alerts"] == .integer(3))
            #expect(
                receipt.json?["lastAlertedAt"] == .string("2027-06-01T07:02:00.000Z")
                    && receipt.json?["nextAlertAt"] == .null)
            #expect(receipt.json?["expired"] == .bool(false))
            #expect(
                ExpiryAPITests.identifiers(
                    try await ExpiryAPITests.curl("GET", base + "/notifications", token: token).json) == ["plain"],
                "the answer took it off the list; its receipt stays")

            // Nothing more at 07:03: the next event is the plain notification's removal.
            clock.set(Self.start.addingTimeInterval(240))
            _ = try await ExpiryAPITests.curl("DELETE", base + "/notifications?identifier=plain", token: token)
            var kinds: [String] = []
            for _ in 0..<10 {
                let event = try await events.next(timeout: 60)
                kinds.append(event.event ?? "message")
                if event.event == "removed", event.json?["identifiers"] == .array([.string("plain")]) { break }
            }
            #expect(kinds.last == "removed" && !kinds.contains("realerted"), "\(kinds)")

            let metrics = try await ChildProcess.run(
                "/usr/bin/curl", arguments: ["-sS", root + "/metrics", "-H", "Authorization: Bearer \(owner)"],
                timeout: 30)
            #expect(metrics.text.contains("# TYPE chime_realerted_total counter"))
            #expect(metrics.text.contains("\nchime_realerted_total 2\n"), "\(metrics.text.prefix(2000))")
        }
    }
}
