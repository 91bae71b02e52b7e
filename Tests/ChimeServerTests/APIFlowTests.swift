import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

let alarmCategory = #"""
    [{"identifier": "alarm.category", "actions": [
      {"identifier": "snooze", "title": "Snooze 5 Sec", "options": []},
      {"identifier": "comment", "title": "Add Comment", "options": ["foreground"], "textInputButtonTitle": "Add", "textInputPlaceholder": "Add Comment Here"}],
      "intentIdentifiers": [], "options": ["customDismissAction"]}]
    """#

@Suite("API flow", .testThreads)
struct APIFlowTests {
    @Test("register, authorize, categories, a 1 s trigger delivered over SSE, the owner's answer, outbox and ack")
    func fullFlow() async throws {
        try await ServiceHarness.with { harness in
            let token = try await harness.createApp("com.example.alarm")
            let app = harness.client(token: token)
            let base = "/v1/apps/com.example.alarm"

            let authorization = try await app.post(
                base + "/authorization", json: #"{"options": ["alert", "sound", "badge"]}"#)
            #expect(authorization.status == 200)
            #expect(authorization.json?["granted"] == .bool(true))
            #expect(authorization.json?["status"] == .string("authorized"))
            #expect(try await app.get(base + "/settings").json?["alertSetting"] == .string("enabled"))

            let categories = try await app.put(base + "/categories", json: alarmCategory)
            #expect(categories.status == 200)
            let listed = try await app.get(base + "/categories")
            #expect(listed.json?.arrayCount == 1)

            let events = try await SSEClient.open(harness.endpoint, path: base + "/events", token: token)
            #expect(events.status == 200)

            let added = try await app.post(
                base + "/requests",
                json: #"""
                    {"identifier": "wake", "title": "Wake up", "body": "Alarm", "categoryIdentifier": "alarm.category",
                     "sound": "default", "userInfo": {"task": "run"}, "trigger": {"type": "timeInterval", "timeInterval": 3, "repeats": false}}
                    """#)
            #expect(added.status == 201)
            #expect(added.json?["identifier"] == .string("wake"))
            guard case .string(let next)? = added.json?["nextTriggerDate"] else {
                Issue.record("no nextTriggerDate in \(added.text)")
                return
            }
            #expect(JSONMapping.parseDate(next) != nil)
            #expect(try await app.get(base + "/requests").json?.arrayCount == 1)

            let delivered = try await events.next()
            #expect(delivered.event == "delivered")
            #expect(delivered.json?["notification"]?["identifier"] == .string("wake"))
            #expect(delivered.id.flatMap { Int64($0) } == delivered.json?["sequence"]?.integerValue)

            let list = try await app.get(base + "/notifications")
            #expect(list.json?.arrayCount == 1)
            #expect(list.json?[0]?["actions"]?.arrayCount == 2)
            #expect(try await app.get(base + "/requests").json?.arrayCount == 0)

            // Only the user answers.
            let byApp = try await app.post(
                base + "/notifications/wake/responses", json: #"{"actionIdentifier": "comment", "userText": "5 more"}"#)
            #expect(byApp.status == 403)
            let unknownAction = try await harness.owner.post(
                base + "/notifications/wake/responses", json: #"{"actionIdentifier": "fly"}"#)
            #expect(unknownAction.status == 400)
            #expect(unknownAction.errorCode == "unknownAction")
            let answer = try await harness.owner.post(
                base + "/notifications/wake/responses",
                json: #"{"actionIdentifier": "comment", "userText": "5 more"}"#)
            #expect(answer.status == 201)
            #expect(answer.json?["userText"] == .string("5 more"))

            // The answer removes the notification from the list, then hands the response to the app.
            let removedEvent = try await events.next()
            #expect(removedEvent.event == "removed")
            let responseEvent = try await events.next()
            #expect(responseEvent.event == "response")
            #expect(responseEvent.json?["response"]?["actionIdentifier"] == .string("comment"))

            let outbox = try await app.get(base + "/responses")
            #expect(outbox.json?.arrayCount == 1)
            let id = try #require(outbox.json?[0]?["id"]?.integerValue)
            #expect(outbox.json?[0]?["actionIdentifier"] == .string("comment"))
            #expect(try await app.post(base + "/responses/\(id)/ack").status == 200)
            #expect(try await app.get(base + "/responses").json?.arrayCount == 0)
            #expect(try await app.post(base + "/responses/\(id)/ack").status == 404)
            events.close()
        }
    }

    @Test("bulk add returns each request with its next trigger date; delete by identifier and all")
    func bulkAndDelete() async throws {
        // A manual clock: on the system clock, a run across 08:30 (the service's zone) fired the
        // daily request "b" between its add and the count of delivered notifications below.
        try await ServiceHarness.with(clock: ManualClock(now: Date(timeIntervalSince1970: 1_796_212_800))) { harness in
            let token = try await harness.createApp("com.example.bulk")
            let app = harness.client(token: token)
            let base = "/v1/apps/com.example.bulk"
            _ = try await app.post(base + "/authorization")
            let added = try await app.post(
                base + "/requests",
                json: #"""
                    [{"identifier": "a", "title": "A", "trigger": {"type": "timeInterval", "timeInterval": 3600}},
                     {"identifier": "b", "title": "B", "trigger": {"type": "calendar", "dateComponents": {"hour": 8, "minute": 30}, "repeats": true}},
                     {"identifier": "c", "title": "C", "trigger": {"type": "location", "region": {"identifier": "office", "latitude": 52.52, "longitude": 13.40, "radius": 100}}}]
                    """#)
            #expect(added.status == 201)
            #expect(added.json?.arrayCount == 3)
            #expect(added.json?[0]?["nextTriggerDate"]?.isString == true)
            #expect(added.json?[2]?["nextTriggerDate"] == .null)
            let removed = try await app.delete(base + "/requests?identifier=a&identifier=c")
            #expect(removed.json?["removed"] == .array(["a", "c"]))
            #expect(try await app.get(base + "/requests").json?.arrayCount == 1)
            _ = try await app.delete(base + "/requests")
            #expect(try await app.get(base + "/requests").json?.arrayCount == 0)

            // Immediate delivery, threads, newest first.
            _ = try await app.post(
                base + "/requests", json: #"{"identifier": "n1", "title": "1", "threadIdentifier": "t"}"#)
            _ = try await app.post(base + "/requests", json: #"{"identifier": "n2", "title": "2"}"#)
            let all = try await app.get(base + "/notifications")
            #expect(all.json?.arrayCount == 2)
            #expect(try await app.get(base + "/notifications?thread=t").json?.arrayCount == 1)
            _ = try await app.delete(base + "/notifications?identifier=n1")
            #expect(try await app.get(base + "/notifications").json?[0]?["identifier"] == .string("n2"))
        }
    }

    @Test("without --auto-allow, authorization waits for the owner's answer")
    func askPolicy() async throws {
        try await ServiceHarness.with(autoAllow: false) { harness in
            let token = try await harness.createApp("com.example.ask")
            let app = harness.client(token: token)
            let base = "/v1/apps/com.example.ask"
            let asked = try await app.post(base + "/authorization", json: #"{"options": ["alert"]}"#)
            #expect(asked.json?["granted"] == .bool(false))
            #expect(asked.json?["status"] == .string("notDetermined"))
            let refused = try await app.post(base + "/requests", json: #"{"identifier": "x", "title": "X"}"#)
            #expect(refused.status == 409)
            #expect(refused.errorCode == "notificationsNotAllowed")
            #expect(try await harness.owner.get("/v1/apps").json?[0]?["promptPending"] == .bool(true))
            #expect(try await app.post(base + "/authorization/answer", json: #"{"allow": true}"#).status == 403)
            let answered = try await harness.owner.post(base + "/authorization/answer", json: #"{"allow": true}"#)
            #expect(answered.json?["status"] == .string("authorized"))
            #expect(try await app.post(base + "/requests", json: #"{"identifier": "x", "title": "X"}"#).status == 201)
        }
    }

    @Test("apps: list, duplicate registration, token rotation, device token, removal, location")
    func apps() async throws {
        try await ServiceHarness.with { harness in
            let token = try await harness.createApp("com.example.one")
            let duplicate = try await harness.owner.post("/v1/apps", json: #"{"bundleIdentifier": "com.example.one"}"#)
            #expect(duplicate.status == 409)
            let bad = try await harness.owner.post("/v1/apps", json: #"{"bundleIdentifier": "no spaces"}"#)
            #expect(bad.status == 400)
            #expect(bad.json?["error"]?["field"] == .string("bundleIdentifier"))
            let list = try await harness.owner.get("/v1/apps")
            #expect(list.json?.arrayCount == 1)
            #expect(!list.text.contains(token))
            #expect(list.json?[0]?["tokenHash"] == nil)

            let device = try await harness.client(token: token).get("/v1/apps/com.example.one/device-token")
            guard case .string(let deviceToken)? = device.json?["deviceToken"] else {
                throw TestClientError(description: device.text)
            }
            #expect(deviceToken.count == 64)

            let rotated = try await harness.owner.post("/v1/apps/com.example.one/token")
            guard case .string(let newToken)? = rotated.json?["token"] else {
                throw TestClientError(description: rotated.text)
            }
            #expect(try await harness.client(token: token).get("/v1/apps/com.example.one/settings").status == 401)
            #expect(try await harness.client(token: newToken).get("/v1/apps/com.example.one/settings").status == 200)

            let location = try await harness.owner.post(
                "/v1/location", json: #"{"latitude": 52.52, "longitude": 13.40}"#)
            #expect(location.status == 200)
            #expect(
                try await harness.owner.post("/v1/location", json: #"{"latitude": 100, "longitude": 0}"#).status == 400)

            #expect(try await harness.owner.delete("/v1/apps/com.example.one").status == 204)
            #expect(try await harness.owner.get("/v1/apps/com.example.one/settings").status == 404)
        }
    }

    @Test("the owner token file is 0600 and server.json names the URL and pid")
    func files() async throws {
        try await ServiceHarness.with { harness in
            var info = stat()
            #expect(stat(harness.directory + "/owner-token", &info) == 0)
            #expect(info.st_mode & 0o777 == 0o600)
            #expect(stat(harness.directory, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o700)
            let token = try String(contentsOfFile: harness.directory + "/owner-token", encoding: .utf8)
            #expect(token.trimmingCharacters(in: .whitespacesAndNewlines) == harness.service.ownerToken)
            let server = try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: harness.directory + "/server.json")))
            #expect(server["url"] == .string(harness.service.url))
            #expect(server["pid"] == .integer(Int64(getpid())))
        }
    }
}

extension JSONValue {
    var arrayCount: Int? {
        if case .array(let elements) = self { return elements.count }
        return nil
    }
    subscript(index: Int) -> JSONValue? {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return nil
    }
    var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }
    var isString: Bool {
        if case .string = self { return true }
        return false
    }
}
