import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// HTTP/1.1 over a Unix-domain stream socket, for a service started with `chime serve --listen
/// unix:/path` (URLSession speaks only TCP). One connection per request, closed after the answer.
///
/// The socket calls block, so each request runs on a thread of its own and the caller awaits it
/// through a continuation: Swift's cooperative threads are never held up. Cancelling the awaiting
/// task shuts the socket down, which ends a followed event stream.
struct UnixSocketTransport: Sendable {
    /// The socket file.
    let path: String
    /// How long connecting, sending, and waiting for each part of an answer may take.
    let timeout: TimeInterval
    /// The command that starts a service on this socket, for the error when none listens.
    let startCommand: String

    /// Sends one request and reads the whole answer.
    func send(method: String, target: String, headers: [(String, String)], body: [UInt8]?) async throws -> ServiceClient.Response {
        let request = try encode(method: method, target: target, headers: headers, body: body)
        return try await exchange(request) { _, reader in
            let head = try reader.readHead()
            var data: [UInt8] = []
            try reader.readBody(of: head, method: method) { data += $0 }
            return ServiceClient.Response(status: head.status, body: Data(data), headers: head.headers)
        }
    }

    /// Sends a GET and hands the body of a 2xx answer to `onData` as it arrives, until the service
    /// ends it or the task is cancelled. A non-2xx answer is read whole and thrown as a
    /// ``CommandError`` with the service's message.
    func stream(target: String, headers: [(String, String)], onData: @escaping @Sendable ([UInt8]) -> Void) async throws {
        let request = try encode(method: "GET", target: target, headers: headers, body: nil)
        try await exchange(request) { connection, reader in
            let head = try reader.readHead()
            guard (200..<300).contains(head.status) else {
                var data: [UInt8] = []
                try reader.readBody(of: head, method: "GET") { data += $0 }
                throw CommandError("the event stream answered: " + ServiceClient.describeFailure(status: head.status, body: Data(data)))
            }
            // Events come whenever they happen: no time limit between them.
            connection.setReceiveTimeout(0)
            do {
                try reader.readBody(of: head, method: "GET", onData)
            } catch let failure as UnixSocketConnection.Failure where failure.kind == .cancelled {
                return
            }
        }
    }

    /// Connects, sends `request`, and runs `body` on the answer, on a thread of its own.
    private func exchange<T: Sendable>(
        _ request: [UInt8], _ body: @escaping @Sendable (UnixSocketConnection, inout HTTPResponseReader) throws -> T
    ) async throws -> T {
        let connection = UnixSocketConnection()
        let (path, timeout) = (self.path, self.timeout)
        do {
            return try await withTaskCancellationHandler {
                try await Self.onOwnThread {
                    try connection.connect(path: path, timeout: timeout)
                    defer { connection.close() }
                    try connection.send(request)
                    var reader = HTTPResponseReader(source: connection.receive)
                    return try body(connection, &reader)
                }
            } onCancel: {
                connection.cancel()
            }
        } catch {
            throw explain(error)
        }
    }

    /// The request's bytes: request line, `Host: localhost`, the headers, `Content-Length`,
    /// `Connection: close`, and the body.
    func encode(method: String, target: String, headers: [(String, String)], body: [UInt8]?) throws -> [UInt8] {
        func isToken(_ text: String) -> Bool {
            !text.isEmpty && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }
        }
        guard isToken(method) else { throw CommandError("bad HTTP method \(method)") }
        guard target.hasPrefix("/"), target.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw CommandError("bad request path \(target); percent-encode spaces and other reserved characters")
        }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: localhost\r\n"
        for (name, value) in headers {
            guard isToken(name), !value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else {
                throw CommandError("the header \(name) cannot be sent: names are single words, values one line")
            }
            head += "\(name): \(value)\r\n"
        }
        if let body {
            head += "Content-Length: \(body.count)\r\n"
        } else if ["POST", "PUT", "PATCH"].contains(method) {
            head += "Content-Length: 0\r\n"
        }
        head += "Connection: close\r\n\r\n"
        return Array(head.utf8) + (body ?? [])
    }

    /// Maps the connection's failures to messages that say what to do.
    func explain(_ error: any Error) -> any Error {
        guard let failure = error as? UnixSocketConnection.Failure else { return error }
        switch failure.kind {
        case .noService:
            return CommandError("no service listening on \(path); start it with `\(startCommand)`")
        case .permissionDenied:
            return CommandError("permission denied connecting to \(path); run as the user who started `chime serve` (the socket is mode 0600)")
        case .timedOut:
            return CommandError("the Chime service on \(path) did not answer within \(Int(timeout)) s; is it overloaded or stopped?")
        case .cancelled:
            return CancellationError()
        case .closed, .malformed, .system:
            return CommandError("talking to the Chime service on \(path): \(failure.message)")
        }
    }

    /// Runs blocking work on a new thread and resumes the caller with its result.
    static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.name = "chime-unix-socket"
            thread.start()
        }
    }
}

