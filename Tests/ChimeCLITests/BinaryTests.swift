import ChimeCore
import ChimeCrypto
import ChimeServer
import Foundation
import TestThreads
import Testing

/// The built `chime` binary, run as a process against a live service.
@Suite("chime: the binary against a running service", .testThreads)
struct BinaryTests {
    static func binary() throws -> URL {
        let candidates =
            [Bundle.main.executableURL, URL(fileURLWithPath: CommandLine.arguments[0])]
            .compactMap { $0?.deletingLastPathComponent() } + [Bundle.main.bundleURL.deletingLastPathComponent()]
        for directory in candidates {
            let url = directory.appendingPathComponent("chime")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw CLITestError("the chime binary was not found next to the tests in \(candidates)")
    }

    /// Runs `chime ARGUMENTS` (at most 60 s, on a thread of its own, so an in-process server keeps
    /// serving) and returns (exit status, or 128 + the signal that ended it; stdout; stderr).
    static func chime(_ arguments: [String], environment: [String: String]? = nil) async throws -> (
        Int32, String, String
    ) {
        let result = try await ChildProcess.run(
            try binary().path, arguments: arguments, environment: environment, timeout: 60)
        let status: Int32 =
            switch result.termination {
            case .exited(let status): status
            case .signaled(let signal): 128 + signal
            }
        return (status, result.text, result.errorText)
    }

    /// Runs `body` with a service on 127.0.0.1 in a fresh data directory (removed afterwards) and
    /// the `--data` arguments that reach it.
    static func withService(_ body: (RunningService, [String]) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-cli-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = ChimeService.Configuration(
            dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0), printsBanner: false)
        let service = try await RunningService.start(configuration: configuration)
        do { try await body(service, ["--data", directory]) } catch {
            await service.stop()
            throw error
        }
        await service.stop()
    }

    @Test("register, categorise, schedule, list, answer and check status through the CLI")
    func flow() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-cli-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ChimeService.Configuration(
            dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0),
            autoAllow: true, printsBanner: false)
        configuration.connectionTimeout = 10
        let service = try await RunningService.start(configuration: configuration)
        let data = ["--data", directory]

        func run(_ arguments: [String]) async throws -> (Int32, String, String) {
            try await Self.chime(arguments + data)
        }

        let (addStatus, addOutput, _) = try await run(["apps", "add", "com.example.alarm", "--json"])
        #expect(addStatus == 0)
        let registered = try JSONValue.parse(addOutput)
        #expect(registered["bundleIdentifier"] == .string("com.example.alarm"))
        #expect(registered["token"].map { if case .string(let s) = $0 { s.count == 64 } else { false } } == true)

        _ = try await service.engine.requestAuthorization(app: "com.example.alarm", options: [.alert, .sound])
        let categories = directory + "/categories.json"
        try Data(
            #"[{"identifier": "alarm.category", "actions": [{"identifier": "snooze", "title": "Snooze 5 Sec", "options": []}]}]"#
                .utf8
        )
        .write(to: URL(fileURLWithPath: categories))
        #expect(try await run(["categories", "set", categories]).0 == 0)

        let (added, addedText, addedError) = try await run([
            "add", "--title", "Alarm", "--id", "Alarm", "--category", "alarm.category",
        ])
        #expect(added == 0, "\(addedError)")
        #expect(addedText.contains("Added Alarm to com.example.alarm: delivered now."))

        let (listed, listedText, _) = try await run([
            "add", "--title", "Later", "--id", "later", "--in", "1h", "--json",
        ])
        #expect(listed == 0)
        #expect(listedText.contains("\"nextTriggerDate\""))

        let (_, delivered, _) = try await run(["delivered"])
        #expect(delivered.contains("Alarm") && delivered.contains("actions: snooze"))

        let (badAction, _, badError) = try await run(["respond", "Alarm", "launch"])
        #expect(badAction == 1)
        #expect(badError.contains("has no action 'launch'"))

        let (snoozed, snoozedText, snoozedError) = try await run(["respond", "Alarm", "snooze"])
        #expect(snoozed == 0, "\(snoozedError)")
        let outbox = try await service.engine.outbox(app: "com.example.alarm")
        #expect(outbox.map(\.actionIdentifier) == ["snooze"])
        // What the service recorded (its 201 answer, read as the Apple layer reads a response).
        let recorded =
            "Answered Alarm with snooze; the app finds response \(outbox.first?.id ?? -1) (snooze) in its outbox."
        #expect(snoozedText.contains(recorded), "\(snoozedText)")
        // A dismissal the app does not hear of is answered 204.
        #expect(try await run(["add", "--title", "Gone", "--id", "gone", "--category", "alarm.category"]).0 == 0)
        let (dismissed, dismissedText, dismissedError) = try await run(["respond", "gone", "dismiss"])
        #expect(dismissed == 0, "\(dismissedError)")
        #expect(dismissedText.contains("Answered gone with dismiss; its category has no customDismissAction"))

        // Identifiers with reserved characters travel percent-encoded over TCP too.
        #expect(
            try await run(["add", "--title", "Chat", "--id", "chat/42 ü?#%", "--category", "alarm.category"]).0 == 0)
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
        try await Self.withService { service, data in
            #expect(try await Self.chime(["apps", "add", "com.example.ask"] + data).0 == 0)
            let (_, settings) = try await service.engine.requestAuthorization(
                app: "com.example.ask", options: [.alert, .sound])
            #expect(settings.authorizationStatus == .notDetermined)

            let (allowed, allowedText, allowedError) = try await Self.chime(
                ["apps", "allow", "com.example.ask"] + data)
            #expect(allowed == 0, "\(allowedError)")
            #expect(
                allowedText.trimmingCharacters(in: .newlines) == "com.example.ask: authorized (alert, sound)",
                "\(allowedText)")
            let (denied, deniedText, _) = try await Self.chime(["apps", "deny", "com.example.ask"] + data)
            #expect(denied == 0)
            #expect(deniedText.trimmingCharacters(in: .newlines) == "com.example.ask: denied", "\(deniedText)")
            #expect(try await service.engine.settings(app: "com.example.ask").authorizationStatus == .denied)
        }
    }
}

