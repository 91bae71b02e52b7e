import ChimeCore
import ChimeServer
import Foundation

/// The `chime` command-line tool. Exit codes: 0 ok, 1 failed, 2 usage.
///
/// ```swift
/// let status = await CLI().main(["add", "--app", "com.example.alarm", "--title", "Alarm", "--in", "10s"])
/// ```
public struct CLI: Sendable {
    /// Where output goes (injectable for tests).
    public var write: @Sendable (String) -> Void
    public var writeError: @Sendable (String) -> Void

    public init(
        write: @escaping @Sendable (String) -> Void = { FileHandle.standardOutput.write(Data(($0 + "\n").utf8)) },
        writeError: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
    ) {
        self.write = write
        self.writeError = writeError
    }

    static let common: [OptionSpec] = [
        .value("data", "the service's data directory (default: $XDG_DATA_HOME/chime)"),
        .flag("json", "print JSON for scripts"),
    ]

    /// Runs `chime ARGUMENTS` and returns the exit code. The options every command takes
    /// (`--data DIR`, `--json`) may come before the command as well as after it.
    public func main(_ arguments: [String]) async -> Int32 {
        let (globals, rest): ([String], [String])
        do {
            (globals, rest) = try Self.leadingGlobals(arguments)
        } catch {
            writeError("chime: \(error.message)\nRun `chime --help` for the commands.")
            return 2
        }
        if rest.first == "--version" || rest.first == "-V" || (rest.isEmpty && globals.contains("--version")) {
            write(Self.versionLine)
            return 0
        }
        guard let name = rest.first, name != "-h", name != "--help", name != "help" else {
            write(overview)
            return rest.isEmpty && globals.isEmpty ? 2 : 0
        }
        guard let command = Self.commands.first(where: { $0.name == name }) else {
            let suggestion =
                ParsedArguments.closest(name, among: Self.commands.map(\.name)).map { " Did you mean '\($0)'?" } ?? ""
            let hint = name.hasPrefix("-") ? " Options other than --data and --json go after the command." : ""
            writeError("chime: unknown command '\(name)'.\(suggestion)\(hint) Run `chime --help` for the list.")
            return 2
        }
        do {
            let parsed = try ParsedArguments.parse(
                Array(rest.dropFirst()) + globals, options: command.options + Self.common)
            if parsed.has("help") {
                write(help(for: command))
                return 0
            }
            return try await command.run(parsed, self)
        } catch let error as UsageError {
            writeError(
                "chime \(command.name): \(error.message)\nUsage: \(command.usage)\nRun `chime \(command.name) --help` for examples."
            )
            return 2
        } catch let error as CommandError {
            writeError("chime \(command.name): \(error.message)")
            return 1
        } catch {
            writeError("chime \(command.name): \(error)")
            return 1
        }
    }

    /// The global options before the command (`--data DIR`, `--data=DIR`, `--json`), and the rest.
    package static func leadingGlobals(_ arguments: [String]) throws(UsageError) -> (globals: [String], rest: [String])
    {
        var globals: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--json" || argument.hasPrefix("--data=") {
                globals.append(argument)
                index += 1
            } else if argument == "--data" {
                guard index + 1 < arguments.count else { throw UsageError("option '--data' needs a directory") }
                globals += [argument, arguments[index + 1]]
                index += 2
            } else if argument == "--version" && index + 1 < arguments.count {
                // `chime --version` alone is the version; before a command it is a mistake.
                throw UsageError("--version goes alone: chime --version")
            } else {
                break
            }
        }
        return (globals, Array(arguments[index...]))
    }

    /// `chime 0.3.0 (commit 1a2b3c4d5e6f)`.
    static var versionLine: String {
        "chime \(ChimeVersion.number) (commit \(ChimeBuildInfo.commit))"
    }

    var overview: String {
        var lines = ["chime \(ChimeVersion.number) — the Chime notification center", "", "Commands:"]
        let width = Self.commands.map(\.name.count).max() ?? 0
        for command in Self.commands {
            lines.append("  \(command.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(command.summary)")
        }
        lines += [
            "", "Run `chime COMMAND --help` for a command's options and examples; `chime --version` for the version.",
            "Every command finds the service through --data (default $XDG_DATA_HOME/chime), given before or after the command.",
        ]
        return lines.joined(separator: "\n")
    }

    func help(for command: Command) -> String {
        var lines = ["\(command.summary)", "", "Usage: \(command.usage)", "", "Options:"]
        let all = command.options + Self.common
        let width = all.map { $0.name.count + ($0.takesValue ? 8 : 0) }.max() ?? 0
        for option in all {
            let left = "--\(option.name)\(option.takesValue ? " VALUE" : "")"
            lines.append("  \(left.padding(toLength: width + 2, withPad: " ", startingAt: 0))  \(option.help)")
        }
        if !command.examples.isEmpty {
            lines += ["", "Examples:"] + command.examples.map { "  \($0)" }
        }
        if !command.notes.isEmpty { lines += [""] + command.notes }
        return lines.joined(separator: "\n")
    }

    // MARK: - Helpers for commands

    func client(_ arguments: ParsedArguments) throws -> ServiceClient {
        try ServiceClient(dataDirectory: arguments.value("data") ?? ChimeService.defaultDataDirectory())
    }

    /// `--app`, or the only registered app when there is exactly one.
    func app(_ arguments: ParsedArguments, _ client: ServiceClient) async throws -> String {
        if let app = arguments.value("app") { return app }
        let names = try Self.appRecords(try await client.list(.listApps, limit: 100)).map(\.bundleIdentifier)
        guard names.count == 1 else {
            throw UsageError(
                "give --app BUNDLE_IDENTIFIER (registered apps: \(names.isEmpty ? "none — add one with `chime apps add`" : names.joined(separator: ", ")))"
            )
        }
        return names[0]
    }

    func printJSON(_ items: [JSONValue]) {
        printJSON(JSONValue.array(items))
    }

    func printJSON(_ value: JSONValue) {
        write(value.serialized(pretty: true))
    }

    /// `--limit N`: at most N items of a list (nil: all of them).
    func listLimit(_ arguments: ParsedArguments) throws -> Int? {
        guard let text = arguments.value("limit") else { return nil }
        guard let limit = Int(text), limit >= 1 else {
            throw UsageError("--limit is '\(text)'; give a whole number of at least 1")
        }
        return limit
    }

    func printJSON(_ response: ServiceClient.Response) {
        write(response.json?.serialized(pretty: true) ?? String(decoding: response.body, as: UTF8.self))
    }

    /// A query string with each value percent-encoded: `?identifier=a%2Fb&identifier=c`, or "" for none.
    static func query(_ pairs: [(name: String, value: String)]) -> String {
        pairs.isEmpty ? "" : "?" + PercentEncoding.query(pairs)
    }
}

extension JSONValue {
    var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }
    var arrayValue: [JSONValue] {
        if case .array(let a) = self { return a }
        return []
    }
    var numberValue: Double? {
        switch self {
        case .number(let n): n
        case .integer(let n): Double(n)
        default: nil
        }
    }
}
