import ChimeCore
import ChimeCrypto
import ChimeTesting
import CryptoInterop
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

/// APNs provider tokens (issue 22): keys made by Python's cryptography, tokens signed by PyJWT, and
/// pushes sent by Python's http.client over HTTP/1.1 to a real service, answered with Apple's reasons.
@Suite("APNs provider tokens", .testThreads)
struct ProviderTokenTests {
    /// A fixed start, so a token's iat is the service's "now" to the second; the manual clock moves.
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let body = #"{"aps": {"alert": {"title": "From the provider", "body": "signed with a .p8"}}}"#

    struct Setup {
        let harness: ServiceHarness
        let clock: ManualClock
        let pem: String
        let device: String

        var now: Int { Int(clock.now.timeIntervalSince1970) }

        func token(kid: String = "KEY1234567", iss: String = "TEAM123456", iat: Int? = nil, pem: String? = nil)
            async throws -> String
        {
            let signed = try await Interop.run("sign-jwt", pem ?? self.pem, kid, iss, String(iat ?? now))
            return try #require(signed["token"]?.text)
        }

        /// A push sent by http.client with `authorization: bearer <token>`.
        func push(_ token: String, topic: String = "com.example.provider", device: String? = nil) async throws -> (
            status: Int, reason: String?
        ) {
            let answer = try await Interop.run(
                "push", String(harness.service.port), "/3/device/\(device ?? self.device)", topic, token,
                ProviderTokenTests.body)
            guard case .integer(let status)? = answer["status"] else {
                throw Interop.InteropFailure(what: "push", output: "\(answer)")
            }
            let reason = answer["body"]?.text.flatMap { try? JSONValue.parse($0) }?["reason"]?.text
            return (Int(status), reason)
        }

        /// A push on `connection`, an HTTP/1.1 keep-alive connection the test holds open.
        func push(_ token: String, on connection: RawSocket) async throws -> (status: Int, reason: String?) {
            let body = Array(ProviderTokenTests.body.utf8)
            let head =
                "POST /3/device/\(device) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: bearer \(token)\r\napns-topic: com.example.provider\r\n"
                + "apns-push-type: alert\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n"
            let answer = try await TestClient.offPool {
                try connection.send(Array(head.utf8) + body)
                return try connection.receiveResponse()
            }
            return (answer.status, answer.json?["reason"]?.text)
        }
    }

