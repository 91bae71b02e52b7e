import ChimeCore
import ChimeHTTP
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A response as the test client read it.
struct TestResponse: Sendable {
    var status: Int
    /// Lowercased names.
    var headers: [String: String]
    var body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }
    var json: JSONValue? { try? JSONValue.parse(body) }
    /// `error.code` of an error answer.
    var errorCode: String? {
        if case .string(let code)? = json?["error"]?["code"] { return code }
        return nil
    }
    var reason: String? {
        if case .string(let reason)? = json?["reason"] { return reason }
        return nil
    }
}

struct TestClientError: Error, CustomStringConvertible {
    var description: String
}

/// Where the test client connects.
enum TestEndpoint: Sendable {
    case tcp(port: UInt16)
    case unix(path: String)

    var http: HTTPEndpoint {
        switch self {
        case .tcp(let port): .url("http://127.0.0.1:\(port)")
        case .unix(let path): .unixSocket(path: path)
        }
    }
}

/// The tests' client: Chime's own ``HTTPClient`` (libcurl), with the test's token, answering
/// whatever the status. Tests of the server's framing use ``RawSocket`` instead.
struct TestClient: Sendable {
    var endpoint: TestEndpoint
    var token: String?

    init(port: UInt16, token: String? = nil) {
        endpoint = .tcp(port: port)
        self.token = token
    }

    init(endpoint: TestEndpoint, token: String? = nil) {
        self.endpoint = endpoint
        self.token = token
    }

    func with(token: String?) -> TestClient { TestClient(endpoint: endpoint, token: token) }

    func get(_ path: String, headers: [(String, String)] = []) async throws -> TestResponse {
        try await request("GET", path, headers: headers)
    }

    /// Every page of a list from `path`, following Link rel="next" (at most 100 pages); the
    /// pages' sizes too. A page that is not a 200 list throws.
    func pages(_ path: String) async throws -> (items: [JSONValue], sizes: [Int]) {
        var items: [JSONValue] = []
        var sizes: [Int] = []
        var next: String? = path
        while let target = next, sizes.count < 100 {
            let response = try await get(target)
            guard response.status == 200, case .array(let page)? = response.json else {
                throw TestClientError(description: "GET \(target): \(response.status) \(response.text.prefix(300))")
            }
            items += page
            sizes.append(page.count)
            next = LinkHeader.next(response.headers["link"])
        }
        return (items, sizes)
    }

    func post(_ path: String, json: String? = nil, headers: [(String, String)] = []) async throws -> TestResponse {
        try await request("POST", path, headers: headers, body: json.map { Array($0.utf8) }, contentType: json == nil ? nil : "application/json")
    }

    func put(_ path: String, json: String) async throws -> TestResponse {
        try await request("PUT", path, body: Array(json.utf8), contentType: "application/json")
    }

    func delete(_ path: String) async throws -> TestResponse { try await request("DELETE", path) }

    func request(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
                 contentType: String? = nil) async throws -> TestResponse {
        var fields: [(String, String)] = []
        if let token { fields.append(("Authorization", "Bearer \(token)")) }
        if let contentType { fields.append(("Content-Type", contentType)) }
        let response = try await HTTPClient(endpoint: endpoint.http, timeout: 15).request(method, path, headers: fields + headers, body: body)
        return TestResponse(status: response.status, headers: response.headers, body: response.body)
    }

    /// Runs blocking work on a thread of its own: neither the cooperative pool (the server's
    /// handlers) nor libdispatch's width-limited global queues (the engine's writer) are held up.
    static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.start()
        }
    }
}

/// A connected blocking socket with a receive timeout.
final class RawSocket: @unchecked Sendable {
    let fd: Int32

    /// - Parameter source: the local address to connect from (`127.0.0.2`: another client
    ///   address on the same machine), or nil for the default.
    init(_ endpoint: TestEndpoint, timeout: Int = 15, source: String? = nil) throws {
        switch endpoint {
        case .tcp(let port):
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            if let source {
                var local = sockaddr_in()
                local.sin_family = sa_family_t(AF_INET)
                local.sin_addr.s_addr = inet_addr(source)
                let bound = withUnsafePointer(to: &local) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
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
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard result == 0 else {
                Glibc.close(fd)
                throw TestClientError(description: "connect failed: \(errno)")
            }
        case .unix(let path):
            fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                raw.copyBytes(from: bytes)
                raw[bytes.count] = 0
            }
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard result == 0 else {
                Glibc.close(fd)
                throw TestClientError(description: "connect failed: \(errno)")
            }
        }
        var time = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let result = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard result > 0 else { throw TestClientError(description: "send failed: \(errno)") }
            sent += result
        }
    }

    /// Reads what is available (blocking until something arrives); empty at end of stream.
    func receive() throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 16384)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0 { throw TestClientError(description: errno == EAGAIN ? "timed out waiting for the server" : "recv failed: \(errno)") }
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
            let socket = try RawSocket(.tcp(port: port), timeout: 10)
            var size: Int32 = 2048
            setsockopt(socket.fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            try socket.send(Array(head.utf8))
            return socket
        }
    }

    func shutdownBoth() { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
    func close() { Glibc.close(fd) }
}

enum HTTPParsing {
    /// Splits a complete response (read to end of stream) into status, headers and body.
    static func response(_ bytes: [UInt8]) throws -> TestResponse {
        guard let (status, headers, bodyStart) = try head(bytes) else {
            throw TestClientError(description: "no complete response head in \(bytes.count) bytes: \(String(decoding: bytes.prefix(200), as: UTF8.self))")
        }
        var body = Array(bytes[bodyStart...])
        if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            var decoder = ChunkDecoder()
            body = decoder.feed(body)
        } else if let length = headers["content-length"].flatMap(Int.init), body.count > length {
            body = Array(body.prefix(length))
        }
        return TestResponse(status: status, headers: headers, body: body)
    }

    /// The head, if complete: status, lowercased headers, and where the body starts.
    static func head(_ bytes: [UInt8]) throws -> (Int, [String: String], Int)? {
        let marker: [UInt8] = [13, 10, 13, 10]
        guard bytes.count >= 4, let end = (0...(bytes.count - 4)).first(where: { Array(bytes[$0..<$0 + 4]) == marker }) else { return nil }
        let lines = String(decoding: bytes[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw TestClientError(description: "bad status line \(lines[0])")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, headers, end + 4)
    }
}

/// Decodes a chunked body incrementally.
struct ChunkDecoder {
    private var pending: [UInt8] = []
    private var remaining = 0
    private(set) var finished = false

    mutating func feed(_ bytes: [UInt8]) -> [UInt8] {
        pending += bytes
        var out: [UInt8] = []
        var index = 0
        while index < pending.count, !finished {
            if remaining > 0 {
                let take = min(remaining, pending.count - index)
                out += pending[index..<index + take]
                index += take
                remaining -= take
                if remaining == 0 { remaining = -2 }  // expect CRLF
                continue
            }
            if remaining == -2 {
                guard pending.count - index >= 2 else { break }
                index += 2
                remaining = 0
                continue
            }
            // A size line.
            guard let lineEnd = (index..<max(index, pending.count - 1)).first(where: { pending[$0] == 13 && pending[$0 + 1] == 10 }) else { break }
            let sizeText = String(decoding: pending[index..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) ?? 0
            index = lineEnd + 2
            if size == 0 {
                finished = true
            } else {
                remaining = size
            }
        }
        pending.removeFirst(index)
        return out
    }
}
