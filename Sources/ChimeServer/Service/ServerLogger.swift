import Foundation
import Synchronization

/// Lines on standard error, as text or as JSON lines. Only `main` (the service) chooses the format;
/// libraries are handed a logger.
///
/// ```swift
/// let log = ServerLogger(format: .json)
/// log.info("listening", ["url": "http://127.0.0.1:7878"])
/// ```
public struct ServerLogger: Sendable {
    public enum Format: String, Sendable { case text, json }
    public enum Level: String, Sendable {
        case debug, info, warning, error

        /// The level as the text format writes it, with the space before it.
        var label: String {
            switch self {
            case .debug: " DEBUG"
            case .info: " INFO"
            case .warning: " WARNING"
            case .error: " ERROR"
            }
        }
    }

    public var format: Format
    /// Where lines go; standard error by default. Tests capture lines here.
    public var sink: @Sendable (String) -> Void

    /// Writes what `sink` was handed but has not written yet (a buffered logger's batch); a no-op
    /// for an unbuffered one.
    private var flushing: @Sendable () -> Void = {}
    /// A buffered logger's way in: the line is rendered straight into the batch's bytes.
    private var appendLine: (@Sendable (_ render: (inout [UInt8]) -> Void) -> Void)?

    /// A logger that writes each line at once (to standard error unless `sink` is given).
    public init(format: Format = .text, sink: (@Sendable (String) -> Void)? = nil) {
        self.format = format
        self.sink = sink ?? { line in Self.writeToStandardError(line + "\n") }
    }

    /// A logger that gathers lines and writes them to `descriptor` (standard error by default) in
    /// one `write(2)` per `interval` or per full buffer: what `chime serve` uses, since every
    /// request logs a line. Warnings and errors are written at once (with the lines before them);
    /// ``flush()`` writes the rest, and a clean stop calls it. A crash loses at most `interval` of
    /// info lines.
    ///
    /// ```swift
    /// let log = ServerLogger.buffered(format: .text)
    /// log.info("request", ["path": "/healthz"])
    /// log.flush()   // before the process exits
    /// ```
    public static func buffered(
        format: Format, descriptor: Int32 = 2, interval: Duration = .milliseconds(50), capacity: Int = 64 * 1024
    ) -> ServerLogger {
        let buffer = LineBuffer(descriptor: descriptor, capacity: capacity, interval: interval)
        var logger = ServerLogger(format: format, sink: { line in buffer.append { $0.append(contentsOf: line.utf8) } })
        logger.appendLine = { render in buffer.append(render) }
        logger.flushing = { buffer.flush() }
        return logger
    }

    /// Writes the lines a buffered logger still holds; returns once they are written.
    public func flush() { flushing() }

    /// Writes the text to file descriptor 2 with `write(2)` calls straight from the string's bytes
    /// (every request logs a line: `FileHandle` and `Data` cost a copy and a bridge each); a line
    /// that cannot be written is dropped.
    static func writeToStandardError(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            guard var next = bytes.baseAddress else { return }
            var left = bytes.count
            while left > 0 {
                let written = write(2, next, left)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                next += written
                left -= written
            }
        }
    }

    /// A logger that drops every line.
    public static let silent = ServerLogger(sink: { _ in })

    public func log(_ level: Level, _ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        let now = Date()
        if let appendLine {
            appendLine { render(level, message, fields, at: now, into: &$0) }
        } else {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(256)
            render(level, message, fields, at: now, into: &bytes)
            sink(String(decoding: bytes, as: UTF8.self))
        }
        if level == .warning || level == .error { flush() }
    }

    /// One line in `format`, without its newline, appended to `bytes`.
    private func render(
        _ level: Level, _ message: String, _ fields: KeyValuePairs<String, String>, at now: Date,
        into bytes: inout [UInt8]
    ) {
        switch format {
        case .text:
            Self.appendTimestamp(now, to: &bytes)
            bytes.append(contentsOf: level.label.utf8)
            bytes.append(UInt8(ascii: " "))
            if message.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
                bytes.append(contentsOf: message.utf8)
            } else {
                bytes.append(contentsOf: Self.escaped(message).utf8)
            }
            for (key, value) in fields {
                bytes.append(UInt8(ascii: " "))
                bytes.append(contentsOf: key.utf8)
                bytes.append(UInt8(ascii: "="))
                // Printable ASCII with no space or quote (almost every field) is written as it is.
                if value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") }) {
                    bytes.append(contentsOf: value.utf8)
                } else {
                    let text = Self.escaped(value)
                    let plain = !text.utf8.contains(where: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\"") })
                    bytes.append(contentsOf: (plain ? text : Self.quote(value)).utf8)
                }
            }
        case .json:
            bytes.append(contentsOf: #"{"time":""#.utf8)
            Self.appendTimestamp(now, to: &bytes)
            bytes.append(contentsOf: #"","level":""#.utf8)
            bytes.append(contentsOf: level.rawValue.utf8)
            bytes.append(contentsOf: #"","message":"#.utf8)
            Self.appendQuoted(message, to: &bytes)
            for (key, value) in fields {
                bytes.append(UInt8(ascii: ","))
                Self.appendQuoted(key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                Self.appendQuoted(value, to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// The text as a JSON string: as it is between quotes when nothing in it needs escaping.
    private static func appendQuoted(_ text: String, to bytes: inout [UInt8]) {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: text.utf8)
            bytes.append(UInt8(ascii: "\""))
        } else {
            bytes.append(contentsOf: quote(text).utf8)
        }
    }

    public func info(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.info, message, fields) }
    public func warning(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        log(.warning, message, fields)
    }
    public func error(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.error, message, fields) }

    /// ISO 8601 in UTC with milliseconds, `2026-12-01T15:16:36.123Z`: what
    /// `Date.ISO8601FormatStyle` writes with fractional seconds, built by hand because every request
    /// logs one and the format style costs several microseconds each (4% of the server's time under
    /// load, measured).
    static func timestamp(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        appendTimestamp(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// ``timestamp(_:)`` appended to `bytes`.
    static func appendTimestamp(_ date: Date, to bytes: inout [UInt8]) {
        let since1970 = date.timeIntervalSince1970
        let whole = since1970.rounded(.down)
        var seconds = time_t(whole)
        let milliseconds = min(999, Int((since1970 - whole) * 1000))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func digits(_ value: Int, _ count: Int) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            var value = value
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                value %= divisor
                divisor /= 10
            }
        }
        digits(Int(parts.tm_year) + 1900, 4)
        bytes.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2)
        bytes.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2)
        bytes.append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2)
        bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2)
        bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2)
        bytes.append(UInt8(ascii: "."))
        digits(milliseconds, 3)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// Milliseconds with two decimals, as `String(format: "%.2f", seconds * 1000)` writes them
    /// (`12.35`), from integers: the access log writes one per request.
    static func milliseconds(_ seconds: Double) -> String {
        let hundredths = Int((min(max(seconds, 0), 1e9) * 100_000).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    /// The text with control characters (terminal escapes among them) written as `\u{1b}`, so
    /// what a client sent cannot move the cursor or recolour a terminal that shows the log.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                out += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where isControl(scalar): out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
