import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

@Suite("Smoke", .testThreads)
struct SmokeTests {
    @Test("healthz answers")
    func healthz() async throws {
        try await ServiceHarness.with { harness in
            let response = try await harness.client(token: nil).get("/healthz")
            #expect(response.status == 200)
            #expect(response.text == #"{"status":"ok"}"#)
        }
    }
}
