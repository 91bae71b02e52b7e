import ChimeCore
import Foundation
import Synchronization
import TestThreads
import Testing

@testable import ChimeServer

#if canImport(Glibc)
    import Glibc
#endif

@Suite("HTTP server", .testThreads)
struct HTTPServerTests {
    @Test("port 0 binds a free port and the handler sees method, path, query and body")
    func echo() async throws {
        let server = try HTTPServer.started(TestHandler())
        #expect(server.port != 0)
        #expect(server.url == "http://127.0.0.1:\(server.port)")
        let response = try await TestClient(port: server.port).request(
            "POST", "/a/b?x=1&x=2&y=z", body: Array("hello".utf8),
            contentType: "text/plain")
        #expect(response.status == 200)
        #expect(response.text == "POST /a/b 5 x=1 x=2 y=z")
        await server.stop()
    }

    @Test("a declared body over the limit gets 413 before the body is sent")
    func earlyPayloadTooLarge() async throws {
        let server = try HTTPServer.started(TestHandler())
        let port = server.port
        let response = try await TestClient.offPool {
            let socket = try RawSocket(port: port, timeout: 20)
            defer { socket.close() }
            // Only the head: a server that waited for the body would time out here.
            try socket.send(Array("POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n".utf8))
            return try RawSocket.response(socket.readToEnd())
        }
        #expect(response.status == 413)
        #expect(response.text == "too large")
        // The server keeps serving.
        #expect(try await TestClient(port: port).get("/after").status == 200)
        await server.stop()
    }

    @Test("a chunked body over the limit gets 413")
    func chunkedPayloadTooLarge() async throws {
        let server = try HTTPServer.started(TestHandler())
        let port = server.port
        let response = try await TestClient.offPool {
            let socket = try RawSocket(port: port, timeout: 20)
            defer { socket.close() }
            let chunk = String(repeating: "a", count: 40)
            try socket.send(
                Array(
                    "POST /small HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n28\r\n\(chunk)\r\n0\r\n\r\n"
                        .utf8))
            return try RawSocket.response(socket.readToEnd())
        }
        #expect(response.status == 413)
        await server.stop()
    }

    @Test("a client that stops sending is disconnected after the connection timeout")
    func slowClient() async throws {
        let server = try HTTPServer.started(TestHandler()) { $0.connectionTimeout = 1 }
        let port = server.port
        // The server closes it (the read ends, empty) long before the socket's own 60-s timeout
        // would end the read with an error; no bound in seconds of its own, which a busy machine
        // could overrun.
        let closed = try await TestClient.offPool {
            let socket = try RawSocket(port: port, timeout: 60)
            defer { socket.close() }
            try socket.send(Array("GET /echo HTTP/1.1\r\nHost: x\r\n".utf8))  // never finishes the head
            return try socket.readToEnd().isEmpty
        }
        #expect(closed)
        #expect(try await TestClient(port: port).get("/after").status == 200)
        await server.stop()
    }