extension BinaryTests {
    @Test("chime device-token shows, unregisters and registers again an app's device token")
    func deviceToken() async throws {
        try await Self.withService { service, data in
            #expect(try await Self.chime(["apps", "add", "com.example.chat"] + data).0 == 0)
            let token = try await service.engine.app("com.example.chat").deviceToken

            let (shown, shownText, shownError) = try await Self.chime(["device-token"] + data)
            #expect(shown == 0, "\(shownError)")
            #expect(shownText == "com.example.chat: device token \(token), registered.\n", "\(shownText)")
            let (gone, goneText, _) = try await Self.chime(
                ["device-token", "unregister", "--app", "com.example.chat"] + data)
            let since = try #require(try await service.engine.app("com.example.chat").deviceTokenUnregistered)
            #expect(
                gone == 0
                    && goneText.contains(
                        "unregistered since \(JSONMapping.formatDate(since)): pushes to it get 410 Unregistered"),
                "\(goneText)")
            let (back, backText, _) = try await Self.chime(["device-token", "register", "--json"] + data)
            #expect(
                back == 0
                    && (try? JSONValue.parse(backText)) == [
                        "deviceToken": .string(token), "registered": true, "unregistered": .null,
                    ], "\(backText)")
            #expect(try await service.engine.app("com.example.chat").deviceTokenUnregistered == nil)
            let (wrong, _, wrongError) = try await Self.chime(["device-token", "forget"] + data)
            #expect(wrong == 2 && wrongError.contains("register or unregister"), "\(wrongError)")
        }
    }
}

