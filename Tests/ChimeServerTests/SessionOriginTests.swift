import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

/// Reads made with the session cookie that change what the service does get the checks of a write.
@Suite("Session reads that change behaviour", .testThreads)
struct SessionOriginTests {
    @Test(
        "a session stream that declares an app's service extension or front needs the center's origin and CSRF token",
        arguments: ["serviceExtension=true", "foreground=true"])
    func behaviourChangingStream(_ query: String) async throws {
        try await ServiceHarness.with { harness in
            let app = "com.example.origin"
            _ = try await harness.createApp(app)
            let (cookie, csrf) = try await WebCenterAPITests.signIn(harness)
            let own = "http://127.0.0.1:\(harness.service.port)"
            func open(_ headers: [(String, String)]) async throws -> Int {
                let stream = try await SSEClient.open(
                    harness.endpoint, .appEvents, ["app": app], query: "?" + query, token: nil,
                    headers: [("Cookie", cookie)] + headers)
                defer { stream.close() }
                return stream.status
            }
            // A page on another port of the same host: same site, so the cookie goes along.
            #expect(try await open([("Origin", "http://127.0.0.1:9")]) == 403)
            #expect(try await open([("Sec-Fetch-Site", "same-site")]) == 403)
            #expect(try await open([]) == 403, "without the CSRF token")
            #expect(try await open([("Origin", own), ("X-CSRF-Token", csrf)]) == 200)
            // A plain stream is a read: the session opens it as before.
            let plain = try await SSEClient.open(
                harness.endpoint, .appEvents, ["app": app], token: nil,
                headers: [("Cookie", cookie), ("Sec-Fetch-Site", "same-origin")])
            #expect(plain.status == 200)
            plain.close()
        }
    }
}
