import ChimeCore
import Foundation

struct SSEEvent: Sendable {
    var id: String?
    var event: String?
    var data: String
    var json: JSONValue? { try? JSONValue.parse(data) }
}

/// Reads a server-sent event stream on its own thread and hands events out in order.
final class SSEClient: @unchecked Sendable {
    let status: Int
    let headers: [String: String]
    private let socket: RawSocket
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var events: [SSEEvent] = []
    private var comments = 0
    private var ended = false
    private var closed = false

    private init(socket: RawSocket, status: Int, headers: [String: String], initial: [UInt8]) {
        self.socket = socket
        self.status = status
        self.headers = headers
        let thread = Thread { [self] in self.readLoop(initial: initial) }
        thread.start()
    }

    static func open(_ endpoint: TestEndpoint, path: String, token: String?, lastEventID: String? = nil, headers: [(String, String)] = [],
                     source: String? = nil) async throws -> SSEClient {
        try await TestClient.offPool {
            let socket = try RawSocket(endpoint, timeout: 1, source: source)
            var head = "GET \(path) HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n"
            if let token { head += "Authorization: Bearer \(token)\r\n" }
            if let lastEventID { head += "Last-Event-ID: \(lastEventID)\r\n" }
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            head += "\r\n"
            try socket.send(Array(head.utf8))
            var bytes: [UInt8] = []
            // Generous: while blocking tests hold Swift's cooperative threads, no server handler runs.
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline {
                if let (status, headers, start) = try HTTPParsing.head(bytes) {
                    return SSEClient(socket: socket, status: status, headers: headers, initial: Array(bytes[start...]))
                }
                do {
                    let chunk = try socket.receive()
                    if chunk.isEmpty { break }
                    bytes += chunk
                } catch { continue }
            }
            socket.close()
            throw TestClientError(description: "no response head for \(path)")
        }
    }

    private func readLoop(initial: [UInt8]) {
        var decoder = ChunkDecoder()
        var text = ""
        var pending = initial
        while true {
            text += String(decoding: decoder.feed(pending), as: UTF8.self)
            while let range = text.range(of: "\n\n") {
                let block = String(text[..<range.lowerBound])
                text.removeSubrange(..<range.upperBound)
                parse(block)
            }
            if decoder.finished { break }
            condition.lock()
            let stop = closed
            condition.unlock()
            if stop { break }
            do {
                pending = try socket.receive()
                if pending.isEmpty { break }
            } catch {
                pending = []
            }
        }
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
    }

    private func parse(_ block: String) {
        var event = SSEEvent(data: "")
        var dataLines: [String] = []
        var isComment = true
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(":") { continue }
            isComment = false
            if line.hasPrefix("id: ") { event.id = String(line.dropFirst(4)) }
            else if line.hasPrefix("event: ") { event.event = String(line.dropFirst(7)) }
            else if line.hasPrefix("data: ") { dataLines.append(String(line.dropFirst(6))) }
        }
        condition.lock()
        if isComment {
            comments += 1
        } else if !dataLines.isEmpty {
            event.data = dataLines.joined(separator: "\n")
            events.append(event)
        }
        condition.broadcast()
        condition.unlock()
    }

    /// The next event, waiting up to `timeout` seconds.
    func next(timeout: Double = 30) async throws -> SSEEvent {
        try await TestClient.offPool { [self] in
            let deadline = Date().addingTimeInterval(timeout)
            condition.lock()
            defer { condition.unlock() }
            while events.isEmpty {
                if ended { throw TestClientError(description: "the stream ended") }
                if !condition.wait(until: deadline) { throw TestClientError(description: "no event within \(timeout) s") }
            }
            return events.removeFirst()
        }
    }

    /// Waits until the server ends the stream.
    func waitForEnd(timeout: Double = 10) async throws -> Bool {
        try await TestClient.offPool { [self] in
            let deadline = Date().addingTimeInterval(timeout)
            condition.lock()
            defer { condition.unlock() }
            while !ended {
                if !condition.wait(until: deadline) { return false }
            }
            return true
        }
    }

    /// Waits until at least `count` comment blocks (heartbeats) arrived.
    func waitForComments(_ count: Int, timeout: Double = 10) async throws -> Bool {
        try await TestClient.offPool { [self] in
            let deadline = Date().addingTimeInterval(timeout)
            condition.lock()
            defer { condition.unlock() }
            while comments < count {
                if ended || !condition.wait(until: deadline) { return false }
            }
            return true
        }
    }

    func close() {
        condition.lock()
        closed = true
        condition.unlock()
        socket.shutdownBoth()
    }

    deinit { socket.close() }
}