    @Test("over the connection limit a request gets 503, and the server keeps serving")
    func connectionLimit() async throws {
        let handler = TestHandler()
        let server = try HTTPServer.started(handler) {
            $0.connectionLimit = 2
            $0.heartbeatInterval = .milliseconds(100)
        }
        let endpoint = TestEndpoint.tcp(port: server.port)
        let first = try await SSEClient.open(endpoint, path: "/stream", token: nil)
        let second = try await SSEClient.open(endpoint, path: "/stream", token: nil)
        _ = try await first.next()
        _ = try await second.next()
        let refused = try await TestClient(port: server.port).get("/echo")
        #expect(refused.status == 503)
        first.close()
        second.close()
        // The heartbeat finds the closed streams; then there is room again.
        var status = 0
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            status = try await TestClient(port: server.port).get("/echo").status
            if status == 200 { break }
            try await Sleep.for(.milliseconds(50))
        }
        #expect(status == 200)
        await server.stop()
    }

    @Test("event streams get queued events in order and heartbeats, and end when the server stops")
    func eventStream() async throws {
        let handler = TestHandler()
        let server = try HTTPServer.started(handler) { $0.heartbeatInterval = .milliseconds(100) }
        let client = try await SSEClient.open(.tcp(port: server.port), path: "/stream", token: nil)
        #expect(client.status == 200)
        #expect(client.headers["content-type"] == "text/event-stream")
        let first = try await client.next()
        #expect(first.event == "hello" && first.id == "1" && first.data == "first")
        let stream = try #require(handler.streams.withLock { $0.first })
        stream.send(event: "two", id: "2", data: "line 1\nline 2")
        stream.send(event: "three", id: "3", data: "x")
        let two = try await client.next()
        #expect(two.data == "line 1\nline 2")
        #expect(try await client.next().id == "3")
        #expect(try await client.waitForComments(2))
        #expect(server.openStreams == 1)
        await server.stop()
        #expect(try await client.waitForEnd())
    }

    @Test("stop waits for an in-flight request, refuses new connections, then returns")
    func gracefulStop() async throws {
        let handler = TestHandler()
        let server = try HTTPServer.started(handler) { $0.shutdownGrace = .seconds(20) }
        let port = server.port
        let inFlight = Task { try await TestClient(port: port).get("/slow") }
        await handler.entered.wait()
        let stopping = Task { await server.stop() }
        // Once stopping, new connections are not accepted.
        #expect(try await Self.refusesConnections(port: port))
        handler.release.fire()
        let response = try await inFlight.value
        #expect(response.status == 200)
        #expect(response.text == "finished")
        await stopping.value
    }

    @Test("stop lets an answer already being written finish: a client reading it slowly gets all of it")
    func stopFinishesWriting() async throws {
        let handler = TestHandler()
        let server = try HTTPServer.started(handler) { $0.shutdownGrace = .seconds(60) }
        let port = server.port
        let size = 64 << 20  // far more than the two sockets' buffers hold
        let socket = try RawSocket(port: port, timeout: 60)
        defer { socket.close() }
        try socket.send(Array("GET /large?bytes=\(size) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8))
        // The answer's first bytes: it is queued and being written, and cannot be done yet.
        let first = try await TestClient.offPool { try socket.receive() }
        #expect(!first.isEmpty)
        let stopping = Task { await server.stop() }
        // Once new connections are refused the stop is under way (before, it then closed this
        // connection at once: the answer was taken from the handler, so nothing was "in flight").
        #expect(try await Self.refusesConnections(port: port))
        let rest = try await TestClient.offPool { try socket.readToEnd() }
        let response = try RawSocket.response(first + rest)
        #expect(response.status == 200)
        #expect(response.body.count == size)
        await stopping.value
    }

    /// Whether new connections are refused within 60 s (a stop has begun).
    private static func refusesConnections(port: UInt16) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            do {
                _ = try await TestClient(port: port).get("/echo")
                try await Sleep.for(.milliseconds(20))
            } catch {
                return true
            }
        }
        return false
    }

    @Test("a Unix socket serves the same API")
    func unixSocket() async throws {
        let path = NSTemporaryDirectory() + "chime-\(UUID().uuidString.prefix(8)).sock"
        let server = try HTTPServer.started(TestHandler()) { $0.listen = .unix(path: path) }
        #expect(server.url == "http://localhost")
        let response = try await TestClient(endpoint: .unix(path: path)).get("/hello")
        #expect(response.status == 200)
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o077 == 0)
        await server.stop()
        #expect(access(path, F_OK) != 0)
    }

    @Test("HTTPS with a self-signed certificate")
    func tls() async throws {
        let directory = NSTemporaryDirectory() + "chime-tls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let openssl = try await ChildProcess.run(
            "/usr/bin/openssl",
            arguments: [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", directory + "/key.pem", "-out",
                directory + "/cert.pem",
                "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            ], timeout: 60)
        #expect(openssl.termination.succeeded, "\(openssl.errorText)")
        let key = try String(contentsOfFile: directory + "/key.pem", encoding: .utf8)
        let cert = try String(contentsOfFile: directory + "/cert.pem", encoding: .utf8)
        let server = try HTTPServer.started(TestHandler()) { $0.tls = .init(keyPEM: key, certificatePEM: cert) }
        #expect(server.url.hasPrefix("https://"))
        // On a thread of its own: the server keeps serving on the concurrency pool meanwhile.
        let curl = try await ChildProcess.run(
            "/usr/bin/curl", arguments: ["-sS", "--cacert", directory + "/cert.pem", server.url + "/secure?q=1"],
            timeout: 60)
        #expect(curl.termination.succeeded, "\(curl.errorText)")
        #expect(curl.text == "GET /secure 0 q=1")
        await server.stop()
    }
    @Test(
        "a handler's answer given at once, before start returns, from another thread, or when released: each reaches its request in order on one keep-alive connection"
    )
    func startedAnswers() async throws {
        let handler = StartingHandler()
        let server = try HTTPServer.started(handler)
        let socket = try RawSocket(port: server.port, timeout: 60)
        defer { socket.close() }
        func ask(_ path: String, released: Bool = false) async throws -> TestResponse {
            try socket.send(Array("POST \(path) HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\nhi".utf8))
            if released {
                await handler.entered.wait()
                handler.releaseHeld()
            }
            return try await TestClient.offPool { try socket.receiveResponse() }
        }
        for path in ["/now", "/early", "/later", "/now", "/later", "/early"] {
            let response = try await ask(path)
            #expect(response.status == 200)
            #expect(response.text == "\(path.dropFirst()) POST 2")
        }
        let held = try await ask("/held", released: true)
        #expect(held.text == "held POST 2")
        #expect(try await ask("/now").text == "now POST 2")
        await server.stop()
    }

    @Test("the same answers over h2c: six requests at once on one HTTP/2 connection for each way of answering")
    func startedAnswersOverHTTP2() async throws {
        let server = try HTTPServer.started(StartingHandler())
        do {
            for path in ["/now", "/early", "/later"] {
                // httpx, one connection; `handle` would answer 500.
                let result = try await HTTP2Tests.client(
                    "many", "http://127.0.0.1:\(server.port)\(path)", "-", "-", "6")
                #expect(result["statuses"] == .object(["200": .integer(6)]), "\(path): \(result)")
                #expect(result["versions"] == .array([.string("HTTP/2")]), "\(path): \(result)")
            }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test("a stop answers 503 to a request whose handler has not answered, and the handler's late answer is dropped")
    func stopAnswersStartedRequest() async throws {
        let handler = StartingHandler()
        let server = try HTTPServer.started(handler) { $0.shutdownGrace = .milliseconds(50) }
        let socket = try RawSocket(port: server.port, timeout: 60)
        defer { socket.close() }
        try socket.send(Array("POST /held HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\nhi".utf8))
        await handler.entered.wait()
        await server.stop()
        let response = try await TestClient.offPool { try socket.receiveResponse() }
        #expect(response.status == 503)
        handler.releaseHeld()
    }
}

/// A handler that answers through ``HTTPHandler/start(_:answer:)``: `/now` at once, `/early` through
/// `answer` before `start` returns, `/later` from another thread, `/held` when the test releases it.
/// Each answer is the path's name, the method and the body's size.
private final class StartingHandler: HTTPHandler {
    let entered = Signal()
    private let held = Mutex<(@Sendable () -> Void)?>(nil)

    func bodyLimit(for request: HTTPRequest) -> Int { 1024 }

    func start(_ request: HTTPRequest, answer: @escaping HTTPAnswer) -> HTTPResponse? {
        let text = "\(request.path.dropFirst()) \(request.method) \(request.body.count)"
        let response = HTTPResponse(status: 200, contentType: "text/plain", body: Array(text.utf8), route: request.path)
        switch request.path {
        case "/now":
            return response
        case "/early":
            answer { response }
        case "/later":
            DispatchQueue.global().async { answer { response } }
        default:
            held.withLock { $0 = { answer { response } } }
            entered.fire()
        }
        return nil
    }

    /// Gives the held request its answer.
    func releaseHeld() {
        held.withLock { $0 }?()
    }

    func handle(_ request: HTTPRequest) async -> HTTPResponse {
        HTTPResponse(status: 500, contentType: "text/plain", body: Array("not by handle".utf8), route: "/handle")
    }

    func payloadTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse {
        HTTPResponse(status: 413, contentType: "text/plain", body: [], route: "/413")
    }

    func unavailable(_ request: HTTPRequest, reason: String) -> HTTPResponse {
        HTTPResponse(status: 503, contentType: "text/plain", body: Array(reason.utf8), route: "/503")
    }
}
