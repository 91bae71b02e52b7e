import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

/// Hostile HTTP/2 clients that write frames themselves (Tests/Support/HTTP2Clients/clients.py),
/// against an ``HTTPServer`` on loopback with ``TestHandler``: what the server ends (and with which
/// GOAWAY code), what it keeps bounded, and that a well-behaved connection beside it is answered.
/// `make abuse --only http2` runs the same clients against `chime serve` at full size.
@Suite("HTTP/2 abuse", .testThreads)
struct HTTP2AbuseTests {
    /// A server on a free loopback port with `configure` applied; its port as text.
    static func withServer(
        _ configure: (inout HTTPServer.Configuration) -> Void = { _ in },
        _ body: (String, HTTPServer) async throws -> Void
    ) async throws {
        let server = try HTTPServer.started(TestHandler(), configure)
        do {
            try await body(String(server.port), server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    static func integer(_ value: JSONValue?) -> Int {
        if case .integer(let number)? = value { return Int(number) }
        return 0
    }

    /// A request on a new h2c connection with curl: its status.
    static func answered(_ port: String, _ path: String = "/echo") async throws -> Int {
        try await HTTP2Tests.curl(["--http2-prior-knowledge", "http://127.0.0.1:\(port)\(path)"]).status
    }

    @Test("floods of empty DATA, empty CONTINUATION and zero-length HEADERS frames end the connection with a GOAWAY")
    func emptyFrames() async throws {
        try await Self.withServer { port, _ in
            // Before: 2,000,000 empty DATA frames were all read, the connection kept.
            let data = try await HTTP2Tests.client("empty-frames", "127.0.0.1", port, "-", "data", "2000000", "20")
            #expect(data["goaway"] == .string("ENHANCE_YOUR_CALM"), "\(data)")
            // Before: nghttp2's CONTINUATION limit closed the connection without a GOAWAY.
            let continuation = try await HTTP2Tests.client(
                "empty-frames", "127.0.0.1", port, "-", "continuation", "100000", "20")
            #expect(continuation["goaway"] == .string("ENHANCE_YOUR_CALM"), "\(continuation)")
            // Each a malformed request, reset by nghttp2 (or the connection ended, PROTOCOL_ERROR, when
            // one comes before the client's SETTINGS). Before: the streams were reset one by one
            // until the client stopped reading their resets (nghttp2's flood limit, no GOAWAY seen).
            let headers = try await HTTP2Tests.client("empty-frames", "127.0.0.1", port, "-", "headers", "100000", "20")
            #expect(
                headers["goaway"] == .string("ENHANCE_YOUR_CALM") || headers["goaway"] == .string("PROTOCOL_ERROR"),
                "\(headers)")
            #expect(try await Self.answered(port) == 200)
        }
    }

    @Test("a client sending without pause gets its share of the I/O loop: another connection is answered meanwhile")
    func fairShare() async throws {
        try await Self.withServer { port, _ in
            // PING acknowledgements nobody asked for (valid frames, read and dropped) as fast as they go for 12 s.
            // Before, the loop read this connection for as long as it sent, so the probe's requests
            // waited until its connection was cut as silent (10 s).
            async let flood = HTTP2Tests.client("empty-frames", "127.0.0.1", port, "-", "pings", "1000000000", "12")
            let probe = try await HTTP2Tests.client(
                "probe", "http://127.0.0.1:\(port)", "token", "com.example.probe",
                String(repeating: "ab", count: 32), "12", "0.2")
            let attack = try await flood
            #expect(Self.integer(attack["sent"]) > 100_000, "\(attack)")
            #expect(probe["failures"] == .object([:]), "\(probe)")
            #expect(
                Self.integer(probe["healthz"]?["count"]) > 0 && Self.integer(probe["push"]?["count"]) > 0, "\(probe)")
        }
    }

    @Test("an HPACK dynamic-table bomb: the first request is answered, the connection ended with ENHANCE_YOUR_CALM")
    func hpackBomb() async throws {
        try await Self.withServer { port, _ in
            // Before: each request was reset (INTERNAL_ERROR) and the connection kept taking more.
            let bomb = try await HTTP2Tests.client("hpack-bomb", "127.0.0.1", port, "-", "50", "16000")
            #expect(bomb["first"] == .integer(200), "\(bomb)")
            #expect(bomb["goaway"] == .string("ENHANCE_YOUR_CALM"), "\(bomb)")
            // Within the limit's four times a header list over it is answered 431, as before.
            let big = try await HTTP2Tests.curl([
                "--http2-prior-knowledge", "-H", "X-Big: " + String(repeating: "b", count: 20_000),
                "http://127.0.0.1:\(port)/echo",
            ])
            #expect(big.status == 431)
            #expect(try await Self.answered(port) == 200)
        }
    }

    @Test(
        "answers a client never opens its window for: held up to the limit, the rest reset, stalled ones reset after the stall time"
    )
    func stalledWindow() async throws {
        try await Self.withServer({ configuration in
            configuration.http2.maxQueuedResponseBytes = 256 * 1024
            configuration.http2.stallTimeout = .seconds(2)
        }) { port, _ in
            // Stream windows at 0: 32 answers of 64 KiB asked for. Before: all 32 were kept (2 MiB)
            // and never ended.
            let streams = try await HTTP2Tests.client(
                "stall", "127.0.0.1", port, "-", "/large?bytes=65536", "-", "32", "20", "stream")
            // At most the limit and one answer are held (four of 64 KiB reach 256 KiB); the others
            // are reset when they come back, the held ones when the stall time has passed.
            let answered = Self.integer(streams["statuses"]?["200"])
            #expect(answered >= 1 && answered <= 5, "\(streams)")
            #expect(
                streams["resets"] == .object(["ENHANCE_YOUR_CALM": .integer(32)])
                    && streams["unfinished"] == .integer(0), "\(streams)")
            #expect(streams["dataBytes"] == .integer(0), "\(streams)")
            // The connection's own window left to run out: it is ended.
            let connection = try await HTTP2Tests.client(
                "stall", "127.0.0.1", port, "-", "/large?bytes=65536", "-", "32", "20", "connection")
            #expect(connection["goaway"] == .string("ENHANCE_YOUR_CALM"), "\(connection)")
            // An event stream whose first event cannot be sent: reset after the stall time. Before: kept.
            let events = try await HTTP2Tests.client(
                "stall", "127.0.0.1", port, "-", "/stream", "-", "1", "20", "stream")
            #expect(events["resets"] == .object(["ENHANCE_YOUR_CALM": .integer(1)]), "\(events)")
            #expect(try await Self.answered(port, "/large?bytes=300000") == 200)
        }
    }

