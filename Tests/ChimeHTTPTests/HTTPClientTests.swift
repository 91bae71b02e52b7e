import ChimeCore
import Foundation
import Synchronization
import TestThreads
import Testing

@testable import ChimeHTTP
@testable import ChimeServer

#if canImport(Glibc)
    import Glibc
#endif

/// Answers for the client's tests: `/echo` says what it got, `/large` is 320 KB with a
/// Content-Length, `/stream` is an event stream (chunked) the test feeds, `/quiet` one that sends
/// nothing until the test does, `/address` the client's address and port, `/missing` is a 404.
final class ClientTestHandler: HTTPHandler {
    let streams = Mutex<[EventStream]>([])
    static let large = String(repeating: "0123456789abcdef", count: 20_000)

    func bodyLimit(for request: HTTPRequest) -> Int { 1 << 20 }

    func handle(_ request: HTTPRequest) async -> HTTPResponse {
        switch request.path {
        case "/large":
            return HTTPResponse(status: 200, contentType: "text/plain", body: Array(Self.large.utf8))
        case "/stream":
            let stream = EventStream()
            streams.withLock { $0.append(stream) }
            stream.send(event: "hello", id: "1", data: "first")
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream")], body: .stream(stream))
        case "/quiet":
            let stream = EventStream()
            streams.withLock { $0.append(stream) }
            return HTTPResponse(
                status: 200, headers: [("Content-Type", "text/event-stream"), ("X-Stream", "quiet")],
                body: .stream(stream))
        case "/address":
            return HTTPResponse(status: 200, contentType: "text/plain", body: Array(request.remoteAddress.utf8))
        case "/missing":
            return HTTPResponse(
                status: 404, contentType: "application/json",
                body: Array(#"{"error": {"code": "notFound", "message": "no such thing", "field": "path"}}"#.utf8))
        default:
            var text = "\(request.method) \(request.path) \(String(decoding: request.body, as: UTF8.self))"
            for (name, value) in request.query { text += " \(name)=\(value)" }
            text += " type=\(request.header("content-type") ?? "-") x=\(request.header("x-test") ?? "-")"
            return HTTPResponse(
                status: 201, headers: [("Content-Type", "text/plain"), ("X-Twice", "a"), ("X-Twice", "b")],
                body: .bytes(Array(text.utf8)))
        }
    }

    func payloadTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse {
        HTTPResponse(status: 413, contentType: "text/plain", body: [])
    }
    func unavailable(_ request: HTTPRequest, reason: String) -> HTTPResponse {
        HTTPResponse(status: 503, contentType: "text/plain", body: [])
    }

    /// Waits (at most 60 s) until `count` streams are open.
    func waitForStreams(_ count: Int) async throws -> [EventStream] {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let open = streams.withLock { $0 }
            if open.count >= count { return open }
            try await Sleep.for(.milliseconds(10))
        }
        throw HTTPClientError(.failed, "no stream opened within 60 s")
    }
}

@Suite("HTTP client on libcurl", .testThreads)
struct HTTPClientTests {
    enum Transport: String, CaseIterable, CustomStringConvertible {
        case tcp, unix
        var description: String { rawValue }
    }

