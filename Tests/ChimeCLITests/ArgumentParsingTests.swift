import ChimeCore
import ChimeServer
import Foundation
import Synchronization
import TestThreads
import Testing

@testable import ChimeCLI

@Suite("chime: argument parsing, in-process", .testThreads)
struct ArgumentParsingTests {
    let options: [OptionSpec] = [.value("title", "t"), .value("id", "i", repeatable: true), .flag("json", "j")]

    @Test("--flag value and --flag=value both work; flags and positionals are kept")
    func forms() throws {
        let parsed = try ParsedArguments.parse(
            ["Alarm", "--title", "Wake up", "--id=a", "--id", "b", "--json", "snooze"], options: options)
        #expect(parsed.positionals == ["Alarm", "snooze"])
        #expect(parsed.value("title") == "Wake up")
        #expect(parsed.all("id") == ["a", "b"])
        #expect(parsed.has("json"))
    }

    @Test("-- ends the options: what follows is positional even if it looks like an option")
    func doubleDash() throws {
        let parsed = try ParsedArguments.parse(["--", "--title", "-x"], options: options)
        #expect(parsed.positionals == ["--title", "-x"])
        #expect(parsed.value("title") == nil)
    }

    @Test("negative numbers are values, not options")
    func negativeNumbers() throws {
        let parsed = try ParsedArguments.parse(["-33.86", "--title", "-5"], options: options)
        #expect(parsed.positionals == ["-33.86"])
        #expect(parsed.value("title") == "-5")
    }

    @Test(
        "mistakes name the option and say what to do",
        arguments: [
            (["--titel", "x"], "unknown option '--titel'; did you mean --title?"),
            (["--title"], "option '--title' needs a value"),
            (["--json=yes"], "option '--json' is a flag and takes no value"),
            (["--title", "a", "--title", "b"], "option '--title' was given twice; give it once"),
            (["--frobnicate"], "unknown option '--frobnicate'"),
        ])
    func mistakes(arguments: [String], message: String) {
        #expect(throws: UsageError(message)) { try ParsedArguments.parse(arguments, options: options) }
    }

