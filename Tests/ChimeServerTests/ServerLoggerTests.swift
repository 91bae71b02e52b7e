import ChimeCore
import Foundation
import Synchronization
import TestThreads
import Testing

@testable import ChimeServer

#if canImport(Glibc)
    import Glibc
#endif

@Suite("ServerLogger", .testThreads)
struct ServerLoggerTests {
    @Test(
        "the hand-built timestamp is what ISO8601FormatStyle writes, for dates across years, leap days and millisecond edges"
    )
    func timestamp() {
        let style = Date.ISO8601FormatStyle().year().month().day().time(includingFractionalSeconds: true).timeZone(
            separator: .omitted)
        var dates = [0, 951_782_400, 1_709_164_800.5, 1_796_137_000.999, 1_796_137_000.0005, 4_102_444_799.123].map(
            Date.init(timeIntervalSince1970:))
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            dates.append(Date(timeIntervalSince1970: Double.random(in: 0..<4_102_444_800, using: &generator)))
        }
        for date in dates {
            #expect(ServerLogger.timestamp(date) == date.formatted(style), "\(date.timeIntervalSince1970)")
        }
    }

    @Test("the access log's milliseconds are what String(format: \"%.2f\") writes")
    func milliseconds() {
        for seconds in [
            0, 0.000_001, 0.000_004, 0.000_123_4, 0.001, 0.012_345_6, 0.099_999, 0.1, 1.234_567, 12.3, 61.000_049,
            3600.5,
        ] {
            #expect(ServerLogger.milliseconds(seconds) == String(format: "%.2f", seconds * 1000), "\(seconds)")
        }
    }

    @Test("a field with a space or a quote is quoted, others are written as they are")
    func quoting() {
        let lines = Mutex<[String]>([])
        let logger = ServerLogger(sink: { line in lines.withLock { $0.append(line) } })
        logger.info("request", ["route": "/v1/apps/{app}/requests", "agent": "curl 8", "odd": "a\"b"])
        let line = lines.withLock { $0[0] }
        #expect(line.hasSuffix(#"INFO request route=/v1/apps/{app}/requests agent="curl 8" odd="a\"b""#), "\(line)")
    }

    @Test("a buffered logger writes its lines in order: on flush, when the buffer fills, and at once for a warning")
    func buffered() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let logger = ServerLogger.buffered(
            format: .text, descriptor: ends[1], interval: .seconds(3600), capacity: 4096)
        func drain() -> String {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            let flags = fcntl(ends[0], F_GETFL)
            _ = fcntl(ends[0], F_SETFL, flags | O_NONBLOCK)
            while true {
                let count = read(ends[0], &chunk, chunk.count)
                if count <= 0 { break }
                bytes += chunk[..<count]
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        logger.info("first", ["n": "1"])
        logger.info("second", ["n": "2"])
        #expect(drain().isEmpty, "an info line waits for its batch")
        logger.warning("third", ["n": "3"])
        let written = drain().split(separator: "\n")
        #expect(written.count == 3)
        #expect(written.map { $0.split(separator: " ")[2] } == ["first", "second", "third"])
        // A full buffer is written without waiting for the interval.
        for i in 0..<100 { logger.info("filling", ["i": String(i), "pad": String(repeating: "x", count: 60)]) }
        let filled = drain().split(separator: "\n")
        #expect(filled.count >= 40 && filled.count < 100, "\(filled.count)")
        logger.flush()
        close(ends[1])
        let rest = drain().split(separator: "\n")
        #expect(filled.count + rest.count == 100)
        #expect((filled + rest).enumerated().allSatisfy { $0.element.contains("i=\($0.offset) ") })
    }

    @Test("lines with spaces, quotes, control characters and non-ASCII text are written as before")
    func escaping() throws {
        let lines = Mutex<[String]>([])
        let text = ServerLogger(sink: { line in lines.withLock { $0.append(line) } })
        let json = ServerLogger(format: .json, sink: { line in lines.withLock { $0.append(line) } })
        let values = [
            "", "plain", "a b", "a\"b", "tab\there", "esc\u{1b}[31m", "caf\u{e9}", "c1\u{85}", "back\\slash",
            "del\u{7f}",
        ]
        for value in values {
            text.info("m \(value)", ["k": value])
            json.info("m \(value)", ["k \(value)": value])
        }
        let written = lines.withLock { $0 }
        for (i, value) in values.enumerated() {
            let plain = written[2 * i].split(separator: " ", maxSplits: 2)[2]
            let escaped = ServerLogger.escaped(value)
            let field =
                escaped.utf8.contains(where: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\"") })
                ? ServerLogger.quote(value) : escaped
            #expect(plain == "\(ServerLogger.escaped("m \(value)")) k=\(field)", "\(value.debugDescription)")
            let object = try JSONValue.parse(written[2 * i + 1])
            #expect(object["message"] == .string("m \(value)"))
            #expect(object["k \(value)"] == .string(value))
            #expect(written[2 * i + 1].hasSuffix(",\(ServerLogger.quote("k \(value)")):\(ServerLogger.quote(value))}"))
        }
    }
}