extension BinaryTests {
    /// The CLI's lines come from the service's answers read with the shared decoders, so a field the
    /// service wrote under another name than the one declared would change or refuse these lines.
    @Test("chime apps list, apps set and status print what the service's answers hold, end to end")
    func appAnswers() async throws {
        try await Self.withService { service, data in
            let organizer = ["apps", "add", "com.example.organizer", "--launch", "organizer --tasks 'my tasks.json'"]
            #expect(try await Self.chime(organizer + data).0 == 0)
            #expect(try await Self.chime(["apps", "add", "com.example.alarm"] + data).0 == 0)
            _ = try await service.engine.requestAuthorization(app: "com.example.alarm", options: [.alert])

            let (listed, listedText, listedError) = try await Self.chime(["apps", "list"] + data)
            #expect(listed == 0, "\(listedError)")
            #expect(
                listedText == """
                    com.example.alarm  authorization: notDetermined
                    com.example.organizer  authorization: notDetermined  launch: organizer --tasks 'my tasks.json'

                    """, "\(listedText)")
            _ = try await service.engine.answerAuthorization(app: "com.example.alarm", allow: true)
            let (_, allowedText, _) = try await Self.chime(["apps", "list"] + data)
            #expect(allowedText.hasPrefix("com.example.alarm  authorization: authorized\n"), "\(allowedText)")

            let directory = data[1]
            let key = directory + "/AuthKey_KEY1234567.p8"
            try Data(P256PrivateKey().pemRepresentation.utf8).write(to: URL(fileURLWithPath: key))
            let (certificate, _) = try await TLSPinTests.selfSigned(in: directory, name: "provider")
            let (set, setText, setError) = try await Self.chime(
                [
                    "apps", "set", "com.example.alarm", "--apns-key", key, "--key-id", "KEY1234567", "--team-id",
                    "TEAM123456", "--apns-certificate", certificate, "--launch", "alarm --wake",
                ] + data)
            #expect(set == 0, "\(setError)")
            let pinned = try #require(try await service.engine.app("com.example.alarm").apnsCertificate)
            #expect(
                setText == """
                    com.example.alarm: an app of team TEAM123456 (key KEY1234567 registered here); provider tokens from the team's keys may push to it.
                    com.example.alarm: a provider presenting the certificate \(pinned.sha256Hex) (valid until \(JSONMapping.formatDate(pinned.notAfter))) may push to it.
                    com.example.alarm: answers given while it is not running start alarm --wake

                    """, "\(setText)")

            let (status, statusText, _) = try await Self.chime(["status"] + data)
            #expect(
                status == 0 && statusText.hasSuffix("Apps: com.example.alarm, com.example.organizer\n"), "\(statusText)"
            )
            let (_, statusJSON, _) = try await Self.chime(["status", "--json"] + data)
            #expect(
                (try? JSONValue.parse(statusJSON))?["apps"] == ["com.example.alarm", "com.example.organizer"],
                "\(statusJSON)")
        }
    }
}