    /// A service with `com.example.provider` holding key KEY1234567 of team TEAM123456, registered
    /// through `PATCH /v1/apps/{app}` with the .p8 text cryptography made.
    static func with(_ body: (Setup) async throws -> Void) async throws {
        let clock = ManualClock(now: start)
        try await ServiceHarness.with(clock: clock) { harness in
            let appToken = try await harness.createApp("com.example.provider")
            // allowed (autoAllow)
            _ = try await harness.client(token: appToken).post("/v1/apps/com.example.provider/authorization")
            let made = try await Interop.run("make-key")
            let pem = try #require(made["pem"]?.text)
            let registered = try await harness.owner.request(
                .updateApp, ["app": "com.example.provider"],
                json: JSONValue.object([
                    "apns": ["teamId": "TEAM123456", "keyId": "KEY1234567", "key": .string(pem)]
                ]).serialized())
            #expect(registered.status == 200, "\(registered.text)")
            #expect(registered.json?["apns"]?["publicKey"] == made["point"])
            #expect(registered.json?["apns"]?["keyId"] == .string("KEY1234567"))
            // The private key is not kept, nor shown.
            let shown = try await harness.owner.get("/v1/apps/com.example.provider").text
            #expect(!shown.contains("PRIVATE") && !shown.contains(String(pem.split(separator: "\n")[1].prefix(20))))
            let device = try #require(
                try await harness.client(token: appToken).get("/v1/apps/com.example.provider/device-token").json?[
                    "deviceToken"]?.text)
            try await body(Setup(harness: harness, clock: clock, pem: pem, device: device))
        }
    }

    @Test("a token PyJWT signs with a key cryptography made is accepted over HTTP/1.1, and the push is delivered")
    func accepted() async throws {
        try await Self.with { setup in
            let token = try await setup.token()
            let answer = try await setup.push(token)
            #expect(answer.status == 200, "\(answer)")
            let delivered = try await setup.harness.owner.get("/v1/apps/com.example.provider/notifications").text
            #expect(delivered.contains("From the provider"))
            // The same token again, for as long as it is valid (59 minutes on).
            setup.clock.advance(by: 59 * 60)
            #expect(try await setup.push(token).status == 200)
            setup.clock.advance(by: 2 * 60)
            #expect(try await setup.push(token) == (403, "ExpiredProviderToken"))
        }
    }

    @Test(
        "every refusal with Apple's reason: expired, bad signature, unknown kid, wrong iss, malformed, unsigned, missing"
    )
    func refusals() async throws {
        try await Self.with { setup in
            let other = try #require(try await Interop.run("make-key")["pem"]?.text)
            let unsigned =
                Base64URL.encode(Array(#"{"alg":"none","kid":"KEY1234567"}"#.utf8)) + "."
                + Base64URL.encode(Array(#"{"iss":"TEAM123456","iat":\#(setup.now)}"#.utf8)) + "."
            let cases: [(String, String, Int, String)] = [
                ("expired", try await setup.token(iat: setup.now - 3_601), 403, "ExpiredProviderToken"),
                ("signed with another key", try await setup.token(pem: other), 403, "InvalidProviderToken"),
                ("unknown kid", try await setup.token(kid: "NOSUCHKEY1"), 403, "InvalidProviderToken"),
                ("wrong iss", try await setup.token(iss: "OTHERTEAM1"), 403, "InvalidProviderToken"),
                (
                    "no iat",
                    "eyJhbGciOiJFUzI1NiIsImtpZCI6IktFWTEyMzQ1NjcifQ."
                        + Base64URL.encode(Array(#"{"iss":"TEAM123456"}"#.utf8)) + ".AAAA",
                    403, "InvalidProviderToken"
                ),
                ("malformed", "not.a.jwt", 403, "InvalidProviderToken"),
                ("unsigned (alg none)", unsigned, 403, "InvalidProviderToken"),
                ("in the future", try await setup.token(iat: setup.now + 3_600), 403, "InvalidProviderToken"),
            ]
            for (name, token, status, reason) in cases {
                let answer = try await setup.push(token)
                #expect(answer.status == status && answer.reason == reason, "\(name): \(answer)")
            }
            // No authorization header at all.
            let missing = try await setup.harness.client(token: nil).request(
                "POST", "/3/device/\(setup.device)",
                headers: [("apns-topic", "com.example.provider")], body: Array(Self.body.utf8))
            #expect(missing.status == 403 && missing.reason == "MissingProviderToken", "\(missing.text)")
            // None of these counted as a token update: a good token is accepted now.
            #expect(try await setup.push(try await setup.token()).status == 200)
        }
    }

    @Test(
        "as Apple counts it: a connection changing its token for a key within 20 minutes is 429 TooManyProviderTokenUpdates; new connections with new tokens are taken"
    )
    func tooManyUpdates() async throws {
        try await Self.with { setup in
            let port = setup.harness.service.port
            let kept = try await TestClient.offPool { try RawSocket(port: port, timeout: 60) }
            defer { kept.close() }
            let first = try await setup.token()
            #expect(try await setup.push(first, on: kept).status == 200)
            let second = try await setup.token(iat: setup.now - 1)
            #expect(try await setup.push(second, on: kept) == (429, "TooManyProviderTokenUpdates"))
            #expect(try await setup.push(first, on: kept).status == 200)  // the first keeps working on it
            // Each new connection (http.client, one per push) with a token of its own, within the 20 minutes: taken.
            #expect(try await setup.push(second).status == 200)
            #expect(try await setup.push(try await setup.token(iat: setup.now - 2)).status == 200)
            // Another kept connection starts with its own token, then may not change it either.
            let other = try await TestClient.offPool { try RawSocket(port: port, timeout: 60) }
            defer { other.close() }
            #expect(try await setup.push(second, on: other).status == 200)
            #expect(try await setup.push(first, on: other) == (429, "TooManyProviderTokenUpdates"))
            setup.clock.advance(by: 20 * 60)
            let third = try await setup.token()
            #expect(try await setup.push(third, on: kept).status == 200)
            #expect(try await setup.push(first, on: kept) == (429, "TooManyProviderTokenUpdates"))
            #expect(try await setup.push(first, on: other).status == 200)  // its 20 minutes are over too
        }
    }

    @Test("ProviderTokenBook: one connection's token per key, a change at most every 20 minutes, keys apart")
    func book() throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let key = APNsProvider.Key(id: "KEY1234567", publicKey: Array(repeating: 4, count: 65))
        let another = APNsProvider.Key(id: "KEY7654321", publicKey: Array(repeating: 5, count: 65))
        var book = ProviderTokenBook()
        #expect(book.admit("a", key: key, now: start) == nil)
        #expect(book.admit("b", key: key, now: start + 60).map { Int($0.rounded()) } == 19 * 60)
        #expect(book.admit("a", key: key, now: start + 60) == nil)
        #expect(book.admit("b", key: another, now: start + 60) == nil)
        #expect(book.admit("b", key: key, now: start + 20 * 60) == nil)
        #expect(book.admit("a", key: key, now: start + 21 * 60).map { Int($0.rounded()) } == 19 * 60)
        #expect(book.entries.count == 2)
    }

    @Test(
        "one team key pushes to every app of its team, not to others; the app's own token keeps working; an unknown topic is answered only after the token"
    )
    func teamKey() async throws {
        try await Self.with { setup in
            let harness = setup.harness
            let teammateToken = try await harness.createApp("com.example.teammate")
            _ = try await harness.createApp("com.example.stranger")
            let joined = try await harness.owner.request(
                .updateApp, ["app": "com.example.teammate"], json: #"{"apns": {"teamId": "TEAM123456"}}"#)
            #expect(joined.status == 200, "\(joined.text)")
            let teammateDevice = try #require(
                try await harness.client(token: teammateToken).get("/v1/apps/com.example.teammate/device-token")
                    .json?["deviceToken"]?.text)
            let token = try await setup.token()
            #expect(try await setup.push(token, topic: "com.example.teammate", device: teammateDevice).status == 200)
            #expect(try await setup.push(token, topic: "com.example.stranger") == (400, "TopicDisallowed"))
            #expect(try await setup.push(token, topic: "com.example.nobody") == (400, "BadTopic"))
            #expect(try await setup.push("not.a.jwt", topic: "com.example.nobody") == (403, "InvalidProviderToken"))
            // The teammate's own Chime token, as before.
            let own = try await harness.client(token: teammateToken).request(
                "POST", "/3/device/\(teammateDevice)",
                headers: [("apns-topic", "com.example.teammate")], body: Array(Self.body.utf8))
            #expect(own.status == 200, "\(own.text)")
            // Leaving the team (apns: null) ends it.
            _ = try await harness.owner.request(.updateApp, ["app": "com.example.teammate"], json: #"{"apns": null}"#)
            #expect(
                try await setup.push(token, topic: "com.example.teammate", device: teammateDevice) == (
                    400, "TopicDisallowed"
                ))
        }
    }

    @Test(
        "a team key on another app and the device tokens are found through the token index, which follows every change at once"
    )
    func keyAndDeviceIndex() async throws {
        try await Self.with { setup in
            let harness = setup.harness
            let teammateToken = try await harness.createApp("com.example.teammate")
            _ = try await harness.owner.request(
                .updateApp, ["app": "com.example.teammate"], json: #"{"apns": {"teamId": "TEAM123456"}}"#)
            let teammateDevice = try #require(
                try await harness.client(token: teammateToken).get("/v1/apps/com.example.teammate/device-token")
                    .json?["deviceToken"]?.text)
            let first = try await setup.token()
            #expect(try await setup.push(first, topic: "com.example.teammate", device: teammateDevice).status == 200)
            // Another app's device token, and one no app has.
            #expect(try await setup.push(first, topic: "com.example.teammate") == (400, "DeviceTokenNotForTopic"))
            #expect(
                try await setup.push(first, topic: "com.example.teammate", device: String(repeating: "ab", count: 32))
                    == (400, "BadDeviceToken"))

            // The key replaced on the app that holds it: the old key's tokens are refused for the
            // teammate from the moment the change is answered, the new key's taken.
            let made = try await Interop.run("make-key")
            let pem = try #require(made["pem"]?.text)
            let replaced = try await harness.owner.request(
                .updateApp, ["app": "com.example.provider"],
                json: JSONValue.object([
                    "apns": ["teamId": "TEAM123456", "keyId": "KEY1234567", "key": .string(pem)]
                ]).serialized())
            #expect(replaced.status == 200, "\(replaced.text)")
            #expect(
                try await setup.push(first, topic: "com.example.teammate", device: teammateDevice) == (
                    403, "InvalidProviderToken"
                ))
            let second = try await setup.token(pem: pem)
            #expect(try await setup.push(second, topic: "com.example.teammate", device: teammateDevice).status == 200)
            // A key id registered on no app.
            #expect(
                try await setup.push(
                    try await setup.token(kid: "KEY7654321", pem: pem), topic: "com.example.teammate",
                    device: teammateDevice)
                    == (403, "InvalidProviderToken"))

            // The app holding the key removed: its key and its device token go with it.
            let removed = try await harness.owner.request(.removeApp, ["app": "com.example.provider"])
            #expect(removed.status == 204, "\(removed.text)")
            #expect(
                try await setup.push(second, topic: "com.example.teammate", device: teammateDevice) == (
                    403, "InvalidProviderToken"
                ))
            let own = try await harness.client(token: teammateToken).request(
                "POST", "/3/device/\(setup.device)",
                headers: [("apns-topic", "com.example.teammate")], body: Array(Self.body.utf8))
            #expect(own.status == 400 && own.json?["reason"]?.text == "BadDeviceToken", "\(own.text)")
        }
    }

    @Test("registration refuses what is not a team, a key id or a P-256 key, naming the field")
    func badRegistrations() async throws {
        try await Self.with { setup in
            let cases: [(String, String)] = [
                (#"{"apns": {"keyId": "K1", "key": "x"}}"#, "apns.teamId"),
                (#"{"apns": {"teamId": "TEAM 1"}}"#, "apns.teamId"),
                (#"{"apns": {"teamId": "T", "keyId": "K1"}}"#, "apns.key"),
                (#"{"apns": {"teamId": "T", "key": "x"}}"#, "apns.keyId"),
                (
                    #"{"apns": {"teamId": "T", "keyId": "K1", "key": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"}}"#,
                    "apns.key"
                ),
                (#"{"apns": {"teamId": "T", "extra": 1}}"#, "apns.extra"),
                (#"{}"#, "launch"),
            ]
            for (json, field) in cases {
                let response = try await setup.harness.owner.request(
                    .updateApp, ["app": "com.example.provider"], json: json)
                #expect(
                    response.status == 400 && response.json?["error"]?["field"] == .string(field),
                    "\(json): \(response.text)")
            }
            // A public key (SubjectPublicKeyInfo PEM) registers as well as the .p8.
            let key = P256PrivateKey()
            let response = try await setup.harness.owner.request(
                .updateApp, ["app": "com.example.provider"],
                json: JSONValue.object([
                    "apns": ["teamId": "T", "keyId": "K2", "key": .string(key.publicKey.pemRepresentation)]
                ]).serialized())
            #expect(response.json?["apns"]?["publicKey"] == .string(Base64URL.encode(key.publicKey.rawRepresentation)))
            // Only the owner registers keys.
            let app = try await setup.harness.client(token: setup.harness.createApp("com.example.self")).request(
                .updateApp, ["app": "com.example.self"], json: #"{"apns": {"teamId": "T"}}"#)
            #expect(app.status == 403)
        }
    }
}
