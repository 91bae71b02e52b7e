import ChimeCore
import Foundation
import Synchronization
import TestThreads
import Testing

@testable import ChimeServer

#if canImport(Glibc)
    import Glibc
#endif

/// HTTP/1.1 event streams as they go on the wire, written by libmicrohttpd (0 writer threads) and
/// by Chime's ``StreamWriter`` (which takes the socket over once the header is sent): the same
/// bytes, the same end, the same connection afterwards.
@Suite("Event streams on the wire", .testThreads)
struct StreamWriterTests {
    @Test(
        "an HTTP/1.1 stream is chunked, ends with the last chunk when closed, and its connection serves the next request",
        arguments: [0, 1])
    func closedStreamKeepsConnection(writers: Int) async throws {
        let handler = TestHandler()
        let server = try HTTPServer.started(handler) { $0.streamWriterThreads = writers }
        let wire = try WireReader(port: server.port)
        defer { wire.close() }
        try await wire.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        let head = try await wire.head()
        #expect(head.hasPrefix("HTTP/1.1 200"))
        #expect(head.lowercased().contains("transfer-encoding: chunked"))
        let hello = EventStream.frame(event: "hello", id: "1", data: Array("first".utf8))
        #expect(try await wire.body(count: hello.count) == hello)
        let stream = try #require(handler.streams.withLock { $0.first })
        let frames = (2...4).map { EventStream.frame(event: "n", id: String($0), data: Array("event \($0)".utf8)) }
        for frame in frames { stream.send(frame) }
        #expect(try await wire.body(count: frames.joined().count) == Array(frames.joined()))
        stream.close()
        #expect(try await wire.lastChunk())
        // The response is over and the connection is kept: the next request on it is answered.
        try await wire.send("GET /echo HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try await wire.head().hasPrefix("HTTP/1.1 200"))
        await server.stop()
    }

    @Test("an HTTP/1.0 stream is the frames as they are, ended by closing the connection", arguments: [0, 1])
    func http10Stream(writers: Int) async throws {
        let handler = TestHandler()
        let server = try HTTPServer.started(handler) { $0.streamWriterThreads = writers }
        let wire = try WireReader(port: server.port)
        defer { wire.close() }
        try await wire.send("GET /stream HTTP/1.0\r\n\r\n")
        let head = try await wire.head()
        #expect(head.hasPrefix("HTTP/1.") && head.contains(" 200 "))
        #expect(!head.lowercased().contains("chunked"))
        let stream = try #require(handler.streams.withLock { $0.first })
        let more = EventStream.frame(event: "n", id: "2", data: Array("second".utf8))
        stream.send(more)
        stream.close()
        let hello = EventStream.frame(event: "hello", id: "1", data: Array("first".utf8))
        #expect(try await wire.rest() == hello + more)
        await server.stop()
    }

    @Test("a client that hangs up ends its stream, and nothing more is queued for it", arguments: [0, 1])
    func clientHangsUp(writers: Int) async throws {
        let handler = TestHandler()
        let server = try HTTPServer.started(handler) {
            $0.streamWriterThreads = writers
            $0.heartbeatInterval = .seconds(3600)
        }
        let wire = try WireReader(port: server.port)
        try await wire.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = try await wire.head()
        let stream = try #require(handler.streams.withLock { $0.first })
        wire.close()
        let deadline = ContinuousClock.now + .seconds(60)
        while !stream.isEnded || server.openStreams > 0, ContinuousClock.now < deadline {
            try await Sleep.for(.milliseconds(10))
        }
        #expect(stream.isEnded)
        #expect(server.openStreams == 0)
        #expect(!stream.send(Array("data: late\n\n".utf8)))
        await server.stop()
    }

    @Test(
        "fifty streams over two writers each get every event, in order, when events come faster than they are written")
    func manyStreams() async throws {
        let handler = TestHandler()
        let server = try HTTPServer.started(handler) { $0.streamWriterThreads = 2 }
        var wires: [WireReader] = []
        defer { for wire in wires { wire.close() } }
        for _ in 0..<50 {
            let wire = try WireReader(port: server.port)
            wires.append(wire)
            try await wire.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
            _ = try await wire.head()
        }
        let streams = handler.streams.withLock { $0 }
        #expect(streams.count == 50)
        let frames = (2...201).map {
            EventStream.frame(event: "n", id: String($0), data: Array(repeating: UInt8(ascii: "z"), count: $0 * 7))
        }
        for frame in frames {
            for stream in streams { stream.send(frame) }
        }
        let hello = EventStream.frame(event: "hello", id: "1", data: Array("first".utf8))
        let expected = hello + Array(frames.joined())
        for wire in wires { #expect(try await wire.body(count: expected.count) == expected) }
        for stream in streams { stream.close() }
        for wire in wires { #expect(try await wire.lastChunk()) }
        await server.stop()
    }
}

/// A raw HTTP/1.x client that reads a response's head, then its body through HTTP/1.1's chunked
/// framing (or as it comes, for HTTP/1.0), checking the framing as it goes.
private final class WireReader: @unchecked Sendable {
    private let socket: RawSocket
    private var buffer: [UInt8] = []
    /// Body bytes of the current chunk still to come (nil: at a chunk's size line).
    private var chunked = false
    private var body: [UInt8] = []

    init(port: UInt16) throws { socket = try RawSocket(port: port, timeout: 60) }

    func close() { socket.close() }

    func send(_ text: String) async throws {
        let socket = self.socket
        try await TestClient.offPool { try socket.send(Array(text.utf8)) }
    }

    /// The status line and header fields of the next response.
    func head() async throws -> String {
        while true {
            if let end = find([13, 10, 13, 10]) {
                let head = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeFirst(end + 4)
                chunked = head.lowercased().contains("transfer-encoding: chunked")
                body = []
                return head
            }
            guard try await fill() else { throw TestClientError(description: "the connection ended in a head") }
        }
    }

    /// The next `count` bytes of the body (across chunks).
    func body(count: Int) async throws -> [UInt8] {
        while body.count < count {
            if try decodeChunk() == nil {
                guard try await fill() else { throw TestClientError(description: "the connection ended in a body") }
            }
        }
        let taken = Array(body[..<count])
        body.removeFirst(count)
        return taken
    }

    /// Whether the body ends here with the last chunk (`0` and an empty trailer).
    func lastChunk() async throws -> Bool {
        while true {
            switch try decodeChunk() {
            case .some(true): return body.isEmpty
            case .some(false): continue
            case nil:
                guard try await fill() else { return false }
            }
        }
    }

    /// Everything until the server closes the connection (a body without framing).
    func rest() async throws -> [UInt8] {
        while try await fill() {}
        defer { buffer = [] }
        return body + buffer
    }

    /// Decodes one chunk from the buffer into `body`: true for the last chunk, false for another,
    /// nil when the buffer does not hold a whole chunk yet.
    private func decodeChunk() throws -> Bool? {
        if !chunked {
            guard !buffer.isEmpty else { return nil }
            body += buffer
            buffer = []
            return false
        }
        guard let lineEnd = find([13, 10]) else { return nil }
        let sizeText = String(decoding: buffer[..<lineEnd], as: UTF8.self)
        guard let size = Int(sizeText, radix: 16) else {
            throw TestClientError(description: "a chunk size line is not hexadecimal: \(sizeText)")
        }
        if size == 0 {
            guard buffer.count >= lineEnd + 4 else { return nil }
            guard buffer[lineEnd + 2] == 13, buffer[lineEnd + 3] == 10 else {
                throw TestClientError(description: "the last chunk has a trailer")
            }
            buffer.removeFirst(lineEnd + 4)
            return true
        }
        let start = lineEnd + 2
        guard buffer.count >= start + size + 2 else { return nil }
        guard buffer[start + size] == 13, buffer[start + size + 1] == 10 else {
            throw TestClientError(description: "a chunk of \(size) bytes does not end with CRLF")
        }
        body += buffer[start..<start + size]
        buffer.removeFirst(start + size + 2)
        return false
    }

    private func find(_ marker: [UInt8]) -> Int? {
        guard buffer.count >= marker.count else { return nil }
        for index in 0...(buffer.count - marker.count) where buffer[index] == marker[0] {
            if Array(buffer[index..<index + marker.count]) == marker { return index }
        }
        return nil
    }

    /// Reads more; false at the end of the connection.
    private func fill() async throws -> Bool {
        let socket = self.socket
        let bytes = try await TestClient.offPool { try socket.receive() }
        buffer += bytes
        return !bytes.isEmpty
    }
}
