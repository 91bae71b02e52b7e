import ChimeCore
import ChimeServer
import Foundation
import Testing

/// The built `chime` binary, run as a process against a live service.
@Suite("chime: the binary against a running service")
struct BinaryTests {
    static func binary() throws -> URL {
        let candidates = [Bundle.main.executableURL, URL(fileURLWithPath: CommandLine.arguments[0])]
            .compactMap { $0?.deletingLastPathComponent() } + [Bundle.main.bundleURL.deletingLastPathComponent()]
        for directory in candidates {
            let url = directory.appendingPathComponent("chime")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw CLITestError("the chime binary was not found next to the tests in \(candidates)")
    }

    /// Runs `chime ARGUMENTS` (at most 60 s, on a thread of its own, so an in-process server keeps
    /// serving) and returns (exit status, or 128 + the signal that ended it; stdout; stderr).
    static func chime(_ arguments: [String], environment: [String: String]? = nil) async throws -> (Int32, String, String) {
        let result = try await ChildProcess.run(try binary().path, arguments: arguments, environment: environment, timeout: 60)
        let status: Int32 = switch result.termination {
        case .exited(let status): status
        case .signaled(let signal): 128 + signal
        }
        return (status, result.text, result.errorText)
    }

    @Test("register, categorise, schedule, list, answer and check status through the CLI")
    func flow() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-cli-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ChimeService.Configuration(dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0),
                                                       autoAllow: true, printsBanner: false)
        configuration.connectionTimeout = 10
        let service = try await RunningService.start(configuration: configuration)
        let data = ["--data", directory]

        func run(_ arguments: [String]) async throws -> (Int32, String, String) { try await Self.chime(arguments + data) }

        let (addStatus, addOutput, _) = try await run(["apps", "add", "com.example.alarm", "--json"])
        #expect(addStatus == 0)
        let registered = try JSONValue.parse(addOutput)
        #expect(registered["bundleIdentifier"] == .string("com.example.alarm"))
        #expect(registered["token"].map { if case .string(let s) = $0 { s.count == 64 } else { false } } == true)

        _ = try await service.engine.requestAuthorization(app: "com.example.alarm", options: [.alert, .sound])
        let categories = directory + "/categories.json"
        try Data(#"[{"identifier": "alarm.category", "actions": [{"identifier": "snooze", "title": "Snooze 5 Sec", "options": []}]}]"#.utf8)
            .write(to: URL(fileURLWithPath: categories))
        #expect(try await run(["categories", "set", categories]).0 == 0)

        let (added, addedText, addedError) = try await run(["add", "--title", "Alarm", "--id", "Alarm", "--category", "alarm.category"])
        #expect(added == 0, "\(addedError)")
        #expect(addedText.contains("Added Alarm to com.example.alarm: delivered now."))

        let (listed, listedText, _) = try await run(["add", "--title", "Later", "--id", "later", "--in", "1h", "--json"])
        #expect(listed == 0)
        #expect(listedText.contains("\"nextTriggerDate\""))

        let (_, delivered, _) = try await run(["delivered"])
        #expect(delivered.contains("Alarm") && delivered.contains("actions: snooze"))

        let (badAction, _, badError) = try await run(["respond", "Alarm", "launch"])
        #expect(badAction == 1)
        #expect(badError.contains("has no action 'launch'"))

        #expect(try await run(["respond", "Alarm", "snooze"]).0 == 0)
        let outbox = try await service.engine.outbox(app: "com.example.alarm")
        #expect(outbox.map(\.actionIdentifier) == ["snooze"])

        // Identifiers with reserved characters travel percent-encoded over TCP too.
        #expect(try await run(["add", "--title", "Chat", "--id", "chat/42 ü?#%", "--category", "alarm.category"]).0 == 0)
        let (answered, _, answerError) = try await run(["respond", "chat/42 ü?#%", "snooze"])
        #expect(answered == 0, "\(answerError)")
        #expect(try await run(["add", "--title", "Soon", "--id", "soon/1 +&=", "--in", "1h"]).0 == 0)
        let (removedReserved, removedReservedText, _) = try await run(["remove", "--id", "soon/1 +&="])
        #expect(removedReserved == 0 && removedReservedText.contains("Removed soon/1 +&=."))

        let (removed, removedText, _) = try await run(["remove", "--id", "later"])
        #expect(removed == 0 && removedText.contains("Removed later."))

        let (statusCode, statusText, _) = try await run(["status"])
        #expect(statusCode == 0 && statusText.contains("running"))

        let (usage, _, usageError) = try await run(["remove"])
        #expect(usage == 2 && usageError.contains("say which"))
        await service.stop()
    }
}

extension BinaryTests {
    @Test("chime apps allow|deny prints the service's answer: the status and what the app may now do")
    func allowDeny() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-cli-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = ChimeService.Configuration(dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0),
                                                       autoAllow: false, printsBanner: false)
        let service = try await RunningService.start(configuration: configuration)
        let data = ["--data", directory]
        #expect(try await Self.chime(["apps", "add", "com.example.ask"] + data).0 == 0)
        let (_, settings) = try await service.engine.requestAuthorization(app: "com.example.ask", options: [.alert, .sound])
        #expect(settings.authorizationStatus == .notDetermined)

        let (allowed, allowedText, allowedError) = try await Self.chime(["apps", "allow", "com.example.ask"] + data)
        #expect(allowed == 0, "\(allowedError)")
        #expect(allowedText.trimmingCharacters(in: .newlines) == "com.example.ask: authorized (alert, sound)", "\(allowedText)")
        let (denied, deniedText, _) = try await Self.chime(["apps", "deny", "com.example.ask"] + data)
        #expect(denied == 0)
        #expect(deniedText.trimmingCharacters(in: .newlines) == "com.example.ask: denied", "\(deniedText)")
        #expect(try await service.engine.settings(app: "com.example.ask").authorizationStatus == .denied)
        await service.stop()
    }
}

struct CLITestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
