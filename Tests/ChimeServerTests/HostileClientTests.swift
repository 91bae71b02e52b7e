import ChimeCore
import ChimeHTTP
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

#if canImport(Glibc)
    import Glibc
#endif

/// Clients that try to take the server's connection slots: slow heads (slowloris), silent
/// connections, one address taking every slot, subscribers that leave.
@Suite("Hostile clients", .testThreads)
struct HostileClientTests {
    @Test("a client that sends its head a byte at a time is cut off at the head deadline, though it is never idle")
    func slowloris() async throws {
        let server = try HTTPServer.started(TestHandler()) { $0.headerTimeout = .seconds(1) }
        let port = server.port
        let (closed, bytesSent) = try await TestClient.offPool {
            let socket = try RawSocket(port: port, timeout: 40)
            defer { socket.close() }
            try socket.send(Array("GET /echo HTTP/1.1\r\nHost: x\r\n".utf8))
            // A byte every 100 ms, for at most 30 s: far more often than the 60 s idle timeout.
            var sent = 0
            for _ in 0..<300 {
                usleep(100_000)
                do { try socket.send(Array("X".utf8)) } catch { return (true, sent) }
                sent += 1
                var probe = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
                if poll(&probe, 1, 0) > 0, (try? socket.receive())?.isEmpty ?? true { return (true, sent) }
            }
            return (false, sent)
        }
        #expect(closed, "the slow head was not cut off after \(bytesSent) bytes")
        #expect(try await TestClient(port: port).get("/after").status == 200)
        await server.stop()
    }

    @Test("when silent connections hold every slot, a normal client takes the slot of the oldest and is answered")
    func silentConnections() async throws {
        let server = try HTTPServer.started(TestHandler()) { $0.connectionLimit = 4 }
        let port = server.port
        let silent = try await TestClient.offPool {
            try (0..<8).map { _ in try RawSocket(port: port, timeout: 15, source: "127.0.0.2") }
        }
        defer { for socket in silent { socket.close() } }
        // Without shedding, the limit is reached and this gets 503 (or waits for the 60 s timeout).
        let response = try await TestClient(port: port).get("/echo")
        #expect(response.status == 200)
        #expect(server.connections.admitted <= 4)
        await server.stop()
    }

    @Test("one client address cannot take every slot: past its share it is refused while others are served")
    func perAddressShare() async throws {
        let handler = TestHandler()
        let server = try HTTPServer.started(handler) {
            $0.connectionLimit = 4
            $0.connectionLimitPerAddress = 2
        }
        let endpoint = TestEndpoint.tcp(port: server.port)
        let first = try await SSEClient.open(endpoint, path: "/stream", token: nil, source: "127.0.0.2")
        let second = try await SSEClient.open(endpoint, path: "/stream", token: nil, source: "127.0.0.2")
        defer {
            first.close()
            second.close()
        }
        _ = try await first.next()
        _ = try await second.next()
        let port = server.port
        let third = try await HTTPClient(endpoint: endpoint.http, timeout: 10, localAddress: "127.0.0.2").request(
            "GET", "/echo")
        #expect(third.status == 503)
        #expect(try await TestClient(port: port).get("/echo").status == 200)
        await server.stop()
    }

    @Test("subscribers that disconnect free their slots at once, not at the next heartbeat")
    func departedSubscribers() async throws {
        let server = try HTTPServer.started(TestHandler()) {
            $0.connectionLimit = 3
            $0.heartbeatInterval = .seconds(600)
        }
        let endpoint = TestEndpoint.tcp(port: server.port)
        var clients: [SSEClient] = []
        for _ in 0..<3 { clients.append(try await SSEClient.open(endpoint, path: "/stream", token: nil)) }
        for client in clients { _ = try await client.next() }
        #expect(server.openStreams == 3)
        for client in clients { client.close() }
        // Wait (at most 60 s; the heartbeat would take 600) for the server to notice.
        let deadline = ContinuousClock.now + .seconds(60)
        while server.openStreams > 0, ContinuousClock.now < deadline { try await Sleep.for(.milliseconds(50)) }
        #expect(server.openStreams == 0)
        #expect(try await TestClient(port: server.port).get("/echo").status == 200)
        await server.stop()
    }

    @Test(
        "a subscriber that never reads is disconnected once its queue is full, and the server's memory for it is freed")
    func nonReadingSubscriber() async throws {
        let handler = TestHandler()
        let server = try HTTPServer.started(handler) { $0.streamQueueLimit = 64 * 1024 }
        let port = server.port
        let socket = try await RawSocket.nonReading(port: port, head: "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        defer { socket.close() }
        var stream: EventStream?
        let deadline = ContinuousClock.now + .seconds(60)
        while stream == nil, ContinuousClock.now < deadline {
            stream = handler.streams.withLock { $0.first }
            if stream == nil { try await Sleep.for(.milliseconds(10)) }
        }
        let open = try #require(stream)
        let frame = EventStream.frame(
            event: "big", id: nil, data: Array(repeating: UInt8(ascii: "x"), count: 16 * 1024))
        // The client reads nothing: the kernel's buffers fill, then the stream's queue.
        var accepted = 0
        for _ in 0..<1000 {
            guard open.send(frame) else { break }
            accepted += 1
            if accepted % 16 == 0 { try await Sleep.for(.milliseconds(5)) }
        }
        #expect(accepted < 1000, "the stream took 16 MB for a client that reads nothing")
        #expect(open.queuedBytes == 0)
        let closed = ContinuousClock.now + .seconds(60)
        while server.openStreams > 0, ContinuousClock.now < closed { try await Sleep.for(.milliseconds(50)) }
        #expect(server.openStreams == 0)
        await server.stop()
    }

    @Test("stopping, or dropping, the server while requests are being handled and streams are parked does not abort")
    func stopWithSuspendedConnections() async {
        await #expect(processExitsWith: .success) {
            let handler = TestHandler()
            var configuration = HTTPServer.Configuration(listen: .tcp(host: "127.0.0.1", port: 0))
            configuration.shutdownGrace = .zero
            var server: HTTPServer? = HTTPServer(configuration: configuration, handler: handler)
            try server?.start()
            let port = server?.port ?? 0
            // A request whose handler never finishes, and a stream with nothing to send: both suspended.
            let slow = Task { try await TestClient(port: port).get("/slow") }
            await handler.entered.wait()
            let stream = try await SSEClient.open(.tcp(port: port), path: "/stream", token: nil)
            _ = try await stream.next()
            // Parked: its connection is suspended once the first event is written (waited for, at most 60 s).
            let parked = ContinuousClock.now + .seconds(60)
            while handler.streams.withLock({ $0.first?.isSuspended }) != true {
                guard ContinuousClock.now < parked else { exit(5) }
                try await Sleep.for(.milliseconds(10))
            }
            server = nil  // deinit stops the daemon: open connections are closed
            let answer = try? await slow.value
            guard answer == nil || answer?.status == 503 else { exit(3) }
            // And a graceful stop with the same state.
            let secondHandler = TestHandler()
            let second = HTTPServer(configuration: configuration, handler: secondHandler)
            try second.start()
            let secondPort = second.port
            let stalled = Task { try await TestClient(port: secondPort).get("/slow") }
            await secondHandler.entered.wait()  // being handled when the stop begins
            await second.stop()
            // Past the grace the request still being handled is answered 503.
            guard try await stalled.value.status == 503 else { exit(4) }
        }
    }
}
