import ChimeCore
import Foundation
import Testing
@testable import ChimeServer

/// Every app-scoped route, with a body where it takes one.
let appRoutes: [(method: String, path: String, body: String?)] = [
    ("GET", "", nil),
    ("DELETE", "", nil),
    ("POST", "/token", nil),
    ("POST", "/authorization", #"{"options": ["alert"]}"#),
    ("POST", "/authorization/answer", #"{"allow": true}"#),
    ("GET", "/settings", nil),
    ("GET", "/categories", nil),
    ("PUT", "/categories", "[]"),
    ("POST", "/requests", #"{"identifier": "x", "title": "X"}"#),
    ("GET", "/requests", nil),
    ("DELETE", "/requests", nil),
    ("DELETE", "/requests?identifier=a", nil),
    ("GET", "/notifications", nil),
    ("DELETE", "/notifications", nil),
    ("POST", "/notifications/a1/responses", #"{"actionIdentifier": "com.apple.UNNotificationDefaultActionIdentifier"}"#),
    ("GET", "/responses", nil),
    ("POST", "/responses/1/ack", nil),
    ("GET", "/events", nil),
    ("GET", "/device-token", nil),
]

@Suite("App isolation")
struct IsolationTests {
    @Test("an app's token never reaches another app's routes, nor the owner's")
    func isolation() async throws {
        try await ServiceHarness.with { harness in
            let tokenA = try await harness.createApp("com.example.a")
            let tokenB = try await harness.createApp("com.example.b")
            let a = harness.client(token: tokenA)
            _ = try await a.post("/v1/apps/com.example.a/authorization")
            _ = try await a.post("/v1/apps/com.example.a/requests", json: #"{"identifier": "a1", "title": "Secret of A", "body": "only for A"}"#)
            let b = harness.client(token: tokenB)
            for route in appRoutes {
                for target in ["com.example.a", "com.example.nonexistent"] {
                    let response = try await b.request(route.method, "/v1/apps/\(target)\(route.path)", body: route.body.map { Array($0.utf8) },
                                                       contentType: route.body == nil ? nil : "application/json")
                    #expect(response.status == 403, "\(route.method) \(target)\(route.path) with B's token: \(response.status)")
                    #expect(!response.text.contains("Secret of A"))
                }
                let anonymous = try await harness.client(token: nil).request(route.method, "/v1/apps/com.example.a\(route.path)")
                #expect(anonymous.status == 401, "\(route.method) \(route.path) without a token")
                let bogus = try await harness.client(token: String(repeating: "0", count: 64)).request(route.method, "/v1/apps/com.example.a\(route.path)")
                #expect(bogus.status == 401, "\(route.method) \(route.path) with an unknown token")
            }
            for (method, path) in [("GET", "/v1/apps"), ("POST", "/v1/apps"), ("GET", "/v1/events"), ("POST", "/v1/location")] {
                #expect(try await b.request(method, path).status == 403, "\(method) \(path) with an app token")
            }
            // A's data is intact and visible to A and the owner.
            let own = try await a.get("/v1/apps/com.example.a/notifications")
            #expect(own.json?[0]?["title"] == .string("Secret of A"))
            #expect(try await harness.owner.get("/v1/apps/com.example.a/notifications").json?.arrayCount == 1)
            #expect(try await harness.owner.get("/v1/apps/com.example.nonexistent/settings").status == 404)
            // B's own routes work and show nothing of A.
            let bOwn = try await b.get("/v1/apps/com.example.b/notifications")
            #expect(bOwn.status == 200)
            #expect(bOwn.json?.arrayCount == 0)
        }
    }

    @Test("an app's event stream carries only its own events")
    func eventIsolation() async throws {
        try await ServiceHarness.with { harness in
            let tokenA = try await harness.createApp("com.example.a")
            let tokenB = try await harness.createApp("com.example.b")
            let streamB = try await SSEClient.open(harness.endpoint, path: "/v1/apps/com.example.b/events", token: tokenB, lastEventID: "0")
            let all = try await SSEClient.open(harness.endpoint, path: "/v1/events", token: harness.service.ownerToken)
            let a = harness.client(token: tokenA)
            let b = harness.client(token: tokenB)
            _ = try await a.post("/v1/apps/com.example.a/authorization")
            _ = try await a.post("/v1/apps/com.example.a/requests", json: #"{"identifier": "a1", "title": "A"}"#)
            _ = try await b.post("/v1/apps/com.example.b/authorization")
            _ = try await b.post("/v1/apps/com.example.b/requests", json: #"{"identifier": "b1", "title": "B"}"#)
            // B's stream: its settings event, then its delivery; nothing of A.
            var seen: [String] = []
            while seen.count < 2 {
                let event = try await streamB.next()
                #expect(event.json?["app"] == .string("com.example.b"))
                seen.append(event.event ?? "")
            }
            #expect(seen == ["settings", "delivered"])
            // The owner's stream has both apps.
            var apps: Set<String> = []
            while apps.count < 2 {
                if case .string(let app)? = try await all.next().json?["app"] { apps.insert(app) }
            }
            streamB.close()
            all.close()
        }
    }
}