struct CLITestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Recurrence rules (a Chime addition) from the command line: the issue's three cases added with
/// `--rrule`, listed with `--next`, and a bad part refused in the words of the flags.
@Suite("chime: recurrence rules", .testThreads)
struct RecurrenceCLITests {
    @Test("chime add --rrule … --start … --time-zone …, then chime list --json --next 3")
    func addAndList() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "chime-cli-rrule-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ChimeService.Configuration(
            dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0),
            autoAllow: true, printsBanner: false)
        // A manual clock before the rules' first dates (5 January 2027 and later): on the system
        // clock the dates listed move once those days have passed.
        configuration.clock = ManualClock(now: Date(timeIntervalSince1970: 1_796_212_800))  // 2026-12-02T12:00Z
        let service = try await RunningService.start(configuration: configuration)
        func run(_ arguments: [String]) async throws -> (Int32, String, String) {
            try await BinaryTests.chime(arguments + ["--data", directory])
        }
        #expect(try await run(["apps", "add", "com.example.rrule"]).0 == 0)
        _ = try await service.engine.requestAuthorization(app: "com.example.rrule", options: [.alert])

        let (added, addedText, addedError) = try await run([
            "add", "--title", "Review", "--id", "review",
            "--rrule", "FREQ=MONTHLY;BYDAY=-1FR", "--start", "2027-01-29T09:00",
            "--time-zone", "Europe/Berlin",
        ])
        #expect(added == 0, "\(addedError)")
        #expect(addedText.contains("Added review to com.example.rrule: fires 2027-01-29T08:00:00.000Z."))
        #expect(
            try await run([
                "add", "--title", "Gym", "--id", "gym", "--rrule",
                "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;UNTIL=20271231T225959Z",
                "--start", "2027-01-05T18:00", "--time-zone", "Europe/Berlin",
            ]).0 == 0)
        #expect(
            try await run([
                "add", "--title", "Report", "--id", "report", "--rrule",
                "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1",
                "--start", "2027-01-01T17:00", "--time-zone", "Europe/Berlin",
            ]).0 == 0)
        #expect(
            try await run([
                "add", "--title", "Pill", "--id", "pill", "--rrule", "FREQ=DAILY;COUNT=3", "--start",
                "2027-03-27T07:00",
                "--time-zone", "Europe/Berlin", "--except", "2027-03-28T07:00",
            ]).0 == 0)

        let (listed, listedText, listedError) = try await run(["list", "--json", "--next", "3"])
        #expect(listed == 0, "\(listedError)")
        guard case .array(let items) = try JSONValue.parse(listedText), items.count == 4 else {
            Issue.record("not four requests: \(listedText)")
            return
        }
        func dates(_ index: Int) -> [String] {
            guard case .array(let values)? = items[index]["nextTriggerDates"] else { return [] }
            return values.compactMap { if case .string(let text) = $0 { text } else { nil } }
        }
        #expect(items[0]["trigger"]?["rrule"] == .string("FREQ=MONTHLY;BYDAY=-1FR"))
        #expect(dates(0) == ["2027-01-29T08:00:00.000Z", "2027-02-26T08:00:00.000Z", "2027-03-26T08:00:00.000Z"])
        #expect(dates(1) == ["2027-01-05T17:00:00.000Z", "2027-01-07T17:00:00.000Z", "2027-01-19T17:00:00.000Z"])
        #expect(dates(2) == ["2027-01-29T16:00:00.000Z", "2027-02-26T16:00:00.000Z", "2027-03-31T15:00:00.000Z"])
        #expect(
            dates(3) == ["2027-03-27T06:00:00.000Z", "2027-03-29T05:00:00.000Z"], "the exception counts toward COUNT")
        let (_, text, _) = try await run(["list", "--next", "2"])
        #expect(text.contains("review  2027-01-29T08:00:00.000Z  FREQ=MONTHLY;BYDAY=-1FR  Review"))
        #expect(text.contains("    then 2027-02-26T08:00:00.000Z"))

        let (bad, _, badError) = try await run([
            "add", "--title", "Bad", "--rrule", "FREQ=MONTHLY;BYDAY=-1FX", "--start", "2027-01-29T09:00",
        ])
        #expect(bad != 0)
        #expect(badError.contains("--rrule BYDAY"), "\(badError)")
        let (stray, _, strayError) = try await run(["add", "--title", "Stray", "--start", "2027-01-29T09:00"])
        #expect(stray != 0 && strayError.contains("--start goes with --rrule"))
        let (noStart, _, noStartError) = try await run(["add", "--title", "No start", "--rrule", "FREQ=DAILY"])
        #expect(noStart != 0 && noStartError.contains("--rrule needs --start"))
        await service.stop()
    }
}

/// Request expiry (a Chime addition) from the command line: `--expires-in` and `--expires-at` on
/// `chime add`, shown by `chime list`, and mistakes refused in the words of the flags.
@Suite("chime: expiring requests", .testThreads)
struct ExpiryCLITests {
    @Test("chime add --in 10m --expires-in 5m, --expires-at, then chime list (--json)")
    func addAndList() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "chime-cli-expiry-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = ChimeService.Configuration(
            dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0),
            autoAllow: true, printsBanner: false)
        let service = try await RunningService.start(configuration: configuration)
        func run(_ arguments: [String]) async throws -> (Int32, String, String) {
            try await BinaryTests.chime(arguments + ["--data", directory])
        }
        #expect(try await run(["apps", "add", "com.example.expiry"]).0 == 0)
        _ = try await service.engine.requestAuthorization(app: "com.example.expiry", options: [.alert])

        let before = Date()
        let (added, _, addedError) = try await run([
            "add", "--title", "Your ride", "--id", "ride", "--in", "10m", "--expires-in", "5m",
        ])
        #expect(added == 0, "\(addedError)")
        #expect(
            try await run([
                "add", "--title", "Report", "--id", "report", "--in", "1h", "--expires-at", "2099-01-01T09:00:00+01:00",
            ]).0 == 0)
        let (listed, listedText, listedError) = try await run(["list", "--json"])
        #expect(listed == 0, "\(listedError)")
        guard case .array(let items) = try JSONValue.parse(listedText), items.count == 2,
            case .string(let rideExpiry)? = items[0]["expirationDate"], let date = JSONMapping.parseDate(rideExpiry)
        else {
            Issue.record("not two requests with expirations: \(listedText)")
            return
        }
        // Five minutes after the add (the service's clock): between the two moments around the call.
        #expect(
            date >= before.addingTimeInterval(300 - 1) && date <= Date().addingTimeInterval(300 + 1), "\(rideExpiry)")
        #expect(items[1]["expirationDate"] == .string("2099-01-01T08:00:00.000Z"))
        let (_, text, _) = try await run(["list"])
        #expect(text.contains("(expires 2099-01-01T08:00:00.000Z)"), "\(text)")

        let (both, _, bothError) = try await run([
            "add", "--title", "X", "--expires-in", "5m", "--expires-at", "2099-01-01T09:00",
        ])
        #expect(both != 0 && bothError.contains("give --expires-in or --expires-at, not both"), "\(bothError)")
        let (bad, _, badError) = try await run(["add", "--title", "X", "--expires-in", "soon"])
        #expect(bad != 0 && badError.contains("--expires-in"), "\(badError)")
        let (badDate, _, badDateError) = try await run(["add", "--title", "X", "--expires-at", "tomorrow"])
        #expect(badDate != 0 && badDateError.contains("--expires-at is 'tomorrow'"), "\(badDateError)")
        await service.stop()
    }
}

