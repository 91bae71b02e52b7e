import Foundation
import TestThreads
import Testing

@testable import ChimeCore
@testable import ChimeServer

/// The service's side of "nothing stored can stop the scheduler": look-alike app names refused at
/// the door, and the quarantine shown to the owner.
@Suite("Look-alike identifiers and the quarantine, over HTTP", .testThreads, .timeLimit(.minutes(2)))
struct QuarantineServiceTests {
    @Test(
        "an app's token does not reach its name spelled with a look-alike (U+212A KELVIN SIGN): 400 naming app, nothing stored"
    )
    func lookAlikePath() async throws {
        try await ServiceHarness.with { harness in
            let token = try await harness.createApp("com.example.Kiosk")
            let client = harness.client(token: token)
            let response = try await client.post(
                "/v1/apps/com.example.%E2%84%AAiosk/requests",
                json: #"{"identifier": "x", "title": "t", "trigger": {"type": "timeInterval", "timeInterval": 60}}"#)
            #expect(response.status == 400)
            #expect(response.json?["error"]?["field"] == .string("app"))
            #expect(response.json?["error"]?["code"] == .string("invalidIdentifier"))
            // The owner is refused the same way; the real name still works.
            #expect(try await harness.owner.get("/v1/apps/com.example.%E2%84%AAiosk/requests").status == 400)
            #expect(try await harness.service.engine.pendingCount() == 0)
            #expect(try await client.get("/v1/apps/com.example.Kiosk/requests").status == 200)
        }
    }

    @Test(
        "a row the scheduler cannot deliver is set aside: an event, the owner's list, a gauge, removable; other apps fire"
    )
    func quarantineOverHTTP() async throws {
        try await ServiceHarness.with { harness in
            let token = try await harness.createApp("com.example.other")
            let stream = try await SSEClient.open(
                harness.endpoint, path: "/v1/events", token: harness.service.ownerToken)
            defer { stream.close() }
            // A row under a look-alike app, as a store written before paths were checked holds it, due now.
            let engine = harness.service.engine
            let now = engine.clock.now
            try await engine.perform { core in
                let request = NotificationRequest(
                    identifier: "poison", content: NotificationContent(title: "t"),
                    trigger: .timeInterval(1, repeats: false))
                try core.store.putPending(
                    PendingRequest(request: request, nextFireDate: now, anchor: now), app: "com.example.\u{212A}iosk")
            }
            let client = harness.client(token: token)
            _ = try await client.post("/v1/apps/com.example.other/authorization")
            _ = try await client.post(
                "/v1/apps/com.example.other/requests",
                json: #"{"identifier": "good", "title": "t", "trigger": {"type": "timeInterval", "timeInterval": 1}}"#)
            var kinds: [String] = []
            while !(kinds.contains("quarantined") && kinds.contains("delivered")) {
                let event = try await stream.next()
                if let kind = event.event { kinds.append(kind) }
            }
            let listed = try await harness.owner.get("/v1/quarantine")
            #expect(listed.status == 200)
            #expect(listed.json?.arrayCount == 1)
            #expect(listed.json?[0]?["identifier"] == .string("poison"))
            #expect(listed.json?[0]?["app"] == .string("com.example.\u{212A}iosk"))
            // As docs/openapi.json's PendingRequest lists it (nextTriggerDate is required): it never fires.
            #expect(listed.json?[0]?["request"]?["title"] == .string("t"))
            #expect(listed.json?[0]?["request"]?["nextTriggerDate"] == .null)
            guard case .integer(let id)? = listed.json?[0]?["id"] else {
                Issue.record("no id in \(listed.text)")
                return
            }
            #expect(try await harness.owner.get("/metrics").text.contains("chime_quarantined 1"))
            #expect(try await client.get("/v1/quarantine").status == 403)
            #expect(try await harness.owner.delete("/v1/quarantine/\(id)").status == 200)
            #expect(try await harness.owner.delete("/v1/quarantine/\(id)").status == 404)
            #expect(try await harness.owner.delete("/v1/quarantine/zz").status == 404)
            #expect(try await harness.owner.get("/v1/quarantine").json?.arrayCount == 0)
            #expect(
                try await client.get("/v1/apps/com.example.other/notifications").json?[0]?["identifier"]
                    == .string("good"))
        }
    }
}
