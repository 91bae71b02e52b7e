/// Percent-encoding (RFC 3986) of path segments and query components, as the server decodes them
/// and its clients (the CLI, a center on the service) encode them.
///
/// The server keeps a request's path as sent and decodes it segment by segment, so a `/` written as
/// `%2F` stays inside its segment:
///
/// ```swift
/// PercentEncoding.encode("chat/42 ü?#%")            // "chat%2F42%20%C3%BC%3F%23%25"
/// try PercentEncoding.decode("chat%2F42%20%C3%BC")  // "chat/42 ü"
/// try PercentEncoding.decode("100%")                // throws: an incomplete escape
/// PercentEncoding.query([("after", "a b")])        // "after=a%20b"
/// ```
public enum PercentEncoding {
    /// Encodes text as UTF-8 and writes every byte except the unreserved characters of RFC 3986
    /// (`A`–`Z`, `a`–`z`, `0`–`9`, `-`, `.`, `_`, `~`) as `%HH`. The result is safe as one path
    /// segment and as a query name or value.
    public static func encode(_ text: some StringProtocol) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes `%HH` escapes; the bytes, escaped or not, must form UTF-8. A `+` stays a `+` (in
    /// query strings the server has already turned `+` into a space before decoding).
    ///
    /// - Throws: ``PercentDecodingError`` for a `%` not followed by two hexadecimal digits, or for
    ///   bytes that are not UTF-8.
    public static func decode(_ text: some StringProtocol) throws(PercentDecodingError) -> String {
        try decode(bytes: Array(text.utf8))
    }

    /// Decodes `%HH` escapes in raw bytes (as a request line carries them); see ``decode(_:)``.
    public static func decode(bytes: [UInt8]) throws(PercentDecodingError) -> String {
        // What an error shows of the text (made only for an error: this runs for every path segment).
        var shown: String { String(decoding: bytes.prefix(120), as: UTF8.self) }
        guard bytes.contains(UInt8(ascii: "%")) else {
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw PercentDecodingError(text: shown, problem: .invalidUTF8)
            }
            return text
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "%") else {
                out.append(byte)
                index += 1
                continue
            }
            let escape = String(decoding: bytes[index..<min(index + 3, bytes.count)], as: UTF8.self)
            guard index + 2 < bytes.count else {
                throw PercentDecodingError(text: shown, problem: .incompleteEscape(escape))
            }
            guard let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) else {
                throw PercentDecodingError(text: shown, problem: .invalidEscape(escape))
            }
            out.append(high << 4 | low)
            index += 3
        }
        guard let text = String(validating: out, as: UTF8.self) else {
            throw PercentDecodingError(text: shown, problem: .invalidUTF8)
        }
        return text
    }

    /// A query string of name=value pairs joined by `&`, each name and value encoded as by
    /// ``encode(_:)``: `[("identifier", "a/b"), ("limit", "2")]` gives `identifier=a%2Fb&limit=2`.
    public static func query(_ pairs: some Sequence<(name: String, value: String)>) -> String {
        pairs.map { encode($0.name) + "=" + encode($0.value) }.joined(separator: "&")
    }

    /// A path's segments between `/`s, each decoded: `/v1/apps/a/notifications/chat%2F42/responses`
    /// gives `["v1", "apps", "a", "notifications", "chat/42", "responses"]`. A leading `/` starts
    /// no segment; `/` alone gives `[""]`.
    ///
    /// - Throws: ``PercentDecodingError`` naming the first segment with an invalid escape or bytes
    ///   that are not UTF-8.
    public static func segments(ofPath path: some StringProtocol) throws(PercentDecodingError) -> [String] {
        // Every request's path comes here: one pass over its bytes, no array of slices.
        let bytes = Array(path.utf8)
        let slash = UInt8(ascii: "/")
        var segments: [String] = []
        var start = bytes.first == slash ? 1 : 0
        var index = start
        while true {
            guard index == bytes.count || bytes[index] == slash else {
                index += 1
                continue
            }
            let segment = bytes[start..<index]
            // Most segments hold no escape: taken as they are, without a copy to decode.
            if !segment.contains(UInt8(ascii: "%")), let text = String(validating: segment, as: UTF8.self) {
                segments.append(text)
            } else {
                segments.append(try decode(bytes: Array(segment)))
            }
            if index == bytes.count { return segments }
            index += 1
            start = index
        }
    }

    /// Rewrites bytes outside ASCII (and ASCII control characters) as `%HH`, leaving everything
    /// else, existing escapes included, as it is: the result is ASCII and decodes to the same bytes.
    public static func escapingNonASCII(_ bytes: some Collection<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for byte in bytes {
            if byte > 0x20 && byte < 0x7F {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Text that is not valid percent-encoding: what was wrong, and in which text.
public struct PercentDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong.
    public enum Problem: Sendable, Equatable {
        /// A `%` without two characters after it (`%2` at the end).
        case incompleteEscape(String)
        /// A `%` not followed by two hexadecimal digits (`%zz`).
        case invalidEscape(String)
        /// The decoded bytes are not UTF-8 (`%C3%28`).
        case invalidUTF8
    }

    /// The text as received (at most 120 bytes of it).
    public var text: String
    /// What is wrong with it.
    public var problem: Problem

    /// An error for `text` with `problem`.
    public init(text: String, problem: Problem) {
        self.text = text
        self.problem = problem
    }

    /// What is wrong and how to fix it, naming the text: `'100%' has an incomplete escape '%' …`.
    public var description: String {
        switch problem {
        case .incompleteEscape(let escape):
            "'\(text)' has an incomplete percent escape '\(escape)'; % starts a %HH escape of two hexadecimal digits (write % itself as %25)"
        case .invalidEscape(let escape):
            "'\(text)' has an invalid percent escape '\(escape)'; % must be followed by two hexadecimal digits (write % itself as %25)"
        case .invalidUTF8:
            "'\(text)' does not decode to UTF-8 text; percent-encode the UTF-8 bytes of the text (ü is %C3%BC)"
        }
    }
}
