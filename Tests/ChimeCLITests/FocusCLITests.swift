import ChimeCore
import ChimeServer
import Foundation
import TestThreads
import Testing

/// `chime focus`, the built binary against a live service: add with a schedule and allowed apps
/// and threads, list (text and JSON), on and off by hand, remove; flags refused before sending.
@Suite("chime focus: the binary against a running service", .testThreads)
struct FocusCLITests {
    @Test(
        "add Sleep --from 22:00 --to 07:00 --days mon-fri --time-zone Europe/Berlin, list, on, off, remove; bad flags refused"
    )
    func focus() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "chime-focus-cli-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ChimeService.Configuration(
            dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0),
            autoAllow: true, printsBanner: false)
        configuration.connectionTimeout = 10
        // A Wednesday at 13:00 in Berlin: outside Sleep's 22:00-07:00, so it is added "off" whatever
        // the hour the suite runs at (on the system clock it was "on" on weekday evenings in Berlin).
        configuration.clock = ManualClock(now: Date(timeIntervalSince1970: 1_796_212_800))
        let service = try await RunningService.start(configuration: configuration)
        func run(_ arguments: [String]) async throws -> (Int32, String, String) {
            try await BinaryTests.chime(["focus"] + arguments + ["--data", directory])
        }

        let (added, addedText, addedError) = try await run([
            "add", "Sleep", "--from", "22:00", "--to", "07:00", "--days", "mon-fri",
            "--time-zone", "Europe/Berlin", "--allow-app", "com.example.alarm",
            "--allow-thread", "family", "--allow-thread", "doctor",
        ])
        #expect(added == 0, "\(addedError)")
        #expect(
            addedText.contains("Sleep: off") && addedText.contains("22:00-07:00 mon,tue,wed,thu,fri Europe/Berlin"),
            "\(addedText)")
        #expect(
            addedText.contains("allows apps com.example.alarm") && addedText.contains("allows threads family, doctor"),
            "\(addedText)")
        #expect(try await run(["add", "Work", "--allow-filter", "work"]).0 == 0)

        let (listed, listedJSON, _) = try await run(["list", "--json"])
        #expect(listed == 0)
        guard case .array(let modes) = try JSONValue.parse(listedJSON), modes.count == 2 else {
            Issue.record("not two modes: \(listedJSON)")
            return
        }
        #expect(modes[0]["name"] == .string("Sleep") && modes[1]["name"] == .string("Work"))
        #expect(
            modes[0]["schedule"]?["timeZone"] == .string("Europe/Berlin")
                && modes[0]["allowedThreads"] == .array(["family", "doctor"]))
        #expect(modes[1]["schedule"] == .null && modes[1]["allowedFilterCriteria"] == .array(["work"]))
        let stored = try #require(try await service.engine.focusMode(named: "Sleep"))
        #expect(
            stored.mode.schedule?.days == FocusDay.weekdays && stored.mode.schedule?.from == 22 * 60
                && stored.mode.schedule?.to == 7 * 60)

        let (on, onText, _) = try await run(["on", "Work"])
        #expect(on == 0 && onText.contains("Work: on") && onText.contains("turned on by hand"), "\(onText)")
        #expect(try await service.engine.focusMode(named: "Work")?.isActive == true)
        let (off, offText, _) = try await run(["off", "Work"])
        #expect(off == 0 && offText.contains("Work: off"), "\(offText)")
        let (listedText, text, _) = try await run(["list"])
        #expect(
            listedText == 0 && text.contains("Sleep: ") && text.contains("Work: off")
                && text.contains("no schedule (by hand)"), "\(text)")

        // Refused before anything is sent, naming the flag.
        for (arguments, says) in [
            (["add", "Sleep", "--from", "22:00"], "both --from and --to"),
            (["add", "Sleep", "--from", "25:00", "--to", "07:00", "--time-zone", "UTC"], "--from"),
            (
                ["add", "Sleep", "--from", "22:00", "--to", "07:00", "--days", "mon-funday", "--time-zone", "UTC"],
                "--days"
            ),
            (["add", "Sleep", "--from", "22:00", "--to", "07:00", "--time-zone", "Mars/Base"], "--time-zone"),
            (["add", "Sleep", "--days", "mon"], "--days goes with --from and --to"),
            (["on", "Sleep", "--from", "22:00"], "--from is for chime focus add"),
            (["offf", "Sleep"], "did you mean 'off'"),
            (["on"], "give the focus's name"),
        ] {
            let (status, _, error) = try await run(arguments)
            #expect(status != 0, "\(arguments)")
            #expect(error.contains(says), "\(arguments): \(error)")
        }
        // The service's own checks: an app that is not a bundle identifier, a focus that does not exist.
        let (badApp, _, badAppError) = try await run(["add", "Nap", "--allow-app", "not an app"])
        #expect(badApp != 0 && badAppError.contains("allowedApps[0]"), "\(badAppError)")
        let (none, _, noneError) = try await run(["on", "Nap"])
        #expect(none != 0 && noneError.contains("no focus mode named \"Nap\""), "\(noneError)")

        #expect(try await run(["remove", "Work"]).0 == 0)
        #expect(try await service.engine.focusModes().map(\.mode.name) == ["Sleep"])
        await service.stop()
    }
}
