import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// Raw sockets, on purpose: these tests are about what goes over the wire, and send what Chime's
// HTTPClient (libcurl) cannot or will not — malformed and ambiguous framing (MalformedRequestTests),
// a head with no body after it or a chunked body (HTTPServerTests), bytes outside ASCII in the
// request line (PathEncodingTests), heads sent a byte at a time, connections that send nothing or
// never read (HostileClientTests, HTTPServerTests, EventResumeTests). Every other request and
// event stream goes through `TestClient` / `SSEClient`, which are HTTPClient. The answers these
// tests read back are whole responses with a Content-Length, split by `RawSocket.response`.

/// A connected blocking TCP socket with a receive timeout.
final class RawSocket: @unchecked Sendable {
    let fd: Int32

    /// A connection to `127.0.0.1:port`.
    ///
    /// - Parameter source: the local address to connect from (`127.0.0.2`: another client
    ///   address on the same machine), or nil for the default.
    init(port: UInt16, timeout: Int = 15, source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                Glibc.close(fd)
                throw TestClientError(description: "bind to \(source) failed: \(errno)")
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            Glibc.close(fd)
            throw TestClientError(description: "connect failed: \(errno)")
        }
        var time = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let result = bytes[sent...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard result > 0 else { throw TestClientError(description: "send failed: \(errno)") }
            sent += result
        }
    }

    /// Reads what is available (blocking until something arrives); empty at end of stream.
    func receive() throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 16384)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0 {
            throw TestClientError(
                description: errno == EAGAIN ? "timed out waiting for the server" : "recv failed: \(errno)")
        }
        return Array(buffer[0..<count])
    }

    func readToEnd() throws -> [UInt8] {
        var all: [UInt8] = []
        while true {
            let chunk = try receive()
            if chunk.isEmpty { return all }
            all += chunk
        }
    }

    /// A connection that sends `head` and then never reads, with a receive buffer as small as the
    /// kernel allows, so what the server sends piles up on its side.
    static func nonReading(port: UInt16, head: String) async throws -> RawSocket {
        try await TestClient.offPool {
            let socket = try RawSocket(port: port, timeout: 10)
            var size: Int32 = 2048
            setsockopt(socket.fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            try socket.send(Array(head.utf8))
            return socket
        }
    }

    /// Reads one whole answer on a keep-alive connection: its head and as many body bytes as its
    /// Content-Length says (each recv blocks at most the socket's timeout).
    func receiveResponse() throws -> TestResponse {
        var bytes: [UInt8] = []
        while true {
            if let response = try? Self.response(bytes),
                response.body.count >= response.headers["content-length"].flatMap(Int.init) ?? 0
            {
                return response
            }
            let chunk = try receive()
            if chunk.isEmpty { return try Self.response(bytes) }
            bytes += chunk
        }
    }

    func close() { Glibc.close(fd) }
}

extension RawSocket {
    /// Splits a whole answer to a raw request (read to the end of the stream) into its status,
    /// lowercased header fields and body, cut at its Content-Length. The answers raw tests read
    /// are the server's error and echo answers, never chunked: a chunked one is an error here.
    static func response(_ bytes: [UInt8]) throws -> TestResponse {
        let marker: [UInt8] = [13, 10, 13, 10]
        guard bytes.count >= 4, let end = (0...(bytes.count - 4)).first(where: { Array(bytes[$0..<$0 + 4]) == marker })
        else {
            throw TestClientError(
                description:
                    "no complete response head in \(bytes.count) bytes: \(String(decoding: bytes.prefix(200), as: UTF8.self))"
            )
        }
        let lines = String(decoding: bytes[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw TestClientError(description: "bad status line \(lines[0])")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        guard headers["transfer-encoding"] == nil else {
            throw TestClientError(
                description: "a chunked answer to a raw request; read it with TestClient or SSEClient")
        }
        var body = Array(bytes[(end + 4)...])
        if let length = headers["content-length"].flatMap(Int.init), body.count > length {
            body = Array(body.prefix(length))
        }
        return TestResponse(status: status, headers: headers, body: body)
    }
}