    /// A server on a free loopback port or a Unix socket in a short temporary directory, and a client for it.
    static func withServer(
        _ transport: Transport, tls: HTTPServer.Configuration.TLS? = nil,
        _ body: (HTTPClient, ClientTestHandler) async throws -> Void
    ) async throws {
        let directory = "/tmp/chime-http-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let listen: ListenAddress =
            transport == .tcp ? .tcp(host: "127.0.0.1", port: 0) : .unix(path: directory + "/http.sock")
        let handler = ClientTestHandler()
        let server = HTTPServer(configuration: .init(listen: listen, tls: tls), handler: handler)
        try server.start()
        let endpoint =
            try transport == .tcp ? HTTPEndpoint(server.url) : HTTPEndpoint("unix:" + directory + "/http.sock")
        do {
            // Generous: while other suites' synchronous tests hold both cooperative threads (the
            // PostgreSQL test server's initdb, at the start of a parallel run, for 9-12 s), the
            // server's async handler cannot answer.
            try await body(HTTPClient(endpoint: endpoint, timeout: 60), handler)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test(
        "method, path, query, headers and body go out; status, repeated headers and body come back",
        arguments: Transport.allCases)
    func exchange(_ transport: Transport) async throws {
        try await Self.withServer(transport) { client, _ in
            let posted = try await client.request(
                "POST", "/a%2Fb?x=1&x=2&y=%C3%BC", headers: [("Content-Type", "application/json"), ("X-Test", "yes")],
                body: Array(#"{"a": 1}"#.utf8))
            #expect(posted.status == 201)
            #expect(posted.text == #"POST /a%2Fb {"a": 1} x=1 x=2 y=ü type=application/json x=yes"#)
            #expect(posted.headers["x-twice"] == "a, b")
            #expect(posted.headers["content-type"] == "text/plain")

            // No body: curl adds no Content-Type of its own, and an empty POST is sent as one.
            #expect(try await client.request("POST", "/empty").text == "POST /empty  type=- x=-")
            #expect(
                try await client.request("DELETE", "/gone?identifier=a").text == "DELETE /gone  identifier=a type=- x=-"
            )
            #expect(try await client.request("PUT", "/put", body: Array("x".utf8)).text == "PUT /put x type=- x=-")

            let large = try await client.request("GET", "/large")
            #expect(large.text == ClientTestHandler.large)
            #expect(large.headers["content-length"] == "\(ClientTestHandler.large.utf8.count)")

            let missing = try await client.request("GET", "/missing")
            #expect(missing.status == 404)
            #expect(missing.serviceError?.code == "notFound" && missing.serviceError?.field == "path")
        }
    }

    @Test("an event stream: events as they are sent, the end when the server ends it", arguments: Transport.allCases)
    func stream(_ transport: Transport) async throws {
        try await Self.withServer(transport) { client, handler in
            let events = Mutex<[ServerSentEventParser.Event]>([])
            let follower = Task { try await client.events("/stream") { event in events.withLock { $0.append(event) } } }
            let stream = try #require(try await handler.waitForStreams(1).first)
            stream.sendComment("heartbeat")
            stream.send(event: "delivered", id: "2", data: "line 1\nline 2 ü")
            stream.close()
            try await follower.value
            #expect(
                events.withLock { $0 } == [
                    .init(kind: "hello", id: "1", data: "first"),
                    .init(kind: "delivered", id: "2", data: "line 1\nline 2 ü"),
                ])
        }
    }

    @Test(
        "cancelling the task ends a waiting stream at once; a stream answered 404 throws the answer",
        arguments: Transport.allCases)
    func cancelAndRefuse(_ transport: Transport) async throws {
        try await Self.withServer(transport) { client, handler in
            let received = Mutex(0)
            let follower = Task { try await client.events("/stream") { _ in received.withLock { $0 += 1 } } }
            _ = try await handler.waitForStreams(1)
            while received.withLock({ $0 }) == 0 { try await Sleep.for(.milliseconds(10)) }
            follower.cancel()
            await #expect(throws: CancellationError.self) { try await follower.value }

            await #expect {
                try await client.events("/missing") { _ in }
            } throws: { error in
                guard let error = error as? HTTPClientError, error.code == .status(404) else { return false }
                return error.response?.serviceError?.message == "no such thing"
            }
        }
    }

    @Test(
        "a stream's status and header fields come before any event; comments (heartbeats) come in order; a refused stream's head too",
        arguments: Transport.allCases)
    func headAndComments(_ transport: Transport) async throws {
        try await Self.withServer(transport) { client, handler in
            let seen = Mutex<[String]>([])
            let follower = Task {
                try await client.events(
                    "/quiet",
                    onResponse: { head in
                        seen.withLock {
                            $0.append("head \(head.status) \(head.headers["x-stream"] ?? "-") \(head.body.count)")
                        }
                    },
                    onComment: { text in
                        seen.withLock { $0.append("comment " + text) }
                    }
                ) { event in
                    seen.withLock { $0.append("event \(event.kind) \(event.data)") }
                }
            }
            let stream = try #require(try await handler.waitForStreams(1).first)
            // The server has sent no byte of the body: the head alone is reported.
            let deadline = ContinuousClock.now + .seconds(60)
            while seen.withLock({ $0.isEmpty }), ContinuousClock.now < deadline {
                try await Sleep.for(.milliseconds(10))
            }
            #expect(seen.withLock { $0 } == ["head 200 quiet 0"])
            stream.sendComment("heartbeat")
            stream.send(event: "delivered", id: "2", data: "x")
            stream.sendComment("again")
            stream.close()
            // Returning (not throwing) says the service ended the stream.
            try await follower.value
            #expect(
                seen.withLock { $0 } == ["head 200 quiet 0", "comment heartbeat", "event delivered x", "comment again"])

            let refusedHead = Mutex<Int?>(nil)
            await #expect {
                try await client.events("/missing", onResponse: { head in refusedHead.withLock { $0 = head.status } }) {
                    _ in
                }
            } throws: { error in (error as? HTTPClientError)?.code == .status(404) }
            #expect(refusedHead.withLock { $0 } == 404)
        }
    }

