import ChimeCore
import ChimeTesting
import Foundation
import TestThreads
import Testing

/// Focus modes — quiet hours, a Chime addition — over HTTP, with the real `curl` binary against a
/// running service on a manual clock: the owner's routes, refusals naming the field, the `focus`
/// of delivered events on the stream (held quietly, or let through and why), and the summary.
@Suite("Focus over HTTP", .testThreads)
struct FocusAPITests {
    /// Monday 2027-06-07, 21:00 in Berlin.
    static let start = JSONMapping.parseDate("2027-06-07T19:00:00Z")!

    /// A service on a manual clock at ``start`` with the app com.example.focus allowed alerts and
    /// sounds: `body` gets the clock, the harness, the app's token and the service's root URL.
    static func withApp(_ body: (ManualClock, ServiceHarness, String, String) async throws -> Void) async throws {
        let clock = ManualClock(now: start)
        try await ServiceHarness.with(clock: clock) { harness in
            let token = try await harness.createApp("com.example.focus")
            #expect(
                try await harness.client(token: token).post(
                    "/v1/apps/com.example.focus/authorization", json: #"{"options": ["alert", "sound"]}"#
                ).status == 200)
            try await body(clock, harness, token, "http://127.0.0.1:\(harness.service.port)")
        }
    }

    @Test(
        "curl sets Sleep 22:00-07:00; during it an active notification is delivered quietly and a time-sensitive one through; off sends the summary"
    )
    func overHTTP() async throws {
        try await Self.withApp { clock, harness, token, root in
            let owner = harness.service.ownerToken
            let sleep =
                #"{"schedule": {"from": "22:00", "to": "07:00", "days": "mon-fri", "timeZone": "Europe/Berlin"}, "allowedThreads": ["family"]}"#

            // Refusals name the field and say what is accepted.
            for (body, field, says) in [
                (
                    #"{"schedule": {"from": "24:00", "to": "07:00", "timeZone": "UTC"}}"#, "schedule.from",
                    "00:00 to 23:59"
                ),
                (#"{"schedule": {"from": "22:00", "to": "7pm", "timeZone": "UTC"}}"#, "schedule.to", "HH:MM"),
                (
                    #"{"schedule": {"from": "22:00", "to": "07:00", "days": ["mon", "funday"], "timeZone": "UTC"}}"#,
                    "schedule.days[1]", "mon, tue"
                ),
                (
                    #"{"schedule": {"from": "22:00", "to": "07:00", "days": [], "timeZone": "UTC"}}"#, "schedule.days",
                    "at least one day"
                ),
                (
                    #"{"schedule": {"from": "22:00", "to": "07:00", "timeZone": "Europe/Atlantis"}}"#,
                    "schedule.timeZone", "IANA"
                ),
                (#"{"schedule": {"from": "22:00", "to": "07:00"}}"#, "schedule.timeZone", "is missing"),
                (#"{"allowedApps": ["no spaces allowed"]}"#, "allowedApps[0]", "bundle identifier"),
                (#"{"allowedThread": ["family"]}"#, "allowedThread", "allowedThreads"),
                (#"{"name": "Work"}"#, "name", "not the focus this route names"),
            ] {
                let refused = try await ExpiryAPITests.curl("PUT", root + "/v1/focus/Sleep", token: owner, body: body)
                #expect(refused.status == 400, "\(body)")
                #expect(
                    refused.json?["error"]?["field"] == .string(field), "\(body): \(String(describing: refused.json))")
                guard case .string(let message)? = refused.json?["error"]?["message"] else {
                    Issue.record("no message: \(body)")
                    continue
                }
                #expect(message.contains(says), "\(body): \(message)")
            }
            let badName = try await ExpiryAPITests.curl("PUT", root + "/v1/focus/%20Sleep", token: owner, body: sleep)
            #expect(badName.status == 400 && badName.json?["error"]?["field"] == .string("name"))
            #expect(
                try await ExpiryAPITests.curl("PUT", root + "/v1/focus/Sleep", token: token, body: sleep).status == 403,
                "owner only")

            let added = try await ExpiryAPITests.curl("PUT", root + "/v1/focus/Sleep", token: owner, body: sleep)
            #expect(added.status == 201)
            #expect(
                added.json?["active"] == .bool(false)
                    && added.json?["nextChange"] == .string("2027-06-07T20:00:00.000Z"))
            #expect(added.json?["schedule"]?["days"] == .array(["mon", "tue", "wed", "thu", "fri"]))
            #expect(
                try await ExpiryAPITests.curl("PUT", root + "/v1/focus/Sleep", token: owner, body: sleep).status == 200,
                "replaced")
            let missing = try await ExpiryAPITests.curl("POST", root + "/v1/focus/Nap/on", token: owner)
            #expect(missing.status == 404 && missing.json?["error"]?["field"] == .string("name"))

            let events = try await SSEClient.open(
                harness.endpoint, path: "/v1/apps/com.example.focus/events", token: token)
            #expect(events.status == 200)
            let requests = try await ExpiryAPITests.curl(
                "POST", root + "/v1/apps/com.example.focus/requests", token: token,
                body: #"""
                    [{"identifier": "news", "title": "Newsletter", "sound": "default", "trigger": {"type": "timeInterval", "timeInterval": 5400}},
                     {"identifier": "door", "title": "Door open", "sound": "default", "interruptionLevel": "timeSensitive",
                      "trigger": {"type": "timeInterval", "timeInterval": 6300}}]
                    """#)
            #expect(requests.status == 201)
            clock.set(Self.start.addingTimeInterval(7200))  // 23:00 in Berlin
            var delivered: [String: JSONValue] = [:]
            for _ in 0..<20 where delivered.count < 2 {
                let event = try await events.next()
                if event.event == "delivered", case .string(let id)? = event.json?["notification"]?["identifier"] {
                    delivered[id] = event.json
                }
            }
            #expect(delivered["news"]?["focus"] == ["name": "Sleep", "quiet": true, "reason": "focus"])
            #expect(delivered["news"]?["presentation"] == .array(["list"]), "no banner, no sound")
            #expect(delivered["door"]?["focus"] == ["name": "Sleep", "quiet": false, "reason": "timeSensitive"])
            #expect(delivered["door"]?["presentation"] == .array(["sound", "list", "banner"]))
            let listed = try await ExpiryAPITests.curl(
                "GET", root + "/v1/apps/com.example.focus/notifications", token: token)
            #expect(Set(ExpiryAPITests.identifiers(listed.json)) == ["news", "door"], "the held one is in the list")
            let on = try await ExpiryAPITests.curl("GET", root + "/v1/focus/Sleep", token: owner)
            #expect(
                on.json?["active"] == .bool(true) && on.json?["heldTotal"] == .integer(1)
                    && on.json?["held"] == ["com.example.focus": 1])
            #expect(on.json?["nextChange"] == .string("2027-06-08T05:00:00.000Z"))

            // Off by hand: the summary at once, delivered as usual; off until 07:00.
            let off = try await ExpiryAPITests.curl("POST", root + "/v1/focus/Sleep/off", token: owner)
            #expect(
                off.status == 200 && off.json?["active"] == .bool(false) && off.json?["manual"]?["on"] == .bool(false))
            var summary: JSONValue?
            for _ in 0..<20 where summary == nil {
                let event = try await events.next()
                if event.event == "delivered",
                    event.json?["notification"]?["identifier"] == .string("chime.focus.Sleep")
                {
                    summary = event.json
                }
            }
            #expect(summary?["notification"]?["body"] == .string("1 notification during Sleep"))
            #expect(summary?["focus"] == nil && summary?["presentation"] == .array(["list", "banner"]))
            let list = try await ExpiryAPITests.curl("GET", root + "/v1/focus", token: owner)
            #expect(list.json?[0]?["name"] == .string("Sleep") && list.json?[0]?["heldTotal"] == .integer(0))

            #expect(
                try await ExpiryAPITests.curl("DELETE", root + "/v1/focus/Sleep", token: owner).json == [
                    "removed": "Sleep"
                ])
            #expect(try await ExpiryAPITests.curl("DELETE", root + "/v1/focus/Sleep", token: owner).status == 404)
            #expect(try await ExpiryAPITests.curl("GET", root + "/v1/focus", token: owner).json == .array([]))
        }
    }

    @Test(
        "the owner's stream tells of each focus change with every mode: added, on and off by hand, a schedule's start, removed; an app's stream never"
    )
    func focusEvents() async throws {
        try await Self.withApp { clock, harness, token, root in
            let app = harness.client(token: token)
            let owner = harness.service.ownerToken
            let ownerEvents = try await SSEClient.open(harness.endpoint, path: "/v1/events", token: owner)
            let appEvents = try await SSEClient.open(
                harness.endpoint, path: "/v1/apps/com.example.focus/events", token: token)
            #expect(ownerEvents.status == 200 && appEvents.status == 200)
            func change(_ method: String, _ path: String, body: String? = nil) async throws -> JSONValue? {
                let answer = try await ExpiryAPITests.curl(method, root + path, token: owner, body: body)
                #expect((200...201).contains(answer.status), "\(method) \(path): \(answer.status)")
                return try await EscalationAPITests.next("focus", on: ownerEvents)
            }
            func modes(_ event: JSONValue?) -> [String: String] {
                var found: [String: String] = [:]
                guard case .array(let list)? = event?["modes"] else {
                    return ["no modes": "\(String(describing: event))"]
                }
                for mode in list {
                    guard case .string(let name)? = mode["name"] else { continue }
                    var next = "-"
                    if case .string(let date)? = mode["nextChange"] { next = date }
                    found[name] = [
                        mode["active"] == .bool(true) ? "on" : "off",
                        mode["byHand"] == .bool(true) ? "hand" : "schedule", next,
                    ]
                    .joined(separator: " ")
                }
                return found
            }

            let added = try await change(
                "PUT", "/v1/focus/Sleep",
                body: #"{"schedule": {"from": "22:00", "to": "07:00", "days": "mon-fri", "timeZone": "Europe/Berlin"}}"#
            )
            #expect(added?["app"] == .string("") && added?["sequence"] == .integer(0), "the owner's, not logged")
            #expect(modes(added) == ["Sleep": "off schedule 2027-06-07T20:00:00.000Z"])
            #expect(
                modes(try await change("PUT", "/v1/focus/Reading", body: "{}")) == [
                    "Sleep": "off schedule 2027-06-07T20:00:00.000Z", "Reading": "off schedule -",
                ])
            #expect(
                modes(try await change("POST", "/v1/focus/Reading/on")) == [
                    "Sleep": "off schedule 2027-06-07T20:00:00.000Z", "Reading": "on hand -",
                ])

            // 22:00 in Berlin: the schedule turns Sleep on, and the stream says so with no request.
            clock.set(Self.start.addingTimeInterval(3601))
            let started = try await EscalationAPITests.next("focus", on: ownerEvents)
            #expect(modes(started) == ["Sleep": "on schedule 2027-06-08T05:00:00.000Z", "Reading": "on hand -"])
            #expect(started?["date"] == .string("2027-06-07T20:00:01.000Z"))

            #expect(
                modes(try await change("POST", "/v1/focus/Reading/off")) == [
                    "Sleep": "on schedule 2027-06-08T05:00:00.000Z", "Reading": "off hand -",
                ])
            #expect(
                modes(try await change("DELETE", "/v1/focus/Reading")) == [
                    "Sleep": "on schedule 2027-06-08T05:00:00.000Z"
                ])
            #expect(modes(try await change("DELETE", "/v1/focus/Sleep")) == [:])

            // The app's stream got none of them: the first event it has is the delivery that follows.
            #expect(
                try await app.post(
                    "/v1/apps/com.example.focus/requests", json: #"{"identifier": "now", "title": "Now"}"#
                ).status == 201)
            let first = try await appEvents.next(timeout: 60)
            #expect(first.event == "delivered", "\(first.event ?? "?"): \(first.data)")
        }
    }
}
