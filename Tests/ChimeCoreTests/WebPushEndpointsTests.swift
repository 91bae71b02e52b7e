import ChimeCore
import Foundation
import TestThreads
import Testing

/// The SSRF guard of Web Push: which endpoints Chime sends to, and which addresses count as public.
@Suite("Web Push endpoints: the public push services, listed prefixes, private addresses", .testThreads)
struct WebPushEndpointsTests {
    @Test(
        "the public services are accepted by default; anything else is refused",
        arguments: [
            ("https://fcm.googleapis.com/fcm/send/abc:APA91b", true),
            ("https://updates.push.services.mozilla.com/wpush/v2/gAAAAA", true),
            ("https://web.push.apple.com/QGuQyavXutnMjk", true),
            ("https://wns2-par02p.notify.windows.com/w/?token=BQYAAAD", true),
            ("https://notify.windows.com/w/", false),  // the wildcard takes subdomains only
            ("https://fcm.googleapis.com.evil.example/x", false),
            ("https://evilfcm.googleapis.com/x", false),
            ("http://fcm.googleapis.com/fcm/send/x", false),  // not https
            ("https://fcm.googleapis.com:8443/fcm/send/x", false),  // another port
            ("https://fcm.googleapis.com", false),  // no path
            ("https://user:pw@fcm.googleapis.com/x", false),
            ("https://fcm.googleapis.com/x y", false),
            ("https://127.0.0.1/x", false), ("https://[::1]/x", false), ("https://10.0.0.8/x", false),
            ("ftp://fcm.googleapis.com/x", false), ("", false),
        ])
    func defaults(endpoint: String, allowed: Bool) {
        #expect((WebPushEndpoints.publicServicesOnly.allowance(endpoint) != nil) == allowed)
    }

    @Test("listed prefixes add push services, loopback ones too; an origin alone does not match a longer host")
    func listed() throws {
        let endpoints = try WebPushEndpoints(listed: ["http://127.0.0.1:8765", "https://up.example.org/push/"])
        #expect(endpoints.listed == ["http://127.0.0.1:8765/", "https://up.example.org/push/"])
        #expect(endpoints.allowance("http://127.0.0.1:8765/sub/1") == .listed("http://127.0.0.1:8765/"))
        #expect(endpoints.allowance("http://127.0.0.1:87650/sub/1") == nil)
        #expect(endpoints.allowance("https://up.example.org/push/abc") == .listed("https://up.example.org/push/"))
        #expect(endpoints.allowance("https://up.example.org/other/abc") == nil)
        #expect(endpoints.allowance("https://fcm.googleapis.com/fcm/send/x") == .publicService)
        let error = #expect(throws: ChimeError.self) {
            try endpoints.check("https://evil.example/x", field: "endpoint")
        }
        #expect(error?.field == "endpoint")
        #expect(error?.message.contains("--web-push-endpoints") == true)
        #expect(error?.message.contains("https://up.example.org/push/") == true)
        #expect(throws: ChimeError.self) { try WebPushEndpoints(listed: ["up.example.org"]) }
        #expect(throws: ChimeError.self) { try WebPushEndpoints(listed: ["https://"]) }
    }

    @Test(
        "private, loopback, link-local and reserved addresses are not public; others are",
        arguments: [
            ([127, 0, 0, 1], false), ([10, 1, 2, 3], false), ([172, 16, 0, 1], false), ([172, 31, 255, 255], false),
            ([172, 32, 0, 1], true),
            ([192, 168, 0, 1], false), ([169, 254, 169, 254], false), ([100, 64, 0, 1], false), ([0, 0, 0, 0], false),
            ([224, 0, 0, 1], false),
            ([255, 255, 255, 255], false), ([8, 8, 8, 8], true), ([142, 250, 74, 78], true),
            ([UInt8](repeating: 0, count: 15) + [1], false),  // ::1
            ([0xFE, 0x80] + [UInt8](repeating: 0, count: 13) + [1], false),  // link-local
            ([0xFD, 0x12] + [UInt8](repeating: 0, count: 14), false),  // unique local
            ([UInt8](repeating: 0, count: 10) + [0xFF, 0xFF, 10, 0, 0, 1], false),  // ::ffff:10.0.0.1
            ([UInt8](repeating: 0, count: 10) + [0xFF, 0xFF, 8, 8, 8, 8], true),  // ::ffff:8.8.8.8
            ([0x2A, 0x00, 0x14, 0x50] + [UInt8](repeating: 0, count: 11) + [1], true),  // a public IPv6 address
        ] as [([UInt8], Bool)])
    func publicAddresses(address: [UInt8], isPublic: Bool) {
        #expect(WebPushEndpoints.isPublic(address) == isPublic)
    }

    @Test("a registration reads PushSubscription.toJSON() with name and apps; base64url with padding is read too")
    func registration() throws {
        let p256dh = [UInt8(4)] + (1...64).map { UInt8($0) }
        let auth = (1...16).map { UInt8($0) }
        let body =
            #"{"endpoint": "https://fcm.googleapis.com/fcm/send/x", "expirationTime": 1800000000000, "keys": {"p256dh": "\#(Base64URL.encode(p256dh))", "auth": "\#(Base64URL.encode(auth))=="}, "name": "Tablet", "apps": ["com.a", "com.a", "com.b"]}"#
        let registration = try WebPushRegistration.decode(try JSONValue.parse(body), endpoints: .publicServicesOnly)
        #expect(registration.p256dh == p256dh)
        #expect(registration.auth == auth)
        #expect(registration.name == "Tablet")
        #expect(registration.apps == .some(["com.a", "com.b"]))
        #expect(registration.expires == Date(timeIntervalSince1970: 1_800_000_000))
        let plain = try WebPushRegistration.decode(
            try JSONValue.parse(
                #"{"endpoint": "https://fcm.googleapis.com/fcm/send/x", "keys": {"p256dh": "\#(Base64URL.encode(p256dh))", "auth": "\#(Base64URL.encode(auth))"}}"#
            ), endpoints: .publicServicesOnly)
        #expect(plain.apps == nil && plain.name == nil)
        let everyApp = try WebPushRegistration.decode(
            try JSONValue.parse(
                #"{"endpoint": "https://fcm.googleapis.com/fcm/send/x", "keys": {"p256dh": "\#(Base64URL.encode(p256dh))", "auth": "\#(Base64URL.encode(auth))"}, "apps": null}"#
            ), endpoints: .publicServicesOnly)
        #expect(everyApp.apps == .some(nil))
    }

    /// One random id in 64 started with `-`, which `chime devices` took for an option (DevicesCommandTests failed so).
    @Test("subscription ids are 22 base64url characters and never start with a dash")
    func subscriptionIDs() {
        let ids = (0..<2000).map { _ in WebPushSubscription.makeID() }
        #expect(ids.allSatisfy { $0.count == 22 && !$0.hasPrefix("-") && (try? Base64URL.decode($0))?.count == 16 })
        #expect(Set(ids).count == ids.count)
    }
}
