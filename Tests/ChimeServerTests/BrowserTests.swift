import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

#if canImport(Glibc)
    import Glibc
#endif

/// The sign-in link reaches the browser through a private page, never its command line (which
/// every local user reads in /proc).
@Suite("Opening the browser on a sign-in link", .testThreads)
struct BrowserTests {
    static let link = "http://127.0.0.1:7878/#login=SECRETCODE42&reply=com.example.alarm/wake%2Fup/comment"

    @Test("the browser is started on a 0600 page in a 0700 directory that gives the link; the code is not in its argv")
    func privatePage() async throws {
        let recorder = try BrowserRecorder()
        defer { recorder.remove() }
        #expect(Browser.launch(recorder.script, link: Self.link, lifetime: .seconds(60)))
        let record = try await recorder.record()
        #expect(!record.argv.contains("SECRETCODE42"), "\(record.argv)")
        #expect(!record.argv.contains("login="))
        #expect(record.argv.contains("file://"))
        #expect(record.modes == ["600", "700"])
        #expect(BrowserRecorder.link(inPage: record.page) == Self.link)
        #expect(record.page.contains(#"http-equiv="refresh""#))
    }

    @Test("the page and its directory are removed after their lifetime")
    func removed() async throws {
        let page = try LoginPage(link: Self.link)
        #expect(FileManager.default.fileExists(atPath: page.path))
        page.remove(after: .milliseconds(100))
        let deadline = ContinuousClock.now + .seconds(60)
        while FileManager.default.fileExists(atPath: page.directory), ContinuousClock.now < deadline {
            try await Sleep.for(.milliseconds(20))
        }
        #expect(!FileManager.default.fileExists(atPath: page.directory))
    }
}

/// A browser command for tests: a script that records its arguments, the modes of the page it is
/// given and of its directory, and the page.
struct BrowserRecorder {
    let directory: String
    var script: String { directory + "/browser.sh" }

    init() throws {
        directory = NSTemporaryDirectory() + "chime-browser-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let text = """
            #!/bin/sh
            out='\(directory)'
            printf '%s\\n' "$0" "$@" > "$out/argv"
            page=$(printf '%s' "$1" | sed 's|^file://||')
            stat -c '%a' "$page" "$(dirname "$page")" > "$out/modes"
            cat "$page" > "$out/page"
            touch "$out/done"

            """
        try text.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
    }

    /// Waits (at most 60 s) for the script to have run; what it recorded.
    func record() async throws -> (argv: String, modes: [String], page: String) {
        let deadline = ContinuousClock.now + .seconds(60)
        while !FileManager.default.fileExists(atPath: directory + "/done"), ContinuousClock.now < deadline {
            try await Sleep.for(.milliseconds(20))
        }
        func read(_ name: String) throws -> String {
            try String(contentsOfFile: directory + "/" + name, encoding: .utf8)
        }
        return (try read("argv"), try read("modes").split(separator: "\n").map(String.init), try read("page"))
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    /// The link a sign-in page sends the browser to.
    static func link(inPage html: String) -> String? {
        guard let start = html.range(of: #"href=""#), let end = html[start.upperBound...].firstIndex(of: "\"") else {
            return nil
        }
        return html[start.upperBound..<end].replacingOccurrences(of: "&amp;", with: "&")
    }
}
