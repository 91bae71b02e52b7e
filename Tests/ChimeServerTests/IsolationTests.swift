import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

/// Every route of the table with this access.
func tableRoutes(_ accesses: RouteTable.Access...) -> [APIRoute] {
    ChimeAPI.routes.entries.filter { accesses.contains($0.access) }.map(\.route)
}

/// The route's parameters for `app`: `a1` for a notification's identifier, `1` for other ids,
/// `Sleep` for a focus mode's name.
func parameters(of route: APIRoute, app: String) -> [String: String] {
    ["app": app, "identifier": "a1", "id": "1", "name": "Sleep"].filter { route.parameters.contains($0.key) }
}

@Suite("App isolation", .testThreads)
struct IsolationTests {
    @Test("an app's token never reaches another app's routes, nor the owner's")
    func isolation() async throws {
        try await ServiceHarness.with { harness in
            let tokenA = try await harness.createApp("com.example.a")
            let tokenB = try await harness.createApp("com.example.b")
            let a = harness.client(token: tokenA)
            _ = try await a.post("/v1/apps/com.example.a/authorization")
            _ = try await a.post(
                "/v1/apps/com.example.a/requests",
                json: #"{"identifier": "a1", "title": "Secret of A", "body": "only for A"}"#)
            let b = harness.client(token: tokenB)
            // Every app route, and no body: the credential is refused before anything is read.
            for route in tableRoutes(.app, .ownerOnApp) {
                for target in ["com.example.a", "com.example.nonexistent"] {
                    let response = try await b.request(route, parameters(of: route, app: target))
                    #expect(response.status == 403, "\(route) for \(target) with B's token: \(response.status)")
                    #expect(!response.text.contains("Secret of A"))
                }
                let own = parameters(of: route, app: "com.example.a")
                let anonymous = try await harness.client(token: nil).request(route, own)
                #expect(anonymous.status == 401, "\(route) without a token")
                let bogus = try await harness.client(token: String(repeating: "0", count: 64)).request(route, own)
                #expect(bogus.status == 401, "\(route) with an unknown token")
            }
            for route in tableRoutes(.owner) {
                #expect(
                    try await b.request(route, parameters(of: route, app: "com.example.a")).status == 403,
                    "\(route) with an app token")
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
            let streamB = try await SSEClient.open(
                harness.endpoint, path: "/v1/apps/com.example.b/events", token: tokenB, lastEventID: "0")
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