    @Test(
        "fuzz-arguments: a value after = that starts with a combining mark is the value, not part of the option's name")
    func combiningMarkAfterEquals() throws {
        // The finding: --in=U+0357… was "unknown option '--in=͗…'" (Characters join = and the mark).
        let parsed = try ParsedArguments.parse(
            ["--title=\u{357}x", "--id=\u{301}", "--", "--\u{301}"], options: options)
        #expect(
            parsed.value("title") == "\u{357}x" && parsed.all("id") == ["\u{301}"]
                && parsed.positionals == ["--\u{301}"])
        let error = try #require(throws: UsageError.self) { try ParsedArguments.parse(["--\u{301}"], options: options) }
        #expect(error.message.hasPrefix("unknown option '--\u{301}'"), "\(error)")
    }

    @Test(
        "durations as people write them",
        arguments: [("90s", 90.0), ("10m", 600), ("1h30m", 5400), ("2d", 172_800), ("1w", 604_800)])
    func durations(text: String, seconds: Double) throws {
        #expect(try parseDuration(text) == seconds)
    }

    @Test("a malformed duration is refused with an example", arguments: ["10x", "m", "1h30", ""])
    func badDurations(text: String) {
        #expect(throws: UsageError.self) { try parseDuration(text) }
    }

    @Test("a number without a unit is refused with the unit to add, not taken as seconds")
    func durationWithoutUnit() {
        #expect(throws: UsageError("'10' has no unit; write 10s for seconds (or 10m, 10h, 10d)")) {
            try parseDuration("10")
        }
    }

    @Test(
        "weekdays by name or by Apple's number, with 1 = Sunday",
        arguments: [("sun", 1), ("Monday", 2), ("tue", 3), ("sat", 7), ("4", 4)])
    func weekdays(text: String, number: Int) throws {
        #expect(try CLI.weekday(text) == number)
    }

    @Test("a weekday out of range says how they are numbered")
    func badWeekday() {
        let error = #expect(throws: UsageError.self) { try CLI.weekday("8") }
        #expect(error?.message.contains("1 = Sunday") == true)
        #expect(throws: UsageError.self) { try CLI.weekday("mo") }
    }

    @Test("the options every command takes may come before the command")
    func globalsFirst() throws {
        let (globals, rest) = try CLI.leadingGlobals(["--data", "/srv/chime", "--json", "status"])
        #expect(globals == ["--data", "/srv/chime", "--json"])
        #expect(rest == ["status"])
        #expect(
            try CLI.leadingGlobals(["--data=/x", "list", "--app", "a"]) == (["--data=/x"], ["list", "--app", "a"]))
    }

    @Test(
        "chime list and delivered read each item with the Apple layer's decoders: one line each, an unreadable item refused by its field"
    )
    func listedLines() throws {
        let date = Date(timeIntervalSince1970: 1_811_000_000)
        let text = JSONMapping.formatDate(date)
        let tea = NotificationRequest(
            identifier: "tea", content: NotificationContent(title: "Tea"), trigger: .timeInterval(600, repeats: false),
            expiration: .at(date), autoDismiss: .after(1800), escalation: NotificationEscalation(every: 60, for: 1800))
        let pending = PendingRequest(request: tea, nextFireDate: date, anchor: date).json
        #expect(
            try CLI.describePending(pending)
                == "tea  \(text)  timeInterval  Tea  (expires \(text))  (dismissed 1800 s after delivery)  (alerted again every 60 s for 1800 s)"
        )
        let backup = NotificationRequest(
            identifier: "n1", content: NotificationContent(body: "Backup done"), autoDismiss: .at(date))
        let delivered = DeliveredNotification(request: backup, date: date).json(
            category: NotificationCategory(
                identifier: "c", actions: [NotificationAction(identifier: "ok", title: "OK")]))
        #expect(
            try CLI.describeDelivered(delivered) == "n1  \(text)  Backup done  actions: ok  (dismissed at \(text))")

        // What the decoders refuse is refused, naming the field, not printed as it came.
        var badPending = try members(pending)
        var badDelivered = try members(delivered)
        badPending[JSONFieldName.Request.nextTriggerDate] = .string("soon")
        badDelivered[JSONFieldName.Request.date] = .string("yesterday")
        #expect {
            try CLI.describePending(.object(badPending), field: "[1]")
        } throws: { "\($0)".contains("[1].nextTriggerDate") }
        #expect {
            try CLI.describeDelivered(.object(badDelivered), field: "[2]")
        } throws: { "\($0)".contains("[2].date") }
    }

    /// The members of an object the test built (to spoil one of them).
    func members(_ value: JSONValue) throws -> JSONObject {
        guard case .object(let members) = value else { throw CLITestError("not an object: \(value)") }
        return members
    }

    @Test(
        "an app's record, device token, provider and certificate read back as the service writes them; an unreadable app is refused by its field"
    )
    func appRecords() throws {
        let date = Date(timeIntervalSince1970: 1_811_000_000)
        var record = AppRecord(
            bundleIdentifier: "com.example.alarm", created: date, deviceToken: String(repeating: "ab", count: 32))
        record.settings = Presentation.settings(
            after: .grant, options: [.alert, .badge], previous: NotificationSettings())
        record.requestedOptions = [.alert, .badge]
        record.promptPending = true
        record.badge = 7
        record.launchCommand = try LaunchCommand(arguments: ["organizer", "--tasks", "my tasks.json"])
        record.apnsProvider = APNsProvider(
            teamID: "TEAM123456", key: APNsProvider.Key(id: "KEY1234567", publicKey: Array(0..<65)))
        record.deviceTokenUnregistered = date.addingTimeInterval(60)
        record.apnsCertificate = CertificateFingerprint(
            sha256: Array(0..<32), publicKeySHA256: Array(100..<132), notBefore: date,
            notAfter: date.addingTimeInterval(86_400))
        #expect(try AppRecord(json: record.json) == record)
        let state = try AppRecord.deviceToken(json: record.deviceTokenJSON)
        #expect(state.token == record.deviceToken && state.unregistered == record.deviceTokenUnregistered)
        record.apnsProvider = APNsProvider(teamID: "TEAM123456")
        record.apnsCertificate = nil
        record.launchCommand = nil
        #expect(try CLI.appRecords([record.json]) == [record])

        // A missing or malformed member is named, with the item's place in the list.
        var bad = try members(record.json)
        bad[JSONFieldName.App.created] = nil
        #expect {
            try CLI.appRecords([record.json, .object(bad)])
        } throws: { "\($0)" == "the service's app is not readable: [1].created is missing; expected a date" }
        bad[JSONFieldName.App.created] = JSONMapping.json(date)
        bad[JSONFieldName.App.apnsCertificate] = [JSONFieldName.Certificate.sha256: "zz"]
        #expect {
            try CLI.appRecords([.object(bad)])
        } throws: { "\($0)".contains("[0].apnsCertificate.sha256: expected a SHA-256 in hexadecimal") }
    }

    @Test(
        "devices, sign-in links, upcoming dates and a delivered item's actions read back as the service writes them; what is unreadable is named"
    )
    func answerReaders() throws {
        let date = Date(timeIntervalSince1970: 1_811_000_000)
        let text = JSONMapping.formatDate(date)
        // A device as listed: the keys stay behind, the push service is the endpoint's.
        let device = WebPushSubscription(
            id: "q3X9", endpoint: "https://updates.push.services.mozilla.com/wpush/v2/abc", p256dh: [], auth: [],
            apps: ["com.example.alarm"], name: "Phone", userAgent: "Firefox", created: date, lastSuccess: date,
            lastFailure: date.addingTimeInterval(60), lastFailureReason: "410 Gone",
            expires: date.addingTimeInterval(86_400))
        #expect(try WebPushSubscription(json: device.json) == device)
        #expect(
            try CLI.describeDevice(device.json)
                == "q3X9  Phone  https://updates.push.services.mozilla.com  apps: com.example.alarm  last sent: \(text)  last failure: \(JSONMapping.formatDate(date.addingTimeInterval(60))) (410 Gone)"
        )
        var badDevice = try members(device.json)
        badDevice[JSONFieldName.Device.created] = nil
        #expect {
            try CLI.describeDevice(.object(badDevice), field: "[1]")
        } throws: { "\($0)" == "the service's device is not readable: [1].created is missing; expected a date" }

        let link = try LoginLink(code: "abc", expires: date, base: "https://chime.example.org")
        #expect(link.url == "https://chime.example.org/#login=abc" && link.qrSVG?.contains("<svg") == true)
        #expect(try LoginLink(json: link.json) == link)
        #expect(try LoginLink(json: LoginLink(code: "abc", expires: date).json).path == "/#login=abc")

        // `chime list --next`'s dates and `chime delivered`'s actions, each named where unreadable.
        let tea = NotificationRequest(
            identifier: "tea", content: NotificationContent(title: "Tea"), trigger: .timeInterval(600, repeats: true))
        let pending = PendingRequest(request: tea, nextFireDate: date, anchor: date)
        let listed = pending.json(upcoming: 3, timeZone: TimeZone(identifier: "UTC")!)
        #expect(
            try PendingRequest.upcomingDates(json: listed)
                == [date, date.addingTimeInterval(600), date.addingTimeInterval(1200)])
        #expect(try PendingRequest.upcomingDates(json: pending.json).isEmpty)
        var badListed = try members(listed)
        badListed[JSONFieldName.Request.nextTriggerDates] = [.string(text), "later"]
        #expect {
            try PendingRequest.upcomingDates(json: .object(badListed), field: "[2]")
        } throws: { ($0 as? ChimeError)?.field == "[2].nextTriggerDates[1]" }
        let actions = [
            NotificationAction(identifier: "ok", title: "OK"), NotificationAction(identifier: "later", title: "Later"),
        ]
        let delivered = DeliveredNotification(request: tea, date: date).json(
            category: NotificationCategory(identifier: "c", actions: actions))
        #expect(try DeliveredNotification.actions(json: delivered) == actions)
        #expect(try CLI.describeDelivered(delivered) == "tea  \(text)  Tea  actions: ok, later")
        var badDelivered = try members(delivered)
        badDelivered[JSONFieldName.Request.actions] = [[JSONFieldName.Action.identifier: "ok"]]
        #expect {
            try CLI.describeDelivered(.object(badDelivered), field: "[0]")
        } throws: { "\($0)".contains("[0].actions[0].title is missing") }

        // What `chime remove` (and the Apple layer) read from a removal's answer.
        #expect(try JSONMapping.removedIdentifiers([JSONFieldName.removed: ["later", "soon"]]) == ["later", "soon"])
        #expect(try JSONMapping.removedIdentifiers(nil).isEmpty)
        #expect {
            try JSONMapping.removedIdentifiers([JSONFieldName.removed: ["later", 3]])
        } throws: { ($0 as? ChimeError)?.field == "removed[1]" }
    }

    @Test("events read as a person would: identifiers, titles, actions and replies, from the service's JSON")
    func eventLines() throws {
        let date = try #require(JSONMapping.parseDate("2027-06-01T12:10:00.000Z"))
        /// The line for an event of `payload`, from its JSON as the service sends it.
        func line(_ kind: String, _ id: String?, _ payload: EngineEvent.Payload, app: String = "com.a") -> String {
            CLI.describeEvent(kind: kind, id: id, EngineEvent(app: app, date: date, payload: payload).json)
        }
        func notification(_ identifier: String, _ content: NotificationContent) -> DeliveredNotification {
            DeliveredNotification(request: NotificationRequest(identifier: identifier, content: content), date: date)
        }
        let backup = Delivery(
            notification: notification("n1", NotificationContent(body: "Backup done")),
            category: NotificationCategory(
                identifier: "c", actions: [NotificationAction(identifier: "ok", title: "OK")]),
            settings: NotificationSettings(), presentation: [.list])
        #expect(line("delivered", "7", .delivered(backup)) == #"7  delivered  com.a  n1  "Backup done"  actions: ok"#)
        let answer = NotificationResponse(
            notification: notification("n1", NotificationContent(title: "Call")), actionIdentifier: "comment",
            userText: "Call me", date: date)
        #expect(line("response", "8", .response(answer)) == #"8  response  com.a  n1  →  comment  "Call me""#)
        #expect(line("scheduled", nil, .scheduled(identifiers: ["a", "b"])) == "-  scheduled  com.a  a, b")
        var wake = Delivery(
            notification: notification("wake", NotificationContent(title: "Wake up")), category: nil,
            settings: NotificationSettings(), presentation: [.list, .banner])
        wake.alert = 3
        #expect(line("realerted", "10", .realerted(wake)) == #"10  realerted  com.a  wake  "Wake up"  alert 3"#)
        let ride = NotificationRequest(
            identifier: "ride", content: NotificationContent(title: "Your ride"),
            expiration: .at(try #require(JSONMapping.parseDate("2027-06-01T12:05:00.000Z"))))
        #expect(
            line("expired", "11", .expired(ExpiredRequest(request: ride, dueDate: date)))
                == "11  expired  com.a  ride  due 2027-06-01T12:10:00.000Z, not delivered after 2027-06-01T12:05:00.000Z"
        )
        #expect(line("removed", "9", .removed(identifiers: ["a"], scope: .pending)) == "9  removed  com.a  pending:  a")
        // The owner's focus modes (no app): each on or off, how, until when, and what it held.
        let modes = [
            FocusStatus(
                mode: try FocusMode(name: "Sleep"), isActive: true,
                nextChange: JSONMapping.parseDate("2027-06-02T05:00:00.000Z"), held: ["com.a": 2, "com.b": 1],
                byHand: true),
            FocusStatus(
                mode: try FocusMode(name: "Work"), isActive: false,
                nextChange: JSONMapping.parseDate("2027-06-02T07:00:00.000Z"), held: [:]),
            FocusStatus(mode: try FocusMode(name: "Reading"), isActive: false, nextChange: nil, held: [:]),
        ]
        #expect(
            line("focus", nil, .focus(modes), app: "")
                == "-  focus  Sleep on by hand until 2027-06-02T05:00:00.000Z, 3 held  Work off (next change 2027-06-02T07:00:00.000Z)  Reading off"
        )
        #expect(line("focus", nil, .focus([]), app: "") == "-  focus  (no focus modes)")
        // A kind this version does not know is named; one the decoder refuses says why.
        #expect(
            CLI.describeEvent(kind: "later", id: "12", try JSONValue.parse(#"{"app": "com.a", "kind": "later"}"#))
                == "12  later  com.a")
        let unreadable = try JSONValue.parse(#"{"app": "com.a", "kind": "delivered", "date": "2027-06-01T12:10:00Z"}"#)
        #expect(
            CLI.describeEvent(kind: "delivered", id: "13", unreadable).hasPrefix(
                "13  delivered  com.a  (not readable: "))
    }

    @Test("unknown commands and options exit 2 with a suggestion; --help exits 0")
    func exitCodes() async {
        let output = Output()
        let cli = CLI(write: { output.append($0) }, writeError: { output.append($0) })
        #expect(await cli.main(["ad"]) == 2)
        #expect(output.text.contains("Did you mean 'add'?"))
        #expect(await cli.main(["add", "--titel", "x"]) == 2)
        #expect(output.text.contains("did you mean --title?"))
        #expect(await cli.main(["add", "--help"]) == 0)
        #expect(output.text.contains("Examples:"))
        #expect(await cli.main(["add", "--in", "1m", "--every", "2h", "--title", "x", "--data", "/nonexistent"]) == 2)
        #expect(output.text.contains("give one trigger"))
        #expect(await cli.main(["list", "--data", "/nonexistent-chime-dir"]) == 1)
        #expect(output.text.contains("no running Chime service found in /nonexistent-chime-dir"))
        #expect(await cli.main(["serve", "--desktop", "maybe"]) == 2)
        #expect(output.text.contains("--desktop is 'maybe'; accepted: auto, on, off"))
    }

    @Test(
        "a request is checked by the engine's own rules before it is sent, in the flags' words",
        arguments: [
            (["--every", "30s"], "--every is 30.0 with repeats; the time interval must be at least 60 if repeating"),
            (["--in", "0s"], "--in is 0.0; the time interval must be greater than 0"),
            (["--badge", "-1"], "--badge is -1"),
            (["--id", ""], "--id is empty"),
        ])
    func checkedByValidation(flags: [String], message: String) async {
        let output = Output()
        let cli = CLI(write: { output.append($0) }, writeError: { output.append($0) })
        // No service in that directory: the check must refuse the request before any connection.
        #expect(await cli.main(["add", "--title", "x"] + flags + ["--data", "/nonexistent-chime-dir"]) == 2)
        #expect(output.text.contains(message), "\(output.text)")
        #expect(!output.text.contains("no running Chime service"))
    }
}