/// `chime add --dismiss-in/--dismiss-at` (auto-dismissal, a Chime addition) through the built binary.
@Suite("chime add --dismiss-in (the binary)", .testThreads)
struct AutoDismissCLITests {
    @Test(
        "chime add --dismiss-in 10m, --every 1h --dismiss-in 30m, then chime delivered and chime list (--json); a short one goes; bad flags refused"
    )
    func addAndList() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "chime-cli-dismiss-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = ChimeService.Configuration(
            dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0),
            autoAllow: true, printsBanner: false)
        let service = try await RunningService.start(configuration: configuration)
        func run(_ arguments: [String]) async throws -> (Int32, String, String) {
            try await BinaryTests.chime(arguments + ["--data", directory])
        }
        let app = "com.example.dismiss"
        #expect(try await run(["apps", "add", app]).0 == 0)
        _ = try await service.engine.requestAuthorization(app: app, options: [.alert])

        let before = Date()
        let (added, _, addedError) = try await run([
            "add", "--title", "Bus 42 in 3 minutes", "--id", "bus", "--dismiss-in", "10m",
        ])
        #expect(added == 0, "\(addedError)")
        #expect(
            try await run(["add", "--title", "Stand up", "--id", "hourly", "--every", "1h", "--dismiss-in", "30m"]).0
                == 0)
        let (listed, deliveredText, deliveredError) = try await run(["delivered", "--json"])
        #expect(listed == 0, "\(deliveredError)")
        guard case .array(let items) = try JSONValue.parse(deliveredText), items.count == 1,
            case .string(let dismissAt)? = items[0]["dismissAt"], let date = JSONMapping.parseDate(dismissAt)
        else {
            Issue.record("not one delivered notification with dismissAt: \(deliveredText)")
            return
        }
        // Ten minutes after the delivery (the service's clock): between the two moments around the call.
        #expect(
            date >= before.addingTimeInterval(600 - 1) && date <= Date().addingTimeInterval(600 + 1), "\(dismissAt)")
        #expect(try await run(["delivered"]).1.contains("(dismissed at \(dismissAt))"))
        let (_, pendingText, _) = try await run(["list"])
        #expect(pendingText.contains("(dismissed 1800 s after delivery)"), "\(pendingText)")
        if case .array(let pending) = try JSONValue.parse(try await run(["list", "--json"]).1) {
            #expect(pending.first?["dismissIn"] == .number(1800) || pending.first?["dismissIn"] == .integer(1800))
        } else {
            Issue.record("chime list --json is not an array")
        }

        // One second: gone from the list when its time comes (waited for, at most 60 s).
        #expect(try await run(["add", "--title", "Blink", "--id", "blink", "--dismiss-in", "1s"]).0 == 0)
        let deadline = ContinuousClock.now + .seconds(60)
        while try await service.engine.delivered(app: app).contains(where: { $0.request.identifier == "blink" }),
            ContinuousClock.now < deadline
        {
            try await Sleep.for(.milliseconds(50))
        }
        #expect(try await run(["delivered", "--json"]).1.contains("blink") == false)

        let (both, _, bothError) = try await run([
            "add", "--title", "X", "--dismiss-in", "5m", "--dismiss-at", "2099-01-01T09:00",
        ])
        #expect(both != 0 && bothError.contains("give --dismiss-in or --dismiss-at, not both"), "\(bothError)")
        let (zero, _, zeroError) = try await run(["add", "--title", "X", "--dismiss-in", "0s"])
        #expect(
            zero != 0 && zeroError.contains("--dismiss-in") && zeroError.contains("more than 0 seconds"), "\(zeroError)"
        )
        let (badDate, _, badDateError) = try await run(["add", "--title", "X", "--dismiss-at", "tomorrow"])
        #expect(badDate != 0 && badDateError.contains("--dismiss-at is 'tomorrow'"), "\(badDateError)")
        await service.stop()
    }
}

