import ChimeCore
import ChimeSQLite
import ChimeServer
import Foundation
import TestThreads
import Testing

@testable import ChimeCLI

/// Running it for real: a settings file, a systemd unit, a backup while the service writes, the
/// sign-in link as a QR code.
@Suite("chime: self-hosting", .testThreads)
struct SelfHostingTests {
    static func temporary(_ name: String) -> String {
        scratchDirectory("chime-selfhost").appendingPathComponent(name).path
    }

    @Test("a TOML settings file gives every serve flag; the command line wins; JSON works the same")
    func configFile() throws {
        let toml = Self.temporary("chime.toml")
        try """
        # Chime on the home server
        [serve]
        listen = "0.0.0.0:7878"   # every interface
        data = '/var/lib/chime'
        launch-timeout = 45
        auto-allow = true
        tls-cert = "/etc/chime/cert \\"home\\".pem"
        """.write(toFile: toml, atomically: true, encoding: .utf8)
        let given = try ParsedArguments.parse(
            ["--config", toml, "--listen", "127.0.0.1:9000"], options: CLI.serveOptions + CLI.common)
        let merged = try ConfigFile(path: toml).merged(into: given, options: CLI.serveOptions + CLI.common)
        #expect(merged.value("listen") == "127.0.0.1:9000", "the flag wins over the file")
        #expect(merged.value("data") == "/var/lib/chime")
        #expect(merged.value("launch-timeout") == "45")
        #expect(merged.value("tls-cert") == "/etc/chime/cert \"home\".pem")
        #expect(merged.has("auto-allow"))

        let json = Self.temporary("chime.json")
        try #"{"listen": "0.0.0.0:7878", "auto-allow": false, "durability": "full"}"#.write(
            toFile: json, atomically: true, encoding: .utf8)
        let fromJSON = try ConfigFile(path: json).merged(
            into: ParsedArguments(), options: CLI.serveOptions + CLI.common)
        #expect(
            fromJSON.value("listen") == "0.0.0.0:7878" && fromJSON.value("durability") == "full"
                && !fromJSON.has("auto-allow"))
    }

    @Test(
        "mistakes in the settings file name the file, the line and what is accepted",
        arguments: [
            ("lisen = \"x\"", "chime.toml:1: lisen is not a setting of chime serve; did you mean listen?"),
            ("auto-allow = \"yes\"", "chime.toml:1: auto-allow is a switch; give true or false"),
            ("listen = true", "chime.toml:1: listen takes a value"),
            ("listen = \"0.0.0.0", "chime.toml:1: the string \"0.0.0.0 is not closed"),
            ("[database]\nurl = \"x\"", "chime.toml:1: [database] is not a table the settings have"),
            ("listen", "chime.toml:1: expected key = value"),
        ])
    func configMistakes(text: String, message: String) throws {
        let path = Self.temporary("chime.toml")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let error = #expect(throws: CommandError.self) {
            try ConfigFile(path: path).merged(into: ParsedArguments(), options: CLI.serveOptions + CLI.common)
        }
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
    }

    @Test("chime service install --user writes a unit that runs this chime with the settings file")
    func userUnit() async throws {
        let config = Self.temporary("xdg")
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = config
        let (status, printed, errors) = try await BinaryTests.chime(
            ["service", "install", "--user", "--config", "/etc/chime/my chime.toml"],
            environment: environment)
        #expect(status == 0, "\(printed)\(errors)")
        let unit = try String(contentsOfFile: config + "/systemd/user/chime.service", encoding: .utf8)
        let binary = try BinaryTests.binary().resolvingSymlinksInPath().path
        #expect(unit.contains("ExecStart=\(binary) serve --config \"/etc/chime/my chime.toml\"\n"), "\(unit)")
        for line in [
            "KillSignal=SIGTERM", "Restart=on-failure", "UMask=0077", "NoNewPrivileges=yes", "WantedBy=default.target",
        ] {
            #expect(unit.contains(line + "\n"), "\(line) in \(unit)")
        }
        #expect(!unit.contains("User="), "a user unit runs as its user")
        #expect(printed.contains("Wrote \(config)/systemd/user/chime.service."))
    }

    @Test("a system unit runs as the user who ran sudo, with its state directory")
    func systemUnit() {
        let unit = CLI.systemdUnit(
            executable: "/usr/local/bin/chime", arguments: ["serve", "--data", "/var/lib/chime"], user: false,
            runAs: "ada", stateDirectory: true)
        #expect(unit.contains("ExecStart=/usr/local/bin/chime serve --data /var/lib/chime\n"))
        #expect(
            unit.contains("User=ada\n") && unit.contains("StateDirectory=chime\n")
                && unit.contains("WantedBy=multi-user.target\n"))
        #expect(CLI.systemdQuoted("100%") == "100%%")
    }

    @Test(
        "a backup taken while the engine keeps writing is one consistent, checked copy; an existing file is never overwritten"
    )
    func backupWhileWriting() async throws {
        let source = Self.temporary("chime.sqlite")
        let engine = NotificationEngine(store: try SQLiteStore(path: source), policy: FixedAuthorizationPolicy(.grant))
        _ = try await engine.requestAuthorization(app: "com.example.backup", options: [.alert])
        let requests = (0..<2_000).map {
            NotificationRequest(
                identifier: "r\($0)", content: NotificationContent(title: "t"),
                trigger: .timeInterval(3600, repeats: false))
        }
        try await engine.add(requests, app: "com.example.backup")
        // Keep writing while the copy is made.
        let writer = Task {
            for index in 0..<200 {
                try await engine.add(
                    [
                        NotificationRequest(
                            identifier: "w\(index)", content: NotificationContent(title: "w"), trigger: nil)
                    ],
                    app: "com.example.backup")
            }
        }
        let destination = Self.temporary("backup.sqlite")
        var steps = 0
        let summary = try SQLiteStore.backup(from: source, to: destination) { _, _ in steps += 1 }
        try await writer.value
        #expect(steps >= 1)
        #expect(summary.apps == 1 && summary.pending == 2_000 && (0...200).contains(summary.delivered))
        let attributes = try FileManager.default.attributesOfItem(atPath: destination)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let copy = try SQLiteStore(path: destination)
        #expect(try copy.pendingCount(app: nil) == 2_000)
        #expect(try copy.deliveredCount(app: nil) == summary.delivered)
        copy.close()
        #expect(throws: ChimeError.self) { try SQLiteStore.backup(from: source, to: destination) }
        await engine.shutdown()
    }

    @Test("the sign-in link as a QR code: in the terminal with half blocks, and as SVG")
    func qrCode() throws {
        let code = try QRCode("http://192.168.1.20:7878/#login=3c9f0e7d2b4a4f6e9d1c8b7a6f5e4d3c")
        #expect(code.modules.count >= 25 && code.modules.allSatisfy { $0.count == code.modules.count })
        // The three finder patterns: a dark 7 × 7 frame in three corners.
        let n = code.modules.count
        for (x, y) in [(0, 0), (n - 7, 0), (0, n - 7)] {
            let frame = (0..<7).allSatisfy { (i: Int) -> Bool in
                code.modules[y][x + i] && code.modules[y + 6][x + i] && code.modules[y + i][x]
            }
            #expect(frame, "a finder pattern at \(x), \(y)")
        }
        let text = code.terminalText()
        let lines = text.split(separator: "\n").count
        #expect(lines == (n + 9) / 2)
        #expect(text.contains("█") && text.contains("▀"))
        #expect(code.svg().hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(n + 8) \(n + 8)\""))
    }
}
