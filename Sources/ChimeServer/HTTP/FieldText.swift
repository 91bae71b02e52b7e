import Foundation

/// Byte-level helpers for header field values, which are ASCII in practice: every request's
/// `Host`, `Content-Type` and framing fields go through them, so they work on UTF-8 bytes instead
/// of Foundation's `CharacterSet` (which bridges through `NSString` and decodes the result again).
///
/// ```swift
/// FieldText.trimmed(" application/json ")       // "application/json"
/// FieldText.equalsLowercase("Content-Length", "content-length")  // true
/// ```
enum FieldText {
    /// The text without the whitespace at its ends, exactly as Foundation's
    /// `trimmingCharacters(in: .whitespaces)` trims it: in ASCII that set is space and tab alone, so
    /// those bytes are trimmed here; when a non-ASCII character is left at either end (it may be
    /// one of the set's Unicode spaces), the text goes to Foundation instead.
    static func trimmed(_ text: Substring) -> Substring {
        let bytes = text.utf8
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, isSpaceOrTab(bytes[start]) { start = bytes.index(after: start) }
        while start < end, isSpaceOrTab(bytes[bytes.index(before: end)]) { end = bytes.index(before: end) }
        if start < end, bytes[start] >= 0x80 || bytes[bytes.index(before: end)] >= 0x80 {
            return Substring(text.trimmingCharacters(in: .whitespaces))
        }
        return Substring(bytes[start..<end])
    }

    /// ``trimmed(_:)`` of a whole string.
    static func trimmed(_ text: String) -> Substring { trimmed(Substring(text)) }

    /// Whether `text` lowercased is `lowercase` (which must be lowercase ASCII, such as a field
    /// name or the `bearer` scheme): compared byte by byte, without making the lowercased copy. The
    /// one character outside ASCII that lowercases to an ASCII letter alone is the Kelvin sign
    /// (to `k`), so `lowercase` must not hold a `k` for the answer to equal
    /// `text.lowercased() == lowercase`.
    static func equalsLowercase(_ text: some StringProtocol, _ lowercase: StaticString) -> Bool {
        lowercase.withUTF8Buffer { expected in
            var iterator = text.utf8.makeIterator()
            for wanted in expected {
                guard let byte = iterator.next(), asciiLowercase(byte) == wanted else { return false }
            }
            return iterator.next() == nil
        }
    }

    /// An ASCII letter in lowercase; every other byte as it is.
    static func asciiLowercase(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    private static func isSpaceOrTab(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
}
