import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

@Suite("Event streams", .testThreads)
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
            let everything = try await SSEClient.open(
                harness.endpoint, path: base + "/events", token: token, lastEventID: "0")
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
            let resumed = try await SSEClient.open(
                harness.endpoint, path: base + "/events", token: token, lastEventID: String(ids[1]))
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

    @Test("a long log is replayed a page at a time as the client reads, in order, then live")
    func pagedReplay() async throws {
        try await ServiceHarness.with(streamQueueLimit: 8 * 1024) { harness in
            let token = try await harness.createApp("com.example.pages")
            let app = harness.client(token: token)
            let base = "/v1/apps/com.example.pages"
            _ = try await app.post(base + "/authorization")
            let body =
                "["
                + (0..<150).map { #"{"identifier": "n\#($0)", "title": "\#(String(repeating: "t", count: 200))"}"# }
                .joined(separator: ",") + "]"
            #expect(try await app.post(base + "/requests", json: body).status == 201)
            let stream = try await SSEClient.open(
                harness.endpoint, path: base + "/events", token: token, lastEventID: "0")
            #expect(try await stream.next().event == "settings")
            var names: [String] = []
            for _ in 0..<150 {
                if case .string(let name)? = try await stream.next().json?["notification"]?["identifier"] {
                    names.append(name)
                }
            }
            #expect(names == (0..<150).map { "n\($0)" })
            _ = try await app.post(base + "/requests", json: #"{"identifier": "live", "title": "x"}"#)
            #expect(try await stream.next().json?["notification"]?["identifier"] == .string("live"))
            stream.close()
        }
    }

    @Test("a subscriber that stops reading is disconnected, and resuming with Last-Event-ID loses nothing")
    func slowConsumerResumes() async throws {
        try await ServiceHarness.with(streamQueueLimit: 16 * 1024) { harness in
            let token = try await harness.createApp("com.example.slow")
            let app = harness.client(token: token)
            let base = "/v1/apps/com.example.slow"
            _ = try await app.post(base + "/authorization")
            let port = harness.service.port
            // A subscriber with a tiny receive buffer that never reads.
            let silent = try await RawSocket.nonReading(
                port: port,
                head: "GET \(base)/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n")
            defer { silent.close() }
            // 7.5 MB: more than the kernel's socket buffers take (up to 4 MB to send on loopback).
            let big = String(repeating: "b", count: 30_000)
            for index in 0..<250 {
                #expect(
                    try await app.post(base + "/requests", json: #"{"identifier": "big\#(index)", "body": "\#(big)"}"#)
                        .status == 201)
            }
            let deadline = ContinuousClock.now + .seconds(60)
            while harness.service.server.openStreams > 0, ContinuousClock.now < deadline {
                try await Sleep.for(.milliseconds(50))
            }
            #expect(harness.service.server.openStreams == 0, "the non-reading subscriber is still connected")
            // Everything is in the log for a subscriber that comes back. It reads 7.5 MB through the same
            // 16 KiB queue, so a reader slowed by a busy machine is disconnected too: it resumes again
            // from the last event it saw (at most 50 times), and still loses nothing.
            var first: String?
            var delivered: [String] = []
            var last = "0"
            for _ in 0..<50 where delivered.count < 250 {
                let resumed = try await SSEClient.open(
                    harness.endpoint, path: base + "/events", token: token, lastEventID: last)
                defer { resumed.close() }
                while delivered.count < 250 {
                    guard let event = try? await resumed.next() else { break }
                    first = first ?? event.event
                    if event.event == "delivered",
                        case .string(let identifier)? = event.json?["notification"]?["identifier"]
                    {
                        delivered.append(identifier)
                    }
                    last = event.id ?? last
                }
            }
            #expect(first == "settings")
            #expect(delivered == (0..<250).map { "big\($0)" }, "each delivery once, in order")
        }
    }

    @Test("idle streams get heartbeat comments")
    func heartbeat() async throws {
        try await ServiceHarness.with(heartbeat: .milliseconds(100)) { harness in
            let token = try await harness.createApp("com.example.beat")
            let stream = try await SSEClient.open(
                harness.endpoint, path: "/v1/apps/com.example.beat/events", token: token)
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
            configuration: .init(
                dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0), printsBanner: false),
            logger: .silent)
        let stream = try await SSEClient.open(.tcp(port: service.port), path: "/v1/events", token: service.ownerToken)
        #expect(stream.status == 200)
        await service.stop()
        #expect(try await stream.waitForEnd())
        #expect(!FileManager.default.fileExists(atPath: directory + "/server.json"))
    }

    /// The web center applies these events without reading anything (Tests/web): an `app` event
    /// carries the app's record — whether a prompt waits, what the app asked for —, a `settings`
    /// event whether the app's notifications are listed under the new settings.
    @Test("on the owner's stream, an app event carries the app's record and a settings event whether it lists")
    func appAndSettingsEventsCarryWhatTheCenterShows() async throws {
        try await ServiceHarness.with(autoAllow: false) { harness in
            let app = "com.example.carried"
            let token = try await harness.createApp(app)
            let stream = try await SSEClient.open(
                harness.endpoint, path: "/v1/events", token: harness.service.ownerToken)
            defer { stream.close() }
            /// The next event of `kind`, skipping others.
            func next(_ kind: String) async throws -> JSONValue {
                while true {
                    let event = try await stream.next()
                    if event.event == kind { return try #require(event.json) }
                }
            }
            _ = try await harness.client(token: token).request(
                .requestAuthorization, ["app": app], json: #"{"options": ["alert", "badge"]}"#)
            let asked = try await next("app")
            #expect(asked["change"] == .string("updated"))
            #expect(asked["record"]?["promptPending"] == .bool(true))
            guard case .array(let requested)? = asked["record"]?["requestedOptions"] else {
                Issue.record("no requestedOptions in \(asked)")
                return
            }
            #expect(Set(requested) == [.string("alert"), .string("badge")])
            #expect(try await next("settings")["listed"] == .bool(false))

            _ = try await harness.owner.request(.answerAuthorization, ["app": app], json: #"{"allow": true}"#)
            let answered = try await next("app")
            #expect(answered["record"]?["promptPending"] == .bool(false))
            #expect(answered["record"]?["settings"]?["authorizationStatus"] == .string("authorized"))
            #expect(try await next("settings")["listed"] == .bool(true))

            _ = try await harness.owner.request(
                .updateSettings, ["app": app], json: #"{"notificationCenterSetting": "disabled"}"#)
            #expect(try await next("settings")["listed"] == .bool(false))
        }
    }
}
