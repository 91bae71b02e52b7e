import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

/// One app at its storage quota gets 507 naming it; the owner and other apps are served as before.
@Suite("Per-app storage quotas, over HTTP", .testThreads, .timeLimit(.minutes(2)))
struct QuotaServiceTests {
    static func add(_ identifier: String) -> String {
        #"{"identifier": "\#(identifier)", "title": "t", "trigger": {"type": "timeInterval", "timeInterval": 3600}}"#
    }

    @Test("past --app-max-pending an app's add is 507 quotaExceeded naming the app; other apps and the owner carry on")
    func pendingQuota() async throws {
        try await ServiceHarness.with(transport: .inProcess, quota: StorageQuota(pending: 3)) { harness in
            let filler = harness.client(token: try await harness.createApp("com.example.filler"))
            let other = harness.client(token: try await harness.createApp("com.example.other"))
            _ = try await filler.post("/v1/apps/com.example.filler/authorization")
            _ = try await other.post("/v1/apps/com.example.other/authorization")
            for index in 0..<3 {
                #expect(
                    try await filler.post("/v1/apps/com.example.filler/requests", json: Self.add("r\(index)")).status
                        == 201)
            }
            let refused = try await filler.post("/v1/apps/com.example.filler/requests", json: Self.add("r3"))
            #expect(refused.status == 507)
            #expect(refused.json?["error"]?["code"] == .string("quotaExceeded"))
            #expect(refused.json?["error"]?["field"] == .string("app"))
            guard case .string(let message)? = refused.json?["error"]?["message"] else {
                Issue.record("no message in \(refused.text)")
                return
            }
            #expect(message.contains("com.example.filler"))
            #expect(message.contains("--app-max-pending"))
            // The owner adding for the full app meets the same bound; for another app, no bound is near.
            #expect(
                try await harness.owner.post("/v1/apps/com.example.filler/requests", json: Self.add("owner")).status
                    == 507)
            #expect(try await other.post("/v1/apps/com.example.other/requests", json: Self.add("o0")).status == 201)
            #expect(try await harness.owner.get("/healthz").status == 200)
            // Replacing one by its identifier is no growth; removing one makes room.
            #expect(try await filler.post("/v1/apps/com.example.filler/requests", json: Self.add("r0")).status == 201)
            #expect(try await filler.delete("/v1/apps/com.example.filler/requests?identifier=r1").status == 200)
            #expect(try await filler.post("/v1/apps/com.example.filler/requests", json: Self.add("r3")).status == 201)
            #expect(try await harness.service.engine.pendingCount(app: "com.example.filler") == 3)
        }
    }
}
