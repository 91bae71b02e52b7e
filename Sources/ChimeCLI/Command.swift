import ChimeCore
import ChimeServer
import Foundation

/// One `chime` subcommand.
public struct Command: Sendable {
    public var name: String
    public var summary: String
    public var usage: String
    public var examples: [String]
    public var options: [OptionSpec]
    /// Lines `--help` shows after the examples (file formats, rules).
    public var notes: [String] = []
    public var run: @Sendable (ParsedArguments, CLI) async throws -> Int32

    public init(
        name: String, summary: String, usage: String, examples: [String], options: [OptionSpec], notes: [String] = [],
        run: @escaping @Sendable (ParsedArguments, CLI) async throws -> Int32
    ) {
        self.name = name
        self.summary = summary
        self.usage = usage
        self.examples = examples
        self.options = options
        self.notes = notes
        self.run = run
    }
}
