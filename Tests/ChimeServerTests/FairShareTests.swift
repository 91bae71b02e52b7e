import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

/// One app (or one browser session) cannot take what every client shares: its event streams are
/// held to a share, answered 429 past it, while the owner, `/healthz` and other apps are served.
@Suite("Fair shares", .testThreads)
struct FairShareTests {
    static let limits = ChimeAPI.StreamLimits(perApp: 3, perSession: 2)

    @Test(
        "an app at its stream share gets 429 with Retry-After, naming the limit; another app, the owner and /healthz get 200"
    )
    func appStreamShare() async throws {
        try await ServiceHarness.with(streamLimits: Self.limits) { harness in
            let greedy = "com.example.greedy"
            let other = "com.example.other"
            let greedyToken = try await harness.createApp(greedy)
            let otherToken = try await harness.createApp(other)
            var streams: [SSEClient] = []
            for _ in 0..<Self.limits.perApp {
                let stream = try await SSEClient.open(harness.endpoint, .appEvents, ["app": greedy], token: greedyToken)
                #expect(stream.status == 200)
                streams.append(stream)
            }
            let refused = try await SSEClient.open(harness.endpoint, .appEvents, ["app": greedy], token: greedyToken)
            #expect(refused.status == 429)
            #expect(refused.headers["retry-after"] == "5")
            let body = try await harness.client(token: greedyToken).request(.appEvents, ["app": greedy])
            #expect(body.status == 429)
            #expect(body.errorCode == "tooManyStreams")
            #expect(body.text.contains("--max-streams-per-app"), "\(body.text)")
            #expect(body.text.contains(greedy))
            // The app's other routes still answer: only its streams are held to the share.
            #expect(try await harness.client(token: greedyToken).request(.getSettings, ["app": greedy]).status == 200)

            let others = try await SSEClient.open(harness.endpoint, .appEvents, ["app": other], token: otherToken)
            #expect(others.status == 200)
            let owners = try await SSEClient.open(
                harness.endpoint, .appEvents, ["app": greedy], token: harness.service.ownerToken)
            #expect(owners.status == 200)
            let all = try await SSEClient.open(harness.endpoint, .allEvents, token: harness.service.ownerToken)
            #expect(all.status == 200)
            #expect(try await harness.client(token: nil).get("/healthz").status == 200)
            #expect(harness.service.api.streamShares.count(.app(greedy)) == Self.limits.perApp)

            // A stream that ends gives its share back.
            streams.removeLast().close()
            #expect(
                try await Self.eventually {
                    harness.service.api.streamShares.count(.app(greedy)) == Self.limits.perApp - 1
                })
            let again = try await SSEClient.open(harness.endpoint, .appEvents, ["app": greedy], token: greedyToken)
            #expect(again.status == 200)
            for stream in streams + [again, others, owners, all, refused] { stream.close() }
        }
    }

    @Test("a web session at its stream share gets 429; another session and the owner token are served")
    func sessionStreamShare() async throws {
        try await ServiceHarness.with(streamLimits: Self.limits) { harness in
            let (cookie, _) = try await WebCenterAPITests.signIn(harness)
            var streams: [SSEClient] = []
            for _ in 0..<Self.limits.perSession {
                let stream = try await SSEClient.open(
                    harness.endpoint, .allEvents, token: nil, headers: [("Cookie", cookie)])
                #expect(stream.status == 200)
                streams.append(stream)
            }
            let refused = try await harness.client(token: nil).request(.allEvents, headers: [("Cookie", cookie)])
            #expect(refused.status == 429)
            #expect(refused.headers["retry-after"] == "5")
            #expect(refused.text.contains("--max-streams-per-session"), "\(refused.text)")
            let (second, _) = try await WebCenterAPITests.signIn(harness)
            let fresh = try await SSEClient.open(
                harness.endpoint, .allEvents, token: nil, headers: [("Cookie", second)])
            #expect(fresh.status == 200)
            let owners = try await SSEClient.open(harness.endpoint, .allEvents, token: harness.service.ownerToken)
            #expect(owners.status == 200)
            for stream in streams + [fresh, owners] { stream.close() }
        }
    }

    /// Waits (at most 60 s) for `condition`, looking again every 20 ms.
    static func eventually(_ condition: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, !condition() { try await Sleep.for(.milliseconds(20)) }
        return condition()
    }
}