    @Test(
        "one connection's requests are handed to the handler at most maxHandlers at a time, the rest in turn as answers come back; all answered",
        .timeLimit(.minutes(2)))
    func handlerShare() async throws {
        let handler = TestHandler()
        let server = try HTTPServer.started(handler) { $0.http2.maxHandlers = 2 }
        do {
            // Six requests at once on one HTTP/2 connection (httpx), each held until the test lets one
            // go. Before: all six were handed to the handler at once (a client asking 128 pages of
            // 1 MiB had all 128 made at once, 291 MB).
            async let answer = HTTP2Tests.client("many", "http://127.0.0.1:\(server.port)/gate", "-", "-", "6")
            for released in 0..<6 {
                let expected = min(6, released + 2)
                await handler.gate.waitForEntered(expected)
                #expect(handler.gate.entered == expected, "after \(released) answers")
                handler.gate.releaseOne()
            }
            let result = try await answer
            #expect(result["statuses"] == .object(["200": .integer(6)]), "\(result)")
            #expect(handler.gate.peak == 2)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test("idle and dribbling connections are ended at the head timeout with GOAWAY NO_ERROR")
    func idleAndSlow() async throws {
        try await Self.withServer({ $0.headerTimeout = .seconds(2) }) { port, _ in
            // Before: closed at the deadline without a GOAWAY.
            let idle = try await HTTP2Tests.client("idle", "127.0.0.1", port, "-", "5", "20")
            #expect(idle["goaways"] == .object(["NO_ERROR": .integer(5)]), "\(idle)")
            // A HEADERS frame dribbled a byte every 0.2 s needs about 10 s; a head has the head
            // timeout, as over HTTP/1.1. Before: once the frame began it had the body timeout (30 s)
            // too, and was answered.
            let dribble = try await HTTP2Tests.client("dribble", "127.0.0.1", port, "-", "/echo", "0.2", "30", "head")
            #expect(dribble["goaway"] == .string("NO_ERROR") && dribble["statuses"] == .object([:]), "\(dribble)")
            #expect(Self.integer(dribble["sentBytes"]) < Self.integer(dribble["ofBytes"]), "\(dribble)")
            #expect(try await Self.answered(port) == 200)
        }
    }

    @Test(
        "connections each opening the most streams with bodies that never come: ended at the body timeout with GOAWAY NO_ERROR"
    )
    func crowd() async throws {
        try await Self.withServer({ $0.bodyTimeout = .seconds(2) }) { port, _ in
            // Before: closed at the deadline without a GOAWAY.
            let crowd = try await HTTP2Tests.client("crowd", "127.0.0.1", port, "-", "20", "128", "/echo", "-", "30")
            #expect(
                crowd["closed"] == .integer(20) && crowd["goaways"] == .object(["NO_ERROR": .integer(20)]), "\(crowd)")
            #expect(try await Self.answered(port) == 200)
        }
    }
}
