import Foundation
import TestThreads
import Testing

/// Every suite's bodies run on ``TestThreads`` (see there for why), and they really do.
@Suite("Test bodies run off Swift's cooperative pool", .testThreads)
struct TestThreadsCheckTests {
    @Test("a synchronous test body runs on a test thread")
    func synchronousBody() {
        #expect(TestThreads.isCurrent)
    }

    @Test("an asynchronous body is back on a test thread after it awaits")
    func asynchronousBody() async {
        await Task {}.value
        #expect(TestThreads.isCurrent)
    }

    /// A suite without the trait would put its bodies back on the pool; `@Test`s outside a
    /// `@Suite` type would too.
    @Test("every suite in Tests/ carries .testThreads, and every test is in a suite")
    func everySuite() throws {
        var suites = 0
        for file in try SourceTree.swiftFiles(in: "Tests") where !file.path.contains("/ExternalPackage/") {
            // Code only: comments and the insides of string literals (fixtures of other tests) are blanked.
            let lines = try SourceTree.lines(
                of: file, text: SourceTree.code(of: String(contentsOf: file, encoding: .utf8)))
            let attributes = lines.indices.filter { lines[$0].text.drop { $0 == " " }.hasPrefix("@") }
            for index in attributes where lines[index].text.drop(while: { $0 == " " }).hasPrefix("@Suite") {
                suites += 1
                // The attribute may run over a few lines; the trait is within it.
                if !lines[index..<min(index + 4, lines.count)].contains(where: { $0.text.contains(".testThreads") }) {
                    Issue.record("\(lines[index].place): a @Suite without .testThreads (see TestThreads)")
                }
            }
            let tests = attributes.filter { lines[$0].text.drop(while: { $0 == " " }).hasPrefix("@Test") }
            if let first = tests.first,
                !attributes.contains(where: { lines[$0].text.drop(while: { $0 == " " }).hasPrefix("@Suite") })
            {
                Issue.record("\(lines[first].place): @Test outside a @Suite(…, .testThreads) type")
            }
        }
        #expect(suites > 100, "found only \(suites) suites under Tests/")
    }
}
