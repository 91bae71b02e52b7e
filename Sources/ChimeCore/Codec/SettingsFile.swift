import Foundation

/// A settings file (`chime serve --config FILE`) read into its settings: TOML — the part of it
/// settings need: `key = value` with strings, integers and booleans, comments, and one `[serve]`
/// table — or a JSON object of the same, optionally under `"serve"`.
///
/// ```swift
/// try SettingsFile.toml("listen = \"0.0.0.0:7878\"  # all interfaces\nauto-allow = true", name: "chime.toml")
/// // [listen = "0.0.0.0:7878" (line 1), auto-allow = true (line 2)]
/// try SettingsFile.toml("listen", name: "chime.toml")   // throws: chime.toml:1: expected key = value, …
/// ```
///
/// What the settings mean, and which keys exist, is the reader's business (the CLI merges them
/// under its flags).
public enum SettingsFile {
    /// A setting's value.
    public enum Value: Sendable, Hashable {
        case string(String)
        case integer(Int64)
        case bool(Bool)
    }

    /// One `key = value`, with its line (0 in a JSON file).
    public struct Setting: Sendable, Hashable {
        public var key: String
        public var value: Value
        public var line: Int

        public init(key: String, value: Value, line: Int) {
            self.key = key
            self.value = value
            self.line = line
        }
    }

    /// The settings of a TOML file, in its order. `name` (the file's path) starts each message.
    /// Read scalar by scalar, as TOML is defined: a `"` or `\\` stays what it is when a combining
    /// mark follows it (Swift's Characters would join them).
    ///
    /// - Throws: ``ChimeError`` `malformedInput` whose field is the place (`chime.toml:3`) and
    ///   whose message starts with it and says what to write instead.
    public static func toml(_ text: String, name: String) throws(ChimeError) -> [Setting] {
        var settings: [Setting] = []
        // Lines end in LF or CRLF, as TOML has it.
        let lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, raw) in lines.enumerated() {
            let line = index + 1
            let place = "\(name):\(line)"
            var scalars = raw
            if scalars.last == "\r" { scalars.removeLast() }
            let content = strippingComment(scalars).trimmingCharacters(in: .whitespaces)
            if content.isEmpty { continue }
            if content.unicodeScalars.first == "[" {
                guard content == "[serve]" else {
                    throw failure(
                        place, "\(content) is not a table the settings have; put them at the top or under [serve]")
                }
                continue
            }
            guard let equals = content.unicodeScalars.firstIndex(of: "=") else {
                throw failure(place, "expected key = value, such as listen = \"0.0.0.0:7878\"")
            }
            var key = String(content.unicodeScalars[..<equals]).trimmingCharacters(in: .whitespaces)
            if key.unicodeScalars.count >= 2, key.unicodeScalars.first == "\"", key.unicodeScalars.last == "\"" {
                key = String(key.unicodeScalars.dropFirst().dropLast())
            }
            guard !key.isEmpty, key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                throw failure(place, "'\(key)' is not a setting's name")
            }
            let value = String(content.unicodeScalars[content.unicodeScalars.index(after: equals)...])
                .trimmingCharacters(in: .whitespaces)
            settings.append(Setting(key: key, value: try self.value(value, at: place), line: line))
        }
        return settings
    }

    /// The settings of a JSON file, by key.
    ///
    /// - Throws: ``ChimeError`` `malformedInput` naming the key (or the file) at fault.
    public static func json(_ text: String, name: String) throws(ChimeError) -> [Setting] {
        let json: JSONValue
        do { json = try JSONValue.parse(Array(text.utf8)) } catch {
            throw ChimeError(.malformedInput, field: name, "\(name) is not valid JSON: \(error.message)")
        }
        guard case .object(var object) = json else {
            throw ChimeError(
                .malformedInput, field: name,
                "\(name): expected a JSON object of settings, such as {\"listen\": \"0.0.0.0:7878\"}")
        }
        if case .object(let serve)? = object["serve"], object.count == 1 { object = serve }
        var settings: [Setting] = []
        for (key, value) in object.sorted(by: { $0.key < $1.key }) {
            switch value {
            case .string(let text): settings.append(Setting(key: key, value: .string(text), line: 0))
            case .integer(let number): settings.append(Setting(key: key, value: .integer(number), line: 0))
            case .bool(let flag): settings.append(Setting(key: key, value: .bool(flag), line: 0))
            default:
                throw ChimeError(
                    .malformedInput, field: key,
                    "\(name): \(key) is \(value.kindDescription); give a string, a whole number or true/false")
            }
        }
        return settings
    }

    private static func failure(_ place: String, _ message: String) -> ChimeError {
        ChimeError(.malformedInput, field: place, "\(place): \(message)")
    }

    /// A line without its `#` comment (a `#` inside quotes stays).
    static func strippingComment(_ line: some Sequence<Unicode.Scalar>) -> String {
        var quote: Unicode.Scalar?
        var escaped = false
        var out = String.UnicodeScalarView()
        for scalar in line {
            if escaped {
                escaped = false
                out.append(scalar)
                continue
            }
            if quote == "\"" && scalar == "\\" {
                escaped = true
                out.append(scalar)
                continue
            }
            if let open = quote {
                if scalar == open { quote = nil }
            } else if scalar == "\"" || scalar == "'" {
                quote = scalar
            } else if scalar == "#" {
                break
            }
            out.append(scalar)
        }
        return String(out)
    }

    static func value(_ text: String, at place: String) throws(ChimeError) -> Value {
        switch text {
        case "true": return .bool(true)
        case "false": return .bool(false)
        default: break
        }
        let scalars = text.unicodeScalars
        if scalars.first == "'" {
            guard scalars.count >= 2, scalars.last == "'" else {
                throw failure(place, "the string \(text) is not closed")
            }
            return .string(String(scalars.dropFirst().dropLast()))
        }
        if scalars.first == "\"" {
            let backslashes = scalars.dropLast().reversed().prefix(while: { $0 == "\\" }).count
            guard scalars.count >= 2, scalars.last == "\"", backslashes % 2 == 0 else {
                throw failure(place, "the string \(text) is not closed")
            }
            return .string(try unescape(scalars.dropFirst().dropLast(), at: place))
        }
        if let number = Int64(text.replacingOccurrences(of: "_", with: "")) { return .integer(number) }
        throw failure(place, "'\(text)' is not a value; write a \"string\", a whole number, true or false")
    }

    static func unescape(_ text: some Sequence<Unicode.Scalar>, at place: String) throws(ChimeError) -> String {
        var out = String.UnicodeScalarView()
        var iterator = text.makeIterator()
        while let scalar = iterator.next() {
            guard scalar == "\\" else {
                out.append(scalar)
                continue
            }
            switch iterator.next() {
            case "\""?: out.append("\"")
            case "\\"?: out.append("\\")
            case "n"?: out.append("\n")
            case "t"?: out.append("\t")
            case "u"?:
                let hex = String(
                    String.UnicodeScalarView(
                        [iterator.next(), iterator.next(), iterator.next(), iterator.next()].compactMap { $0 }))
                guard hex.unicodeScalars.count == 4, let code = UInt32(hex, radix: 16),
                    let scalar = Unicode.Scalar(code)
                else {
                    throw failure(place, "\\u needs four hexadecimal digits")
                }
                out.append(scalar)
            case let other:
                throw failure(place, "\\\(other.map(String.init) ?? "") is not an escape TOML knows")
            }
        }
        return String(out)
    }
}
