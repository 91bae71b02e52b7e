import Foundation

/// A JSON value, parsed and printed by Chime's own strict RFC 8259 codec.
///
/// Integers without a fraction or exponent that fit in `Int64` stay exact (`.integer`); every
/// other number is a `.number`. Objects keep their members in document order and never hold a
/// key twice (the parser rejects duplicate keys).
///
/// ```swift
/// let value = try JSONValue.parse(Array(#"{"title": "Hi", "badge": 3}"#.utf8))
/// value["badge"]            // .integer(3)
/// value.serialized()        // {"title":"Hi","badge":3}
/// ```
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number written without fraction or exponent that fits in `Int64`.
    case integer(Int64)
    /// Any other (finite) number.
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The member with this key, when the value is an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// What the value is, in words for error messages: "a string", "an integer", "null", ….
    public var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer: "an integer"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// A JSON object: members in document order, keys unique.
///
/// Equality and hashing ignore member order, as JSON does.
public struct JSONObject: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    public private(set) var keys: [String]
    public private(set) var values: [JSONValue]

    public init() {
        keys = []
        values = []
    }

    /// Builds an object from members; a later member with the same key replaces the earlier one.
    public init(_ members: [(String, JSONValue)]) {
        self.init()
        keys.reserveCapacity(members.count)
        values.reserveCapacity(members.count)
        for (key, value) in members { self[key] = value }
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }

    /// Appends without checking for an existing key: for the parser, which checks itself.
    init(uncheckedKeys keys: [String], values: [JSONValue]) {
        self.keys = keys
        self.values = values
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { keys.count }
    public subscript(position: Int) -> (key: String, value: JSONValue) { (keys[position], values[position]) }

    /// The value for a key; setting `nil` removes the member, setting a new key appends it.
    public subscript(key: String) -> JSONValue? {
        get {
            guard let index = keys.firstIndex(of: key) else { return nil }
            return values[index]
        }
        set {
            if let index = keys.firstIndex(of: key) {
                if let newValue {
                    values[index] = newValue
                } else {
                    keys.remove(at: index)
                    values.remove(at: index)
                }
            } else if let newValue {
                keys.append(key)
                values.append(newValue)
            }
        }
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.keys.count == rhs.keys.count else { return false }
        if lhs.keys == rhs.keys { return lhs.values == rhs.values }
        for (key, value) in lhs where rhs[key] != value { return false }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        // Order-independent: combine the members' own hashes commutatively.
        var combined = 0
        for (key, value) in self {
            var member = Hasher()
            member.combine(key)
            member.combine(value)
            combined ^= member.finalize()
        }
        hasher.combine(keys.count)
        hasher.combine(combined)
    }
}

// MARK: - Parsing

extension JSONValue {
    /// The deepest nesting `parse` accepts whatever `maxDepth` asks for, to keep the stack safe.
    public static let depthCeiling = 1_000

    /// Parses one JSON text (RFC 8259, strictly): no comments, no trailing commas, no leading
    /// zeros, no lone surrogates or invalid UTF-8, no duplicate keys, nothing after the value but
    /// whitespace. A UTF-8 byte-order mark at the start is skipped.
    ///
    /// - Parameters:
    ///   - bytes: UTF-8 text.
    ///   - maxDepth: the deepest nesting of arrays and objects accepted (capped at ``depthCeiling``).
    /// - Throws: ``ChimeError`` with code `malformedInput`, saying where (byte offset from 0, line and
    ///   column from 1) and what was expected.
    public static func parse<Bytes: Collection<UInt8>>(_ bytes: Bytes, maxDepth: Int = 64) throws(ChimeError)
        -> JSONValue
    {
        let depth = max(0, min(maxDepth, depthCeiling))
        let result: Result<JSONValue, ChimeError>? = bytes.withContiguousStorageIfAvailable { buffer in
            var parser = JSONParser(buffer, maxDepth: depth)
            do throws(ChimeError) { return .success(try parser.parseDocument()) } catch { return .failure(error) }
        }
        if let result { return try result.get() }
        return try parse(Array(bytes), maxDepth: maxDepth)
    }

