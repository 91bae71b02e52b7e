import ChimeCore
import ChimeSQLite
import ChimeServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension CLI {
    // MARK: service

    static let service = Command(
        name: "service", summary: "install chime serve as a systemd service (a user unit, or with sudo a system one)",
        usage: "chime service install [--user] [--config FILE | --data DIR] [--print] [--now]",
        examples: [
            "chime service install --user --now            # runs while you are logged in (or always, with `loginctl enable-linger`)",
            "sudo chime service install --config /etc/chime/chime.toml --now",
            "chime service install --user --print          # only show the unit",
        ],
        options: [
            .flag("user", "a user unit in ~/.config/systemd/user (default when not root)"),
            .value("config", "the settings file the service reads (chime serve --config)"),
            .flag("print", "print the unit instead of writing it"),
            .flag("now", "after writing it: systemctl enable --now (where systemd runs)"),
            .value("run-as", "for a system unit: the user it runs as (default: the one who ran sudo)"),
        ],
        run: { arguments, cli in
            guard arguments.positionals == ["install"] else {
                throw UsageError("say what to do: chime service install")
            }
            let root = getuid() == 0
            let user = arguments.has("user") || !root
            let environment = ProcessInfo.processInfo.environment
            let chime = executablePath()
            var serveArguments = ["serve"]
            if let config = arguments.value("config") {
                serveArguments += ["--config", absolute(config)]
            }
            var data = arguments.value("data").map(absolute)
            if data == nil, !user, arguments.value("config") == nil { data = "/var/lib/chime" }
            if let data { serveArguments += ["--data", data] }
            let runAs = arguments.value("run-as") ?? environment["SUDO_USER"]
            let unit = systemdUnit(
                executable: chime, arguments: serveArguments, user: user, runAs: user ? nil : runAs,
                stateDirectory: !user && data == "/var/lib/chime")
            if arguments.has("print") {
                cli.write(unit)
                return 0
            }
            let directory =
                user
                ? (environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory() + "/.config")
                    + "/systemd/user"
                : "/etc/systemd/system"
            let path = directory + "/chime.service"
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                try unit.write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                throw CommandError(
                    "cannot write \(path): \(error.localizedDescription)\(user ? "" : "; run it with sudo, or use --user")"
                )
            }
            cli.write("Wrote \(path).")
            if chime.contains("/.build/") {
                cli.writeError(
                    "Note: it runs \(chime), a build in a source tree. For a lasting service: swift build -c release && sudo install -m 755 .build/release/chime /usr/local/bin/chime, then install again."
                )
            }
            let scope = user ? ["--user"] : []
            let systemd =
                FileManager.default.fileExists(atPath: "/run/systemd/system") && AppLauncher.resolve("systemctl") != nil
            if systemd {
                try runSystemctl(scope + ["daemon-reload"], cli)
                if arguments.has("now") { try runSystemctl(scope + ["enable", "--now", "chime.service"], cli) }
            }
            if !systemd || !arguments.has("now") {
                cli.write(
                    "Start it with: systemctl \(scope.map { $0 + " " }.joined())daemon-reload && systemctl \(scope.map { $0 + " " }.joined())enable --now chime"
                )
            }
            if !user, let data {
                cli.write(
                    "Commands then find it with --data \(data) (run them as \(runAs ?? "root"), who can read its owner token)."
                )
            }
            return 0
        })

    /// The unit: graceful stops (SIGTERM), restarts on failure, files only its user reads.
    static func systemdUnit(executable: String, arguments: [String], user: Bool, runAs: String?, stateDirectory: Bool)
        -> String
    {
        var lines = [
            "# Written by `chime service install`. Edit with care; installing again replaces it.",
            "[Unit]",
            "Description=Chime notification center (chime serve)",
            "After=network-online.target",
            "Wants=network-online.target",
            "",
            "[Service]",
            "Type=simple",
            "ExecStart=" + ([executable] + arguments).map(systemdQuoted).joined(separator: " "),
            "# SIGTERM stops it gracefully: requests in flight finish, event streams end, the store closes.",
            "KillSignal=SIGTERM",
            "TimeoutStopSec=30",
            "Restart=on-failure",
            "RestartSec=2",
            "UMask=0077",
            "LimitNOFILE=65536",
            "NoNewPrivileges=yes",
            "PrivateTmp=yes",
        ]
        if let runAs { lines.append("User=\(runAs)") }
        if stateDirectory { lines += ["StateDirectory=chime", "StateDirectoryMode=0700"] }
        lines += ["", "[Install]", "WantedBy=\(user ? "default.target" : "multi-user.target")", ""]
        return lines.joined(separator: "\n")
    }

    /// A word for `ExecStart=`: quoted when it has blanks, quotes, backslashes or `%` (systemd's specifier).
    static func systemdQuoted(_ word: String) -> String {
        let escaped = word.replacingOccurrences(of: "%", with: "%%")
        guard
            escaped.contains(where: { $0 == " " || $0 == "\"" || $0 == "\\" || $0 == "'" || $0 == "\t" })
                || escaped.isEmpty
        else { return escaped }
        return "\"" + escaped.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            + "\""
    }

    static func executablePath() -> String {
        let started = CommandLine.arguments.first ?? "chime"
        if started.contains("/") { return URL(fileURLWithPath: started).resolvingSymlinksInPath().path }
        return AppLauncher.resolve(started).map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path } ?? started
    }

    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    static func runSystemctl(_ arguments: [String], _ cli: CLI) throws {
        // The terminal's streams, stdin included: systemctl may ask for a password. No time limit:
        // the person at the terminal waits for it, as they would running it themselves.
        let systemctl = try ChildProcess(
            executable: AppLauncher.resolve("systemctl") ?? "/usr/bin/systemctl", arguments: arguments,
            stdin: .inherit)
        if let end = systemctl.wait(), !end.succeeded {
            throw CommandError("systemctl \(arguments.joined(separator: " ")) failed (\(end))")
        }
        cli.write("Ran systemctl \(arguments.joined(separator: " ")).")
    }
}
