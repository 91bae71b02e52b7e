import ChimeCore
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// Recurrence-rule triggers over HTTP, sent with the real `curl` binary: the issue's cases added,
/// listed with their next dates (`?next=N`), refused naming the part, and fired on the service's
/// clock at RFC 5545's dates across the spring clock change.
@Suite("Recurrence triggers over HTTP", .testThreads)
struct RecurrenceAPITests {
    static let start = JSONMapping.parseDate("2027-01-01T00:00:00Z")!

    static let cases = #"""
        [{"identifier": "gym", "title": "Gym", "trigger": {"type": "recurrence",
          "rrule": "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;UNTIL=20271231T225959Z", "start": "2027-01-05T18:00", "timeZone": "Europe/Berlin"}},
         {"identifier": "report", "title": "Report", "trigger": {"type": "recurrence",
          "rrule": "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", "start": "2027-01-01T17:00", "timeZone": "Europe/Berlin"}},
         {"identifier": "pill", "title": "Pill", "trigger": {"type": "recurrence",
          "rrule": "FREQ=DAILY;COUNT=3", "start": "2027-03-27T07:00", "timeZone": "Europe/Berlin"}}]
        """#

    /// `curl -sS -X METHOD URL` with the app's token, `headers`, and a body (JSON unless `headers`
    /// give its Content-Type); the status and the body.
    static func curl(
        _ method: String, _ url: String, token: String, body: String? = nil,
        headers: [(String, String)] = []
    ) async throws -> (status: Int, json: JSONValue?) {
        var arguments = ["-sS", "-X", method, "-H", "Authorization: Bearer \(token)", "-w", "\n%{http_code}", url]
        for (name, value) in headers { arguments += ["-H", "\(name): \(value)"] }
        if let body {
            if !headers.contains(where: { $0.0.lowercased() == "content-type" }) {
                arguments += ["-H", "Content-Type: application/json"]
            }
            arguments += ["--data-binary", body]
        }
        let result = try await ChildProcess.run("/usr/bin/curl", arguments: arguments, timeout: 30)
        let lines = result.text.split(separator: "\n", omittingEmptySubsequences: false)
        let status = Int(lines.last ?? "") ?? 0
        return (status, try? JSONValue.parse(lines.dropLast().joined(separator: "\n")))
    }

    static func dates(_ value: JSONValue?) -> [String] {
        guard case .array(let items)? = value else { return [] }
        return items.compactMap { if case .string(let text) = $0 { text } else { nil } }
    }

    @Test("curl adds the three rules, lists their next dates, is refused a bad part, and each fires at its date")
    func overHTTP() async throws {
        let clock = ManualClock(now: Self.start)
        try await ServiceHarness.with(clock: clock) { harness in
            let token = try await harness.createApp("com.example.rrule")
            let app = harness.client(token: token)
            let base = "http://127.0.0.1:\(harness.service.port)/v1/apps/com.example.rrule"
            #expect(
                try await app.post("/v1/apps/com.example.rrule/authorization", json: #"{"options": ["alert"]}"#).status
                    == 200)

            let added = try await Self.curl("POST", base + "/requests", token: token, body: Self.cases)
            #expect(added.status == 201)
            #expect(added.json?[0]?["nextTriggerDate"] == .string("2027-01-05T17:00:00.000Z"))
            #expect(added.json?[1]?["nextTriggerDate"] == .string("2027-01-29T16:00:00.000Z"))
            #expect(added.json?[2]?["nextTriggerDate"] == .string("2027-03-27T06:00:00.000Z"))
            #expect(added.json?[2]?["trigger"]?["start"] == .string("2027-03-27T07:00:00"))

            let listed = try await Self.curl("GET", base + "/requests?next=3", token: token)
            #expect(listed.status == 200)
            #expect(
                Self.dates(listed.json?[0]?["nextTriggerDates"])
                    == ["2027-01-05T17:00:00.000Z", "2027-01-07T17:00:00.000Z", "2027-01-19T17:00:00.000Z"])
            #expect(
                Self.dates(listed.json?[1]?["nextTriggerDates"])
                    == ["2027-01-29T16:00:00.000Z", "2027-02-26T16:00:00.000Z", "2027-03-31T15:00:00.000Z"])
            #expect(
                Self.dates(listed.json?[2]?["nextTriggerDates"])
                    == ["2027-03-27T06:00:00.000Z", "2027-03-28T05:00:00.000Z", "2027-03-29T05:00:00.000Z"])
            #expect(try await Self.curl("GET", base + "/requests", token: token).json?[0]?["nextTriggerDates"] == nil)
            let badNext = try await Self.curl("GET", base + "/requests?next=0", token: token)
            #expect(badNext.status == 400 && badNext.json?["error"]?["field"] == .string("next"))

            let bad = try await Self.curl(
                "POST", base + "/requests", token: token,
                body: #"""
                    {"identifier": "bad", "title": "Bad", "trigger": {"type": "recurrence", "rrule": "FREQ=MONTHLY;BYDAY=-1FX",
                     "start": "2027-01-29T09:00", "timeZone": "Europe/Berlin"}}
                    """#)
            #expect(bad.status == 400)
            #expect(bad.json?["error"]?["field"] == .string("trigger.rrule.BYDAY"))

            // Fired on the service's clock: the three mornings, across the night the clocks go forward.
            let events = try await SSEClient.open(
                harness.endpoint, path: "/v1/apps/com.example.rrule/events", token: token)
            #expect(events.status == 200)
            for date in ["2027-03-27T06:00:00.000Z", "2027-03-28T05:00:00.000Z", "2027-03-29T05:00:00.000Z"] {
                clock.set(try #require(JSONMapping.parseDate(date)))
                var delivered: JSONValue?
                while delivered == nil {
                    let event = try await events.next()
                    if event.event == "delivered", event.json?["notification"]?["identifier"] == .string("pill") {
                        delivered = event.json?["notification"]
                    }
                }
                #expect(delivered?["date"] == .string(date))
            }
            let after = try await Self.curl("GET", base + "/requests", token: token)
            #expect(
                after.json.map { value -> [String] in
                    guard case .array(let items) = value else { return [] }
                    return items.compactMap { if case .string(let id)? = $0["identifier"] { id } else { nil } }
                } == ["gym", "report"], "COUNT=3 ended the pill request")
        }
    }
}
