import ChimeCore
import Foundation

/// A mistake in how a command was called: exit code 2, with what to fix.
public struct UsageError: Error, CustomStringConvertible, Equatable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// What a command accepts.
public struct OptionSpec: Sendable, Equatable {
    public var name: String
    /// `true` for `--name VALUE`; `false` for a flag.
    public var takesValue: Bool
    public var repeatable: Bool
    public var help: String

    public static func value(_ name: String, _ help: String, repeatable: Bool = false) -> OptionSpec {
        OptionSpec(name: name, takesValue: true, repeatable: repeatable, help: help)
    }

    public static func flag(_ name: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, takesValue: false, repeatable: false, help: help)
    }
}

/// Parsed arguments: positionals in order, option values by name, flags set.
public struct ParsedArguments: Equatable {
    public var positionals: [String] = []
    public var values: [String: [String]] = [:]
    public var flags: Set<String> = []

    public func value(_ name: String) -> String? { values[name]?.last }
    public func all(_ name: String) -> [String] { values[name] ?? [] }
    public func has(_ name: String) -> Bool { flags.contains(name) }

    /// Parses like swift-argument-parser: `--name value` and `--name=value`, flags, `--` ends the
    /// options, `-h`/`--help`; unknown options are named with the closest known one. Dashes and `=`
    /// are found by Unicode scalars: a value may start with a combining mark (`--title=\u{301}x`),
    /// which Swift's Characters would join to the `=`.
    public static func parse(_ arguments: [String], options: [OptionSpec]) throws(UsageError) -> ParsedArguments {
        var result = ParsedArguments()
        var index = 0
        var onlyPositionals = false
        let known = Dictionary(options.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            let scalars = argument.unicodeScalars
            if onlyPositionals || scalars.first != "-" || argument == "-" {
                result.positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            if argument == "-h" || argument == "--help" {
                result.flags.insert("help")
                continue
            }
            if !scalars.starts(with: "--".unicodeScalars) {
                // A negative number is a value, not an option (e.g. a longitude).
                if Double(argument) != nil || argument.contains(",") {
                    result.positionals.append(argument)
                    continue
                }
                throw UsageError(
                    "unknown option '\(argument)'; options are spelled with two dashes, e.g. --\(argument.dropFirst())")
            }
            var name = String(scalars.dropFirst(2))
            var inline: String?
            if let equals = name.unicodeScalars.firstIndex(of: "=") {
                inline = String(name.unicodeScalars[name.unicodeScalars.index(after: equals)...])
                name = String(name.unicodeScalars[..<equals])
            }
            guard let spec = known[name] else {
                let suggestion =
                    closest(name, among: options.map(\.name) + ["help"]).map { "; did you mean --\($0)?" } ?? ""
                throw UsageError("unknown option '--\(name)'\(suggestion)")
            }
            if spec.takesValue {
                let value: String
                if let inline {
                    value = inline
                } else {
                    guard index < arguments.count else { throw UsageError("option '--\(name)' needs a value") }
                    value = arguments[index]
                    index += 1
                }
                if !spec.repeatable, result.values[name] != nil {
                    throw UsageError("option '--\(name)' was given twice; give it once")
                }
                result.values[name, default: []].append(value)
            } else {
                if inline != nil { throw UsageError("option '--\(name)' is a flag and takes no value") }
                result.flags.insert(name)
            }
        }
        return result
    }

    /// The closest word within two edits, for "did you mean".
    public static func closest(_ word: String, among candidates: [String]) -> String? {
        let scored = candidates.map { ($0, distance(word, $0)) }.filter { $0.1 <= max(2, word.count / 3) }
        return scored.min { $0.1 < $1.1 }?.0
    }

    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

/// Durations as people write them (`90s`, `10m`, `1h30m`, `2d`, `1w`; see ``DurationText``); a
/// number needs its unit.
public func parseDuration(_ text: String) throws(UsageError) -> TimeInterval {
    do throws(ChimeError) {
        return try DurationText.seconds(in: text, field: "duration")
    } catch {
        throw UsageError(error.message)
    }
}
