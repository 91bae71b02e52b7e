import ChimeCore
import Foundation
import Synchronization

@testable import ChimeDesktop

#if canImport(Glibc)
    import Glibc
#endif

struct TestDesktopError: Error, CustomStringConvertible {
    var description: String
}

/// Waits (polling, at most `timeout`) until `condition` holds; throws naming `what` if it never does.
func waitUntil(_ what: String, timeout: Duration = .seconds(60), _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try await condition() { return }
        if ContinuousClock.now >= deadline { throw TestDesktopError(description: "timed out waiting for \(what)") }
        try await Sleep.for(.milliseconds(40))
    }
}

/// A program the tests started, with its standard output as lines. Each runs under
/// `timeout(1)`, so even a test process that dies leaves nothing running for long.
final class TestProgram: Sendable {
    let name: String
    private let child: ChildProcess
    private let input = Pipe()
    private let output = Pipe()
    private let lines = Mutex<(all: [String], partial: String)>(([], ""))

    init(_ name: String, _ executable: String, _ arguments: [String], environment: [String: String], log: String) throws
    {
        self.name = name
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        guard let errors = FileHandle(forWritingAtPath: log) else {
            throw TestDesktopError(description: "cannot write \(log)")
        }
        defer { try? errors.close() }
        child = try ChildProcess(
            executable: "/usr/bin/timeout", arguments: ["--kill-after=5", "900", executable] + arguments,
            environment: environment, stdin: .pipe(input), stdout: .pipe(output), stderr: .file(errors))
        // A reader thread that owns the pipe's reading end until the program's output ends (not
        // readabilityHandler: releasing the pipe with its dispatch source armed crashed
        // libdispatch's manager thread in the suite's teardown).
        _ = PipeReader(output, name: "test.\(name)") { [weak self] data in
            guard let self else { return }
            self.lines.withLock { state in
                state.partial += String(decoding: data, as: UTF8.self)
                while let newline = state.partial.firstIndex(of: "\n") {
                    state.all.append(String(state.partial[..<newline]))
                    state.partial = String(state.partial[state.partial.index(after: newline)...])
                }
            }
        }
    }

    var isRunning: Bool { child.isRunning }
    var allLines: [String] { lines.withLock { $0.all } }

    /// The first line (from index `after` on) that `match` accepts.
    func line(after: Int = 0, timeout: Duration = .seconds(60), where match: @escaping (String) -> Bool) async throws
        -> (index: Int, text: String)
    {
        var found: (Int, String)?
        try await waitUntil("a line from \(name)", timeout: timeout) {
            let ended = child.exited
            let all = allLines
            if let index = all.indices.dropFirst(after).first(where: { match(all[$0]) }) {
                found = (index, all[index])
                return true
            }
            if let ended {
                throw TestDesktopError(
                    description: "\(name) ended (\(ended)) before printing the line wanted; it printed: \(all)")
            }
            return false
        }
        return found!
    }

    func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Stops it (SIGTERM, then SIGKILL after 5 s through timeout(1)) and waits for it to end.
    func stop(signal number: Int32 = SIGTERM) async {
        child.signal(number)
        try? await waitUntil("\(name) to stop", timeout: .seconds(15)) { !child.isRunning }
    }
}

/// Runs a command to its end (at most 60 s); its standard output.
@discardableResult
func run(_ executable: String, _ arguments: [String], environment: [String: String]) async throws -> String {
    let result = try await ChildProcess.run(
        executable, arguments: arguments, environment: environment, errors: .stream(.null), timeout: 60)
    guard result.termination.succeeded else {
        throw TestDesktopError(
            description:
                "\(executable) \(arguments.joined(separator: " ")) ended with \(result.termination): \(result.text)")
    }
    return result.text
}

/// A desktop session of the tests' own: a private `dbus-daemon --session` listening on a socket in
/// a temporary directory, `Xvfb` on a free display, and the notification servers a test starts
/// (dunst, or the inline-reply test server). ``stop()`` ends them all; ``withTestDesktop(_:)`` calls it
/// whether the test passed or not.
final class TestDesktop: @unchecked Sendable {
    // `@unchecked Sendable`: a test uses its desktop from one task at a time.
    let directory: String
    let socketPath: String
    private(set) var bus: TestProgram?
    private(set) var busAddress = ""
    private(set) var xvfb: TestProgram?
    private(set) var display = ""
    private(set) var dunst: TestProgram?
    private var servers: [TestServer] = []
    private var extra: [TestProgram] = []

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    private init() throws {
        let template = "/tmp/chime-desktop-XXXXXX"
        var bytes = Array(template.utf8CString)
        guard mkdtemp(&bytes) != nil else { throw TestDesktopError(description: "mkdtemp failed") }
        directory = String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        socketPath = directory + "/bus"
    }