    /// Parses JSON from `Data` (see ``parse(_:maxDepth:)-(Bytes,_)``).
    public static func parse(_ data: Data, maxDepth: Int = 64) throws(ChimeError) -> JSONValue {
        let depth = max(0, min(maxDepth, depthCeiling))
        let result: Result<JSONValue, ChimeError> = data.withUnsafeBytes { raw in
            let buffer = raw.bindMemory(to: UInt8.self)
            var parser = JSONParser(buffer, maxDepth: depth)
            do throws(ChimeError) { return .success(try parser.parseDocument()) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Parses JSON from a string.
    public static func parse(_ text: String, maxDepth: Int = 64) throws(ChimeError) -> JSONValue {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }
}

/// A recursive-descent parser over a byte buffer. Every read is bounds-checked; recursion is bounded
/// by `maxDepth`.
struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var index = 0
    var depth = 0
    /// Reused for strings with escapes.
    var scratch: [UInt8] = []

    init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    mutating func parseDocument() throws(ChimeError) -> JSONValue {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        skipWhitespace()
        if index >= bytes.count {
            throw failure("expected a JSON value, found the end of the input (the input is empty)")
        }
        let value = try parseValue()
        skipWhitespace()
        if index < bytes.count {
            throw failure("expected the end of the input after the JSON value, found \(describeHere())")
        }
        return value
    }

    // MARK: errors

    func failure(_ what: String, at offset: Int? = nil) -> ChimeError {
        let offset = min(offset ?? index, bytes.count)
        var line = 1
        var column = 1
        var i = 0
        while i < offset {
            if bytes[i] == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if bytes[i] & 0xC0 != 0x80 {
                column += 1
            }
            i += 1
        }
        return ChimeError(
            .malformedInput, field: nil, "malformed JSON at byte \(offset) (line \(line), column \(column)): \(what)")
    }

    /// The byte at the current position, in words.
    func describeHere() -> String {
        guard index < bytes.count else { return "the end of the input" }
        let byte = bytes[index]
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        switch byte {
        case 0x20: return "a space"
        case 0x0A: return "a line feed"
        case 0x0D: return "a carriage return"
        case 0x09: return "a tab"
        default:
            let hex = String(byte, radix: 16, uppercase: true)
            return "the byte 0x\(hex.count == 1 ? "0" + hex : hex)"
        }
    }

    // MARK: structure

    @inline(__always)
    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    mutating func parseValue() throws(ChimeError) -> JSONValue {
        guard index < bytes.count else { throw failure("expected a JSON value, found the end of the input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default:
            throw failure(
                "expected a JSON value (an object, array, string, number, true, false or null), found \(describeHere())"
            )
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(ChimeError) {
        let start = index
        let count = literal.utf8CodeUnitCount
        let matches: Bool = literal.withUTF8Buffer { expected in
            guard bytes.count - index >= count else { return false }
            for i in 0..<count where bytes[index + i] != expected[i] { return false }
            return true
        }
        guard matches else {
            throw failure("expected the literal \(literal) (JSON literals are lowercase: true, false, null)", at: start)
        }
        index += count
    }

    mutating func enter() throws(ChimeError) {
        depth += 1
        if depth > maxDepth { throw failure("nesting deeper than \(maxDepth) levels of arrays and objects") }
    }

    mutating func parseArray() throws(ChimeError) -> JSONValue {
        try enter()
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                throw failure("expected a value after ',' (trailing commas are not allowed in JSON)")
            }
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else {
                throw failure("expected ',' or ']' after an array element, found the end of the input")
            }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                depth -= 1
                return .array(elements)
            default: throw failure("expected ',' or ']' after an array element, found \(describeHere())")
            }
        }
    }

    mutating func parseObject() throws(ChimeError) -> JSONValue {
        try enter()
        index += 1  // {
        var keys: [String] = []
        var values: [JSONValue] = []
        var seen: Set<String>? = nil
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(JSONObject(uncheckedKeys: keys, values: values))
        }
        while true {
            skipWhitespace()
            guard index < bytes.count else {
                throw failure("expected a member name in quotes, found the end of the input")
            }
            guard bytes[index] == UInt8(ascii: "\"") else {
                if bytes[index] == UInt8(ascii: "}") {
                    throw failure("expected a member after ',' (trailing commas are not allowed in JSON)")
                }
                throw failure("expected a member name in double quotes, found \(describeHere())")
            }
            let keyStart = index
            let key = try parseString()
            // Duplicate keys: a linear scan for small objects, a set for large ones.
            let duplicate: Bool
            if keys.count < 16 {
                duplicate = keys.contains(key)
            } else {
                var set = seen ?? Set(keys)
                duplicate = !set.insert(key).inserted
                seen = set
            }
            if duplicate {
                throw failure("the member name \"\(Self.clip(key))\" appears twice in one object", at: keyStart)
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw failure("expected ':' after the member name \"\(Self.clip(key))\", found \(describeHere())")
            }
            index += 1
            skipWhitespace()
            let value = try parseValue()
            keys.append(key)
            values.append(value)
            skipWhitespace()
            guard index < bytes.count else {
                throw failure("expected ',' or '}' after an object member, found the end of the input")
            }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                depth -= 1
                return .object(JSONObject(uncheckedKeys: keys, values: values))
            default: throw failure("expected ',' or '}' after an object member, found \(describeHere())")
            }
        }
    }