/// One blocking connection to a Unix socket. `Sendable`: the descriptor is behind a lock, so
/// ``cancel()`` may shut it down from another thread while a call blocks on it.
final class UnixSocketConnection: Sendable {
    struct Failure: Error, CustomStringConvertible {
        enum Kind: Sendable { case noService, permissionDenied, timedOut, cancelled, closed, malformed, system }
        var kind: Kind
        var message: String
        var description: String { message }
    }

    private struct State {
        var fd: Int32 = -1
        var cancelled = false
    }

    private let state = Mutex(State())

    /// Connects, with `timeout` for connecting, each send and each receive.
    func connect(path: String, timeout: TimeInterval) throws {
        let bytes = Array(path.utf8)
        var address = sockaddr_un()
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw Failure(kind: .system, message: "the socket path \(path) is too long")
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(kind: .system, message: "cannot create a socket: \(Self.lastError())") }
        let cancelled = state.withLock { state -> Bool in
            if !state.cancelled { state.fd = fd }
            return state.cancelled
        }
        if cancelled {
            Glibc.close(fd)
            throw Failure(kind: .cancelled, message: "cancelled")
        }
        var time = Self.timeval(timeout)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        var result: Int32
        repeat {
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
        } while result != 0 && errno == EINTR
        guard result == 0 else {
            let code = errno
            switch code {
            case ENOENT, ECONNREFUSED, ENOTDIR: throw Failure(kind: .noService, message: Self.lastError(code))
            case EACCES, EPERM: throw Failure(kind: .permissionDenied, message: Self.lastError(code))
            case EAGAIN, ETIMEDOUT, EINPROGRESS: throw Failure(kind: .timedOut, message: Self.lastError(code))
            default: throw failure(code, doing: "connect")
            }
        }
    }

    func send(_ bytes: [UInt8]) throws {
        let fd = state.withLock { $0.fd }
        var sent = 0
        while sent < bytes.count {
            let result = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else { throw failure(errno, doing: "send") }
            sent += result
        }
    }

    /// Blocks until bytes arrive; empty at the end of the stream.
    func receive() throws -> [UInt8] {
        let fd = state.withLock { $0.fd }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count >= 0 {
                if count == 0, state.withLock({ $0.cancelled }) { throw Failure(kind: .cancelled, message: "cancelled") }
                return Array(buffer[0..<count])
            }
            if errno == EINTR { continue }
            throw failure(errno, doing: "receive")
        }
    }

    /// Sets the receive timeout in seconds; 0 waits without limit.
    func setReceiveTimeout(_ seconds: TimeInterval) {
        let fd = state.withLock { $0.fd }
        var time = Self.timeval(seconds)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Wakes a blocked call (it then fails or ends as cancelled); the thread that owns the
    /// connection closes it.
    func cancel() {
        state.withLock { state in
            state.cancelled = true
            if state.fd >= 0 { Glibc.shutdown(state.fd, Int32(SHUT_RDWR)) }
        }
    }

    func close() {
        state.withLock { state in
            if state.fd >= 0 { Glibc.close(state.fd) }
            state.fd = -1
        }
    }

    private func failure(_ code: Int32, doing action: String) -> Failure {
        if state.withLock({ $0.cancelled }) { return Failure(kind: .cancelled, message: "cancelled") }
        switch code {
        case EAGAIN, EWOULDBLOCK: return Failure(kind: .timedOut, message: "timed out")
        case EPIPE, ECONNRESET: return Failure(kind: .closed, message: "the service closed the connection")
        default: return Failure(kind: .system, message: "\(action) failed: \(Self.lastError(code))")
        }
    }

    private static func lastError(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

    private static func timeval(_ seconds: TimeInterval) -> Glibc.timeval {
        let whole = max(0, seconds.rounded(.down))
        return Glibc.timeval(tv_sec: Int(whole), tv_usec: Int((max(0, seconds) - whole) * 1_000_000))
    }
}

/// Reads one HTTP/1.1 response from a byte source: the status line and header fields, then the
/// body framed by `Transfer-Encoding: chunked`, by `Content-Length`, or by the end of the stream.
struct HTTPResponseReader {
    struct Head: Sendable {
        var status: Int
        /// Lowercased names; a repeated field's values joined with `, `.
        var headers: [String: String]
    }

    /// The largest status line, header field or chunk-size line accepted.
    static let lineLimit = 64 * 1024

    /// Returns what arrived next, blocking; empty at the end of the stream.
    private let source: () throws -> [UInt8]
    private var buffer: [UInt8] = []
    private var position = 0
    private var ended = false

    init(source: @escaping () throws -> [UInt8]) {
        self.source = source
    }

    /// Reads the status line and header fields, skipping interim (1xx) answers.
    mutating func readHead() throws -> Head {
        while true {
            guard let statusLine = try readLine() else {
                throw UnixSocketConnection.Failure(kind: .closed, message: "the service closed the connection without answering")
            }
            let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let status = Int(parts[1]) else {
                throw malformed("the status line is '\(statusLine.prefix(100))'")
            }
            var headers: [String: String] = [:]
            var total = 0
            while true {
                guard let line = try readLine() else { throw malformed("the connection closed inside the header fields") }
                if line.isEmpty { break }
                total += line.utf8.count
                guard total <= Self.lineLimit, let colon = line.firstIndex(of: ":") else {
                    throw malformed("the header field '\(line.prefix(100))' is not NAME: VALUE")
                }
                let name = line[..<colon].lowercased()
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                headers[name] = headers[name].map { "\($0), \(value)" } ?? value
            }
            if (100..<200).contains(status) && status != 101 { continue }
            return Head(status: status, headers: headers)
        }
    }

    /// Reads the body of `head` (the answer to `method`), handing it over piece by piece.
    mutating func readBody(of head: Head, method: String, _ onData: ([UInt8]) throws -> Void) throws {
        if method == "HEAD" || head.status == 204 || head.status == 304 || (100..<200).contains(head.status) { return }
        if let encoding = head.headers["transfer-encoding"] {
            let codings = encoding.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard codings.last == "chunked" else { throw malformed("unsupported Transfer-Encoding '\(encoding)'") }
            try readChunked(onData)
        } else if let length = head.headers["content-length"] {
            guard let count = Int(length), count >= 0 else { throw malformed("the Content-Length '\(length)' is not a number") }
            try read(count, onData)
        } else {
            while let piece = try next() { try onData(piece) }
        }
    }

    private mutating func readChunked(_ onData: ([UInt8]) throws -> Void) throws {
        while true {
            guard let line = try readLine() else { throw closedEarly() }
            let sizeText = line.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard let size = Int(sizeText, radix: 16), size >= 0 else { throw malformed("the chunk size '\(line.prefix(40))' is not hexadecimal") }
            if size == 0 {
                // Trailer fields, up to the empty line.
                while let trailer = try readLine(), !trailer.isEmpty {}
                return
            }
            try read(size, onData)
            guard let end = try readLine(), end.isEmpty else { throw malformed("a chunk does not end with CRLF") }
        }
    }

    /// Hands over exactly `count` bytes.
    private mutating func read(_ count: Int, _ onData: ([UInt8]) throws -> Void) throws {
        var remaining = count
        while remaining > 0 {
            if position == buffer.count, try !fill() { throw closedEarly() }
            let take = min(remaining, buffer.count - position)
            try onData(Array(buffer[position..<position + take]))
            position += take
            remaining -= take
        }
    }

    /// The next buffered or received bytes, or nil at the end of the stream.
    private mutating func next() throws -> [UInt8]? {
        if position == buffer.count, try !fill() { return nil }
        defer { position = buffer.count }
        return Array(buffer[position...])
    }

    /// One line without its CRLF (a bare LF is accepted), or nil at the end of the stream with
    /// nothing buffered.
    private mutating func readLine() throws -> String? {
        var searched = position
        while true {
            if let newline = buffer[searched...].firstIndex(of: 10) {
                var end = newline
                if end > position, buffer[end - 1] == 13 { end -= 1 }
                let line = String(decoding: buffer[position..<end], as: UTF8.self)
                position = newline + 1
                return line
            }
            let scanned = buffer.count - position
            guard scanned <= Self.lineLimit else { throw malformed("a line is longer than \(Self.lineLimit) bytes") }
            if try !fill() {
                if position == buffer.count { return nil }
                throw malformed("the connection closed inside a line")
            }
            searched = position + scanned  // `fill` may have moved the unread bytes to the front
        }
    }

    /// Receives more bytes into the buffer; false at the end of the stream.
    private mutating func fill() throws -> Bool {
        if ended { return false }
        let piece = try source()
        if piece.isEmpty {
            ended = true
            return false
        }
        if position > 0 && position == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            position = 0
        } else if position > 64 * 1024 {
            buffer.removeFirst(position)
            position = 0
        }
        buffer += piece
        return true
    }

    private func closedEarly() -> UnixSocketConnection.Failure {
        UnixSocketConnection.Failure(kind: .closed, message: "the connection closed before the end of the answer; did the service stop?")
    }

    private func malformed(_ message: String) -> UnixSocketConnection.Failure {
        UnixSocketConnection.Failure(kind: .malformed, message: "malformed response: \(message)")
    }
}
