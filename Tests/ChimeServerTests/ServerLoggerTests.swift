import Foundation
import Synchronization
import TestThreads
import Testing

@testable import ChimeServer

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
}
