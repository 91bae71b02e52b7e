import ChimeCore
import Foundation
import Testing
@testable import ChimeServer

@Suite("Event streams")
struct EventResumeTests {
    @Test("Last-Event-ID replays the log after that id, then continues live without gaps or repeats")
    func resume() async throws {
        try await ServiceHarness.with { harness in
            let token = try await harness.createApp("com.example.resume")
            let app = harness.client(token: token)
            let base = "/v1/apps/com.example.resume"
            _ = try await app.post(base + "/authorization")
            for name in ["one", "two", "three"] {
                _ = try await app.post(base + "/requests", json: #"{"identifier": "\#(name)", "title": "\#(name)"}"#)
            }
            // From the start of the log: settings, then three deliveries.
            let everything = try await SSEClient.open(harness.endpoint, path: base + "/events", token: token, lastEventID: "0")
            var ids: [Int64] = []
            var kinds: [String] = []
            for _ in 0..<4 {
                let event = try await everything.next()
                ids.append(Int64(event.id ?? "") ?? -1)
                kinds.append(event.event ?? "")
            }
            everything.close()
            #expect(kinds == ["settings", "delivered", "delivered", "delivered"])
            #expect(ids == ids.sorted() && Set(ids).count == 4)

            // Resume after the second event: the third and fourth, then a live one.
            let resumed = try await SSEClient.open(harness.endpoint, path: base + "/events", token: token, lastEventID: String(ids[1]))
            let third = try await resumed.next()
            #expect(third.id == String(ids[2]))
            #expect(third.json?["notification"]?["identifier"] == .string("two"))
            #expect(try await resumed.next().id == String(ids[3]))
            _ = try await app.post(base + "/requests", json: #"{"identifier": "four", "title": "four"}"#)
            let live = try await resumed.next()
            #expect(live.event == "delivered")
            #expect(live.json?["notification"]?["identifier"] == .string("four"))
            #expect((Int64(live.id ?? "") ?? 0) > ids[3])
            resumed.close()
        }
    }

    @Test("idle streams get heartbeat comments")
    func heartbeat() async throws {
        try await ServiceHarness.with(heartbeat: .milliseconds(100)) { harness in
            let token = try await harness.createApp("com.example.beat")
            let stream = try await SSEClient.open(harness.endpoint, path: "/v1/apps/com.example.beat/events", token: token)
            #expect(stream.headers["content-type"] == "text/event-stream")
            #expect(try await stream.waitForComments(2))
            stream.close()
        }
    }

    @Test("stopping the service ends open event streams")
    func stopEndsStreams() async throws {
        let directory = ServiceHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let service = try await RunningService.start(
            configuration: .init(dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0), printsBanner: false), logger: .silent)
        let stream = try await SSEClient.open(.tcp(port: service.port), path: "/v1/events", token: service.ownerToken)
        #expect(stream.status == 200)
        await service.stop()
        #expect(try await stream.waitForEnd())
        #expect(!FileManager.default.fileExists(atPath: directory + "/server.json"))
    }
}
