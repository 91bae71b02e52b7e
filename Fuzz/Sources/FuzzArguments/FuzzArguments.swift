import ChimeCore
import FuzzSupport

// Fuzz target: the CLI's argument parser (ParsedArguments.parse, `chime …`), compiled from the CLI's
// own Sources/ChimeCLI/Arguments.swift (a symlink: the file needs only ChimeCore, and ChimeCLI as a
// whole brings the server and its C libraries). The input is NUL-separated: first the options
// (`=name` takes a value, `*name` takes repeated values, `name` is a flag; comma-separated, beside a
// fixed set like the CLI's), then the arguments. Checks:
// - a refusal is a UsageError whose message names what was given;
// - what is accepted fits the options: values only for options that take them, once unless
//   repeatable, flags only for flags (and help), positionals in the order given;
// - the result written back as canonical arguments (`--name=value`, `--flag`, `--`, positionals)
//   parses to the same result;
// - "did you mean" suggests only a name within its distance; a duration is finite and not negative.

let fixed: [OptionSpec] = [
    .value("title", "t"), .value("id", "i", repeatable: true), .flag("json", "j"), .value("in", "delay"),
    .value("app", "app"), .flag("repeats", "r"), .value("calendar", "c"),
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzArguments(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let strings = fuzzStrings(fuzzBytes(start, count))
    var options = fixed
    for entry in strings[0].split(separator: ",").map(String.init) {
        let name = String(entry.drop(while: { $0 == "=" || $0 == "*" }))
        guard !name.isEmpty, !name.contains("="), name != "help", !options.contains(where: { $0.name == name }) else {
            continue
        }
        options.append(
            entry.hasPrefix("*")
                ? .value(name, "", repeatable: true) : entry.hasPrefix("=") ? .value(name, "") : .flag(name, ""))
    }
    let arguments = Array(strings.dropFirst())

    let parsed: ParsedArguments
    do { parsed = try ParsedArguments.parse(arguments, options: options) } catch {
        // Split as the parser does, by scalars (a mark after = is not joined to it).
        require(
            arguments.contains {
                error.message.contains(
                    String($0.unicodeScalars.split(separator: "=", maxSplits: 1).first ?? $0.unicodeScalars[...]))
            },
            "the refusal names nothing given: \(error.message)")
        return 0
    }
    let known = Dictionary(options.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    for (name, values) in parsed.values {
        guard let spec = known[name], spec.takesValue else { fatalError("a value for \(name), which takes none") }
        require(spec.repeatable || values.count == 1, "\(name) given \(values.count) times")
    }
    for flag in parsed.flags {
        require(flag == "help" || known[flag].map { !$0.takesValue } == true, "the flag \(flag) is not one")
    }
    var rest = arguments[...]
    for positional in parsed.positionals {
        guard let index = rest.firstIndex(of: positional) else {
            fatalError("positional \(positional.debugDescription) not in order")
        }
        rest = rest[(index + 1)...]
    }

    var canonical: [String] = []
    for (name, values) in parsed.values.sorted(by: { $0.key < $1.key }) {
        canonical += values.map { "--\(name)=\($0)" }
    }
    canonical += parsed.flags.sorted().map { "--" + $0 }
    canonical += ["--"] + parsed.positionals
    let again: ParsedArguments
    do { again = try ParsedArguments.parse(canonical, options: options) } catch {
        fatalError("the canonical \(canonical) is refused: \(error)")
    }
    require(again == parsed, "\(canonical) parses differently")

    for argument in arguments.prefix(4) {
        if let suggestion = ParsedArguments.closest(argument, among: options.map(\.name)) {
            require(
                ParsedArguments.distance(argument, suggestion) <= max(2, argument.count / 3),
                "suggested \(suggestion) for \(argument)")
        }
        if let seconds = try? parseDuration(argument) {
            require(seconds.isFinite && seconds >= 0, "\(argument) is \(seconds) s")
        }
    }
    return 0
}
