import Foundation

/// The command the service starts to hand an app an answer while the app is not running: a program
/// and its arguments, run without a shell (write `sh -c '…'` to have one).
///
/// The text form is split into words as a shell splits them, without expanding anything: blanks
/// separate words, `'…'` keeps everything literally, `"…"` keeps everything but `\"` and `\\`, and a
/// backslash outside quotes keeps the next character.
///
/// ```swift
/// let command = try LaunchCommand(parsing: #"/opt/organizer/bin/organizer --tasks "/srv/my tasks.json""#)
/// command.arguments   // ["/opt/organizer/bin/organizer", "--tasks", "/srv/my tasks.json"]
/// ```
public struct LaunchCommand: Sendable, Hashable, CustomStringConvertible {
    /// The most words a command may have.
    public static let maxWords = 256
    /// The longest a command may be, in UTF-8 bytes of all its words.
    public static let maxBytes = 16 * 1024

    /// The program (a path, or a name looked up on the service's `PATH`), then its arguments.
    public let arguments: [String]

    /// A command from its words.
    ///
    /// - Throws: ``ChimeError`` `invalidValue` naming `field` when there are no words, the first is
    ///   empty, a word holds a NUL, or the command is too long.
    public init(arguments: [String], field: String = JSONFieldName.App.launch) throws(ChimeError) {
        guard let program = arguments.first else {
            throw ChimeError(
                .invalidValue, field: field,
                "\(field) is empty; give the program to start and its arguments, or null for none")
        }
        guard !program.isEmpty else {
            throw ChimeError(.invalidValue, field: field, "\(field): the program (the first word) is empty")
        }
        guard arguments.count <= Self.maxWords else {
            throw ChimeError(
                .invalidValue, field: field,
                "\(field) has \(arguments.count) words; at most \(Self.maxWords) are accepted")
        }
        let bytes = arguments.reduce(0) { $0 + $1.utf8.count }
        guard bytes <= Self.maxBytes else {
            throw ChimeError(
                .invalidValue, field: field, "\(field) is \(bytes) bytes long; at most \(Self.maxBytes) are accepted")
        }
        if let index = arguments.firstIndex(where: { $0.utf8.contains(0) }) {
            throw ChimeError(
                .invalidValue, field: field,
                "\(field): word \(index + 1) contains a NUL character, which a command cannot hold")
        }
        self.arguments = arguments
    }

    /// A command read back from a store, which only ever holds checked commands.
    package init(stored arguments: [String]) {
        self.arguments = arguments
    }

    /// A command from its text, split into words as described above.
    ///
    /// - Throws: ``ChimeError`` `invalidValue` naming `field` for an unterminated quote, a trailing
    ///   backslash, or what ``init(arguments:field:)`` refuses.
    public init(parsing text: String, field: String = JSONFieldName.App.launch) throws(ChimeError) {
        var words: [String] = []
        var word = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for character in text {
            if escaped {
                word.append(character)
                escaped = false
                continue
            }
            switch (quote, character) {
            case ("'", "'"), ("\"", "\""):
                quote = nil
            case ("'", _):
                word.append(character)
            case ("\"", "\\"), (nil, "\\"):
                escaped = true
                inWord = true
            case ("\"", _):
                word.append(character)
            case (nil, "'"), (nil, "\""):
                quote = character
                inWord = true
            case (nil, _) where character.isWhitespace:
                if inWord { words.append(word) }
                word = ""
                inWord = false
            default:
                word.append(character)
                inWord = true
            }
        }
        if let quote {
            throw ChimeError(
                .invalidValue, field: field,
                "\(field): the quote \(quote) is not closed; close it, or escape it with a backslash")
        }
        if escaped {
            throw ChimeError(
                .invalidValue, field: field, "\(field) ends with a backslash; remove it, or write \\\\ for a backslash")
        }
        if inWord { words.append(word) }
        try self.init(arguments: words, field: field)
    }

    /// The command as one line a shell would split back into the same words.
    public var description: String {
        arguments.map { word in
            let plain =
                !word.isEmpty
                && word.unicodeScalars.allSatisfy { scalar in
                    scalar.isASCII
                        && (CharacterSet.alphanumerics.contains(scalar) || "/._-=:,@%+".unicodeScalars.contains(scalar))
                }
            return plain ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
        }.joined(separator: " ")
    }
}
