import ChimeCore
import Foundation

/// `chime serve --config FILE`: every `serve` flag as a setting, in TOML or JSON. Flags given on the
/// command line win over the file.
///
/// ```toml
/// # /etc/chime/chime.toml
/// listen = "0.0.0.0:7878"
/// data = "/var/lib/chime"
/// tls-cert = "/etc/chime/cert.pem"
/// tls-key = "/etc/chime/key.pem"
/// launch-timeout = 30
/// auto-allow = false
/// ```
///
/// The same as JSON: `{"listen": "0.0.0.0:7878", "data": "/var/lib/chime", "launch-timeout": 30}`.
/// Keys are the flags' names without their dashes; a `[serve]` table may hold them. A file ending in
/// `.json` is read as JSON, any other as TOML (the part of it settings need: `key = value` with
/// strings, integers and booleans, comments, and one `[serve]` table).
struct ConfigFile {
    enum Value: Equatable {
        case string(String)
        case integer(Int64)
        case bool(Bool)
    }

    /// The settings in the order the file gives them.
    var settings: [(key: String, value: Value, line: Int)] = []
    let path: String

    init(path: String) throws {
        self.path = path
        let data = try CLI.readFile(path, what: "the configuration file")
        guard let text = String(data: data, encoding: .utf8) else { throw CommandError("\(path) is not UTF-8 text") }
        if path.lowercased().hasSuffix(".json") {
            try readJSON(text)
        } else {
            try readTOML(text)
        }
    }

    private mutating func readJSON(_ text: String) throws {
        let json: JSONValue
        do { json = try JSONValue.parse(Array(text.utf8)) } catch {
            throw CommandError("\(path) is not valid JSON: \(error.message)")
        }
        guard case .object(var object) = json else { throw CommandError("\(path): expected a JSON object of settings, such as {\"listen\": \"0.0.0.0:7878\"}") }
        if case .object(let serve)? = object["serve"], object.count == 1 { object = serve }
        for (key, value) in object.sorted(by: { $0.key < $1.key }) {
            switch value {
            case .string(let text): settings.append((key, .string(text), 0))
            case .integer(let number): settings.append((key, .integer(number), 0))
            case .bool(let flag): settings.append((key, .bool(flag), 0))
            default: throw CommandError("\(path): \(key) is \(value.kindDescription); give a string, a whole number or true/false")
            }
        }
    }

    private mutating func readTOML(_ text: String) throws {
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = index + 1
            let content = Self.strippingComment(String(raw)).trimmingCharacters(in: .whitespaces)
            if content.isEmpty { continue }
            if content.hasPrefix("[") {
                guard content == "[serve]" else {
                    throw CommandError("\(path):\(line): \(content) is not a table the settings have; put them at the top or under [serve]")
                }
                continue
            }
            guard let equals = content.firstIndex(of: "=") else {
                throw CommandError("\(path):\(line): expected key = value, such as listen = \"0.0.0.0:7878\"")
            }
            var key = content[..<equals].trimmingCharacters(in: .whitespaces)
            if key.count >= 2, key.first == "\"", key.last == "\"" { key = String(key.dropFirst().dropLast()) }
            guard !key.isEmpty, key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                throw CommandError("\(path):\(line): '\(key)' is not a setting's name")
            }
            let value = content[content.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            settings.append((key, try Self.value(value, at: "\(path):\(line)"), line))
        }
    }

    /// A line without its `#` comment (a `#` inside quotes stays).
    static func strippingComment(_ line: String) -> String {
        var quote: Character?
        var escaped = false
        var out = ""
        for character in line {
            if escaped { escaped = false; out.append(character); continue }
            if quote == "\"" && character == "\\" { escaped = true; out.append(character); continue }
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == "#" {
                break
            }
            out.append(character)
        }
        return out
    }

    static func value(_ text: String, at place: String) throws -> Value {
        switch text {
        case "true": return .bool(true)
        case "false": return .bool(false)
        default: break
        }
        if text.hasPrefix("'") {
            guard text.count >= 2, text.hasSuffix("'") else { throw CommandError("\(place): the string \(text) is not closed") }
            return .string(String(text.dropFirst().dropLast()))
        }
        if text.hasPrefix("\"") {
            guard text.count >= 2, text.hasSuffix("\""), !text.hasSuffix("\\\"") || text.hasSuffix("\\\\\"") else {
                throw CommandError("\(place): the string \(text) is not closed")
            }
            return .string(try unescape(String(text.dropFirst().dropLast()), at: place))
        }
        if let number = Int64(text.replacingOccurrences(of: "_", with: "")) { return .integer(number) }
        throw CommandError("\(place): '\(text)' is not a value; write a \"string\", a whole number, true or false")
    }

    static func unescape(_ text: String, at place: String) throws -> String {
        var out = ""
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            guard character == "\\" else { out.append(character); continue }
            switch iterator.next() {
            case "\""?: out.append("\"")
            case "\\"?: out.append("\\")
            case "n"?: out.append("\n")
            case "t"?: out.append("\t")
            case "u"?:
                let hex = String([iterator.next(), iterator.next(), iterator.next(), iterator.next()].compactMap { $0 })
                guard hex.count == 4, let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) else {
                    throw CommandError("\(place): \\u needs four hexadecimal digits")
                }
                out.unicodeScalars.append(scalar)
            case let other:
                throw CommandError("\(place): \\\(other.map(String.init) ?? "") is not an escape TOML knows")
            }
        }
        return out
    }

    /// The settings as if they had been given as flags, under the flags that were: the command
    /// line wins. Unknown keys and wrong kinds of values are errors naming the file and the key.
    func merged(into arguments: ParsedArguments, options: [OptionSpec]) throws -> ParsedArguments {
        var result = arguments
        for setting in settings {
            let place = setting.line > 0 ? "\(path):\(setting.line)" : path
            guard let option = options.first(where: { $0.name == setting.key }), option.name != "config", option.name != "help" else {
                let names = options.map(\.name).filter { !["config", "help", "json"].contains($0) }
                let suggestion = ParsedArguments.closest(setting.key, among: names).map { "; did you mean \($0)?" } ?? ""
                throw CommandError("\(place): \(setting.key) is not a setting of chime serve\(suggestion) (settings: \(names.joined(separator: ", ")))")
            }
            if option.takesValue {
                guard result.values[option.name] == nil else { continue }
                switch setting.value {
                case .string(let text): result.values[option.name] = [text]
                case .integer(let number): result.values[option.name] = [String(number)]
                case .bool: throw CommandError("\(place): \(setting.key) takes a value (\(option.help)), not true/false")
                }
            } else {
                guard case .bool(let on) = setting.value else {
                    throw CommandError("\(place): \(setting.key) is a switch; give true or false")
                }
                if on && !arguments.flags.contains(option.name) { result.flags.insert(option.name) }
            }
        }
        return result
    }
}