/// `chime add --escalate` and `chime receipt` (escalation, a Chime addition) through the built binary.
@Suite("chime add --escalate and chime receipt (the binary)", .testThreads)
struct EscalationCLITests {
    @Test(
        "chime add --escalate every=1s,for=1h rings again until chime respond opens it; chime receipt says so; bad flags refused"
    )
    func escalateAndReceipt() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "chime-cli-escalate-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ChimeService.Configuration(
            dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0),
            autoAllow: true, printsBanner: false)
        // Seconds, so the test waits for real alerts briefly (the service's default is 10 s at least).
        configuration.escalationLimits = EscalationLimits(minimumInterval: 1, maximumDuration: 7200)
        let service = try await RunningService.start(configuration: configuration)
        func run(_ arguments: [String]) async throws -> (Int32, String, String) {
            try await BinaryTests.chime(arguments + ["--data", directory])
        }
        let app = "com.example.wake"
        #expect(try await run(["apps", "add", app]).0 == 0)
        _ = try await service.engine.requestAuthorization(app: app, options: [.alert, .sound])

        let (added, _, addedError) = try await run([
            "add", "--title", "Wake up", "--id", "wake", "--sound", "default", "--escalate", "every=1s,for=1h",
        ])
        #expect(added == 0, "\(addedError)")
        #expect(try await run(["delivered"]).1.contains("(alerted again every 1 s for 3600 s)"))
        // Alerted again at least once (waited for, at most 60 s).
        let deadline = ContinuousClock.now + .seconds(60)
        while (try await service.engine.receipt(app: app, notification: "wake")?.alerts ?? 0) < 2,
            ContinuousClock.now < deadline
        {
            try await Sleep.for(.milliseconds(50))
        }
        let (pending, pendingText, _) = try await run(["receipt", "wake"])
        #expect(pending == 0 && pendingText.contains("wake: not answered yet; next alert"), "\(pendingText)")
        #expect(try await run(["respond", "wake", "open"]).0 == 0)
        let (shown, receiptText, receiptError) = try await run(["receipt", "wake"])
        #expect(shown == 0, "\(receiptError)")
        #expect(receiptText.contains("wake: opened at ") && receiptText.contains("(cli); alerted "), "\(receiptText)")
        let json = try JSONValue.parse(try await run(["receipt", "wake", "--json"]).1)
        #expect(json["acknowledged"] == .bool(true) && json["surface"] == .string("cli"))
        guard case .integer(let alerts)? = json["alerts"] else {
            Issue.record("no alerts in \(json)")
            return
        }
        #expect(alerts >= 2)
        let (missing, _, missingError) = try await run(["receipt", "nothing"])
        #expect(missing != 0 && missingError.contains("no receipt for 'nothing'"), "\(missingError)")

        for (flag, says) in [
            ("every=60s", "needs both every= and for="), ("often", "is not every=DURATION"),
            ("every=1m,for=30s", "--escalate"), ("every=ten,for=1h", "--escalate every"),
        ] {
            let (status, _, error) = try await run(["add", "--title", "X", "--escalate", flag])
            #expect(status != 0 && error.contains(says), "\(flag): \(error)")
        }
        // Within what any service takes, but not this one's limits: the service refuses it, naming the field.
        let (limited, _, limitedError) = try await run(["add", "--title", "X", "--escalate", "every=0.5s,for=1m"])
        #expect(limited != 0 && limitedError.contains("escalateEvery"), "\(limitedError)")
        await service.stop()
    }
}