    @Test(
        "a local address to connect from: the server sees it; over a Unix socket, or not this machine's, a clear error")
    func localAddress() async throws {
        try await Self.withServer(.tcp) { client, _ in
            let unbound = try await client.request("GET", "/address").text
            #expect(unbound.hasPrefix("127.0.0.1:"))
            var second = client
            second.localAddress = "127.0.0.2"
            let bound = try await second.request("GET", "/address").text
            #expect(bound.hasPrefix("127.0.0.2:"))
            var foreign = client
            foreign.localAddress = "192.0.2.1"
            await #expect {
                try await foreign.request("GET", "/address")
            } throws: { error in
                (error as? HTTPClientError)?.code == .badRequest
                    && "\(error)".contains("from the local address 192.0.2.1")
            }
        }
        try await Self.withServer(.unix) { client, _ in
            var bound = client
            bound.localAddress = "127.0.0.2"
            await #expect {
                try await bound.request("GET", "/address")
            } throws: { error in
                (error as? HTTPClientError)?.code == .badRequest && "\(error)".contains("applies to TCP only")
            }
        }
    }

    /// A TCP socket bound to a free loopback port, and the port.
    static func boundLoopbackSocket() -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// Reads the request on `connection`, answers the head and one event of a chunked stream, and
    /// closes without the last chunk.
    static func answerAndCut(_ connection: Int32) {
        var request = [UInt8](repeating: 0, count: 4096)
        _ = request.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
        let event = "event: a\ndata: 1\n\n"
        let answer =
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            + String(event.utf8.count, radix: 16) + "\r\n" + event + "\r\n"
        _ = Array(answer.utf8).withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        close(connection)
    }

    @Test(
        "a stream cut before its end throws connectionLost, after the events that came: only a stream the server ended returns"
    )
    func cutStream() async throws {
        let (listening, port) = Self.boundLoopbackSocket()
        defer { close(listening) }
        #expect(listen(listening, 4) == 0)
        // A server that answers the head and one event of a chunked stream, then closes without the last chunk.
        let accepted = Mutex<Int32?>(nil)
        let server = Thread {
            let connection = accept(listening, nil, nil)
            accepted.withLock { $0 = connection >= 0 ? 0 : errno }
            if connection >= 0 { Self.answerAndCut(connection) }
        }
        server.start()
        let client = HTTPClient(endpoint: try HTTPEndpoint("http://127.0.0.1:\(port)"), timeout: 10)
        let events = Mutex<[String]>([])
        await #expect {
            try await client.events("/cut") { event in events.withLock { $0.append(event.kind + " " + event.data) } }
        } throws: { error in (error as? HTTPClientError)?.code == .connectionLost }
        #expect(events.withLock { $0 } == ["a 1"])
        // The stream was cut by this server, not lost some other way (an accept that failed leaves the client without an answer).
        let acceptError = accepted.withLock { $0 }
        #expect(acceptError == 0, "accept: \(acceptError.map { "errno \($0)" } ?? "never returned")")
    }

    @Test("nothing listening, a server that never answers, a bad path: errors that say what to do")
    func failures() async throws {
        let directory = "/tmp/chime-http-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socketPath = directory + "/none.sock"

        let noSocket = HTTPClient(
            endpoint: .unixSocket(path: socketPath), startCommand: "chime serve --listen unix:\(socketPath)")
        await #expect {
            try await noSocket.request("GET", "/healthz")
        } throws: { error in
            guard let error = error as? HTTPClientError else { return false }
            return error.code == .noService && error.message.hasPrefix("no chime serve at unix:\(socketPath)")
                && error.message.hasSuffix("start it with `chime serve --listen unix:\(socketPath)`")
        }

        // A TCP port nothing listens on: bind one, then close it.
        let (fd, port) = Self.boundLoopbackSocket()
        close(fd)
        let refused = HTTPClient(endpoint: try HTTPEndpoint("http://127.0.0.1:\(port)"))
        await #expect {
            try await refused.request("GET", "/healthz")
        } throws: { error in
            (error as? HTTPClientError)?.code == .noService
                && "\(error)".contains("no chime serve at http://127.0.0.1:\(port)")
        }

        // A socket that accepts but never answers.
        let listening = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listening) }
        var unixAddress = sockaddr_un()
        unixAddress.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &unixAddress.sun_path) { raw in
            raw.copyBytes(from: Array(socketPath.utf8))
            raw[socketPath.utf8.count] = 0
        }
        let bound = withUnsafePointer(to: &unixAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listening, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(bound == 0 && listen(listening, 4) == 0)
        let silent = HTTPClient(endpoint: .unixSocket(path: socketPath), timeout: 0.5)
        await #expect {
            try await silent.request("GET", "/healthz")
        } throws: { error in
            (error as? HTTPClientError)?.code == .timedOut && "\(error)".contains("did not answer within 0.5 s")
        }

        await #expect {
            try await silent.request("GET", "/with space")
        } throws: { error in (error as? HTTPClientError)?.code == .badRequest }
        await #expect {
            try await silent.request("GET", "/x", headers: [("X-Bad", "a\r\nInjected: 1")])
        } throws: { error in (error as? HTTPClientError)?.code == .badRequest && "\(error)".contains("X-Bad") }
        #expect(throws: HTTPClientError.self) { try HTTPEndpoint("ftp://example.org") }
        #expect(throws: HTTPClientError.self) { try HTTPEndpoint("unix:relative.sock") }
        #expect(try HTTPEndpoint("http://127.0.0.1:7878/") == .url("http://127.0.0.1:7878"))
    }

    @Test("HTTPS with a self-signed certificate: refused without its CA file, answered with it")
    func tls() async throws {
        let directory = "/tmp/chime-http-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let openssl = try ChildProcess(
            executable: "/usr/bin/openssl",
            arguments: [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", directory + "/key.pem", "-out",
                directory + "/cert.pem",
                "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            ], stdout: .null, stderr: .null)
        #expect(openssl.wait(timeout: 60)?.succeeded == true)
        let tls = HTTPServer.Configuration.TLS(
            keyPEM: try String(contentsOfFile: directory + "/key.pem", encoding: .utf8),
            certificatePEM: try String(contentsOfFile: directory + "/cert.pem", encoding: .utf8))
        try await Self.withServer(.tcp, tls: tls) { client, _ in
            #expect(client.endpoint.isTLS)
            await #expect {
                try await client.request("GET", "/secure")
            } throws: { error in (error as? HTTPClientError)?.code == .tls }
            var trusting = client
            trusting.caFile = directory + "/cert.pem"
            let answer = try await trusting.request("GET", "/secure?q=1")
            #expect(answer.text == "GET /secure  q=1 type=- x=-")
        }
    }
}
