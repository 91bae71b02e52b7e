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
    /// The settings in the order the file gives them (read by ``SettingsFile``, in ChimeCore).
    var settings: [SettingsFile.Setting] = []
    let path: String

    init(path: String) throws {
        self.path = path
        let data = try CLI.readFile(path, what: "the configuration file")
        guard let text = String(data: data, encoding: .utf8) else { throw CommandError("\(path) is not UTF-8 text") }
        do throws(ChimeError) {
            settings =
                path.lowercased().hasSuffix(".json")
                ? try SettingsFile.json(text, name: path) : try SettingsFile.toml(text, name: path)
        } catch {
            throw CommandError(error.message)
        }
    }

    /// The settings as if they had been given as flags, under the flags that were: the command
    /// line wins. Unknown keys and wrong kinds of values are errors naming the file and the key.
    func merged(into arguments: ParsedArguments, options: [OptionSpec]) throws -> ParsedArguments {
        var result = arguments
        for setting in settings {
            let place = setting.line > 0 ? "\(path):\(setting.line)" : path
            guard let option = options.first(where: { $0.name == setting.key }), option.name != "config",
                option.name != "help"
            else {
                let names = options.map(\.name).filter { !["config", "help", "json"].contains($0) }
                let suggestion =
                    ParsedArguments.closest(setting.key, among: names).map { "; did you mean \($0)?" } ?? ""
                throw CommandError(
                    "\(place): \(setting.key) is not a setting of chime serve\(suggestion) (settings: \(names.joined(separator: ", ")))"
                )
            }
            if option.takesValue {
                guard result.values[option.name] == nil else { continue }
                switch setting.value {
                case .string(let text): result.values[option.name] = [text]
                case .integer(let number): result.values[option.name] = [String(number)]
                case .bool:
                    throw CommandError("\(place): \(setting.key) takes a value (\(option.help)), not true/false")
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
