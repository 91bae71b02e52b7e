import Foundation

/// Helpers shared by the JSON decoders: typed reads of object members that throw ``ChimeError``s
/// naming the JSON path of the field and what was found.
enum JSONPath {
    static func member(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
    static func element(_ path: String, _ index: Int) -> String { "\(path)[\(index)]" }
    /// `path` for messages: the root is called `the body`.
    static func display(_ path: String) -> String { path.isEmpty ? "the body" : path }
}

extension JSONValue {
    /// The value in words with a short excerpt: `a number (3.5)`, `a string ("weekly")`, `an object`.
    var shortDescription: String {
        switch self {
        case .null: "null"
        case .bool(let b): "a boolean (\(b))"
        case .integer(let i): "an integer (\(i))"
        case .number(let d): "a number (\(d))"
        case .string(let s): "a string (\"\(JSONParser.clip(s))\")"
        case .array(let a): a.isEmpty ? "an empty array" : "an array"
        case .object: "an object"
        }
    }
}

/// Reads the members of one JSON object, strictly: ``finish(accepted:what:)`` rejects members the
/// decoder did not expect. The one reader of JSON objects: the JSON mapping's decoders and the
/// service's request bodies alike, so every refusal names the field the same way.
///
/// ```swift
/// let body = try JSONObjectReader(value, path: "", what: "an answer", accepted: ["allow"])
/// let allow = try body.requiredBool("allow")
/// ```
package struct JSONObjectReader {
    package let object: JSONObject
    package let path: String

    package init(_ value: JSONValue, path: String, what: String, code: ChimeError.Code = .invalidValue)
        throws(ChimeError)
    {
        guard case .object(let object) = value else {
            throw ChimeError(
                code, field: path.isEmpty ? nil : path,
                "\(JSONPath.display(path)): expected \(what) as a JSON object, found \(value.shortDescription)")
        }
        self.object = object
        self.path = path
    }

    /// A reader that has already refused members other than `accepted` (with a did-you-mean).
    package init(_ value: JSONValue, path: String = "", what: String, accepted: [String]) throws(ChimeError) {
        try self.init(value, path: path, what: what)
        try finish(accepted: accepted, what: what)
    }

    package func field(_ key: String) -> String { JSONPath.member(path, key) }

    /// The member's value; `nil` when absent or `null` (null means "the default" for every field).
    package func value(_ key: String) -> JSONValue? {
        guard let value = object[key] else { return nil }
        if case .null = value { return nil }
        return value
    }

    package func has(_ key: String) -> Bool { value(key) != nil }

    package func typeError(_ key: String, expected: String, found: JSONValue, code: ChimeError.Code = .invalidValue)
        -> ChimeError
    {
        let name = field(key)
        return ChimeError(code, field: name, "\(name): expected \(expected), found \(found.shortDescription)")
    }

    package func string(_ key: String, code: ChimeError.Code = .invalidValue) throws(ChimeError) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let s) = value else { throw typeError(key, expected: "a string", found: value, code: code) }
        return s
    }

    package func requiredString(_ key: String, code: ChimeError.Code = .invalidValue, hint: String = "")
        throws(ChimeError) -> String
    {
        guard let s = try string(key, code: code) else {
            throw ChimeError(code, field: field(key), "\(field(key)) is missing; expected a string\(hint)")
        }
        return s
    }

    /// A required, non-empty identifier.
    package func identifier(_ key: String = "identifier", code: ChimeError.Code = .invalidIdentifier, what: String)
        throws(ChimeError) -> String
    {
        let s = try requiredString(key, code: code, hint: " identifying the \(what)")
        if s.isEmpty {
            throw ChimeError(code, field: field(key), "\(field(key)) is empty; give the \(what) a non-empty identifier")
        }
        return s
    }

    package func bool(_ key: String, code: ChimeError.Code = .invalidValue) throws(ChimeError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let b) = value else {
            throw typeError(key, expected: "true or false", found: value, code: code)
        }
        return b
    }

    package func double(_ key: String, code: ChimeError.Code = .invalidValue) throws(ChimeError) -> Double? {
        guard let value = value(key) else { return nil }
        switch value {
        case .integer(let i): return Double(i)
        case .number(let d): return d
        default: throw typeError(key, expected: "a number", found: value, code: code)
        }
    }

    package func requiredDouble(_ key: String, code: ChimeError.Code = .invalidValue, hint: String = "")
        throws(ChimeError) -> Double
    {
        guard let d = try double(key, code: code) else {
            throw ChimeError(code, field: field(key), "\(field(key)) is missing; expected a number\(hint)")
        }
        return d
    }

    /// An integer that fits in `Int`; a number with no fractional part is accepted too (`3.0`).
    /// What range it must be in is Validation's to say.
    package func int(_ key: String, code: ChimeError.Code = .invalidValue) throws(ChimeError) -> Int? {
        guard let value = value(key) else { return nil }
        return try JSONObjectReader.int(value, field: field(key), code: code)
    }

    static func int(_ value: JSONValue, field: String, code: ChimeError.Code) throws(ChimeError) -> Int {
        let result: Int?
        switch value {
        case .integer(let i): result = Int(exactly: i)
        case .number(let d): result = d.rounded() == d ? Int(exactly: d) : nil
        default: result = nil
        }
        guard let result else {
            throw ChimeError(code, field: field, "\(field): expected an integer, found \(value.shortDescription)")
        }
        return result
    }

    /// A required boolean.
    package func requiredBool(_ key: String, code: ChimeError.Code = .invalidValue) throws(ChimeError) -> Bool {
        guard let b = try bool(key, code: code) else {
            throw ChimeError(code, field: field(key), "\(field(key)) is missing; expected true or false")
        }
        return b
    }

    /// A required integer (see ``int(_:code:)``).
    package func requiredInt(_ key: String, code: ChimeError.Code = .invalidValue, hint: String = "") throws(ChimeError)
        -> Int
    {
        guard let i = try int(key, code: code) else {
            throw ChimeError(code, field: field(key), "\(field(key)) is missing; expected an integer\(hint)")
        }
        return i
    }

    package func array(_ key: String, code: ChimeError.Code = .invalidValue, of what: String) throws(ChimeError)
        -> [JSONValue]?
    {
        guard let value = value(key) else { return nil }
        guard case .array(let a) = value else {
            throw typeError(key, expected: "an array of \(what)", found: value, code: code)
        }
        return a
    }

    package func strings(_ key: String, code: ChimeError.Code = .invalidValue) throws(ChimeError) -> [String]? {
        guard let elements = try array(key, code: code, of: "strings") else { return nil }
        var out: [String] = []
        out.reserveCapacity(elements.count)
        for (i, element) in elements.enumerated() {
            guard case .string(let s) = element else {
                let name = JSONPath.element(field(key), i)
                throw ChimeError(code, field: name, "\(name): expected a string, found \(element.shortDescription)")
            }
            out.append(s)
        }
        return out
    }

    /// An option set from an array of Apple's option names.
    package func options<Options: OptionSet>(
        _ key: String, table: [(String, Options)], code: ChimeError.Code = .invalidValue
    ) throws(ChimeError) -> Options?
    where Options.RawValue == UInt, Options.Element == Options {
        guard let value = value(key) else { return nil }
        return try JSONMapping.options(value, table: table, field: field(key), code: code)
    }

    /// Rejects members other than `accepted`, naming them, suggesting the closest accepted name.
    package func finish(accepted: [String], what: String) throws(ChimeError) {
        guard object.count > 0 else { return }
        for key in object.keys where !accepted.contains(key) {
            let name = field(key)
            var message = "\(name) is not a field of \(what)"
            if let suggestion = JSONMapping.closest(to: key, in: accepted) {
                message += " (did you mean \"\(suggestion)\"?)"
            }
            message += "; accepted: \(accepted.joined(separator: ", "))"
            throw ChimeError(.invalidValue, field: name, message)
        }
    }
}