    /// The environment of a program in this session.
    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = busAddress
        environment["DISPLAY"] = display
        environment["HOME"] = directory
        environment["XDG_CONFIG_HOME"] = directory + "/config"
        environment["XDG_RUNTIME_DIR"] = directory
        environment.removeValue(forKey: "WAYLAND_DISPLAY")
        return environment
    }

    static func start(display: Bool = true) async throws -> TestDesktop {
        let desktop = try TestDesktop()
        do {
            try await desktop.startBus()
            if display { try await desktop.startDisplay() }
        } catch {
            await desktop.stop()
            throw error
        }
        return desktop
    }

    // MARK: The bus

    func startBus() async throws {
        let config = directory + "/bus.conf"
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:path=\(socketPath)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """.write(toFile: config, atomically: true, encoding: .utf8)
        unlink(socketPath)
        let bus = try TestProgram(
            "dbus-daemon", "/usr/bin/dbus-daemon", ["--config-file=\(config)", "--nofork", "--print-address=1"],
            environment: ProcessInfo.processInfo.environment, log: directory + "/dbus.log")
        self.bus = bus
        busAddress = try await bus.line { $0.hasPrefix("unix:") }.text
    }

    /// Ends the bus (every connection to it breaks).
    func stopBus() async {
        await bus?.stop()
        bus = nil
    }

    // MARK: The display

    func startDisplay() async throws {
        let xvfb = try TestProgram(
            "Xvfb", "/usr/bin/Xvfb",
            ["-displayfd", "1", "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset"],
            environment: ProcessInfo.processInfo.environment, log: directory + "/xvfb.log")
        self.xvfb = xvfb
        let number = try await xvfb.line { Int($0) != nil }.text
        display = ":" + number
    }

    // MARK: dunst

    /// Starts dunst on this session's bus and display. Its menu (`dmenu`) is a script that answers
    /// with the first line containing the text of ``choose(_:)``.
    ///
    /// - Parameters:
    ///   - lowTimeout: seconds before a pop-up of low urgency expires (0: never).
    ///   - markUrgency: rules put the urgency before the text dunst shows (`LOW: …`), so a test
    ///     can read it back from `dunstctl history`.
    func startDunst(markup: Bool = true, lowTimeout: Int = 0, markUrgency: Bool = false) async throws {
        let menu = directory + "/menu.sh"
        try """
        #!/bin/sh
        cat > "\(directory)/menu-input.txt"
        cp "\(directory)/menu-input.txt" "\(directory)/menu-left.txt"
        while IFS= read -r fragment; do
          grep -F -- "$fragment" "\(directory)/menu-left.txt" > "\(directory)/menu-next.txt"
          mv "\(directory)/menu-next.txt" "\(directory)/menu-left.txt"
        done < "\(directory)/choice"
        head -n 1 "\(directory)/menu-left.txt"
        touch "\(directory)/menu-done"
        """.write(toFile: menu, atomically: true, encoding: .utf8)
        chmod(menu, 0o755)
        let config = directory + "/dunstrc"
        try """
        [global]
            dmenu = \(menu)
            markup = \(markup ? "full" : "no")
            font = Monospace 11
            width = 420
            offset = 20x20
            frame_width = 2
            corner_radius = 6
            show_indicators = yes
        [urgency_low]
            timeout = \(lowTimeout)
        [urgency_normal]
            timeout = 0
        [urgency_critical]
            timeout = 0
        \(markUrgency ? ["low", "normal", "critical"].map { "[mark-\($0)]\n    msg_urgency = \($0)\n    format = \"\($0.uppercased()): %s\"" }.joined(separator: "\n") : "")
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let dunst = try TestProgram(
            "dunst", "/usr/bin/dunst", ["-config", config], environment: environment, log: directory + "/dunst.log")
        self.dunst = dunst
        try await waitUntil("dunst to own org.freedesktop.Notifications") {
            guard dunst.isRunning else {
                throw TestDesktopError(description: "dunst exited; see \(directory)/dunst.log")
            }
            return (try? await run("/usr/bin/dunstctl", ["is-paused"], environment: environment)) != nil
        }
    }

    func stopDunst() async {
        await dunst?.stop()
        dunst = nil
    }

    func dunstctl(_ arguments: String...) async throws -> String {
        try await run("/usr/bin/dunstctl", arguments, environment: environment)
    }

    /// The numbers `dunstctl count` prints: displayed and history.
    func dunstCount() async throws -> (displayed: Int, history: Int) {
        let text = try await dunstctl("count")
        func number(_ label: String) -> Int {
            let line = text.split(separator: "\n").first { $0.contains(label) } ?? ""
            return Int(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? -1
        }
        return (number("displayed"), number("History"))
    }

    /// Opens dunst's context menu and picks the first entry containing every fragment (`[7,snooze]`).
    /// Open it once per test step: dunst ignores a second request while it reads the first answer.
    func choose(_ fragments: String...) async throws {
        let text = fragments.joined(separator: ", ")
        try (fragments.joined(separator: "\n") + "\n").write(
            toFile: directory + "/choice", atomically: true, encoding: .utf8)
        try? FileManager.default.removeItem(atPath: directory + "/menu-input.txt")
        try? FileManager.default.removeItem(atPath: directory + "/menu-done")
        _ = try await dunstctl("context")
        do {
            try await waitUntil("dunst's menu") { FileManager.default.fileExists(atPath: directory + "/menu-done") }
        } catch {
            let log = (try? String(contentsOfFile: directory + "/dunst.log", encoding: .utf8)) ?? ""
            throw TestDesktopError(description: "dunst opened no menu for \(text); its log: \(log)")
        }
    }

    /// What dunst's menu last listed.
    var menuInput: String { (try? String(contentsOfFile: directory + "/menu-input.txt", encoding: .utf8)) ?? "" }

    /// dunst's history as JSON objects (`summary`, `body`, `appname`, `urgency`, `id`, …), each field's
    /// `data` value.
    func dunstHistory() async throws -> [[String: Any]] {
        let text = try await dunstctl("history")
        guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let data = object["data"] as? [[[String: Any]]]
        else { return [] }
        return (data.first ?? []).map { entry in entry.mapValues { ($0 as? [String: Any])?["data"] ?? $0 } }
    }

    // MARK: The inline-reply test server

    func startServer(
        capabilities: [String] = ["actions", "body", "body-markup", "inline-reply"], broadcast: Bool = false,
        name: String = "chime-test-server"
    ) async throws -> TestServer {
        let python = try await run(
            Self.packageRoot + "/scripts/desktop-test-env.sh", [], environment: ProcessInfo.processInfo.environment
        )
        .trimmingCharacters(in: .whitespacesAndNewlines)
        var arguments = [
            Self.packageRoot + "/Tests/ChimeDesktopTests/Servers/notification_server.py", "--address", busAddress,
            "--capabilities", capabilities.joined(separator: ","), "--server-name", name,
        ]
        if broadcast { arguments.append("--broadcast") }
        var environment = self.environment
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        let process = try TestProgram(
            "test server", python, arguments, environment: environment,
            log: directory + "/server-\(servers.count).log")
        let server = TestServer(process: process)
        servers.append(server)
        _ = try await process.line { $0.contains("\"ready\"") }
        return server
    }

    // MARK: Other programs

    /// Starts a program in the session (a screenshot tool, xdotool, …) that ends with the desktop.
    func spawn(_ name: String, _ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws
        -> TestProgram
    {
        let child = try TestProgram(
            name, executable, arguments, environment: environment ?? self.environment, log: directory + "/\(name).log")
        extra.append(child)
        return child
    }

    func stop() async {
        for child in extra { await child.stop() }
        for server in servers { await server.process.stop() }
        await stopDunst()
        await xvfb?.stop()
        await stopBus()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Runs `body` in a fresh test desktop and ends it afterwards, also when `body` throws.
func withTestDesktop(display: Bool = true, _ body: (TestDesktop) async throws -> Void) async throws {
    let desktop = try await TestDesktop.start(display: display)
    do {
        try await body(desktop)
    } catch {
        await desktop.stop()
        throw error
    }
    await desktop.stop()
}

/// The tests' own notification server (Servers/notification_server.py): what it was asked, and
/// commands that act as the user.
struct TestServer: Sendable {
    let process: TestProgram

    /// A `Notify` call the server received.
    struct Notify: @unchecked Sendable {
        // `@unchecked Sendable`: the JSON values are read-only once parsed.
        var json: [String: Any]
        var id: UInt32 { UInt32(json["id"] as? Int ?? 0) }
        var replacesID: UInt32 { UInt32(json["replaces_id"] as? Int ?? 0) }
        var appName: String { json["app_name"] as? String ?? "" }
        var appIcon: String { json["app_icon"] as? String ?? "" }
        var summary: String { json["summary"] as? String ?? "" }
        var body: String { json["body"] as? String ?? "" }
        var actions: [String] { json["actions"] as? [String] ?? [] }
        /// Hints as (D-Bus signature, value).
        var hints: [String: (String, Any)] {
            (json["hints"] as? [String: [Any]] ?? [:]).compactMapValues { pair in
                guard pair.count == 2, let signature = pair[0] as? String else { return nil }
                return (signature, pair[1])
            }
        }
        func hint(_ key: String) -> String? { hints[key].map { "\($0.0):\($0.1)" } }
    }

    private func events(_ kind: String) -> [(index: Int, json: [String: Any])] {
        process.allLines.enumerated().compactMap { index, line in
            guard let json = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                json["event"] as? String == kind
            else { return nil }
            return (index, json)
        }
    }

    var notifies: [Notify] { events("notify").map { Notify(json: $0.json) } }
    var closes: [UInt32] { events("close").compactMap { ($0.json["id"] as? Int).map(UInt32.init) } }

    /// Waits for the `count`-th Notify call (1-based).
    func notify(number count: Int) async throws -> Notify {
        try await waitUntil("Notify call \(count) at the test server") { notifies.count >= count }
        return notifies[count - 1]
    }

    func command(_ object: [String: Any]) async throws {
        let before = events("done").count
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        process.send(String(decoding: data, as: UTF8.self))
        try await waitUntil("the test server to do \(object["cmd"] ?? "?")") { events("done").count > before }
    }

    func invoke(_ id: UInt32, _ key: String, token: String? = nil) async throws {
        var command: [String: Any] = ["cmd": "invoke", "id": Int(id), "key": key]
        if let token { command["token"] = token }
        try await self.command(command)
    }

    func reply(_ id: UInt32, _ text: String) async throws {
        try await command(["cmd": "reply", "id": Int(id), "text": text])
    }

    func closed(_ id: UInt32, reason: Int) async throws {
        try await command(["cmd": "closed", "id": Int(id), "reason": reason])
    }

    func spoof(_ id: UInt32, _ key: String) async throws {
        try await command(["cmd": "spoof", "id": Int(id), "key": key])
    }

    func refuse(_ on: Bool) async throws {
        try await command(["cmd": "refuse", "on": on])
    }
}

/// Everything a surface reported, for tests to wait on.
final class SurfaceEvents: Sendable {
    private let events = Mutex<[DesktopSurface.Event]>([])
    private let logLines = Mutex<[String]>([])

    var observer: @Sendable (DesktopSurface.Event) -> Void { { [self] event in events.withLock { $0.append(event) } } }
    var log: @Sendable (DesktopSurface.LogLevel, String) -> Void {
        { [self] level, text in logLines.withLock { $0.append("\(level): \(text)") } }
    }

    var all: [DesktopSurface.Event] { events.withLock { $0 } }
    var lines: [String] { logLines.withLock { $0 } }
    var count: Int { events.withLock { $0.count } }

    /// The first event from index `after` on that `match` maps to a value.
    @discardableResult
    func wait<T>(
        _ what: String, after: Int = 0, timeout: Duration = .seconds(60),
        _ match: @escaping (DesktopSurface.Event) -> T?
    ) async throws -> T {
        var found: T?
        try await waitUntil(what, timeout: timeout) {
            found = all.dropFirst(after).lazy.compactMap(match).first
            return found != nil
        }
        return found!
    }

    func shown(_ identifier: String, after: Int = 0) async throws -> (id: UInt32, request: NotifyRequest) {
        try await wait("the pop-up of '\(identifier)'", after: after) { event in
            if case .shown(_, identifier, let id, let request) = event { return (id, request) }
            return nil
        }
    }

    func answered(after: Int = 0) async throws -> (DesktopAnswer, NotificationResponse?) {
        try await wait("an answer", after: after) { event in
            if case .answered(let answer, let response) = event { return (answer, response) }
            return nil
        }
    }

    func connected(after: Int = 0) async throws -> ServerProfile {
        try await wait("a notification server", after: after) { event in
            if case .connected(let profile) = event { return profile }
            return nil
        }
    }
}
