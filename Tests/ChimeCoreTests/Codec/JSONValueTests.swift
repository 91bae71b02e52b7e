import Foundation
import TestThreads
import Testing

@testable import ChimeCore

@Suite("JSONValue parser and serializer", .testThreads)
struct JSONValueTests {
    func parse(_ text: String) throws(ChimeError) -> JSONValue { try JSONValue.parse(Array(text.utf8)) }

    @Test("parses every kind of value, keeping integers exact and member order")
    func parsesValues() throws {
        let value = try parse(
            #" {"a": [1, -0, 2.5, -1e3, true, false, null], "b": {"c": "d"}, "big": 9223372036854775807, "min": -9223372036854775808, "over": 9223372036854775808} "#
        )
        guard case .object(let object) = value else {
            Issue.record("not an object")
            return
        }
        #expect(object.keys == ["a", "b", "big", "min", "over"])
        #expect(
            value["a"]
                == .array([.integer(1), .integer(0), .number(2.5), .number(-1000), .bool(true), .bool(false), .null]))
        #expect(value["b"]?["c"] == .string("d"))
        #expect(value["big"] == .integer(Int64.max))
        #expect(value["min"] == .integer(Int64.min))
        #expect(value["over"] == .number(9_223_372_036_854_775_808))
    }

    @Test("decodes string escapes, surrogate pairs and raw UTF-8")
    func strings() throws {
        #expect(try parse(#""a\"b\\c\/d\b\f\n\r\t""#) == .string("a\"b\\c/d\u{8}\u{c}\n\r\t"))
        #expect(try parse(#""\u00e9\u20AC\ud83d\ude00""#) == .string("é€😀"))
        #expect(try parse("\"grüße 😀\"") == .string("grüße 😀"))
        #expect(try JSONValue.parse([0xEF, 0xBB, 0xBF] + Array("1".utf8)) == .integer(1))
    }

    @Test("parses Data and String input the same way")
    func inputs() throws {
        let text = #"{"x": [1, "y"]}"#
        #expect(try JSONValue.parse(Data(text.utf8)) == parse(text))
        #expect(try JSONValue.parse(text) == parse(text))
        #expect(try JSONValue.parse(text.utf8) == parse(text))
    }

    static let malformed: [(String, String)] = [
        ("", "empty"),
        ("   ", "empty"),
        ("{", "member name"),
        (#"{"a" 1}"#, "expected ':'"),
        (#"{"a": 1,}"#, "trailing commas"),
        ("[1, 2,]", "trailing commas"),
        ("[1 2]", "expected ',' or ']'"),
        (#"{"a": 1 "b": 2}"#, "expected ',' or '}' after an object member"),
        ("{'a': 1}", "double quotes"),
        ("{a: 1}", "double quotes"),
        ("// c\n1", "expected a JSON value"),
        ("[1] /* c */", "end of the input"),
        ("01", "leading zeros"),
        ("-", "digit after '-'"),
        ("1.", "after the decimal point"),
        (".5", "expected a JSON value"),
        ("1e", "exponent"),
        ("+1", "expected a JSON value"),
        ("NaN", "expected a JSON value"),
        ("Infinity", "expected a JSON value"),
        ("1e999", "out of range"),
        ("True", "expected a JSON value"),
        ("nul", "literal null"),
        ("\"abc", "unterminated string"),
        ("\"a\u{01}b\"", "control characters"),
        ("\"tab\there\"", "control characters"),
        (#""\x41""#, "invalid escape"),
        (#""\u12""#, "hexadecimal"),
        (#""\ud800""#, "lone high surrogate"),
        (#""\udc00""#, "lone low surrogate"),
        (#""\ud800\u0041""#, "not a low surrogate"),
        (#"{"a": 1, "a": 2}"#, "appears twice"),
        ("1 2", "end of the input after the JSON value"),
        ("[1]]", "end of the input after the JSON value"),
    ]

    @Test("rejects malformed JSON with the position and what was expected", arguments: malformed)
    func rejects(text: String, expected: String) {
        do throws(ChimeError) {
            let value = try parse(text)
            Issue.record("parsed \(text.debugDescription) as \(value)")
        } catch {
            #expect(error.code == .malformedInput)
            #expect(error.field == nil)
            #expect(error.message.hasPrefix("malformed JSON at byte "), "\(error.message)")
            #expect(error.message.contains(expected), "\(text.debugDescription): \(error.message)")
        }
    }

    static let badUTF8: [[UInt8]] = [
        [0x22, 0xFF, 0x22],  // invalid byte
        [0x22, 0xC0, 0xAF, 0x22],  // overlong
        [0x22, 0xED, 0xA0, 0x80, 0x22],  // encoded surrogate
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
        [0x22, 0xE2, 0x82, 0x22],  // truncated
        [0x22, 0xE2, 0x82],  // cut off at the end
    ]

    @Test("rejects invalid UTF-8 in strings", arguments: badUTF8)
    func rejectsUTF8(bytes: [UInt8]) {
        #expect(throws: ChimeError.self) { try JSONValue.parse(bytes) }
    }

    @Test("reports line and column")
    func position() {
        do throws(ChimeError) {
            _ = try parse("{\n  \"a\": 1,\n  \"b\": 2\n  \"c\": 3}")
            Issue.record("accepted a missing comma")
        } catch {
            #expect(error.message.contains("line 4, column 3"), "\(error.message)")
            #expect(error.message.contains("expected ',' or '}' after an object member"))
        }
    }

    @Test("bounds nesting depth without crashing")
    func depth() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: ChimeError.self) { try parse(deep) }
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(try parse(ok) != .null)
        let tooDeep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: ChimeError.self) { try parse(tooDeep) }
        #expect(throws: ChimeError.self) { try JSONValue.parse(Array(ok.utf8), maxDepth: 10) }
    }

    @Test("never crashes on every prefix of valid documents")
    func prefixes() {
        let text = #"{"a": [1, 2.5e-3, "x\u00e9\ud83d\ude00", {"b": null}], "c": true, "d": "😀"}"#
        let bytes = Array(text.utf8)
        for end in 0..<bytes.count {
            _ = try? JSONValue.parse(bytes[0..<end])
        }
        #expect((try? JSONValue.parse(bytes)) != nil)
    }

    @Test("serializes compactly and escapes control characters")
    func serializes() throws {
        let value: JSONValue = [
            "s": "a\"b\\c\n\u{1}é", "n": 2.5, "i": 3, "b": true, "z": nil, "a": [1, "x"], "o": [:],
        ]
        #expect(value.serialized() == #"{"s":"a\"b\\c\n\u0001é","n":2.5,"i":3,"b":true,"z":null,"a":[1,"x"],"o":{}}"#)
        #expect(try JSONValue.parse(value.serializedBytes()) == value)
        let pretty = (["a": [1, 2]] as JSONValue).serialized(pretty: true)
        #expect(pretty == "{\n  \"a\": [\n    1,\n    2\n  ]\n}")
        #expect(JSONValue.number(.infinity).serialized() == "null")
    }

    @Test("round-trips numbers exactly")
    func numbers() throws {
        for value: JSONValue in [
            .integer(Int64.min), .integer(Int64.max), .number(0.1), .number(1e300), .number(-2.5e-300), .number(10),
        ] {
            #expect(try JSONValue.parse(value.serialized()) == value)
        }
    }

    @Test("object equality ignores member order")
    func objectEquality() throws {
        #expect(try parse(#"{"a": 1, "b": 2}"#) == parse(#"{"b": 2, "a": 1}"#))
        #expect(try parse(#"{"a": 1, "b": 2}"#).hashValue == parse(#"{"b": 2, "a": 1}"#).hashValue)
        #expect(try parse(#"{"a": 1}"#) != parse(#"{"a": 2}"#))
    }

    @Test("large objects detect duplicate keys too")
    func largeDuplicates() {
        let members = (0..<40).map { "\"k\($0)\": \($0)" }.joined(separator: ", ")
        #expect((try? parse("{\(members)}")) != nil)
        #expect(throws: ChimeError.self) { try parse("{\(members), \"k7\": 1}") }
    }
}
