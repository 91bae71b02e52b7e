import ChimeCore
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// Scheduled summaries over HTTP, with the real `curl` binary against a running service on a
/// manual clock: the owner's routes, refusals naming the field, held deliveries on the event
/// stream, and the summary at its time.
@Suite("Scheduled summary over HTTP", .testThreads)
struct SummaryAPITests {
    /// Monday 2027-06-07, 08:30 in Berlin.
    static let start = JSONMapping.parseDate("2027-06-07T06:30:00Z")!

    @Test(
        "curl puts an app in a summary at 08:00 and 18:00 Berlin; an active notification is held, a time-sensitive one comes; 18:00 sends the summary"
    )
    func overHTTP() async throws {
        let clock = ManualClock(now: Self.start)
        try await ServiceHarness.with(clock: clock) { harness in
            let token = try await harness.createApp("com.example.digest")
            let app = harness.client(token: token)
            let owner = harness.service.ownerToken
            let root = "http://127.0.0.1:\(harness.service.port)"
            let path = root + "/v1/apps/com.example.digest/summary"
            #expect(
                try await app.post(
                    "/v1/apps/com.example.digest/authorization", json: #"{"options": ["alert", "sound"]}"#
                ).status == 200)
            let body = #"{"times": ["18:00", "08:00"], "timeZone": "Europe/Berlin"}"#

            for (refusedBody, field, says) in [
                (#"{"times": [], "timeZone": "UTC"}"#, "times", "1 to 12"),
                (#"{"times": ["08:00", "24:00"], "timeZone": "UTC"}"#, "times[1]", "00:00 to 23:59"),
                (#"{"times": ["8am"], "timeZone": "UTC"}"#, "times[0]", "HH:MM"),
                (#"{"times": ["08:00", "08:00"], "timeZone": "UTC"}"#, "times[1]", "given twice"),
                (#"{"times": ["08:00"], "timeZone": "Europe/Atlantis"}"#, "timeZone", "IANA"),
                (#"{"times": ["08:00"]}"#, "timeZone", "is missing"),
                (#"{"timeZone": "UTC"}"#, "times", "is missing"),
                (#"{"times": "08:00", "timeZone": "UTC"}"#, "times", "array"),
                (#"{"time": ["08:00"], "timeZone": "UTC"}"#, "time", "times"),
            ] {
                let refused = try await ExpiryAPITests.curl("PUT", path, token: owner, body: refusedBody)
                #expect(refused.status == 400, "\(refusedBody)")
                #expect(
                    refused.json?["error"]?["field"] == .string(field),
                    "\(refusedBody): \(String(describing: refused.json))")
                guard case .string(let message)? = refused.json?["error"]?["message"] else {
                    Issue.record("no message: \(refusedBody)")
                    continue
                }
                #expect(message.contains(says), "\(refusedBody): \(message)")
            }
            #expect(try await ExpiryAPITests.curl("PUT", path, token: token, body: body).status == 403, "owner only")
            let none = try await ExpiryAPITests.curl("GET", path, token: owner)
            #expect(none.status == 404 && none.json?["error"]?["field"] == .string("app"))

            let added = try await ExpiryAPITests.curl("PUT", path, token: owner, body: body)
            #expect(added.status == 201)
            #expect(
                added.json == [
                    "app": "com.example.digest", "times": ["08:00", "18:00"], "timeZone": "Europe/Berlin",
                    "nextDelivery": "2027-06-07T16:00:00.000Z", "held": 0,
                ])
            #expect(try await ExpiryAPITests.curl("PUT", path, token: owner, body: body).status == 200, "changed")
            let settings = try await ExpiryAPITests.curl(
                "GET", root + "/v1/apps/com.example.digest/settings", token: token)
            #expect(settings.json?["scheduledDeliverySetting"] == .string("enabled"))

            let events = try await SSEClient.open(
                harness.endpoint, path: "/v1/apps/com.example.digest/events", token: token)
            #expect(events.status == 200)
            let requests = try await ExpiryAPITests.curl(
                "POST", root + "/v1/apps/com.example.digest/requests", token: token,
                body: #"""
                    [{"identifier": "news", "title": "Newsletter", "sound": "default", "relevanceScore": 0.2, "trigger": {"type": "timeInterval", "timeInterval": 600}},
                     {"identifier": "sale", "title": "Sale", "sound": "default", "relevanceScore": 0.9, "trigger": {"type": "timeInterval", "timeInterval": 900}},
                     {"identifier": "door", "title": "Door open", "sound": "default", "interruptionLevel": "timeSensitive",
                      "trigger": {"type": "timeInterval", "timeInterval": 1200}}]
                    """#)
            #expect(requests.status == 201)
            clock.set(Self.start.addingTimeInterval(3600))
            var delivered: [String: JSONValue] = [:]
            for _ in 0..<20 where delivered.count < 3 {
                let event = try await events.next(timeout: 60)
                if event.event == "delivered", case .string(let id)? = event.json?["notification"]?["identifier"] {
                    delivered[id] = event.json
                }
            }
            #expect(
                delivered["news"]?["focus"] == [
                    "name": "Scheduled Summary", "quiet": true, "reason": "scheduledSummary",
                ])
            #expect(delivered["news"]?["presentation"] == .array(["list"]), "no banner, no sound")
            #expect(
                delivered["door"]?["focus"] == nil
                    && delivered["door"]?["presentation"] == .array(["sound", "list", "banner"]))
            let held = try await ExpiryAPITests.curl("GET", path, token: owner)
            #expect(held.json?["held"] == .integer(2))
            let list = try await ExpiryAPITests.curl("GET", root + "/v1/summaries", token: owner)
            #expect(list.json?[0]?["app"] == .string("com.example.digest") && list.json?[0]?["held"] == .integer(2))

            clock.set(JSONMapping.parseDate("2027-06-07T16:00:01Z")!)  // 18:00 in Berlin
            var summary: JSONValue?
            for _ in 0..<20 where summary == nil {
                let event = try await events.next(timeout: 60)
                if event.event == "delivered", event.json?["notification"]?["identifier"] == .string("chime.summary") {
                    summary = event.json
                }
            }
            #expect(summary?["notification"]?["title"] == .string("Scheduled Summary"))
            #expect(summary?["notification"]?["body"] == .string("Sale\nNewsletter"), "by relevanceScore")
            #expect(summary?["focus"] == nil && summary?["presentation"] == .array(["list", "banner"]))

            #expect(
                try await ExpiryAPITests.curl("DELETE", path, token: owner).json == ["removed": "com.example.digest"])
            #expect(try await ExpiryAPITests.curl("DELETE", path, token: owner).status == 404)
            let after = try await ExpiryAPITests.curl(
                "GET", root + "/v1/apps/com.example.digest/settings", token: token)
            #expect(after.json?["scheduledDeliverySetting"] == .string("disabled"))
            #expect(try await ExpiryAPITests.curl("GET", root + "/v1/summaries", token: owner).json == .array([]))
        }
    }
}
