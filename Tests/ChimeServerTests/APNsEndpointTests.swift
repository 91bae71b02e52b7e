import ChimeCore
import Foundation
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
    PushCase(name: "all headers", status: 200, reason: nil, headers: [
        ("apns-topic", "com.example.push"), ("apns-push-type", "alert"), ("apns-id", "123e4567-e89b-12d3-a456-426614174000"),
        ("apns-expiration", "0"), ("apns-priority", "10"), ("apns-collapse-id", "score")]),
    PushCase(name: "silent", status: 200, reason: nil, headers: [("apns-topic", "com.example.push"), ("apns-push-type", "background")],
             body: #"{"aps": {"content-available": 1}, "job": 7}"#),
    PushCase(name: "bad path", status: 404, reason: "BadPath", path: "/3/device/"),
    PushCase(name: "bad path extra segment", status: 404, reason: "BadPath", path: "/3/device/{device}/x"),
    PushCase(name: "GET", status: 405, reason: "MethodNotAllowed", method: "GET"),
    PushCase(name: "no token", status: 403, reason: "MissingProviderToken", token: .none),
    PushCase(name: "invalid token", status: 403, reason: "InvalidProviderToken", token: .invalid),
    PushCase(name: "no topic", status: 400, reason: "MissingTopic", headers: []),
    PushCase(name: "unknown topic (owner)", status: 400, reason: "BadTopic", token: .owner, headers: [("apns-topic", "com.example.none")]),
    PushCase(name: "other app's topic", status: 400, reason: "TopicDisallowed", token: .otherApp),
    PushCase(name: "short device token", status: 400, reason: "BadDeviceToken", path: "/3/device/abc"),
    PushCase(name: "unknown device token", status: 400, reason: "BadDeviceToken", path: "/3/device/" + String(repeating: "ab", count: 32)),
    PushCase(name: "other app's device token", status: 400, reason: "DeviceTokenNotForTopic", path: "/3/device/{other}"),
    PushCase(name: "push type", status: 400, reason: "InvalidPushType", headers: [("apns-topic", "com.example.push"), ("apns-push-type", "shout")]),
    PushCase(name: "apns-id", status: 400, reason: "BadMessageId", headers: [("apns-topic", "com.example.push"), ("apns-id", "nope")]),
    PushCase(name: "expiration", status: 400, reason: "BadExpirationDate", headers: [("apns-topic", "com.example.push"), ("apns-expiration", "soon")]),
    PushCase(name: "priority", status: 400, reason: "BadPriority", headers: [("apns-topic", "com.example.push"), ("apns-priority", "7")]),
    PushCase(name: "background at priority 10", status: 400, reason: "BadPriority",
             headers: [("apns-topic", "com.example.push"), ("apns-push-type", "background"), ("apns-priority", "10")],
             body: #"{"aps": {"content-available": 1}}"#),
    PushCase(name: "collapse id", status: 400, reason: "BadCollapseId",
             headers: [("apns-topic", "com.example.push"), ("apns-collapse-id", String(repeating: "c", count: 65))]),
    PushCase(name: "empty payload", status: 400, reason: "PayloadEmpty", body: ""),
    PushCase(name: "malformed payload", status: 400, reason: "PayloadEmpty", body: "{"),
    PushCase(name: "no aps", status: 400, reason: "PayloadEmpty", body: #"{"x": 1}"#),
    PushCase(name: "too large", status: 413, reason: "PayloadTooLarge",
             body: #"{"aps": {"alert": "\#(String(repeating: "x", count: 5000))"}}"#),
]

@Suite("APNs endpoint")
struct APNsEndpointTests {
    @Test("answers as Apple's provider API", arguments: pushCases)
    func push(_ testCase: PushCase) async throws {
        try await ServiceHarness.with { harness in
            let token = try await harness.createApp("com.example.push")
            let other = try await harness.createApp("com.example.other")
            let app = harness.client(token: token)
            _ = try await app.post("/v1/apps/com.example.push/authorization")
            guard case .string(let device)? = try await app.get("/v1/apps/com.example.push/device-token").json?["deviceToken"],
                  case .string(let otherDevice)? = try await harness.client(token: other).get("/v1/apps/com.example.other/device-token").json?["deviceToken"]
            else { throw TestClientError(description: "no device token") }
            let client: TestClient = switch testCase.token {
            case .app: app
            case .otherApp: harness.client(token: other)
            case .owner: harness.owner
            case .none: harness.client(token: nil)
            case .invalid: harness.client(token: "not-a-token")
            }
            let path = testCase.path.replacingOccurrences(of: "{device}", with: device).replacingOccurrences(of: "{other}", with: otherDevice)
            let response = try await client.request(testCase.method, path, headers: testCase.headers, body: Array(testCase.body.utf8))
            #expect(response.status == testCase.status, "\(response.text)")
            #expect(response.reason == testCase.reason)
            if testCase.status == 200 {
                let apnsID = try #require(response.headers["apns-id"])
                #expect(APNsEndpoint.isUUID(apnsID))
                if let sent = testCase.headers.first(where: { $0.0 == "apns-id" }) { #expect(apnsID == sent.1) }
            }
        }
    }

    @Test("a push becomes a delivered notification; the collapse id replaces the earlier one")
    func delivery() async throws {
        try await ServiceHarness.with { harness in
            let token = try await harness.createApp("com.example.push")
            let app = harness.client(token: token)
            _ = try await app.post("/v1/apps/com.example.push/authorization")
            let answer = try await app.get("/v1/apps/com.example.push/device-token")
            guard case .string(let device)? = answer.json?["deviceToken"] else {
                Issue.record("no device token: \(answer.status) \(answer.text)")
                return
            }
            for score in ["1:0", "2:0"] {
                let response = try await app.request("POST", "/3/device/\(device)",
                                                     headers: [("apns-topic", "com.example.push"), ("apns-collapse-id", "score")],
                                                     body: Array(#"{"aps": {"alert": {"title": "Score", "body": "\#(score)"}, "thread-id": "match"}, "matchID": 42}"#.utf8))
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
}
