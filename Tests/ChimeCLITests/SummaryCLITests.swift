import ChimeCore
import ChimeServer
import Foundation
import TestThreads
import Testing

/// `chime summary`, the built binary against a live service: set with times and a zone, show,
/// list (text and JSON), remove; flags refused before sending.
@Suite("chime summary: the binary against a running service", .testThreads)
struct SummaryCLITests {
    @Test("summary set APP --at 08:00 --at 18:00 --time-zone Europe/Berlin, show, list, remove; bad flags refused")
    func summary() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "chime-summary-cli-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ChimeService.Configuration(
            dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0),
            autoAllow: true, printsBanner: false)
        configuration.connectionTimeout = 10
        let service = try await RunningService.start(configuration: configuration)
        func run(_ arguments: [String]) async throws -> (Int32, String, String) {
            try await BinaryTests.chime(["summary"] + arguments + ["--data", directory])
        }
        _ = try await service.engine.requestAuthorization(app: "com.example.news", options: [.alert, .sound])

        let (set, setText, setError) = try await run([
            "set", "com.example.news", "--at", "18:00", "--at", "08:00", "--time-zone", "Europe/Berlin",
        ])
        #expect(set == 0, "\(setError)")
        #expect(
            setText.contains("com.example.news: 08:00, 18:00 Europe/Berlin; next ") && setText.contains("0 held"),
            "\(setText)")
        let stored = try #require(try await service.engine.scheduledSummary(app: "com.example.news"))
        #expect(stored.summary.times == [8 * 60, 18 * 60] && stored.summary.timeZone == "Europe/Berlin")
        #expect(try await service.engine.settings(app: "com.example.news").scheduledDeliverySetting == .enabled)

        let (shown, shownJSON, _) = try await run(["show", "com.example.news", "--json"])
        #expect(shown == 0)
        let json = try JSONValue.parse(shownJSON)
        #expect(
            json["times"] == .array(["08:00", "18:00"]) && json["timeZone"] == .string("Europe/Berlin")
                && json["held"] == .integer(0))
        let (listed, listedJSON, _) = try await run(["list", "--json"])
        #expect(listed == 0)
        guard case .array(let summaries) = try JSONValue.parse(listedJSON), summaries.count == 1 else {
            Issue.record("not one summary: \(listedJSON)")
            return
        }
        #expect(summaries[0]["app"] == .string("com.example.news"))
        let (listedText, text, _) = try await run(["list"])
        #expect(listedText == 0 && text.contains("com.example.news: 08:00, 18:00 Europe/Berlin"), "\(text)")

        // Refused before anything is sent, naming the flag.
        for (arguments, says) in [
            (["set", "com.example.news"], "give at least one --at"),
            (["set", "com.example.news", "--at", "25:00"], "--at \"25:00\" is not a time of day"),
            (["set", "com.example.news", "--at", "08:00", "--at", "08:00"], "--at (08:00) is given twice"),
            (
                ["set", "com.example.news", "--at", "08:00", "--time-zone", "Mars/Base"],
                "--time-zone \"Mars/Base\" is not a known time zone"
            ),
            (["show", "com.example.news", "--at", "08:00"], "--at is for chime summary set"),
            (["sett", "com.example.news"], "did you mean 'set'"),
            (["show"], "give the app's bundle identifier"),
        ] {
            let (status, _, error) = try await run(arguments)
            #expect(status != 0, "\(arguments)")
            #expect(error.contains(says), "\(arguments): \(error)")
        }
        let (none, _, noneError) = try await run(["show", "com.example.other"])
        #expect(none != 0 && noneError.contains("com.example.other"), "\(noneError)")

        let (removed, removedText, _) = try await run(["remove", "com.example.news"])
        #expect(removed == 0 && removedText.contains("out of its scheduled summary"), "\(removedText)")
        #expect(try await service.engine.scheduledSummaries().isEmpty)
        #expect(try await service.engine.settings(app: "com.example.news").scheduledDeliverySetting == .disabled)
        await service.stop()
    }
}
