import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

struct PushCase: Sendable, CustomStringConvertible {
    var name: String
    var status: Int
    var reason: String?
    var method = "POST"
    /// `{device}` is replaced by the app's device token, `{other}` by another app's.
    var path = "/3/device/{device}"
    var token: Token = .app
    var headers: [(String, String)] = [("apns-topic", "com.example.push")]
    var body: String = #"{"aps": {"alert": {"title": "Hi", "body": "There"}}}"#

    enum Token: Sendable { case app, otherApp, owner, none, invalid }
    var description: String { name }
}

let pushCases: [PushCase] = [
    PushCase(name: "ok", status: 200, reason: nil),
    PushCase(name: "owner token", status: 200, reason: nil, token: .owner),
    PushCase(
        name: "all headers", status: 200, reason: nil,
        headers: [
            ("apns-topic", "com.example.push"), ("apns-push-type", "alert"),
            ("apns-id", "123e4567-e89b-12d3-a456-426614174000"),
            ("apns-expiration", "0"), ("apns-priority", "10"), ("apns-collapse-id", "score"),
        ]),
    PushCase(
        name: "silent", status: 200, reason: nil,
        headers: [("apns-topic", "com.example.push"), ("apns-push-type", "background")],
        body: #"{"aps": {"content-available": 1}, "job": 7}"#),
    PushCase(
        name: "voip topic and type", status: 200, reason: nil,
        headers: [("apns-topic", "com.example.push.voip"), ("apns-push-type", "voip"), ("apns-priority", "10")]),
    PushCase(name: "voip topic, no type", status: 200, reason: nil, headers: [("apns-topic", "com.example.push.voip")]),
    PushCase(
        name: "complication", status: 200, reason: nil,
        headers: [("apns-topic", "com.example.push.complication"), ("apns-push-type", "complication")]),
    PushCase(
        name: "live activity", status: 200, reason: nil,
        headers: [("apns-topic", "com.example.push.push-type.liveactivity"), ("apns-push-type", "liveactivity")]),
    PushCase(
        name: "live activity (owner)", status: 200, reason: nil, token: .owner,
        headers: [("apns-topic", "com.example.push.push-type.liveactivity"), ("apns-push-type", "liveactivity")]),
    PushCase(
        name: "background without content-available", status: 200, reason: nil,
        headers: [("apns-topic", "com.example.push"), ("apns-push-type", "background")]),
    PushCase(
        name: "voip type to the bundle id", status: 400, reason: "InvalidPushType",
        headers: [("apns-topic", "com.example.push"), ("apns-push-type", "voip")]),
    PushCase(
        name: "alert to the voip topic", status: 400, reason: "InvalidPushType",
        headers: [("apns-topic", "com.example.push.voip"), ("apns-push-type", "alert")]),
    PushCase(
        name: "live activity to the bundle id", status: 400, reason: "InvalidPushType",
        headers: [("apns-topic", "com.example.push"), ("apns-push-type", "liveactivity")]),
    PushCase(
        name: "other app's voip topic", status: 400, reason: "TopicDisallowed", token: .otherApp,
        headers: [("apns-topic", "com.example.push.voip"), ("apns-push-type", "voip")]),
    PushCase(
        name: "unknown app's voip topic (owner)", status: 400, reason: "BadTopic", token: .owner,
        headers: [("apns-topic", "com.example.none.voip"), ("apns-push-type", "voip")]),
    PushCase(name: "bad path", status: 404, reason: "BadPath", path: "/3/device/"),
    PushCase(name: "bad path extra segment", status: 404, reason: "BadPath", path: "/3/device/{device}/x"),
    PushCase(name: "GET", status: 405, reason: "MethodNotAllowed", method: "GET"),
    PushCase(name: "no token", status: 403, reason: "MissingProviderToken", token: .none),
    PushCase(name: "invalid token", status: 403, reason: "InvalidProviderToken", token: .invalid),
    PushCase(name: "no topic", status: 400, reason: "MissingTopic", headers: []),
    PushCase(
        name: "unknown topic (owner)", status: 400, reason: "BadTopic", token: .owner,
        headers: [("apns-topic", "com.example.none")]),
    PushCase(name: "other app's topic", status: 400, reason: "TopicDisallowed", token: .otherApp),
    PushCase(name: "short device token", status: 400, reason: "BadDeviceToken", path: "/3/device/abc"),
    PushCase(
        name: "unknown device token", status: 400, reason: "BadDeviceToken",
        path: "/3/device/" + String(repeating: "ab", count: 32)),
    PushCase(
        name: "other app's device token", status: 400, reason: "DeviceTokenNotForTopic", path: "/3/device/{other}"),
    PushCase(
        name: "push type", status: 400, reason: "InvalidPushType",
        headers: [("apns-topic", "com.example.push"), ("apns-push-type", "shout")]),
    PushCase(
        name: "apns-id", status: 400, reason: "BadMessageId",
        headers: [("apns-topic", "com.example.push"), ("apns-id", "nope")]),
    PushCase(
        name: "expiration", status: 400, reason: "BadExpirationDate",
        headers: [("apns-topic", "com.example.push"), ("apns-expiration", "soon")]),
    PushCase(
        name: "priority", status: 400, reason: "BadPriority",
        headers: [("apns-topic", "com.example.push"), ("apns-priority", "7")]),
    PushCase(
        name: "background at priority 10", status: 400, reason: "BadPriority",
        headers: [("apns-topic", "com.example.push"), ("apns-push-type", "background"), ("apns-priority", "10")],
        body: #"{"aps": {"content-available": 1}}"#),
    PushCase(
        name: "collapse id", status: 400, reason: "BadCollapseId",
        headers: [("apns-topic", "com.example.push"), ("apns-collapse-id", String(repeating: "c", count: 65))]),
    PushCase(name: "empty payload", status: 400, reason: "PayloadEmpty", body: ""),
    PushCase(name: "malformed payload", status: 400, reason: "PayloadEmpty", body: "{"),
    PushCase(name: "no aps", status: 400, reason: "PayloadEmpty", body: #"{"x": 1}"#),
    PushCase(
        name: "too large", status: 413, reason: "PayloadTooLarge",
        body: #"{"aps": {"alert": "\#(String(repeating: "x", count: 5000))"}}"#),
]

@Suite("APNs endpoint", .testThreads)
struct APNsEndpointTests {
    /// Registers `bundle`, allows it notifications, and returns its client, token and device token.
    static func authorizedApp(_ bundle: String, in harness: ServiceHarness) async throws -> (
        client: TestClient, token: String, device: String
    ) {
        let token = try await harness.createApp(bundle)
        let client = harness.client(token: token)
        _ = try await client.post("/v1/apps/\(bundle)/authorization")
        let answer = try await client.get("/v1/apps/\(bundle)/device-token")
        guard case .string(let device)? = answer.json?["deviceToken"] else {
            throw TestClientError(description: "no device token: \(answer.status) \(answer.text)")
        }
        return (client, token, device)
    }

    @Test("answers as Apple's provider API", arguments: pushCases)
    func push(_ testCase: PushCase) async throws {
        try await ServiceHarness.with { harness in
            let (app, _, device) = try await Self.authorizedApp("com.example.push", in: harness)
            let other = try await harness.createApp("com.example.other")
            guard
                case .string(let otherDevice)? = try await harness.client(token: other).get(
                    "/v1/apps/com.example.other/device-token"
                ).json?["deviceToken"]
            else { throw TestClientError(description: "no device token") }
            let client: TestClient =
                switch testCase.token {
                case .app: app
                case .otherApp: harness.client(token: other)
                case .owner: harness.owner
                case .none: harness.client(token: nil)
                case .invalid: harness.client(token: "not-a-token")
                }
            let path = testCase.path.replacingOccurrences(of: "{device}", with: device).replacingOccurrences(
                of: "{other}", with: otherDevice)
            let response = try await client.request(
                testCase.method, path, headers: testCase.headers, body: Array(testCase.body.utf8))
            #expect(response.status == testCase.status, "\(response.text)")
            #expect(response.reason == testCase.reason)
            if testCase.status == 200 {
                let apnsID = try #require(response.headers["apns-id"])
                #expect(APNsEndpoint.isUUID(apnsID))
                if let sent = testCase.headers.first(where: { $0.0 == "apns-id" }) { #expect(apnsID == sent.1) }
                // As Apple's development server: a UUID of its own for the Push Notifications Console.
                let uniqueID = try #require(response.headers["apns-unique-id"])
                #expect(APNsEndpoint.isUUID(uniqueID) && uniqueID != apnsID)
            } else {
                #expect(response.headers["apns-unique-id"] == nil)
            }
        }
    }

    @Test("a push becomes a delivered notification; the collapse id replaces the earlier one")
    func delivery() async throws {
        try await ServiceHarness.with { harness in
            let (app, _, device) = try await Self.authorizedApp("com.example.push", in: harness)
            for score in ["1:0", "2:0"] {
                let response = try await app.request(
                    "POST", "/3/device/\(device)",
                    headers: [("apns-topic", "com.example.push"), ("apns-collapse-id", "score")],
                    body: Array(
                        #"{"aps": {"alert": {"title": "Score", "body": "\#(score)"}, "thread-id": "match"}, "matchID": 42}"#
                            .utf8))
                #expect(response.status == 200)
            }
            let delivered = try await app.get("/v1/apps/com.example.push/notifications")
            #expect(delivered.json?.arrayCount == 1)
            #expect(delivered.json?[0]?["identifier"] == .string("score"))
            #expect(delivered.json?[0]?["body"] == .string("2:0"))
            #expect(delivered.json?[0]?["threadIdentifier"] == .string("match"))
            #expect(delivered.json?[0]?["userInfo"]?["matchID"] == .integer(42))
            #expect(delivered.json?[0]?["trigger"]?["type"] == .string("push"))
        }
    }

    @Test(
        "each push type is shown or handed to the app as iOS does: an alert shown, a VoIP push to the app, a background push without content-available dropped"
    )
    func pushTypes() async throws {
        try await ServiceHarness.with { harness in
            let (app, token, device) = try await Self.authorizedApp("com.example.push", in: harness)
            let base = "/v1/apps/com.example.push"
            let alert = Array(#"{"aps": {"alert": {"title": "Call", "body": "from Ann"}}}"#.utf8)
            let pushes: [(id: String, topic: String, type: String)] = [
                ("00000000-0000-0000-0000-000000000001", "com.example.push.voip", "voip"),
                ("00000000-0000-0000-0000-000000000002", "com.example.push", "background"),
                ("00000000-0000-0000-0000-000000000003", "com.example.push.push-type.liveactivity", "liveactivity"),
                ("00000000-0000-0000-0000-000000000004", "com.example.push.complication", "complication"),
                ("00000000-0000-0000-0000-000000000005", "com.example.push", "alert"),
            ]
            for push in pushes {
                var headers = [("apns-topic", push.topic), ("apns-push-type", push.type), ("apns-id", push.id)]
                if push.type == "background" { headers.append(("apns-priority", "5")) }
                let response = try await app.request("POST", "/3/device/\(device)", headers: headers, body: alert)
                #expect(response.status == 200, "\(push): \(response.text)")
            }
            let delivered = try await app.get(base + "/notifications")
            #expect(delivered.json?.arrayCount == 2, "\(delivered.text)")
            let events = try await SSEClient.open(
                harness.endpoint, path: base + "/events", token: token, lastEventID: "0")
            defer { events.close() }
            var seen: [String] = []
            while seen.last != "delivered 00000000-0000-0000-0000-000000000005" {
                let event = try await events.next()
                guard case .string(let identifier)? = event.json?["notification"]?["identifier"] else { continue }
                seen.append("\(event.event ?? "") \(identifier)")
                try #require(seen.count <= pushes.count, "\(seen)")
            }
            #expect(
                seen == [
                    "silentPush 00000000-0000-0000-0000-000000000001", "delivered 00000000-0000-0000-0000-000000000003",
                    "silentPush 00000000-0000-0000-0000-000000000004", "delivered 00000000-0000-0000-0000-000000000005",
                ])
        }
    }

    @Test(
        "after unregisterForRemoteNotifications a push is 410 Unregistered with the time in milliseconds; registering again takes pushes with the same token"
    )
    func unregistered() async throws {
        try await ServiceHarness.with { harness in
            let (app, _, device) = try await Self.authorizedApp("com.example.push", in: harness)
            let other = try await Self.authorizedApp("com.example.other", in: harness)
            let base = "/v1/apps/com.example.push/device-token"
            let alert = Array(#"{"aps": {"alert": "Hi"}}"#.utf8)
            func push(_ client: TestClient = app, _ token: String = device, topic: String = "com.example.push")
                async throws -> TestResponse
            {
                try await client.request("POST", "/3/device/\(token)", headers: [("apns-topic", topic)], body: alert)
            }
            #expect(
                try await app.get(base).json == [
                    "deviceToken": .string(device), "registered": true, "unregistered": .null,
                ])
            #expect(try await push().status == 200)

            let gone = try await app.delete(base)
            #expect(
                gone.status == 200 && gone.json?["deviceToken"] == .string(device) && gone.json?["registered"] == false,
                "\(gone.text)")
            guard case .string(let sinceText)? = gone.json?["unregistered"],
                let since = JSONMapping.parseDate(sinceText)
            else {
                throw TestClientError(description: "no unregistration date: \(gone.text)")
            }
            let refused = try await push()
            #expect(refused.status == 410 && refused.reason == "Unregistered", "\(refused.text)")
            #expect(
                refused.json?["timestamp"] == .integer(Int64((since.timeIntervalSince1970 * 1000).rounded())),
                "\(refused.text)")
            // The owner's token, a suffixed topic: the same answer; another app's token still takes pushes.
            #expect(try await push(harness.owner, topic: "com.example.push.voip").status == 410)
            #expect(try await push(other.client, other.device, topic: "com.example.other").status == 200)
            // Unregistering twice keeps the first date; the app's record says it too.
            #expect(try await app.delete(base).json?["unregistered"] == gone.json?["unregistered"])
            #expect(
                try await app.get("/v1/apps/com.example.push").json?["deviceTokenUnregistered"]
                    == gone.json?["unregistered"])

            let back = try await app.post(base)
            #expect(
                back.status == 200
                    && back.json == ["deviceToken": .string(device), "registered": true, "unregistered": .null],
                "\(back.text)")
            #expect(try await push().status == 200)
        }
    }
}