    static func clip(_ text: String) -> String {
        text.count > 40 ? String(text.prefix(40)) + "…" : text
    }

    // MARK: numbers

    mutating func parseNumber() throws(ChimeError) -> JSONValue {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else {
            throw failure("expected a digit after '-' in a number, found \(describeHere())")
        }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) {
                throw failure("numbers must not have leading zeros", at: start)
            }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw failure("expected a digit after the decimal point, found \(describeHere())")
            }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw failure("expected a digit in the exponent, found \(describeHere())")
            }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
        if isInteger, text.count <= 20 {
            // Accumulate negatively so Int64.min fits.
            var value: Int64 = 0
            var overflow = false
            let negative = text[0] == UInt8(ascii: "-")
            for byte in text.dropFirst(negative ? 1 : 0) {
                let (m, o1) = value.multipliedReportingOverflow(by: 10)
                let (s, o2) = m.subtractingReportingOverflow(Int64(byte &- UInt8(ascii: "0")))
                if o1 || o2 {
                    overflow = true
                    break
                }
                value = s
            }
            if !overflow {
                if negative { return .integer(value) }
                if value != Int64.min { return .integer(-value) }
            }
        }
        let string = String(decoding: text, as: UTF8.self)
        guard let double = Double(string), double.isFinite else {
            throw failure("the number \(Self.clip(string)) is out of range for a double-precision number", at: start)
        }
        return .number(double)
    }

    @inline(__always)
    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    // MARK: strings

    mutating func parseString() throws(ChimeError) -> String {
        let open = index
        index += 1  // "
        let start = index
        // Fast path: plain ASCII up to the closing quote.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { break }
            index += 1
        }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while true {
            guard index < bytes.count else {
                throw failure("unterminated string (no closing '\"' for the string that starts here)", at: open)
            }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: scratch, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try parseEscape()
            case 0..<0x20:
                throw failure(
                    "control characters (here 0x\(String(byte, radix: 16, uppercase: true))) must be escaped in strings, as \\n, \\t or \\u00XX"
                )
            case 0..<0x80:
                scratch.append(byte)
                index += 1
            default:
                try copyUTF8Sequence()
            }
        }
    }

    mutating func parseEscape() throws(ChimeError) {
        let escapeStart = index
        index += 1
        guard index < bytes.count else {
            throw failure("unterminated escape sequence at the end of the input", at: escapeStart)
        }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): scratch.append(0x22)
        case UInt8(ascii: "\\"): scratch.append(0x5C)
        case UInt8(ascii: "/"): scratch.append(0x2F)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHex4(escapeStart)
            if (0xD800...0xDBFF).contains(scalar) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else {
                    throw failure(
                        "the escape \\u\(hex4(scalar)) is a lone high surrogate; it must be followed by a \\uDC00-\\uDFFF low surrogate",
                        at: escapeStart)
                }
                let lowStart = index
                index += 2
                let low = try parseHex4(lowStart)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw failure(
                        "the escape \\u\(hex4(scalar)) is a high surrogate followed by \\u\(hex4(low)), which is not a low surrogate",
                        at: escapeStart)
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw failure("the escape \\u\(hex4(scalar)) is a lone low surrogate", at: escapeStart)
            }
            appendScalar(scalar)
        default:
            index -= 1
            throw failure(
                "invalid escape sequence \\\(describeHere()); accepted: \\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t, \\uXXXX",
                at: escapeStart)
        }
    }

    func hex4(_ value: UInt32) -> String {
        let hex = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    mutating func parseHex4(_ escapeStart: Int) throws(ChimeError) -> UInt32 {
        guard bytes.count - index >= 4 else {
            throw failure("expected four hexadecimal digits after \\u", at: escapeStart)
        }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("expected four hexadecimal digits after \\u, found \(describeHere())")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    mutating func appendScalar(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | (scalar >> 6)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | (scalar >> 12)))
            scratch.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        default:
            scratch.append(UInt8(0xF0 | (scalar >> 18)))
            scratch.append(UInt8(0x80 | ((scalar >> 12) & 0x3F)))
            scratch.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        }
    }

    /// Validates one multi-byte UTF-8 sequence (no overlong forms, no surrogates, at most U+10FFFF)
    /// and copies it.
    mutating func copyUTF8Sequence() throws(ChimeError) {
        let lead = bytes[index]
        let length: Int
        var lowerSecond: UInt8 = 0x80
        var upperSecond: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            lowerSecond = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            upperSecond = 0x9F
        case 0xF0:
            length = 4
            lowerSecond = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            upperSecond = 0x8F
        default:
            throw failure(
                "invalid UTF-8: the byte 0x\(String(lead, radix: 16, uppercase: true)) cannot start a character")
        }
        guard bytes.count - index >= length else {
            throw failure("invalid UTF-8: a character is cut off by the end of the input")
        }
        let second = bytes[index + 1]
        guard second >= lowerSecond && second <= upperSecond else {
            throw failure("invalid UTF-8: an overlong, surrogate or out-of-range sequence starts here")
        }
        for i in 2..<max(2, length) where bytes[index + i] & 0xC0 != 0x80 {
            throw failure("invalid UTF-8: a character is missing continuation bytes")
        }
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<(index + length)]))
        index += length
    }
}

