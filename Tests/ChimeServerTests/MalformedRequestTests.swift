import ChimeCore
import Foundation
import Synchronization
import TestThreads
import Testing

@testable import ChimeServer

struct MalformedRequest: Sendable, CustomStringConvertible {
    var name: String
    var bytes: [UInt8]
    var status: Int
    var code: String
    var description: String { name }

    init(_ name: String, _ text: String, _ status: Int, _ code: String) {
        self.name = name
        self.bytes = Array(text.utf8)
        self.status = status
        self.code = code
    }

    init(_ name: String, bytes: [UInt8], _ status: Int, _ code: String) {
        self.name = name
        self.bytes = bytes
        self.status = status
        self.code = code
    }
}

let manyArguments = (0..<500).map { "a\($0)=1" }.joined(separator: "&")

let malformedRequests: [MalformedRequest] = [
    MalformedRequest(
        "an unknown transfer coding alone", "POST /v1/apps HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nabc",
        400, "badFraming"),
    MalformedRequest(
        "a transfer coding that is not chunked",
        "POST /v1/apps HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n",
        400, "badFraming"),
    MalformedRequest(
        "chunked, then identity",
        "POST /v1/apps HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n",
        400, "badFraming"),
    MalformedRequest(
        "gzip under chunked", "POST /v1/apps HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
        501,
        "notImplemented"),
    MalformedRequest(
        "Content-Length with Transfer-Encoding",
        "POST /v1/apps HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400,
        "badFraming"),
    MalformedRequest(
        "two Content-Length values (the rest would run as a second request)",
        "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 36\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
        400, "badFraming"),
    MalformedRequest(
        "whitespace before a colon",
        "POST /v1/apps HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\nContent-Length: 2\r\n\r\n{}",
        400, "badHeader"),
    MalformedRequest(
        "500 query arguments", "GET /v1/apps?\(manyArguments) HTTP/1.1\r\nHost: x\r\n\r\n", 414, "uriTooLong"),
    MalformedRequest(
        "a 10 KB request target", "GET /v1/apps?q=\(String(repeating: "a", count: 10_000)) HTTP/1.1\r\nHost: x\r\n\r\n",
        414,
        "uriTooLong"),
    MalformedRequest(
        "a 20 KB header", "GET /v1/apps HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "b", count: 20_000))\r\n\r\n",
        431,
        "headerTooLarge"),
    MalformedRequest("no Host in HTTP/1.1", "GET /healthz HTTP/1.1\r\n\r\n", 400, "badRequest"),
    MalformedRequest("two Host fields", "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "badRequest"),
    MalformedRequest(
        "a header folded over two lines", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n", 400, "badHeader"),
    MalformedRequest(
        "a control character in a header value", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\u{1b}b\r\n\r\n", 400,
        "badHeader"),
    MalformedRequest(
        "a terminal escape in the method", "G\u{1b}[31mET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 400, "badRequest"),
]

@Suite("Malformed requests", .testThreads)
struct MalformedRequestTests {
    /// Sends raw bytes and reads until the server closes the connection (at most 10 s; before these
    /// checks several of the requests got no answer until the 60 s idle timeout).
    static func exchange(_ bytes: [UInt8], port: UInt16) async throws -> [UInt8] {
        try await TestClient.offPool {
            let socket = try RawSocket(port: port, timeout: 10)
            defer { socket.close() }
            try socket.send(bytes)
            return try socket.readToEnd()
        }
    }

    @Test(
        "each is answered at once with the status RFC 9110/9112 gives, a JSON error, and the connection closed",
        arguments: malformedRequests)
    func answered(_ request: MalformedRequest) async throws {
        try await ServiceHarness.with { harness in
            let bytes = try await Self.exchange(request.bytes, port: harness.service.port)
            let response = try RawSocket.response(bytes)
            #expect(response.status == request.status, "\(response.text)")
            #expect(response.errorCode == request.code, "\(response.text)")
            #expect(response.headers["content-type"] == "application/json")
            #expect(response.headers["connection"]?.lowercased() == "close")
            // One answer only: nothing after the head was run as another request.
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(text.components(separatedBy: "\r\n").filter { $0.hasPrefix("HTTP/1.") }.count == 1, "\(text)")
            #expect(try await harness.owner.get("/healthz").status == 200)
        }
    }

    @Test("a NUL inside the Authorization header is refused, not cut into a valid token")
    func nulInAuthorization() async throws {
        try await ServiceHarness.with { harness in
            let token = harness.service.ownerToken
            let bytes =
                Array("GET /v1/apps HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)".utf8) + [0]
                + Array("junk\r\nConnection: close\r\n\r\n".utf8)
            let response = try RawSocket.response(try await Self.exchange(bytes, port: harness.service.port))
            #expect(response.status == 400)
            #expect(response.errorCode == "badHeader")
            // The same token without the NUL is the owner's.
            #expect(try await harness.owner.get("/v1/apps").status == 200)
        }
    }

    @Test("control characters a client sends are escaped in the text log")
    func logEscapes() {
        let lines = Mutex<[String]>([])
        let logger = ServerLogger(format: .text, sink: { line in lines.withLock { $0.append(line) } })
        logger.info("request", ["method": "G\u{1b}[31mET", "path": "/a b"])
        let line = lines.withLock { $0.first } ?? ""
        #expect(!line.unicodeScalars.contains { $0.value < 0x20 })
        #expect(line.contains(#"method=G\u{1b}[31mET"#))
        #expect(line.contains(#"path="/a b""#))
    }
}
