import ChimeTesting
import Dispatch
import Foundation
import TestThreads
import Testing

@testable import ChimeCore
@testable import ChimeServer

/// Open event streams end when the credential that opened them stops being valid; tokens are
/// checked without the engine's writer.
@Suite("Revoked credentials", .testThreads)
struct RevocationTests {
    let base = "/v1/apps/com.example.revoke"

    /// Waits (at most 30 s) for the stream to end.
    func ended(_ stream: SSEClient) async throws -> Bool { try await stream.waitForEnd(timeout: 30) }

    @Test("rotating an app's token ends the streams its old token opened; the old token is refused, the new one works")
    func rotation() async throws {
        try await ServiceHarness.with { harness in
            let token = try await harness.createApp("com.example.revoke")
            let stream = try await SSEClient.open(harness.endpoint, path: base + "/events", token: token)
            #expect(stream.status == 200)
            let rotated = try await harness.owner.post(base + "/token")
            guard case .string(let fresh)? = rotated.json?["token"] else {
                throw TestClientError(description: rotated.text)
            }
            #expect(try await ended(stream))
            #expect(try await harness.client(token: token).get(base + "/settings").status == 401)
            #expect(try await harness.client(token: fresh).get(base + "/settings").status == 200)
            // A stream the owner opened on the app is not the app token's: it stays.
            let owners = try await SSEClient.open(
                harness.endpoint, path: base + "/events", token: harness.service.ownerToken)
            _ = try await harness.owner.post(base + "/token")
            _ = try await harness.client(token: nil).get("/healthz")
            #expect(try await !owners.waitForEnd(timeout: 0.5))
            owners.close()
        }
    }

    @Test("removing an app ends its streams, so registering the same bundle again feeds none of them")
    func removal() async throws {
        try await ServiceHarness.with { harness in
            let token = try await harness.createApp("com.example.revoke")
            let apps = try await SSEClient.open(harness.endpoint, path: base + "/events", token: token)
            let owners = try await SSEClient.open(
                harness.endpoint, path: base + "/events", token: harness.service.ownerToken)
            #expect(try await harness.owner.delete(base).status == 204)
            #expect(try await ended(apps))
            #expect(try await ended(owners))
            let again = try await harness.createApp("com.example.revoke")
            #expect(try await harness.client(token: token).get(base + "/settings").status == 401)
            #expect(try await harness.client(token: again).get(base + "/settings").status == 200)
        }
    }

    @Test("signing out ends the event stream the session opened")
    func signOut() async throws {
        try await ServiceHarness.with { harness in
            let (cookie, csrf) = try await WebCenterAPITests.signIn(harness)
            let stream = try await SSEClient.open(
                harness.endpoint, path: "/v1/events", token: nil, headers: [("Cookie", cookie)])
            #expect(stream.status == 200)
            let out = try await harness.client(token: nil).request(
                "DELETE", "/v1/session", headers: [("Cookie", cookie), ("X-CSRF-Token", csrf)])
            #expect(out.status == 204)
            #expect(try await ended(stream))
        }
    }

    @Test("a session's event stream ends when the session expires")
    func sessionExpiry() async throws {
        // A manual clock: the session expires when the test moves time past its lifetime, however
        // long signing in and opening the stream took (a 1-second lifetime on the system clock ran
        // out before the stream opened on a busy machine).
        let clock = ManualClock(now: Date())
        try await ServiceHarness.with(clock: clock) { harness in
            let lifetime = harness.service.api.sessions.lifetime.withLock { $0 }
            let (cookie, _) = try await WebCenterAPITests.signIn(harness)
            let stream = try await SSEClient.open(
                harness.endpoint, path: "/v1/events", token: nil, headers: [("Cookie", cookie)])
            #expect(stream.status == 200)
            clock.advance(by: lifetime + 1)
            #expect(try await ended(stream))
            let reopened = try await harness.client(token: nil).get("/v1/events", headers: [("Cookie", cookie)])
            #expect(reopened.status == 401)
        }
    }

    @Test(
        "an unknown token, or another app's, is refused while the engine's writer is busy: no store read, whatever the number of apps"
    )
    func tokensOffTheWriter() async throws {
        try await ServiceHarness.with { harness in
            let token = try await harness.createApp("com.example.revoke")
            let other = try await harness.createApp("com.example.other")
            #expect(try await harness.client(token: token).get(base + "/settings").status == 200)
            // Hold the writer until the checks below have been answered.
            let gate = DispatchSemaphore(value: 0)
            let held = Task { try await harness.service.engine.perform { _ in gate.wait() } }
            defer { gate.signal() }
            let unknown = try await harness.client(token: "no-such-token").get(base + "/settings")
            #expect(unknown.status == 401)
            let foreign = try await harness.client(token: other).get(base + "/settings")
            #expect(foreign.status == 403)
            let push = try await harness.client(token: "no-such-token").post(
                "/3/device/" + String(repeating: "a", count: 64), json: "{}",
                headers: [("apns-topic", "com.example.revoke")])
            #expect(push.status == 403)
            gate.signal()
            _ = try await held.value
        }
    }
}