// MARK: - Serializing

extension JSONValue {
    /// The value as JSON text: compact by default, or indented by two spaces with `pretty`.
    ///
    /// Strings escape `"`, `\` and control characters; non-ASCII text is written as UTF-8.
    /// Non-finite numbers (which JSON cannot express) are written as `null`.
    public func serialized(pretty: Bool = false) -> String {
        String(decoding: serializedBytes(pretty: pretty), as: UTF8.self)
    }

    /// The value as UTF-8 JSON bytes (see ``serialized(pretty:)``).
    public func serializedBytes(pretty: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        JSONWriter(pretty: pretty).write(self, into: &out, indent: 0)
        return out
    }
}

struct JSONWriter {
    let pretty: Bool

    func write(_ value: JSONValue, into out: inout [UInt8], indent: Int) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .integer(let i): out.append(contentsOf: String(i).utf8)
        case .number(let d): Self.writeNumber(d, into: &out)
        case .string(let s): Self.writeString(s, into: &out)
        case .array(let elements):
            if elements.isEmpty {
                out.append(contentsOf: "[]".utf8)
                return
            }
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(&out, indent + 1)
                write(element, into: &out, indent: indent + 1)
            }
            newline(&out, indent)
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            if object.isEmpty {
                out.append(contentsOf: "{}".utf8)
                return
            }
            out.append(UInt8(ascii: "{"))
            for (i, member) in object.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(&out, indent + 1)
                Self.writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                if pretty { out.append(UInt8(ascii: " ")) }
                write(member.value, into: &out, indent: indent + 1)
            }
            newline(&out, indent)
            out.append(UInt8(ascii: "}"))
        }
    }

    @inline(__always)
    func newline(_ out: inout [UInt8], _ indent: Int) {
        guard pretty else { return }
        out.append(0x0A)
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * 2))
    }

    static func writeNumber(_ d: Double, into out: inout [UInt8]) {
        // Swift's shortest round-trip form ("10.0", "0.5", "1e+20") is valid JSON for finite values.
        guard d.isFinite else {
            out.append(contentsOf: "null".utf8)
            return
        }
        out.append(contentsOf: d.description.utf8)
    }

    static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { utf8 in
            var runStart = 0
            for i in 0..<utf8.count {
                let byte = utf8[i]
                guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i]))
                runStart = i + 1
                out.append(UInt8(ascii: "\\"))
                switch byte {
                case 0x22: out.append(0x22)
                case 0x5C: out.append(0x5C)
                case 0x0A: out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(UInt8(ascii: "r"))
                case 0x09: out.append(UInt8(ascii: "t"))
                case 0x08: out.append(UInt8(ascii: "b"))
                case 0x0C: out.append(UInt8(ascii: "f"))
                default:
                    out.append(contentsOf: "u00".utf8)
                    out.append(hexDigits[Int(byte >> 4)])
                    out.append(hexDigits[Int(byte & 0x0F)])
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONValue: CustomStringConvertible {
    public var description: String { serialized() }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByNilLiteral, ExpressibleByDictionaryLiteral
{
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(JSONObject(elements)) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(nilLiteral: ()) { self = .null }
}
