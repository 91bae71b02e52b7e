import Foundation
import TestThreads
import Testing

/// Rules kept over the whole tree by reading it (as SleepTests keeps the one way to sleep): tests
/// that assert, one lock type.
@Suite("Rules over the whole tree", .testThreads)
struct TreeRulesTests {
    /// Whether `line` has a `return` with no value: the end of a block or of the line follows it.
    static func returnsNothing(_ line: Substring) -> Bool {
        var rest = line[...]
        while let found = rest.range(of: "return") {
            let before = rest[..<found.lowerBound].last
            let after = rest[found.upperBound...].drop { $0 == " " }
            let isWord = before.map { !$0.isLetter && !$0.isNumber && $0 != "_" } ?? true
            if isWord, after.isEmpty || after.first == "}" { return true }
            rest = rest[found.upperBound...]
        }
        return false
    }

    /// What makes an early exit a failure rather than a pass.
    static let failures = ["Issue.record", "XCTFail"]

    /// A test that leaves its body early without recording an issue passes without asserting what
    /// follows (as `guard case … = answer else { return }` did in APNsEndpointTests). In the body of
    /// every `@Test` and XCTest `test…` function, a `return` without a value is preceded, on its
    /// line or within the 3 lines before, by `Issue.record` or `XCTFail`; `#require` and `throw`
    /// need no `return`.
    @Test("no test leaves its body early without recording an issue")
    func testsAssert() throws {
        let files = try SourceTree.swiftFiles(in: "Tests")
        var bodies = 0
        for file in files {
            // Searched without comments and string contents (a test's text may show a return).
            let text = try String(contentsOf: file, encoding: .utf8)
            let code = SourceTree.code(of: text)
            let lines = try SourceTree.lines(of: file, text: code)
            let shown = try SourceTree.lines(of: file, text: text)
            for body in SourceTree.testBodies(in: code) {
                bodies += 1
                for index in (body.lowerBound - 1)..<body.upperBound where Self.returnsNothing(lines[index].text) {
                    let window = lines[max(body.lowerBound - 1, index - 3)...index]
                    if window.contains(where: { line in Self.failures.contains { line.text.contains($0) } }) {
                        continue
                    }
                    Issue.record(
                        """
                        \(lines[index].place) leaves a test early without recording an issue: \
                        \(shown[index].text.trimmingCharacters(in: .whitespaces)) (use try #require, or Issue.record before the return)
                        """)
                }
            }
        }
        // The reader finds the tests (about 750 today): a reader that found none would pass this check.
        #expect(bodies > 500, "\(bodies) test bodies found in \(files.count) files")
    }

    /// State shared between threads sits in a `Mutex` (Synchronization), which owns what it guards;
    /// no second lock type beside it. `NSCondition` stays where a thread must block until a
    /// condition holds (SSEClient), which a `Mutex` cannot do. The external package is app code as
    /// its developers write it, which may use Foundation's locks.
    @Test("one lock type: Mutex, no NSLock", arguments: ["Sources", "Tests", "Benchmarks", "Examples", "Fuzz"])
    func oneLockType(folder: String) throws {
        let forbidden = ["NSLock", "NSRecursiveLock", "os_unfair_lock", "pthread_mutex", "pthread_rwlock"]
        for file in try SourceTree.swiftFiles(in: folder) where !file.path.contains("/Tests/ExternalPackage/") {
            let code = SourceTree.code(of: try String(contentsOf: file, encoding: .utf8))
            for line in try SourceTree.lines(of: file, text: code) {
                for name in forbidden where line.text.contains(name) {
                    Issue.record("\(folder)/…/\(line.place) uses \(name): keep the state in a Mutex (Synchronization)")
                }
            }
        }
    }

    /// A merge that stopped on a conflict and was committed anyway leaves git's markers in the file
    /// (docs/security.md carried one for two days: both rows of a table and the markers between them).
    /// No text file of the tree begins a line with them.
    @Test("no merge-conflict markers left in the tree")
    func noConflictMarkers() throws {
        let kinds: Set<String> = [
            "swift", "md", "js", "css", "html", "py", "sh", "json", "toml", "yml", "lua", "c", "h",
        ]
        let skipped: Set<String> = [".build", ".git", ".venv", "venv", "node_modules", "__pycache__"]
        let enumerator = try #require(
            FileManager.default.enumerator(at: SourceTree.root, includingPropertiesForKeys: nil))
        var read = 0
        for case let url as URL in enumerator {
            if skipped.contains(url.lastPathComponent) {
                enumerator.skipDescendants()
                continue
            }
            guard kinds.contains(url.pathExtension) || url.lastPathComponent == "Makefile",
                let text = try? String(contentsOf: url, encoding: .utf8)
            else { continue }
            read += 1
            for line in try SourceTree.lines(of: url, text: text)
            where line.text.hasPrefix("<<<<<<< ") || line.text.hasPrefix(">>>>>>> ") {
                Issue.record("\(line.place) has a merge-conflict marker: \(line.text)")
            }
        }
        #expect(read > 500, "\(read) text files read")
    }

    @Test("a return without a value is told from one with a value")
    func returns() {
        #expect(Self.returnsNothing("    guard x else { return }"))
        #expect(Self.returnsNothing("        return"))
        #expect(Self.returnsNothing("if done { return}"))
        #expect(!Self.returnsNothing("    guard x else { return nil }"))
        #expect(!Self.returnsNothing("    return value"))
        #expect(!Self.returnsNothing("    let returned = 1 // noreturn"))
    }

    /// The reader of test bodies, on the shapes that could mislead it: braces in strings, raw and
    /// multi-line strings, interpolations and comments.
    @Test("test bodies are found past braces in strings, interpolations and comments")
    func bodiesFound() {
        let text = #"""
            @Suite struct S {
                @Test("a {") func a() {
                    let s = "}\("{")"
                    // }
                    /* } */
                    let r = #"}"\"#
                }
                func helper() { print(1) }
                @Test func b() async throws {
                    let m = """
                        }
                        """
                    _ = m
                }
                func testXC() {
                }
            }
            """#
        #expect(SourceTree.testBodies(in: SourceTree.code(of: text)) == [2...7, 9...14, 15...16])
    }
}
