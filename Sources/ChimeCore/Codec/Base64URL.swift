import Foundation

/// Base64url without padding (RFC 4648 §5, as JWS, JWT and Web Push write it).
///
/// ```swift
/// let text = Base64URL.encode([0xfb, 0xff])      // "-_8"
/// let bytes = try Base64URL.decode("-_8")        // [0xfb, 0xff]
/// ```
public enum Base64URL {
    /// The bytes as base64url, without `=` padding.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var text = Array(Data(bytes).base64EncodedString().utf8)
        while text.last == UInt8(ascii: "=") { text.removeLast() }
        for index in text.indices {
            switch text[index] {
            case UInt8(ascii: "+"): text[index] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): text[index] = UInt8(ascii: "_")
            default: break
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Decodes base64url without padding, strictly: only `A-Z a-z 0-9 - _`, no `=`, no white space,
    /// and no other spelling of the same bytes (unused trailing bits must be zero).
    ///
    /// - Throws: ``ChimeError`` `malformedInput`, naming `what` and the first character at fault.
    public static func decode(_ text: some StringProtocol, what: String = "the text") throws(ChimeError) -> [UInt8] {
        var standard = Array(text.utf8)
        for (offset, character) in standard.enumerated() {
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                break
            case UInt8(ascii: "-"): standard[offset] = UInt8(ascii: "+")
            case UInt8(ascii: "_"): standard[offset] = UInt8(ascii: "/")
            default:
                let shown =
                    character >= 0x21 && character < 0x7F
                    ? "'\(Character(Unicode.Scalar(character)))'" : "byte \(character)"
                throw ChimeError(
                    .malformedInput,
                    "\(what) is not base64url: \(shown) at offset \(offset) (only A-Z, a-z, 0-9, '-' and '_', without '=' padding)"
                )
            }
        }
        guard standard.count % 4 != 1 else {
            throw ChimeError(
                .malformedInput,
                "\(what) is not base64url: \(standard.count) characters cannot be a whole number of bytes")
        }
        standard += Array(repeating: UInt8(ascii: "="), count: (4 - standard.count % 4) % 4)
        guard let data = Data(base64Encoded: Data(standard)) else {
            throw ChimeError(.malformedInput, "\(what) is not base64url")
        }
        let bytes = [UInt8](data)
        guard encode(bytes) == text else {
            throw ChimeError(
                .malformedInput,
                "\(what) is not base64url in its one spelling (its last character has bits set that encode nothing)")
        }
        return bytes
    }
}
