import Foundation
import Testing

/// The repository's Swift files, read by the tests that keep a rule over the whole tree: one way to
/// sleep (SleepTests), one lock type and tests that assert (TreeRulesTests), the engine's ownership
/// (OwnershipTests).
enum SourceTree {
    /// The repository's root: four levels above this file (Tests/ChimeCoreTests/Support/).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// One line of a file: its number (from 1) and text.
    struct Line {
        var file: URL
        var number: Int
        var text: Substring

        /// `Folder/…/File.swift:12`, for an issue's message.
        var place: String {
            "\(file.deletingLastPathComponent().lastPathComponent)/\(file.lastPathComponent):\(number)"
        }
        /// The line is a comment only.
        var isComment: Bool { text.drop { $0 == " " || $0 == "\t" }.hasPrefix("//") }
    }

    /// The Swift files under `folder` (a path from the root), without build products (a `.build`
    /// directory: the external package's, the fuzz package's). Records an issue when there are
    /// none, so a moved folder cannot pass a check unread.
    static func swiftFiles(in folder: String) throws -> [URL] {
        let enumerator = try #require(
            FileManager.default.enumerator(at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil))
        var files: [URL] = []
        for case let url as URL in enumerator {
            if url.lastPathComponent == ".build" {
                enumerator.skipDescendants()
            } else if url.pathExtension == "swift" {
                files.append(url)
            }
        }
        #expect(!files.isEmpty, "no Swift files found in \(folder)")
        return files.sorted { $0.path < $1.path }
    }

    /// The lines of `file`, or of `text` read from it.
    static func lines(of file: URL, text: String? = nil) throws -> [Line] {
        try (text ?? String(contentsOf: file, encoding: .utf8)).split(separator: "\n", omittingEmptySubsequences: false)
            .enumerated()
            .map { Line(file: file, number: $0.offset + 1, text: $0.element) }
    }

    /// The lines of `file` that are code, not comments only.
    static func codeLines(of file: URL) throws -> [Line] {
        try lines(of: file).filter { !$0.isComment }
    }

    /// `text` with its comments and the contents of its string literals (plain, raw `#"…"#` and
    /// multi-line) made spaces, line breaks kept; the code of interpolations `\(…)` stays, since it is
    /// code. What is left can be searched for braces and keywords.
    static func code(of text: String) -> String {
        var bytes = Array(text.utf8)
        enum Context { case code(parentheses: Int), string(hashes: Int, multiline: Bool) }
        var stack: [Context] = [.code(parentheses: 0)]
        var index = 0
        func at(_ offset: Int, _ literal: String) -> Bool {
            let pattern = Array(literal.utf8)
            return offset + pattern.count <= bytes.count && Array(bytes[offset..<offset + pattern.count]) == pattern
        }
        func hashes(from offset: Int) -> Int {
            var count = 0
            while offset + count < bytes.count, bytes[offset + count] == UInt8(ascii: "#") { count += 1 }
            return count
        }
        /// Blanks `count` bytes from `index` (not line breaks) and moves past them.
        func blank(_ count: Int) {
            for offset in index..<min(index + count, bytes.count) where bytes[offset] != UInt8(ascii: "\n") {
                bytes[offset] = UInt8(ascii: " ")
            }
            index += count
        }
        while index < bytes.count {
            switch stack[stack.count - 1] {
            case .string(let count, let multiline):
                let quote = multiline ? "\"\"\"" : "\""
                if bytes[index] == UInt8(ascii: "\\"), hashes(from: index + 1) == count {
                    if at(index + 1 + count, "(") {
                        stack.append(.code(parentheses: 0))
                        index += 2 + count
                    } else {
                        blank(2 + count)  // an escaped character
                    }
                } else if at(index, quote), hashes(from: index + quote.utf8.count) >= count {
                    stack.removeLast()
                    index += quote.utf8.count + count
                } else {
                    blank(1)
                }
            case .code(let parentheses):
                let count = hashes(from: index)
                if at(index, "//") {
                    var end = index
                    while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
                    blank(end - index)
                } else if at(index, "/*") {
                    var end = index + 2
                    while end < bytes.count, !at(end, "*/") { end += 1 }
                    blank(end + 2 - index)
                } else if at(index + count, "\"") {
                    let multiline = at(index + count, "\"\"\"")
                    stack.append(.string(hashes: count, multiline: multiline))
                    index += count + (multiline ? 3 : 1)
                } else {
                    if stack.count > 1, bytes[index] == UInt8(ascii: "(") {
                        stack[stack.count - 1] = .code(parentheses: parentheses + 1)
                    } else if stack.count > 1, bytes[index] == UInt8(ascii: ")") {
                        if parentheses == 0 {
                            stack.removeLast()
                        } else {
                            stack[stack.count - 1] = .code(parentheses: parentheses - 1)
                        }
                    }
                    index += 1
                }
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The line ranges (first and last line, from 1) of the bodies of the `@Test` functions in
    /// `text` (as ``code(of:)`` gives it) and of XCTest's `func testName()`.
    static func testBodies(in code: String) -> [ClosedRange<Int>] {
        let bytes = Array(code.utf8)
        var line = 1
        var depth = 0
        var sawTest = false
        var inSignature = false
        var open: (line: Int, depth: Int)?
        var bodies: [ClosedRange<Int>] = []
        func at(_ offset: Int, _ literal: String) -> Bool {
            let pattern = Array(literal.utf8)
            return offset + pattern.count <= bytes.count && Array(bytes[offset..<offset + pattern.count]) == pattern
        }
        for (index, byte) in bytes.enumerated() {
            switch byte {
            case UInt8(ascii: "\n"): line += 1
            case UInt8(ascii: "{"):
                if inSignature, open == nil { open = (line, depth) }
                inSignature = false
                depth += 1
            case UInt8(ascii: "}"):
                depth -= 1
                if let start = open, depth == start.depth {
                    bodies.append(start.line...line)
                    open = nil
                }
            default:
                guard open == nil else { break }
                if at(index, "@Test") { sawTest = true }
                if at(index, "func "),
                    index == 0 || bytes[index - 1] == UInt8(ascii: " ") || bytes[index - 1] == UInt8(ascii: "\n")
                {
                    let next = index + 9 < bytes.count ? bytes[index + 9] : 0
                    inSignature =
                        sawTest || (at(index, "func test") && (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(next))
                    sawTest = false
                }
            }
        }
        return bodies
    }
}
