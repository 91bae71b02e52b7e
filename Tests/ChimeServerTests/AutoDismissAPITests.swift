import ChimeCore
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// Auto-dismissal (a Chime addition) over HTTP, with the real `curl` binary against a running
/// service on a manual clock: `dismissIn`/`dismissAt` in JSON, `Dismiss-In`/`Dismiss-At` on the
/// one-line send; the `removed` event (reason `autoDismiss`) on the stream and
/// `chime_auto_dismissed_total` in /metrics; bad values refused naming the field.
@Suite("Auto-dismissal over HTTP", .testThreads)
struct AutoDismissAPITests {
    static let start = JSONMapping.parseDate("2027-06-01T12:00:00Z")!

    @Test(
        "curl adds notifications with ends of relevance; each leaves the list, the stream and /metrics say so when it comes"
    )
    func overHTTP() async throws {
        let clock = ManualClock(now: Self.start)
        try await ServiceHarness.with(clock: clock) { harness in
            let token = try await harness.createApp("com.example.dismiss")
            let app = harness.client(token: token)
            let root = "http://127.0.0.1:\(harness.service.port)"
            let base = root + "/v1/apps/com.example.dismiss"
            #expect(
                try await app.post("/v1/apps/com.example.dismiss/authorization", json: #"{"options": ["alert"]}"#)
                    .status == 200)

            let added = try await ExpiryAPITests.curl(
                "POST", base + "/requests", token: token,
                body: #"""
                    [{"identifier": "bus", "title": "Bus 42", "dismissIn": 600, "trigger": {"type": "timeInterval", "timeInterval": 60}},
                     {"identifier": "now", "title": "Doors closing", "dismissAt": "2027-06-01T12:30:00Z"}]
                    """#)
            #expect(added.status == 201)
            #expect(
                added.json?[0]?["dismissIn"] == .number(600),
                "a duration counts from each delivery: kept as one while pending")
            #expect(added.json?[1]?["dismissAt"] == .string("2027-06-01T12:30:00.000Z"))
            let sent = try await ExpiryAPITests.curl(
                "POST", base + "/send", token: token, body: "Backup done",
                headers: [("Content-Type", "text/plain"), ("Identifier", "backup"), ("Dismiss-In", "5m")])
            #expect(sent.status == 201, "\(String(describing: sent.json))")
            let delivered = try await ExpiryAPITests.curl("GET", base + "/notifications", token: token)
            #expect(ExpiryAPITests.identifiers(delivered.json) == ["backup", "now"])
            #expect(
                delivered.json?[0]?["dismissAt"] == .string("2027-06-01T12:05:00.000Z"),
                "the date it made at the delivery")

            // Refusals name the field (or the header) and say what is accepted.
            for (body, field) in [
                (#"{"identifier": "n", "title": "N", "dismissIn": -5}"#, "dismissIn"),
                (#"{"identifier": "z", "title": "Z", "dismissIn": 0}"#, "dismissIn"),
                (#"{"identifier": "s", "title": "S", "dismissIn": "10m"}"#, "dismissIn"),
                (#"{"identifier": "d", "title": "D", "dismissAt": "tomorrow"}"#, "dismissAt"),
                (
                    #"{"identifier": "b", "title": "B", "dismissIn": 5, "dismissAt": "2027-06-01T13:00:00Z"}"#,
                    "dismissIn"
                ),
                (
                    #"[{"identifier": "ok", "title": "OK"}, {"identifier": "x", "title": "X", "dismissIn": -1}]"#,
                    "[1].dismissIn"
                ),
            ] {
                let refused = try await ExpiryAPITests.curl("POST", base + "/requests", token: token, body: body)
                #expect(refused.status == 400, "\(body)")
                #expect(
                    refused.json?["error"]?["field"] == .string(field), "\(body): \(String(describing: refused.json))")
            }
            for (headers, field) in [
                ([("Dismiss-In", "soon")], "Dismiss-In"), ([("Dismiss-At", "later")], "Dismiss-At"),
                ([("Dismiss-In", "5m"), ("Dismiss-At", "2027-06-01T13:00:00Z")], "Dismiss-In"),
            ] {
                let badHeader = try await ExpiryAPITests.curl(
                    "POST", base + "/send", token: token, body: "x",
                    headers: [("Content-Type", "text/plain")] + headers)
                #expect(badHeader.status == 400)
                #expect(badHeader.json?["error"]?["field"] == .string(field), "\(headers)")
            }
            #expect(
                ExpiryAPITests.identifiers(
                    try await ExpiryAPITests.curl("GET", base + "/notifications", token: token).json) == [
                        "backup", "now",
                    ])

            // 12:01: the bus notification is delivered, to go at 12:11.
            let events = try await SSEClient.open(
                harness.endpoint, path: "/v1/apps/com.example.dismiss/events", token: token)
            #expect(events.status == 200)
            clock.set(Self.start.addingTimeInterval(60))
            var deliveredBus: JSONValue?
            for _ in 0..<20 where deliveredBus == nil {
                let event = try await events.next()
                if event.event == "delivered", event.json?["notification"]?["identifier"] == .string("bus") {
                    deliveredBus = event.json
                }
            }
            #expect(deliveredBus?["notification"]?["dismissAt"] == .string("2027-06-01T12:11:00.000Z"))

            // 12:11: "backup" (12:05) and "bus" (12:11) leave in one removal; "now" stays until 12:30.
            clock.set(Self.start.addingTimeInterval(660))
            var removed: JSONValue?
            for _ in 0..<20 where removed == nil {
                let event = try await events.next()
                if event.event == "removed" { removed = event.json }
            }
            #expect(removed?["identifiers"] == .array([.string("backup"), .string("bus")]))
            #expect(removed?["scope"] == .string("delivered"))
            #expect(removed?["reason"] == .string("autoDismiss"))
            #expect(removed?["date"] == .string("2027-06-01T12:11:00.000Z"))
            let remaining = try await ExpiryAPITests.curl("GET", base + "/notifications", token: token)
            #expect(ExpiryAPITests.identifiers(remaining.json) == ["now"])

            let metrics = try await ChildProcess.run(
                "/usr/bin/curl",
                arguments: ["-sS", root + "/metrics", "-H", "Authorization: Bearer \(harness.service.ownerToken)"],
                timeout: 30)
            #expect(metrics.text.contains("# TYPE chime_auto_dismissed_total counter"))
            #expect(metrics.text.contains("\nchime_auto_dismissed_total 2\n"), "\(metrics.text.prefix(2000))")

            // Removed by the app before its end: no second removal at 12:30.
            let deleted = try await ExpiryAPITests.curl("DELETE", base + "/notifications?identifier=now", token: token)
            #expect(deleted.status == 200 || deleted.status == 204, "\(String(describing: deleted.json))")
            var plain: JSONValue?
            for _ in 0..<20 where plain == nil {
                let event = try await events.next()
                if event.event == "removed" { plain = event.json }
            }
            #expect(plain?["identifiers"] == .array([.string("now")]))
            #expect(plain?["reason"] == nil, "removed by the app, not at its end")
        }
    }
}
