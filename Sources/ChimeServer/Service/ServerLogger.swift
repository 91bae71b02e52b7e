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
    public enum Level: String, Sendable { case debug, info, warning, error }

    public var format: Format
    /// Where lines go; standard error by default. Tests capture lines here.
    public var sink: @Sendable (String) -> Void

    public init(format: Format = .text, sink: (@Sendable (String) -> Void)? = nil) {
        self.format = format
        self.sink = sink ?? { line in Self.writeToStandardError(line + "\n") }
    }

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
        switch format {
        case .text:
            var line = "\(Self.timestamp(now)) \(level.rawValue.uppercased()) \(Self.escaped(message))"
            for (key, value) in fields {
                let text = Self.escaped(value)
                let plain = !text.utf8.contains(where: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\"") })
                line += " \(key)=\(plain ? text : Self.quote(value))"
            }
            sink(line)
        case .json:
            var line =
                "{\"time\":\(Self.quote(Self.timestamp(now))),\"level\":\"\(level.rawValue)\",\"message\":\(Self.quote(message))"
            for (key, value) in fields { line += ",\(Self.quote(key)):\(Self.quote(value))" }
            sink(line + "}")
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
        let since1970 = date.timeIntervalSince1970
        let whole = since1970.rounded(.down)
        var seconds = time_t(whole)
        let milliseconds = min(999, Int((since1970 - whole) * 1000))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
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
        return String(decoding: bytes, as: UTF8.self)
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