/// Chime's JSON mapping: Chime's values ⇄ JSON with Apple's field names, plus the shared helpers
/// (dates, option names, user info).
///
/// Decisions, for every decoder:
/// - **Strict fields.** A member the shape does not define is rejected, naming it and listing the
///   accepted names (with a suggestion for a likely typo). Clients learn of a misspelt
///   `"catgoryIdentifier"` at once instead of losing the field silently. The one exception is
///   `nextTriggerDate` on a request, which output adds and input ignores, so a listed request can be
///   posted back unchanged.
/// - **`null` means "the default"** for any field (`"badge": null` leaves the badge alone,
///   `"trigger": null` delivers at once) — except inside `userInfo`, where `null` is not a
///   property-list value and is rejected with its path.
/// - **Numbers:** integer fields accept `3` and `3.0`, never `3.5`; non-integers are doubles.
/// - **Dates** are ISO 8601 strings: output is UTC with milliseconds (`2026-12-01T08:30:00.000Z`),
///   always a four-digit year (a date after 9999 is written as `9999-12-31T23:59:59.999Z`);
///   input accepts whole or fractional seconds and `Z` or an offset (`+01:00`, `+0100`).
/// - **`userInfo`** maps JSON strings, integers (exact `Int64`), other numbers (double), booleans,
///   arrays and objects; `Data` is `{"$data": "<base64>"}` and `Date` is `{"$date": "<ISO 8601>"}`
///   both ways (an object with exactly that one key is always read as such).
public enum JSONMapping {
    /// An option set from an array of names (`["foreground", "destructive"]`).
    public static func options<Options: OptionSet>(
        _ value: JSONValue, table: [(String, Options)], field: String,
        code: ChimeError.Code = .invalidValue
    ) throws(ChimeError) -> Options
    where Options.RawValue == UInt, Options.Element == Options {
        let accepted = table.map(\.0).joined(separator: ", ")
        guard case .array(let names) = value else {
            throw ChimeError(
                code, field: field,
                "\(field): expected an array of option names (\(accepted)), found \(value.shortDescription)")
        }
        var result = Options()
        for (i, name) in names.enumerated() {
            let at = JSONPath.element(field, i)
            guard case .string(let s) = name else {
                throw ChimeError(
                    code, field: at, "\(at): expected an option name (\(accepted)), found \(name.shortDescription)")
            }
            guard let option = table.first(where: { $0.0 == s })?.1 else {
                var message = "\(at): \"\(JSONParser.clip(s))\" is not an option"
                if let suggestion = closest(to: s, in: table.map(\.0)) {
                    message += " (did you mean \"\(suggestion)\"?)"
                }
                throw ChimeError(code, field: at, message + "; accepted: \(accepted)")
            }
            result.insert(option)
        }
        return result
    }

    /// The option set as a JSON array of names.
    public static func json<Options: OptionSet>(_ options: Options, table: [(String, Options)]) -> JSONValue
    where Options.RawValue == UInt, Options.Element == Options {
        .array(options.names(from: table).map(JSONValue.string))
    }

    /// The accepted name closest to `name` (edit distance at most 2, or a case-insensitive match).
    static func closest(to name: String, in accepted: [String]) -> String? {
        let lower = name.lowercased()
        if let same = accepted.first(where: { $0.lowercased() == lower }) { return same }
        guard name.utf8.count <= 64 else { return nil }
        if lower.utf8.count >= 4, let prefixed = accepted.first(where: { $0.lowercased().hasPrefix(lower) }) {
            return prefixed
        }
        var best: (String, Int)?
        for candidate in accepted {
            let distance = editDistance(Array(lower.utf8), Array(candidate.lowercased().utf8))
            if distance <= 2, distance < (best?.1 ?? .max) { best = (candidate, distance) }
        }
        return best?.0
    }

    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