final class Output: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var text: String { lines.withLock { $0.joined(separator: "\n") } }

    @Test(
        "serve --database takes a PostgreSQL URL, else CHIME_DATABASE_URL; anything else is refused naming where it came from"
    )
    func database() throws {
        let serve = CLI.serve.options + CLI.common
        let url = "postgresql://chime@db.internal:5432/chime?sslmode=require"
        #expect(
            try CLI.databaseURL(ParsedArguments.parse(["--database", url], options: serve), environment: [:]) == url)
        #expect(
            try CLI.databaseURL(ParsedArguments.parse([], options: serve), environment: ["CHIME_DATABASE_URL": url])
                == url)
        #expect(
            try CLI.databaseURL(
                ParsedArguments.parse(["--database", url], options: serve),
                environment: ["CHIME_DATABASE_URL": "postgres://other/db"]) == url)
        #expect(
            try CLI.databaseURL(ParsedArguments.parse([], options: serve), environment: ["CHIME_DATABASE_URL": ""])
                == nil)
        #expect(try CLI.databaseURL(ParsedArguments.parse([], options: serve), environment: [:]) == nil)
        let flag = #expect(throws: UsageError.self) {
            try CLI.databaseURL(
                ParsedArguments.parse(["--database", "/var/lib/chime.sqlite"], options: serve), environment: [:])
        }
        #expect(flag?.message.contains("--database") == true)
        let variable = #expect(throws: UsageError.self) {
            try CLI.databaseURL(
                ParsedArguments.parse([], options: serve), environment: ["CHIME_DATABASE_URL": "mysql://x"])
        }
        #expect(variable?.message.contains("CHIME_DATABASE_URL") == true)
    }
}
