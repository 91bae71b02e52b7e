import ChimeCore
import FuzzSupport

// Fuzz target: the settings file of `chime serve --config FILE` (SettingsFile.toml and .json, which
// the CLI's ConfigFile reads), a hand-written subset of TOML. The input is the file. Checks:
// - a refusal is a ChimeError `malformedInput` whose field is the place (`chime.toml:LINE` for
//   TOML) and whose message starts with it;
// - accepted settings have names of letters, digits, `-` and `_`, on lines in order;
// - the settings written back as TOML (strings quoted and escaped, LF or CRLF line ends, a comment
//   after each, under [serve] or not) read as the same settings, and as a JSON object read as the
//   same keys and values.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfigFile(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = String(decoding: fuzzBytes(start, count), as: UTF8.self)
    let settings: [SettingsFile.Setting]
    do { settings = try SettingsFile.toml(text, name: "chime.toml") } catch {
        checkRefusal(error, place: "chime.toml:")
        do { _ = try SettingsFile.json(text, name: "chime.json") } catch { checkRefusal(error, place: nil) }
        return 0
    }
    var line = 0
    for setting in settings {
        require(setting.line > line, "setting \(setting.key) on line \(setting.line) after line \(line)")
        line = setting.line
        require(
            !setting.key.isEmpty
                && !setting.key.unicodeScalars.contains { " \t\r\n=#\"'[]".unicodeScalars.contains($0) },
            "accepted the name \(setting.key.debugDescription)")
    }
    for (lineEnd, table) in [("\n", false), ("\r\n", true)] {
        let written = writeTOML(settings, lineEnd: lineEnd, table: table)
        let again: [SettingsFile.Setting]
        do { again = try SettingsFile.toml(written, name: "chime.toml") } catch {
            fatalError("the settings written as TOML do not read: \(error)\n\(written.debugDescription)")
        }
        require(
            again.map(\.key) == settings.map(\.key) && again.map(\.value) == settings.map(\.value),
            "the settings written as TOML read differently:\n\(written.debugDescription)")
    }
    var object: JSONObject = [:]
    for setting in settings { object[setting.key] = json(setting.value) }
    let fromJSON: [SettingsFile.Setting]
    do { fromJSON = try SettingsFile.json(JSONValue.object(object).serialized(), name: "chime.json") } catch {
        fatalError("the settings as JSON do not read: \(error)")
    }
    let expected = object.sorted(by: { $0.key < $1.key })
    require(
        fromJSON.map(\.key) == expected.map(\.key) && fromJSON.map(\.value) == expected.map { value(of: $0.value) },
        "the settings as JSON read differently")
    return 0
}

func checkRefusal(_ error: ChimeError, place: String?) {
    require(error.code == .malformedInput, "refused with \(error.code)")
    guard let field = error.field else { fatalError("a refusal without a field: \(error)") }
    require(!error.message.isEmpty, "a refusal without a message")
    if let place {
        require(
            field.hasPrefix(place) && error.message.hasPrefix(field + ": "),
            "the refusal does not start with its place: \(error)")
    }
}

func json(_ value: SettingsFile.Value) -> JSONValue {
    switch value {
    case .string(let text): .string(text)
    case .integer(let number): .integer(number)
    case .bool(let flag): .bool(flag)
    }
}

func value(of json: JSONValue) -> SettingsFile.Value {
    switch json {
    case .string(let text): .string(text)
    case .integer(let number): .integer(number)
    case .bool(let flag): .bool(flag)
    default: fatalError("not a setting's value: \(json)")
    }
}

/// TOML as a person (or a tool) writes it: `key = value  # comment`.
func writeTOML(_ settings: [SettingsFile.Setting], lineEnd: String, table: Bool) -> String {
    var lines = table ? ["# written again", "[serve]"] : []
    for setting in settings {
        let value: String
        switch setting.value {
        case .string(let text): value = quoted(text)
        case .integer(let number): value = String(number)
        case .bool(let flag): value = String(flag)
        }
        lines.append("\(setting.key) = \(value)  # \(setting.key)")
    }
    return lines.joined(separator: lineEnd) + lineEnd
}

func quoted(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F:
            out +=
                "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                + String(scalar.value, radix: 16)
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}
