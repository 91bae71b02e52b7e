import ChimeCore
import ChimeCrypto
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

#if canImport(Glibc)
    import Glibc
#endif

/// The Web Push routes over HTTP: the VAPID key made at first start (0600, the same after a
/// restart), subscriptions from `PushSubscription.toJSON()` with errors naming their fields, the
/// devices' apps and names, removal; who may call them.
@Suite("Web Push key and subscriptions, over HTTP", .testThreads, .timeLimit(.minutes(2)))
struct WebPushSubscriptionTests {
    /// A subscription as a browser's `PushSubscription.toJSON()` gives it, for a fresh key pair.
    static func browserSubscription(
        endpoint: String = "https://fcm.googleapis.com/fcm/send/dXNlcjE:APA91b", extra: String = ""
    ) -> String {
        let p256dh = Base64URL.encode(P256PrivateKey().publicKey.rawRepresentation)
        let auth = Base64URL.encode(SecureRandom.bytes(16))
        return
            #"{"endpoint": "\#(endpoint)", "expirationTime": null, "keys": {"p256dh": "\#(p256dh)", "auth": "\#(auth)"}\#(extra)}"#
    }

    @Test(
        "the VAPID key is made at first start, kept 0600 in the data directory, served as a P-256 point, and the same after a restart"
    )
    func keyKept() async throws {
        var first = ""
        let directory = ServiceHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for round in 0..<2 {
            var configuration = ChimeService.Configuration(
                dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0), printsBanner: false)
            configuration.desktop = .off
            let service = try await RunningService.start(configuration: configuration, logger: .silent)
            let client = TestClient(port: service.port, token: service.ownerToken)
            let response = try await client.request(.webPushKey)
            await service.stop()
            #expect(response.status == 200)
            guard case .string(let key)? = response.json?["publicKey"] else {
                Issue.record("no publicKey in \(response.text)")
                return
            }
            #expect(try P256PublicKey(rawRepresentation: try Base64URL.decode(key)).rawRepresentation.count == 65)
            var info = stat()
            #expect(stat(WebPushKey.path(dataDirectory: directory), &info) == 0)
            #expect(info.st_mode & 0o777 == 0o600)
            if round == 0 { first = key } else { #expect(key == first) }
        }
        // A key file others can read is refused at start, naming it.
        chmod(WebPushKey.path(dataDirectory: directory), 0o644)
        let error = await #expect(throws: ServerError.self) {
            _ = try await RunningService.start(
                configuration: ChimeService.Configuration(
                    dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0),
                    printsBanner: false), logger: .silent)
        }
        #expect(error?.message.contains("web-push-key.pem") == true)
    }

    @Test(
        "subscribe (201), list without keys, the same endpoint again updates (200), choose apps, rename, remove (then 404)"
    )
    func lifecycle() async throws {
        try await ServiceHarness.with { harness in
            _ = try await harness.createApp("com.example.alarm")
            let owner = harness.owner
            let created = try await owner.request(
                .createWebPushSubscription, json: Self.browserSubscription(extra: #", "name": "Phone""#),
                headers: [("User-Agent", "Mozilla/5.0 (Android 14; Mobile) Firefox/133.0")])
            #expect(created.status == 201, "\(created.text)")
            guard case .string(let id)? = created.json?["id"] else {
                Issue.record("no id in \(created.text)")
                return
            }
            #expect(created.json?["name"] == .string("Phone"))
            #expect(created.json?["apps"] == .null)
            #expect(created.json?["pushService"] == .string("https://fcm.googleapis.com"))
            #expect(created.json?["userAgent"] == .string("Mozilla/5.0 (Android 14; Mobile) Firefox/133.0"))
            #expect(created.json?["keys"] == nil && created.json?["p256dh"] == nil)
            // The browser registers again (new keys): the same subscription, its name kept.
            let again = try await owner.request(.createWebPushSubscription, json: Self.browserSubscription())
            #expect(again.status == 200)
            #expect(again.json?["id"] == .string(id))
            #expect(again.json?["name"] == .string("Phone"))
            let chosen = try await owner.request(
                .updateWebPushSubscription, ["id": id],
                json: #"{"apps": ["com.example.alarm"], "name": "Anna’s phone"}"#)
            #expect(chosen.status == 200, "\(chosen.text)")
            #expect(chosen.json?["apps"] == .array([.string("com.example.alarm")]))
            let unknownApp = try await owner.request(
                .updateWebPushSubscription, ["id": id], json: #"{"apps": ["com.example.missing"]}"#)
            #expect(unknownApp.status == 404)
            #expect(unknownApp.json?["error"]?["field"] == .string("apps[0]"))
            let listed = try await owner.request(.listWebPushSubscriptions)
            #expect(listed.json?.arrayCount == 1)
            #expect(listed.json?[0]?["name"] == .string("Anna’s phone"))
            let stored = try await harness.service.engine.webPushSubscriptions()
            #expect(stored.count == 1 && stored[0].apps == ["com.example.alarm"])
            #expect(
                try await owner.request(.updateWebPushSubscription, ["id": id], json: #"{"apps": null}"#).json?["apps"]
                    == .null)
            #expect(try await owner.request(.removeWebPushSubscription, ["id": id]).status == 200)
            #expect(try await owner.request(.removeWebPushSubscription, ["id": id]).status == 404)
            #expect(
                try await owner.request(.updateWebPushSubscription, ["id": id], json: #"{"name": "x"}"#).status == 404)
            #expect(try await owner.request(.listWebPushSubscriptions).json?.arrayCount == 0)
        }
    }

    @Test("an app's token and no token are refused on every Web Push route")
    func ownerOnly() async throws {
        try await ServiceHarness.with { harness in
            let token = try await harness.createApp("com.example.alarm")
            for client in [harness.client(token: token), harness.client(token: nil)] {
                #expect([401, 403].contains(try await client.request(.webPushKey).status))
                #expect([401, 403].contains(try await client.request(.listWebPushSubscriptions).status))
                #expect(
                    [401, 403].contains(
                        try await client.request(.createWebPushSubscription, json: Self.browserSubscription()).status))
            }
            #expect(try await harness.service.engine.webPushSubscriptions().isEmpty)
        }
    }

    @Test(
        "bad subscriptions get 400 naming the field; nothing is stored",
        arguments: [
            (#"{"keys": {"p256dh": "AA", "auth": "AA"}}"#, "endpoint"),
            (#"{"endpoint": "https://evil.example.org/push", "keys": {"p256dh": "BA", "auth": "AA"}}"#, "endpoint"),
            (#"{"endpoint": "http://127.0.0.1:8080/push", "keys": {"p256dh": "BA", "auth": "AA"}}"#, "endpoint"),
            (#"{"endpoint": "https://192.168.1.5/push", "keys": {"p256dh": "BA", "auth": "AA"}}"#, "endpoint"),
            (#"{"endpoint": "https://user@fcm.googleapis.com/x", "keys": {"p256dh": "BA", "auth": "AA"}}"#, "endpoint"),
            (#"{"endpoint": "https://fcm.googleapis.com/x"}"#, "keys"),
            (
                #"{"endpoint": "https://fcm.googleapis.com/x", "keys": {"p256dh": "BAAA", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}}"#,
                "keys.p256dh"
            ),
            (
                #"{"endpoint": "https://fcm.googleapis.com/x", "keys": {"p256dh": "not base64!", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}}"#,
                "keys.p256dh"
            ),
            (
                #"{"endpoint": "https://fcm.googleapis.com/x", "keys": {"p256dh": 7, "auth": "AAAAAAAAAAAAAAAAAAAAAA"}}"#,
                "keys.p256dh"
            ),
            (
                #"{"endpoint": "https://fcm.googleapis.com/x", "keys": {"p256dh": "\#(String(repeating: "A", count: 87))", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}}"#,
                "keys.p256dh"
            ),
            (
                #"{"endpoint": "https://fcm.googleapis.com/x", "keys": {"p256dh": "BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "auth": "AAAA"}}"#,
                "keys.auth"
            ),
            // 04 || 0 || 0: the form of a point, not a point on P-256 (fuzz-web-push-keys; before, accepted and every push failed).
            (
                #"{"endpoint": "https://fcm.googleapis.com/x", "keys": {"p256dh": "BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}}"#,
                "keys.p256dh"
            ),
            (
                #"{"endpoint": "https://fcm.googleapis.com/x", "keys": {"p256dh": "BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "auth": "AAAAAAAAAAAAAAAAAAAAAA", "extra": 1}}"#,
                "keys.extra"
            ),
            (
                #"{"endpoint": "https://fcm.googleapis.com/x", "keys": {"p256dh": "BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}, "apps": ["not a bundle id"]}"#,
                "apps[0]"
            ),
            (
                #"{"endpoint": "https://fcm.googleapis.com/x", "keys": {"p256dh": "BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}, "expirationTime": "soon"}"#,
                "expirationTime"
            ),
            (
                #"{"endpoint": "https://fcm.googleapis.com/x", "keys": {"p256dh": "BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}, "endpointt": 1}"#,
                "endpointt"
            ),
        ])
    func badSubscriptions(body: String, field: String) async throws {
        try await ServiceHarness.with { harness in
            let response = try await harness.owner.request(.createWebPushSubscription, json: body)
            #expect(response.status == 400, "\(response.text)")
            #expect(response.json?["error"]?["field"] == .string(field), "\(response.text)")
            #expect(try await harness.service.engine.webPushSubscriptions().isEmpty)
        }
    }
}
