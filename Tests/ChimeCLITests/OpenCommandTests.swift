import ChimeCore
import ChimeHTTP
import ChimeServer
import Foundation
import TestThreads
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `chime open`: the one-time login link for the web center, printed (and opened where there is a
/// desktop).
@Suite("chime open", .testThreads)
struct OpenCommandTests {
    @Test("--print prints a one-time link on the server's URL that signs in once; --json gives url and expiry")
    func printsLink() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-open-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = ChimeService.Configuration(
            dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0), printsBanner: false)
        let service = try await RunningService.start(configuration: configuration)
        defer { Task { await service.stop() } }
        func run(_ arguments: [String]) async throws -> (Int32, String, String) {
            try await BinaryTests.chime(arguments + ["--data", directory])
        }

        let (status, output, errors) = try await run(["open", "--print"])
        #expect(status == 0)
        let url = output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(url.hasPrefix(service.url + "/#login="))
        #expect(errors.contains("once"))
        #expect(!output.contains(service.ownerToken))
        let code = String(url.split(separator: "=").last ?? "")
        let body = Array(#"{"code": "\#(code)"}"#.utf8)
        let http = HTTPClient(endpoint: try HTTPEndpoint(service.url))
        func signIn() async throws -> Int {
            try await http.request("POST", "/v1/session", headers: [("Content-Type", "application/json")], body: body)
                .status
        }
        #expect(try await signIn() == 201)
        #expect(try await signIn() == 401)

        let (jsonStatus, jsonOutput, _) = try await run(["open", "--json"])
        #expect(jsonStatus == 0)
        let link = try JSONValue.parse(Array(jsonOutput.utf8))
        if case .string(let text)? = link["url"] {
            #expect(text.contains("#login="))
        } else {
            Issue.record("no url in \(jsonOutput)")
        }
        #expect(link["expires"] != nil)

        let (usageStatus, _, usage) = try await run(["open", "extra"])
        #expect(usageStatus == 2)
        #expect(usage.contains("open takes no arguments"))
        await service.stop()
    }

    @Test(
        "with a desktop it starts the browser on a private page that holds the link: the code is never in the browser's argv"
    )
    func opensPrivatePage() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-open-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = ChimeService.Configuration(
            dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0), printsBanner: false)
        let service = try await RunningService.start(configuration: configuration)
        defer { Task { await service.stop() } }
        // The browser: records its arguments, then the page's mode and the page.
        let browser = directory + "/browser.sh"
        try """
        #!/bin/sh
        printf '%s\\n' "$@" > '\(directory)/argv'
        page=$(printf '%s' "$1" | sed 's|^file://||')
        stat -c '%a' "$page" > '\(directory)/mode'; cat "$page" > '\(directory)/page'; touch '\(directory)/opened'

        """.write(toFile: browser, atomically: true, encoding: .utf8)
        chmod(browser, 0o755)
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = ":99"
        environment["BROWSER"] = browser
        let result = try await BinaryTests.chime(["open", "--data", directory], environment: environment)
        #expect(result.0 == 0, "\(result.2)")
        #expect(result.2.contains("Opened in your browser"))
        let deadline = ContinuousClock.now + .seconds(60)
        while !FileManager.default.fileExists(atPath: directory + "/opened"), ContinuousClock.now < deadline {
            try await Sleep.for(.milliseconds(20))
        }
        let argv = try String(contentsOfFile: directory + "/argv", encoding: .utf8)
        let printed = result.1.trimmingCharacters(in: .whitespacesAndNewlines)
        let code = try #require(printed.split(separator: "=").last.map(String.init))
        #expect(!argv.contains(code) && !argv.contains("login="), "\(argv)")
        #expect(argv.hasPrefix("file://"))
        #expect(try String(contentsOfFile: directory + "/mode", encoding: .utf8) == "600\n")
        let page = try String(contentsOfFile: directory + "/page", encoding: .utf8)
        #expect(page.contains(#"href="\#(printed)""#), "\(page)")
        await service.stop()
    }
}
