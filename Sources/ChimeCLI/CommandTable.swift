import ChimeCore
import ChimeCrypto
import ChimeHTTP
import ChimeServer
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension CLI {
    /// Every subcommand, in the order `chime --help` lists them.
    public static let commands: [Command] = [
        serve, open, apps, devices, categories, add, list, remove, delivered, respond, receipt, push, deviceToken, events, status, backup, service, version,
    ]

    // MARK: serve

    /// `chime serve`'s flags (also the settings of its `--config` file).
    static let serveOptions: [OptionSpec] = [
        .value("listen", "HOST:PORT or unix:/path (default 127.0.0.1:7878)"),
        .value("database", "postgresql://USER@HOST:PORT/DB: a PostgreSQL database shared by several nodes (default: SQLite in the data directory; also CHIME_DATABASE_URL)"),
        .value("tls-cert", "PEM certificate: serve HTTPS"), .value("tls-key", "PEM private key for --tls-cert"),
        .flag("auto-allow", "answer every app's authorization request with yes"),
        .value("log-format", "text (default) or json"), .value("durability", "normal (default: survives a killed process) or full (survives power loss)"),
        .value("launch-timeout", "seconds a process started to hand an app its answers may run (default 30)"),
        .value("desktop", "desktop pop-ups: auto (default: when the session bus has a notification server), on (fail at start without one) or off"),
        .value("config", "a TOML or JSON file with any of these settings (flags given here win): listen = \"0.0.0.0:7878\""),
        .value("max-connections", "connections served at once (default 1024); slow clients give up their slots first"),
        .value("max-connections-per-address", "connections served at once from one client address (default 3/4 of --max-connections)"),
        .value("public-url", "the https://NAME the service is reached at through a name (a reverse proxy): that name is answered in Host, besides IP addresses and localhost (others get 421)"),
        .value("max-streams-per-app", "event streams one app may hold open with its own token (default 16; past it 429)"),
        .value("max-streams-per-session", "event streams one web center sign-in may hold open (default 16; past it 429)"),
        .value("app-max-pending", "pending requests one app may have (default 1000000; 0: no bound); past it its adds get 507"),
        .value("app-max-delivered", "delivered notifications one app keeps (default 10000; 0: no bound); past it its oldest are removed"),
        .value("app-max-mb", "megabytes of pending and delivered notifications one app may keep (default 1024; 0: no bound)"),
        .value("event-log-max-events", "events kept for resumed streams (default 100000)"),
        .value("event-log-max-mb", "megabytes of events kept (default 64)"),
        .value("event-log-max-days", "days an event is kept (default 7), and an ended escalation's receipt"),
        .value("escalation-min-every", "the shortest time between an escalating notification's alerts a request may ask (default 10s)"),
        .value("escalation-max-for", "the longest an escalation may last (default 24h)"),
        .value("web-push-contact", "the contact push services see in every push's VAPID token: mailto:you@example.org or https://… (default: --public-url when https, else mailto:chime@HOSTNAME)"),
        .value("web-push-endpoints", "push services Web Push may go to besides the public ones (FCM, Mozilla, Apple, Microsoft): URL prefixes, comma-separated, as https://up.example.org/ (a self-hosted UnifiedPush distributor); private and loopback addresses only when listed here"),
    ]

    static let serve = Command(
        name: "serve", summary: "run the notification center as a service (HTTP API, APNs endpoint, events)",
        usage: "chime serve [--config FILE] [--data DIR] [--listen HOST:PORT | --listen unix:/path] [--tls-cert FILE --tls-key FILE] [--auto-allow] [--desktop auto|on|off] [--database URL]",
        examples: ["chime serve", "chime serve --listen 127.0.0.1:8080 --auto-allow", "chime serve --listen unix:/run/chime.sock",
                   "chime serve --log-format json --durability full", "chime serve --desktop off", "chime serve --config /etc/chime/chime.toml",
                   "chime serve --listen 0.0.0.0:7878 --database postgresql://chime@db.internal:5432/chime?sslmode=require"],
        options: serveOptions,
        run: { given, _ in
            guard given.positionals.isEmpty else { throw UsageError("serve takes no arguments; got \(given.positionals.joined(separator: " "))") }
            var arguments = given
            if let path = given.value("config") {
                arguments = try ConfigFile(path: path).merged(into: given, options: serveOptions + CLI.common)
            }
            var configuration = ChimeService.Configuration()
            if let data = arguments.value("data") { configuration.dataDirectory = data }
            if let listen = arguments.value("listen") {
                do { configuration.listen = try ListenAddress(parsing: listen) } catch { throw UsageError("--listen: \(error)") }
            }
            configuration.tlsCertificatePath = arguments.value("tls-cert")
            configuration.tlsKeyPath = arguments.value("tls-key")
            if (configuration.tlsCertificatePath == nil) != (configuration.tlsKeyPath == nil) {
                throw UsageError("--tls-cert and --tls-key go together")
            }
            configuration.autoAllow = arguments.has("auto-allow")
            switch arguments.value("log-format") ?? "text" {
            case "text": configuration.logFormat = .text
            case "json": configuration.logFormat = .json
            case let other: throw UsageError("--log-format is '\(other)'; accepted: text, json")
            }
            if let text = arguments.value("launch-timeout") {
                guard let seconds = Int(text), seconds > 0 else { throw UsageError("--launch-timeout is '\(text)'; give a whole number of seconds, more than 0") }
                configuration.launchTimeout = .seconds(seconds)
            }
            switch arguments.value("durability") ?? "normal" {
            case "normal": configuration.fullDurability = false
            case "full": configuration.fullDurability = true
            case let other: throw UsageError("--durability is '\(other)'; accepted: normal, full")
            }
            let desktop = arguments.value("desktop") ?? "auto"
            guard let mode = ChimeService.DesktopMode(rawValue: desktop) else {
                throw UsageError("--desktop is '\(desktop)'; accepted: auto, on, off")
            }
            configuration.desktop = mode
            if let limit = try positiveInteger(arguments, "max-connections") { configuration.connectionLimit = limit }
            configuration.connectionLimitPerAddress = try positiveInteger(arguments, "max-connections-per-address")
            if let text = arguments.value("public-url") {
                guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                    throw UsageError("--public-url is '\(text)'; give the address the service is reached at, such as https://chime.example.org")
                }
                configuration.publicURL = text
            }
            if let limit = try positiveInteger(arguments, "max-streams-per-app") { configuration.streamLimits.perApp = limit }
            if let limit = try positiveInteger(arguments, "max-streams-per-session") { configuration.streamLimits.perSession = limit }
            if let bound = try quotaBound(arguments, "app-max-pending") { configuration.quota.pending = bound }
            if let bound = try quotaBound(arguments, "app-max-delivered") { configuration.quota.delivered = bound }
            if let megabytes = try quotaBound(arguments, "app-max-mb") { configuration.quota.bytes = megabytes.map { $0 << 20 } }
            if let count = try positiveInteger(arguments, "event-log-max-events") { configuration.eventRetention.count = count }
            if let megabytes = try positiveInteger(arguments, "event-log-max-mb") { configuration.eventRetention.bytes = megabytes << 20 }
            if let days = try positiveInteger(arguments, "event-log-max-days") { configuration.eventRetention.age = TimeInterval(days) * 86_400 }
            if let text = arguments.value("escalation-min-every") {
                do throws(UsageError) { configuration.escalationLimits.minimumInterval = try parseDuration(text) } catch { throw UsageError("--escalation-min-every: \(error.message)") }
            }
            if let text = arguments.value("escalation-max-for") {
                do throws(UsageError) { configuration.escalationLimits.maximumDuration = try parseDuration(text) } catch { throw UsageError("--escalation-max-for: \(error.message)") }
            }
            guard configuration.escalationLimits.minimumInterval > 0,
                  configuration.escalationLimits.maximumDuration > configuration.escalationLimits.minimumInterval else {
                throw UsageError("--escalation-min-every must be more than 0 and less than --escalation-max-for (defaults 10s and 24h)")
            }
            if let text = arguments.value("web-push-endpoints") {
                do throws(ChimeError) {
                    configuration.webPushEndpoints = try WebPushEndpoints(listed: text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
                } catch { throw UsageError(error.message) }
            }
            if let contact = arguments.value("web-push-contact") {
                guard (contact.hasPrefix("mailto:") || contact.hasPrefix("https://")) && contact.count > 8 else {
                    throw UsageError("--web-push-contact is '\(contact.prefix(80))'; give mailto:you@example.org or an https:// URL (RFC 8292: how a push service reaches you)")
                }
                configuration.webPushContact = contact
            }
            configuration.database = try databaseURL(arguments, environment: ProcessInfo.processInfo.environment)
            if configuration.database != nil, arguments.value("durability") != nil {
                throw UsageError("--durability is for the SQLite store; with --database, durability is the PostgreSQL server's (synchronous_commit)")
            }
            try await ChimeService.run(configuration: configuration)
            return 0
        })

    /// `--name N`, a whole number of at least 1, or nil when not given.
    static func positiveInteger(_ arguments: ParsedArguments, _ name: String) throws -> Int? {
        guard let text = arguments.value(name) else { return nil }
        guard let number = Int(text), number >= 1 else { throw UsageError("--\(name) is '\(text)'; give a whole number of at least 1") }
        return number
    }

    /// A quota flag: `nil` when not given, `.some(nil)` for 0 (no bound), else the bound.
    static func quotaBound(_ arguments: ParsedArguments, _ name: String) throws -> Int?? {
        guard let text = arguments.value(name) else { return nil }
        guard let number = Int(text), number >= 0, number <= Int(Int32.max) else {
            throw UsageError("--\(name) is '\(text)'; give a whole number from 1 to \(Int32.max), or 0 for no bound")
        }
        return .some(number == 0 ? nil : number)
    }

    /// `--database URL`, else `CHIME_DATABASE_URL`; `nil` for SQLite. Only PostgreSQL URLs
    /// (`postgresql://` or `postgres://`) are accepted, so a mistyped path does not silently mean SQLite.
    static func databaseURL(_ arguments: ParsedArguments, environment: [String: String]) throws -> String? {
        let given = arguments.value("database") ?? environment["CHIME_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
        guard let given else { return nil }
        let source = arguments.value("database") != nil ? "--database" : "CHIME_DATABASE_URL"
        guard given.hasPrefix("postgresql://") || given.hasPrefix("postgres://") else {
            throw UsageError("\(source) is '\(given.prefix(60))'; give a PostgreSQL URL, postgresql://USER@HOST:PORT/DB (libpq's parameters such as ?sslmode=require may follow)")
        }
        return given
    }

    // MARK: devices

    static let devices = Command(
        name: "devices", summary: "browsers and phones subscribed to Web Push: list them, choose their apps, name or remove them",
        usage: "chime devices [list] | chime devices apps ID [APP…] [--all-apps] | chime devices rename ID NAME | chime devices remove ID",
        examples: ["chime devices", "chime devices list --json", "chime devices apps q3X9… com.example.alarm com.example.organizer",
                   "chime devices apps q3X9… --all-apps", "chime devices rename q3X9… 'Anna’s phone'", "chime devices remove q3X9…"],
        options: [.flag("all-apps", "with apps: the device gets every app's notifications")],
        run: { arguments, cli in
            let action = arguments.positionals.first ?? "list"
            let actions = ["list", "apps", "rename", "remove"]
            guard actions.contains(action) else {
                let suggestion = ParsedArguments.closest(action, among: actions).map { "; did you mean '\($0)'?" } ?? ""
                throw UsageError("unknown action '\(action)'\(suggestion)")
            }
            let client = try cli.client(arguments)
            switch action {
            case "list":
                guard arguments.positionals.count <= 1 else { throw UsageError("chime devices list takes no arguments") }
                let devices = try await client.list(.listWebPushSubscriptions)
                if arguments.has("json") { cli.printJSON(devices); return 0 }
                if devices.isEmpty { cli.write("No devices. In the web center (chime open), press \"Notify this device\" on a phone or browser.") }
                for device in devices { cli.write(describeDevice(device)) }
            case "apps":
                guard arguments.positionals.count >= 2 else { throw UsageError("give the device's id (from chime devices) and its apps, or --all-apps") }
                let apps = Array(arguments.positionals.dropFirst(2))
                guard apps.isEmpty == arguments.has("all-apps") else {
                    throw UsageError(apps.isEmpty ? "name the apps the device gets, or give --all-apps" : "give the apps or --all-apps, not both")
                }
                let body: JSONObject = ["apps": arguments.has("all-apps") ? .null : .array(apps.map(JSONValue.string))]
                let response = try await client.send(.updateWebPushSubscription, ["id": arguments.positionals[1]], json: .object(body))
                if arguments.has("json") { cli.printJSON(response.json ?? .null); return 0 }
                cli.write(response.json.map(describeDevice) ?? "Done.")
            case "rename":
                guard arguments.positionals.count == 3 else { throw UsageError("give the device's id and its new name: chime devices rename ID NAME") }
                let response = try await client.send(.updateWebPushSubscription, ["id": arguments.positionals[1]],
                                                     json: .object(["name": .string(arguments.positionals[2])]))
                if arguments.has("json") { cli.printJSON(response.json ?? .null); return 0 }
                cli.write(response.json.map(describeDevice) ?? "Done.")
            default:
                guard arguments.positionals.count == 2 else { throw UsageError("give the device's id: chime devices remove ID") }
                try await client.send(.removeWebPushSubscription, ["id": arguments.positionals[1]])
                if arguments.has("json") { cli.printJSON(["removed": .string(arguments.positionals[1])]); return 0 }
                cli.write("Removed \(arguments.positionals[1]); it gets no more pushes.")
            }
            return 0
        })

    /// One line for a subscribed device: id, name, push service, apps, last outcome.
    static func describeDevice(_ device: JSONValue) -> String {
        let name = device["name"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? "(unnamed)"
        var apps = "every app"
        if case .array(let list)? = device["apps"] { apps = list.isEmpty ? "none" : list.compactMap(\.stringValue).joined(separator: ", ") }
        var line = "\(device["id"]?.stringValue ?? "?")  \(name)  \(device["pushService"]?.stringValue ?? "?")  apps: \(apps)"
        if let success = device["lastSuccess"]?.stringValue { line += "  last sent: \(success)" }
        if let failure = device["lastFailure"]?.stringValue {
            line += "  last failure: \(failure) (\(device["lastFailureReason"]?.stringValue ?? "?"))"
        }
        return line
    }

    // MARK: open

    static let open = Command(
        name: "open", summary: "sign in to the web notification center: a one-time login link, opened in the browser or scanned by a phone",
        usage: "chime open [--print] [--qr] [--url BASE] [--data DIR] [--json]",
        examples: ["chime open", "chime open --print", "chime open --qr                         # sign in from a phone on the same network",
                   "chime open --print --url https://chime.example.org   # behind a reverse proxy"],
        options: [.flag("print", "only print the link; do not start a browser"),
                  .flag("qr", "also draw the link as a QR code (drawn anyway in a terminal when the link reaches other devices)"),
                  .value("url", "the base URL other devices reach the service at (a reverse proxy's https://…); default: the service's, with its network address when it listens on 0.0.0.0")],
        run: { arguments, cli in
            guard arguments.positionals.isEmpty else { throw UsageError("open takes no arguments; got \(arguments.positionals.joined(separator: " "))") }
            let client = try cli.client(arguments)
            guard case .url(let serviceURL) = client.endpoint else {
                throw CommandError("the service listens on a Unix socket, which a browser cannot reach; start it with --listen HOST:PORT for the web center, or put a reverse proxy in front and pass its address with --url")
            }
            let link = try await client.send(.createLoginLink).json
            guard let path = link?["path"]?.stringValue else { throw CommandError("the service did not return a login link") }
            var base = arguments.value("url") ?? NetworkAddresses.reachable(serviceURL)
            guard let parsedBase = URL(string: base), parsedBase.scheme == "http" || parsedBase.scheme == "https", parsedBase.host != nil else {
                throw UsageError("--url is '\(base)'; give the base URL other devices open, such as https://chime.example.org")
            }
            while base.hasSuffix("/") { base.removeLast() }
            let url = base + path
            if arguments.has("json") {
                cli.write(JSONValue.object(["url": .string(url), "expires": link?["expires"] ?? .null]).serialized(pretty: true))
                return 0
            }
            cli.write(url)
            let local = ["127.0.0.1", "localhost", "::1"].contains(parsedBase.host ?? "")
            if arguments.has("qr") || (!local && Terminal.canDrawQRCodes) {
                if let code = try? QRCode(url) { cli.write(code.terminalText()) }
            }
            cli.writeError("This link signs in once, within 2 minutes. Keep it private: it opens your notification center.")
            if !local && parsedBase.scheme == "http" {
                cli.writeError("Over plain HTTP others on the network can read what you do; see README \"Run it for real\" for TLS.")
            }
            if !arguments.has("print"), !arguments.has("qr"), local, let opener = Browser.opener() {
                if Browser.launch(opener, link: url) {
                    cli.writeError("Opened in your browser (\(opener)).")
                } else {
                    cli.writeError("Could not start \(opener); open the link above yourself.")
                }
            }
            return 0
        })

    // MARK: apps

    static let apps = Command(
        name: "apps", summary: "register apps, answer their permission requests, rotate their tokens, set their launch commands",
        usage: "chime apps add|list|set|remove|rotate-token|allow|deny [BUNDLE_IDENTIFIER] [--launch 'COMMAND' | --no-launch] "
            + "[--apns-key AuthKey_KEYID.p8 --key-id KEYID --team-id TEAMID | --team-id TEAMID | --no-apns] [--apns-certificate FILE.pem | --no-apns-certificate]",
        examples: ["chime apps add com.example.alarm", "chime apps add com.example.alarm --json", "chime apps list",
                   "chime apps add com.example.organizer --launch '/opt/organizer/bin/organizer'",
                   "chime apps set com.example.organizer --launch 'organizer --tasks \"/srv/my tasks.json\"'",
                   "chime apps set com.example.organizer --no-launch",
                   "chime apps set com.example.alarm --apns-key AuthKey_ABCDE12345.p8 --key-id ABCDE12345 --team-id TEAM123456",
                   "chime apps set com.example.organizer --team-id TEAM123456",
                   "chime apps set com.example.alarm --apns-certificate push-cert.pem",
                   "chime apps allow com.example.alarm", "chime apps rotate-token com.example.alarm", "chime apps remove com.example.alarm"],
        options: [
            .value("launch", "with add or set: the command the service starts to hand the app an answer while it is not running (split into words like a shell, but run without one)"),
            .flag("no-launch", "with set: no command; answers wait until the app runs"),
            .value("apns-key", "with set: the team's APNs key (the .p8 file from Apple); only its public key is sent to the service and kept"),
            .value("key-id", "with --apns-key: the key's id (the JWT's kid)"),
            .value("team-id", "with set: the team id (the JWT's iss); alone, it makes the app one of the team's, so its keys may push to it"),
            .flag("no-apns", "with set: no provider key or team; providers push with the app's token"),
            .value("apns-certificate", "with set: the provider's TLS client certificate (PEM); a provider connecting with it may push to the app (only its fingerprints and dates are sent and kept)"),
            .flag("no-apns-certificate", "with set: no provider certificate"),
            .flag("token-only", "with add or rotate-token: print only the token, for scripts: TOKEN=$(chime apps add APP --token-only)"),
        ],
        run: { arguments, cli in
            guard let action = arguments.positionals.first else { throw UsageError("say what to do: add, list, set, remove, rotate-token, allow or deny") }
            let actions = ["add", "list", "set", "remove", "rotate-token", "allow", "deny"]
            guard actions.contains(action) else {
                let suggestion = ParsedArguments.closest(action, among: actions).map { "; did you mean '\($0)'?" } ?? ""
                throw UsageError("unknown action '\(action)'\(suggestion)")
            }
            if arguments.value("launch") != nil || arguments.has("no-launch"), action != "add" && action != "set" {
                throw UsageError("--launch and --no-launch go with `chime apps add` or `chime apps set`")
            }
            let apns = try apnsProvider(arguments, action: action)
            let certificate = try apnsCertificate(arguments, action: action)
            // The command is checked here as the service checks it, so a mistake is a usage error.
            var launch: JSONValue?
            if let text = arguments.value("launch") {
                do throws(ChimeError) { launch = .array(try LaunchCommand(parsing: text, field: "--launch").arguments.map(JSONValue.string)) } catch {
                    throw UsageError(error.message)
                }
            }
            let client = try cli.client(arguments)
            if action == "list" {
                let apps = try await client.list(.listApps)
                if arguments.has("json") { cli.printJSON(apps); return 0 }
                if apps.isEmpty { cli.write("No apps. Register one with `chime apps add BUNDLE_IDENTIFIER`.") }
                for app in apps {
                    let status = app[JSONFieldName.settings]?[JSONFieldName.authorizationStatus]?.stringValue ?? "?"
                    var line = "\(app["bundleIdentifier"]?.stringValue ?? "?")  authorization: \(status)"
                    if let words = app["launch"]?.arrayValue.compactMap(\.stringValue), let command = try? LaunchCommand(arguments: words) {
                        line += "  launch: \(command)"
                    }
                    cli.write(line)
                }
                return 0
            }
            guard arguments.positionals.count == 2 else { throw UsageError("give one bundle identifier: chime apps \(action) BUNDLE_IDENTIFIER") }
            let bundle = arguments.positionals[1]
            switch action {
            case "add", "rotate-token":
                var body: JSONObject = ["bundleIdentifier": .string(bundle)]
                if let launch { body["launch"] = launch }
                let response = action == "add"
                    ? try await client.send(.createApp, json: .object(body))
                    : try await client.send(.rotateToken, ["app": bundle])
                if arguments.has("token-only") {
                    cli.write(response.json?["token"]?.stringValue ?? "")
                } else if arguments.has("json") {
                    cli.write(JSONValue.object(["bundleIdentifier": .string(bundle), "token": response.json?["token"] ?? .null]).serialized())
                } else {
                    cli.write("\(bundle): token \(response.json?["token"]?.stringValue ?? "?")")
                    cli.write("This is the only time the token is shown; the app sends it as `Authorization: Bearer <token>`.")
                    if let words = launch?.arrayValue.compactMap(\.stringValue), let command = try? LaunchCommand(arguments: words) {
                        cli.write("Answers given while \(bundle) is not running start: \(command)")
                    }
                }
            case "set":
                guard !(launch != nil && arguments.has("no-launch")), launch != nil || arguments.has("no-launch") || apns != nil || certificate != nil else {
                    throw UsageError("say what to set: --launch 'COMMAND' or --no-launch, --apns-key FILE --key-id ID --team-id TEAM, --team-id TEAM or --no-apns, "
                                     + "or --apns-certificate FILE.pem or --no-apns-certificate")
                }
                var body: JSONObject = [:]
                if launch != nil || arguments.has("no-launch") { body["launch"] = launch ?? .null }
                if let apns { body["apns"] = apns }
                if let certificate { body["apnsCertificate"] = certificate }
                let response = try await client.send(.updateApp, ["app": bundle], json: .object(body))
                if arguments.has("json") { cli.printJSON(response); return 0 }
                if let team = apns?["teamId"]?.stringValue {
                    let key = apns?["keyId"]?.stringValue.map { " (key \($0) registered here)" } ?? ""
                    cli.write("\(bundle): an app of team \(team)\(key); provider tokens from the team's keys may push to it.")
                } else if apns != nil {
                    cli.write("\(bundle): no provider key or team; providers push with the app's token.")
                }
                if case .string? = certificate, let sha256 = response.json?["apnsCertificate"]?["sha256"]?.stringValue {
                    let until = response.json?["apnsCertificate"]?["notAfter"]?.stringValue ?? "?"
                    cli.write("\(bundle): a provider presenting the certificate \(sha256) (valid until \(until)) may push to it.")
                } else if certificate != nil {
                    cli.write("\(bundle): no provider certificate.")
                }
                if let words = launch?.arrayValue.compactMap(\.stringValue), let command = try? LaunchCommand(arguments: words) {
                    cli.write("\(bundle): answers given while it is not running start \(command)")
                } else if arguments.has("no-launch") {
                    cli.write("\(bundle): no launch command; answers wait in its outbox until it runs.")
                }
            case "remove":
                try await client.send(.removeApp, ["app": bundle])
                cli.write("Removed \(bundle) and everything it had.")
            default:
                let response = try await client.send(.answerAuthorization, ["app": bundle], json: [JSONFieldName.allow: .bool(action == "allow")])
                if arguments.has("json") { cli.printJSON(response) } else {
                    // The answer as the Apple layer reads it; the service's, never a guess of the CLI's.
                    let answer = try AuthorizationAnswer(json: response.json ?? .null)
                    let switches: [(String, KeyPath<NotificationSettings, UNNotificationSetting>)] = [
                        ("alert", \.alertSetting), ("sound", \.soundSetting), ("badge", \.badgeSetting)]
                    let enabled = switches.filter { answer.settings[keyPath: $0.1] == .enabled }.map(\.0)
                    cli.write("\(bundle): \(answer.status.name)" + (enabled.isEmpty ? "" : " (\(enabled.joined(separator: ", ")))"))
                }
            }
            return 0
        })

    // MARK: categories

    static let categories = Command(
        name: "categories", summary: "set or list an app's categories of actions",
        usage: "chime categories set FILE.json | list | example [--app BUNDLE_IDENTIFIER]",
        examples: ["chime categories example > alarm.json", "chime categories set alarm.json --app com.example.alarm",
                   "chime categories list --app com.example.alarm --json"],
        options: [.value("app", "the app (default: the only registered app)")],
        notes: ["FILE.json is a JSON array of categories, each with its actions in order (`chime categories example` prints this one):",
                ""] + categoriesExample.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 } + [
                "",
                "Action options: foreground, destructive, authenticationRequired. A text-input action has textInputButtonTitle",
                "and textInputPlaceholder. Category options: customDismissAction (the app hears of dismissals), hiddenPreviewsShowTitle,",
                "hiddenPreviewsShowSubtitle. The file replaces all of the app's categories."],
        run: { arguments, cli in
            switch arguments.positionals.first {
            case "example":
                cli.write(categoriesExample)
            case "set":
                guard arguments.positionals.count == 2 else { throw UsageError("give the categories file: chime categories set FILE.json") }
                let file = arguments.positionals[1]
                let data = try readFile(file, what: "the categories file")
                let client = try cli.client(arguments)
                let app = try await cli.app(arguments, client)
                let response = try await client.send(.setCategories, ["app": app], body: data)
                if arguments.has("json") { cli.printJSON(response) } else {
                    let count = response.json?.arrayValue.count ?? 0
                    cli.write("\(app): \(count) \(count == 1 ? "category" : "categories") set.")
                }
            case "list":
                let client = try cli.client(arguments)
                let app = try await cli.app(arguments, client)
                let categories = try await client.list(.getCategories, ["app": app])
                if arguments.has("json") { cli.printJSON(categories); return 0 }
                for category in categories {
                    let actions = category["actions"]?.arrayValue.compactMap { $0["title"]?.stringValue } ?? []
                    cli.write("\(category["identifier"]?.stringValue ?? "?"): \(actions.joined(separator: " · "))")
                }
            default:
                throw UsageError("say what to do: set FILE.json, list, or example")
            }
            return 0
        })

    /// The alarm of the tutorials as a categories file: what `chime categories example` prints.
    static let categoriesExample = """
        [
          {
            "identifier": "alarm.category",
            "actions": [
              {"identifier": "snooze", "title": "Snooze 5 Sec"},
              {"identifier": "comment", "title": "Add Comment", "options": ["foreground"],
               "textInputButtonTitle": "Add", "textInputPlaceholder": "Add Comment Here"}
            ],
            "options": ["customDismissAction"]
          }
        ]
        """

    /// A file's contents, or a failure naming the file and the system's reason.
    /// `apnsCertificate` for `PATCH /v1/apps/{app}` from `--apns-certificate FILE.pem` (the file's
    /// certificate; a private key in it is not sent) or `--no-apns-certificate` (null); nil when neither.
    static func apnsCertificate(_ arguments: ParsedArguments, action: String) throws -> JSONValue? {
        let file = arguments.value("apns-certificate")
        guard file != nil || arguments.has("no-apns-certificate") else { return nil }
        guard action == "set" else { throw UsageError("--apns-certificate and --no-apns-certificate go with `chime apps set`") }
        guard let file else { return .null }
        guard !arguments.has("no-apns-certificate") else { throw UsageError("give --apns-certificate FILE.pem or --no-apns-certificate, not both") }
        let text = String(decoding: try readFile(file, what: "the certificate file"), as: UTF8.self)
        // Only the certificate leaves this machine: a key kept in the same file stays behind.
        guard let begin = text.range(of: "-----BEGIN CERTIFICATE-----"),
              let end = text.range(of: "-----END CERTIFICATE-----", range: begin.upperBound..<text.endIndex) else {
            throw UsageError("\(file) holds no certificate (-----BEGIN CERTIFICATE-----); give the provider's certificate in PEM")
        }
        return .string(String(text[begin.lowerBound..<end.upperBound]) + "\n")
    }

    /// `apns` for `PATCH /v1/apps/{app}` from `--apns-key FILE --key-id ID --team-id TEAM`,
    /// `--team-id TEAM` or `--no-apns` (nil when none is given). The `.p8` file is read here and only
    /// its public key goes to the service: the private key never leaves this machine.
    static func apnsProvider(_ arguments: ParsedArguments, action: String) throws -> JSONValue? {
        let file = arguments.value("apns-key"), keyID = arguments.value("key-id"), team = arguments.value("team-id")
        let given = file != nil || keyID != nil || team != nil || arguments.has("no-apns")
        guard given else { return nil }
        guard action == "set" else { throw UsageError("--apns-key, --key-id, --team-id and --no-apns go with `chime apps set`") }
        if arguments.has("no-apns") {
            guard file == nil, keyID == nil, team == nil else { throw UsageError("--no-apns goes alone, without --apns-key, --key-id or --team-id") }
            return .null
        }
        guard let team else { throw UsageError("give the team id with --team-id TEAMID (the JWT's iss; 10 characters at Apple)") }
        guard APNsProvider.isIdentifier(team) else { throw UsageError("--team-id \(team) is not a team id: 1 to 64 letters and digits") }
        var object: JSONObject = ["teamId": .string(team)]
        switch (file, keyID) {
        case (nil, nil): break
        case (let file?, let keyID?):
            guard APNsProvider.isIdentifier(keyID) else { throw UsageError("--key-id \(keyID) is not a key id: 1 to 64 letters and digits") }
            let text = String(decoding: try readFile(file, what: "the APNs key file"), as: UTF8.self)
            let key: P256PrivateKey
            do { key = try P256PrivateKey(pemRepresentation: text) } catch {
                throw UsageError("\(file) is not an APNs key (a .p8 file: a P-256 private key in PEM): \(error.message)")
            }
            object["keyId"] = .string(keyID)
            object["key"] = .string(key.publicKey.pemRepresentation)
        case (nil, _?): throw UsageError("--key-id goes with --apns-key AuthKey_KEYID.p8")
        case (_?, nil):
            let guess = file.map { ($0 as NSString).lastPathComponent }.flatMap { name -> String? in
                name.hasPrefix("AuthKey_") && name.hasSuffix(".p8") ? String(name.dropFirst(8).dropLast(3)) : nil
            }
            throw UsageError("give the key's id with --key-id" + (guess.map { " (the file's name says \($0))" } ?? ""))
        }
        return .object(object)
    }

    static func readFile(_ path: String, what: String) throws -> Data {
        if let data = FileManager.default.contents(atPath: path) { return data }
        let reason: String
        let fd = Glibc.open(path, O_RDONLY)
        if fd >= 0 {
            Glibc.close(fd)
            reason = "it could not be read"
        } else {
            reason = String(cString: strerror(errno))
        }
        throw CommandError("cannot read \(what) \(path): \(reason)")
    }

    // MARK: add

    static let add = Command(
        name: "add", summary: "schedule a notification",
        usage: "chime add [--app APP] [--id ID] --title TEXT [--body TEXT] [--in 10m | --at 2026-12-01T08:30 | --every 1h | --calendar 'weekday=2 hour=8 minute=30' | --rrule RULE --start 2027-01-29T09:00 [--time-zone ZONE] [--except DATE ...] | --location LAT,LON,RADIUS] [--expires-in 10m | --expires-at 2026-12-01T09:00] [--dismiss-in 10m | --dismiss-at 2026-12-01T09:00] [--escalate every=60s,for=30m]",
        examples: ["chime add --app com.example.alarm --title Alarm --in 10s --category alarm.category",
                   "chime add --title 'Stand up' --every 1h", "chime add --title 'Weekly review' --calendar 'weekday=2 hour=8 minute=30 timeZone=Europe/Berlin'",
                   "chime add --title 'Buy milk' --location 52.52,13.40,100 --id milk",
                   "chime add --title 'Team review' --rrule 'FREQ=MONTHLY;BYDAY=-1FR' --start 2027-01-29T09:00 --time-zone Europe/Berlin",
                   "chime add --title Report --at 2026-12-01T08:30 --user-info '{\"report\": 42}'",
                   "chime add --title 'Your ride is here' --in 5m --expires-in 10m",
                   "chime add --title 'Bus 42 in 3 minutes' --dismiss-in 5m",
                   "chime add --title 'Wake up' --at 2026-12-01T07:00 --sound default --escalate every=60s,for=30m"],
        options: [
            .value("app", "the app (default: the only registered app)"), .value("id", "the request identifier (default: a new UUID)"),
            .value("title", "the title"), .value("subtitle", "the subtitle"), .value("body", "the body"),
            .value("category", "the category identifier"), .value("thread", "the thread identifier, for grouping"),
            .value("user-info", "a JSON object of extra data"), .value("sound", "default, or a sound file name"),
            .value("badge", "the app badge to set (0 clears)"),
            .value("in", "fire once after a duration: 90s, 10m, 1h30m"), .value("at", "fire once at a local date and time, 2026-12-01T08:30"),
            .value("every", "fire repeatedly at an interval of at least 60 s: 1h"),
            .value("calendar", "fire every time these components match: 'weekday=2 hour=8 minute=30 [timeZone=Europe/Berlin]'"),
            .flag("once", "with --calendar: fire at the next match only"),
            .value("rrule", "fire at each occurrence of an RFC 5545 rule: 'FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;UNTIL=20271231T230000Z'"),
            .value("start", "with --rrule: the first occurrence's wall time (DTSTART), 2027-01-29T09:00"),
            .value("time-zone", "with --rrule: the rule's time zone, Europe/Berlin (default: this machine's)"),
            .value("except", "with --rrule: a wall time that does not occur (EXDATE), 2027-03-26T09:00", repeatable: true),
            .value("location", "fire on entering a circle: LAT,LON,RADIUS (metres)"), .flag("on-exit", "with --location: fire on leaving instead"),
            .value("expires-in", "not delivered if due later than this after the add (an expired event instead): 10m"),
            .value("expires-at", "not delivered if due after this local date and time (or an ISO 8601 date with its offset): 2026-12-01T09:00"),
            .value("dismiss-in", "removed from the delivered list this long after each delivery (auto-dismiss): 10m"),
            .value("dismiss-at", "removed from the delivered list at this local date and time (or an ISO 8601 date with its offset): 2026-12-01T09:00"),
            .value("escalate", "alerted again until answered or removed: every=60s,for=30m (see chime receipt)"),
        ],
        run: { arguments, cli in
            guard arguments.positionals.isEmpty else { throw UsageError("unexpected '\(arguments.positionals[0])'; text goes in --title/--body (quote it)") }
            var request = JSONObject()
            request["identifier"] = .string(arguments.value("id") ?? UUID().uuidString)
            for (option, field) in addTextFields {
                if let value = arguments.value(option) { request[field] = .string(value) }
            }
            if let badge = arguments.value("badge") {
                guard let number = Int64(badge) else { throw UsageError("--badge is '\(badge)'; give a whole number, 0 or more") }
                request["badge"] = .integer(number)
            }
            if let info = arguments.value("user-info") {
                guard let parsed = try? JSONValue.parse(info), case .object = parsed else { throw UsageError("--user-info must be a JSON object, e.g. '{\"task\": 42}'") }
                request["userInfo"] = parsed
            }
            request["trigger"] = try trigger(arguments)
            try expiration(arguments, into: &request)
            try autoDismiss(arguments, into: &request)
            try escalation(arguments, into: &request)
            try checkedRequest(request, arguments)
            let client = try cli.client(arguments)
            let app = try await cli.app(arguments, client)
            let response = try await client.send(.addRequests, ["app": app], json: .object(request))
            if arguments.has("json") { cli.printJSON(response); return 0 }
            let added = response.json?.arrayValue.first ?? response.json
            let when = added?["nextTriggerDate"]?.stringValue.map { "fires \($0)" } ?? (request["trigger"] == .null ? "delivered now" : "waits for its trigger")
            cli.write("Added \(request["identifier"]?.stringValue ?? "?") to \(app): \(when).")
            return 0
        })

    /// `chime add`'s text options and the request fields they set.
    static let addTextFields = [("title", "title"), ("subtitle", "subtitle"), ("body", "body"), ("category", "categoryIdentifier"),
                                ("thread", "threadIdentifier"), ("sound", "sound")]

    /// Reads `request` with the service's own JSON mapping and checks it with the engine's
    /// `Validation` (the rules live there alone), so a mistake is refused before anything is sent,
    /// in the words of the flags: `--every is 30.0 with repeats; …`.
    static func checkedRequest(_ request: JSONObject, _ arguments: ParsedArguments) throws {
        do {
            // The service holds an escalation to its own limits; here only to what any service accepts.
            try Validation.validate(try NotificationRequest(json: .object(request)),
                                    escalationLimits: EscalationLimits(minimumInterval: 0, maximumDuration: Validation.maxDeadlineSeconds))
        } catch {
            guard let field = error.field else { throw UsageError(error.message) }
            let flag = flagName(field, arguments)
            var message = error.message
            if let range = message.range(of: field) {
                message.replaceSubrange(range, with: flag)
            } else if field.hasPrefix("trigger.") {
                message = "\(flag): \(message)"
            }
            throw UsageError(message)
        }
    }

    /// The `chime add` flag a request field comes from.
    static func flagName(_ field: String, _ arguments: ParsedArguments) -> String {
        let name = field.hasPrefix("content.") ? String(field.dropFirst("content.".count)) : field
        let flags = Dictionary(uniqueKeysWithValues: (addTextFields + [("id", "identifier"), ("badge", "badge"), ("user-info", "userInfo"),
                                                                       ("expires-in", "expiresIn"), ("expires-at", "expirationDate"),
                                                                       ("dismiss-in", "dismissIn"), ("dismiss-at", "dismissAt"),
                                                                       ("escalate", "escalateEvery"), ("escalate", "escalateFor")])
            .map { option, field in (field, "--" + option) })
        if let flag = flags[name.split(separator: ".").first.map(String.init) ?? name] { return flag }
        if name.hasPrefix("trigger") {
            if name.hasPrefix("trigger.start") { return "--start" }
            if name.hasPrefix("trigger.timeZone") { return "--time-zone" }
            if name.hasPrefix("trigger.exceptionDates") { return "--except" }
            if name.hasPrefix("trigger.rrule.") { return "--rrule " + name.dropFirst("trigger.rrule.".count) }
            let given = ["in", "at", "every", "calendar", "rrule", "location"].first { arguments.value($0) != nil }
            return given.map { "--\($0)" } ?? "the trigger"
        }
        return name.isEmpty ? "the notification" : name
    }

    /// The trigger JSON for `chime add`'s trigger options (at most one).
    static func trigger(_ arguments: ParsedArguments) throws -> JSONValue {
        let given = ["in", "at", "every", "calendar", "rrule", "location"].filter { arguments.value($0) != nil }
        guard given.count <= 1 else { throw UsageError("give one trigger, not \(given.map { "--\($0)" }.joined(separator: " and "))") }
        if arguments.value("rrule") == nil, let stray = ["start", "time-zone", "except"].first(where: { arguments.value($0) != nil }) {
            throw UsageError("--\(stray) goes with --rrule RULE")
        }
        if let rule = arguments.value("rrule") {
            guard let start = arguments.value("start") else {
                throw UsageError("--rrule needs --start: the first occurrence's wall time, e.g. --start 2027-01-29T09:00")
            }
            var trigger: JSONObject = ["type": "recurrence", "rrule": .string(rule), "start": .string(start),
                                       "timeZone": .string(arguments.value("time-zone") ?? TimeZone.current.identifier)]
            let exceptions = arguments.all("except")
            if !exceptions.isEmpty { trigger["exceptionDates"] = .array(exceptions.map(JSONValue.string)) }
            return .object(trigger)
        }
        if let text = arguments.value("in") {
            let seconds = try parseDuration(text)
            return ["type": "timeInterval", "timeInterval": .number(seconds), "repeats": false]
        }
        if let text = arguments.value("every") {
            let seconds = try parseDuration(text)
            return ["type": "timeInterval", "timeInterval": .number(seconds), "repeats": true]
        }
        if let text = arguments.value("at") {
            guard let date = localDate(text) else { throw UsageError("--at is '\(text)'; write a local date and time like 2026-12-01T08:30") }
            let parts = Calendar.current.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            var components = JSONObject()
            for (name, value) in [("year", parts.year), ("month", parts.month), ("day", parts.day), ("hour", parts.hour), ("minute", parts.minute), ("second", parts.second)] {
                if let value { components[name] = .integer(Int64(value)) }
            }
            components["timeZone"] = .string(TimeZone.current.identifier)
            return ["type": "calendar", "dateComponents": .object(components), "repeats": false]
        }
        if let text = arguments.value("calendar") {
            var components = JSONObject()
            for pair in text.split(whereSeparator: { $0 == " " || $0 == "," }) {
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { throw UsageError("--calendar: '\(pair)' is not NAME=VALUE; e.g. 'weekday=2 hour=8 minute=30'") }
                if parts[0] == "timeZone" { components["timeZone"] = .string(parts[1]); continue }
                if parts[0] == "weekday" {
                    components["weekday"] = .integer(Int64(try weekday(parts[1])))
                    continue
                }
                guard let number = Int64(parts[1]) else { throw UsageError("--calendar: \(parts[0]) is '\(parts[1])'; give a whole number") }
                components[parts[0]] = .integer(number)
            }
            return ["type": "calendar", "dateComponents": .object(components), "repeats": .bool(!arguments.has("once"))]
        }
        if let text = arguments.value("location") {
            let numbers = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard numbers.count == 3, let latitude = numbers[0], let longitude = numbers[1], let radius = numbers[2] else {
                throw UsageError("--location is '\(text)'; write LAT,LON,RADIUS, e.g. 52.52,13.40,100")
            }
            let exit = arguments.has("on-exit")
            let region: JSONValue = ["identifier": .string(arguments.value("id") ?? "region"), "latitude": .number(latitude),
                                     "longitude": .number(longitude), "radius": .number(radius),
                                     "notifyOnEntry": .bool(!exit), "notifyOnExit": .bool(exit)]
            return ["type": "location", "region": region, "repeats": false]
        }
        return .null
    }

    /// A local date and time as people write it (2026-12-01T08:30, with seconds, with a space, or a
    /// day alone), in this machine's time zone.
    static func localDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        for format in ["yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd HH:mm", "yyyy-MM-dd"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }

    /// `--expires-in` (a duration) or `--expires-at` (a local date and time, or an ISO 8601 date
    /// with its offset) as the request's `expiresIn` or `expirationDate`.
    static func expiration(_ arguments: ParsedArguments, into request: inout JSONObject) throws {
        try deadline(arguments, flags: ("expires-in", "expires-at"), fields: ("expiresIn", "expirationDate"), into: &request)
    }

    /// `--dismiss-in` (a duration after each delivery) or `--dismiss-at` (as `--expires-at`) as
    /// the request's `dismissIn` or `dismissAt`.
    static func autoDismiss(_ arguments: ParsedArguments, into request: inout JSONObject) throws {
        try deadline(arguments, flags: ("dismiss-in", "dismiss-at"), fields: ("dismissIn", "dismissAt"), into: &request)
    }

    /// `--escalate every=60s,for=30m` as the request's `escalateEvery` and `escalateFor` (seconds).
    static func escalation(_ arguments: ParsedArguments, into request: inout JSONObject) throws {
        guard let text = arguments.value("escalate") else { return }
        let usage = "write --escalate every=60s,for=30m (how often it is alerted again, and for how long after the delivery)"
        var given: [String: TimeInterval] = [:]
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, ["every", "for"].contains(pair[0]), given[pair[0]] == nil else {
                throw UsageError("--escalate is '\(text)': '\(part)' is not every=DURATION or for=DURATION; \(usage)")
            }
            do { given[pair[0]] = try parseDuration(pair[1]) } catch { throw UsageError("--escalate \(pair[0]): \(error.message)") }
        }
        guard let every = given["every"], let duration = given["for"] else {
            throw UsageError("--escalate is '\(text)': it needs both every= and for=; \(usage)")
        }
        request["escalateEvery"] = .number(every)
        request["escalateFor"] = .number(duration)
    }

    private static func deadline(_ arguments: ParsedArguments, flags: (duration: String, date: String), fields: (duration: String, date: String),
                                 into request: inout JSONObject) throws {
        switch (arguments.value(flags.duration), arguments.value(flags.date)) {
        case (nil, nil): return
        case (_?, _?): throw UsageError("give --\(flags.duration) or --\(flags.date), not both")
        case (let text?, nil):
            do { request[fields.duration] = .number(try parseDuration(text)) } catch { throw UsageError("--\(flags.duration): \(error.message)") }
        case (nil, let text?):
            guard let date = JSONMapping.parseDate(text) ?? localDate(text) else {
                throw UsageError("--\(flags.date) is '\(text)'; write a local date and time like 2026-12-01T09:00, or 2026-12-01T09:00:00+01:00")
            }
            request[fields.date] = JSONMapping.json(date)
        }
    }

    /// A weekday as Apple numbers them (1 = Sunday … 7 = Saturday), from a number or an English name.
    package static func weekday(_ text: String) throws(UsageError) -> Int {
        let names = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
        if let number = Int(text) {
            guard (1...7).contains(number) else {
                throw UsageError("--calendar: weekday=\(text); weekdays are 1 to 7, with 1 = Sunday, 2 = Monday … 7 = Saturday (or write mon, tue, …)")
            }
            return number
        }
        let lower = text.lowercased()
        if lower.count >= 3, let index = names.firstIndex(where: { $0.hasPrefix(lower) }) { return index + 1 }
        throw UsageError("--calendar: weekday=\(text) is not a weekday; write a name (mon, tuesday, …) or 1 to 7, with 1 = Sunday")
    }

    // MARK: list, remove, delivered

    static let list = Command(
        name: "list", summary: "list an app's pending requests with their next fire dates",
        usage: "chime list [--app APP] [--limit N] [--next N] [--json]",
        examples: ["chime list --app com.example.alarm", "chime list --json", "chime list --limit 20", "chime list --json --next 5"],
        options: [.value("app", "the app (default: the only registered app)"), .value("limit", "show at most N (default: all, read a page at a time)"),
                  .value("next", "list each request's next N fire dates (nextTriggerDates; 1 to \(FireDates.maximumUpcoming))")],
        run: { arguments, cli in
            var query = ""
            if let text = arguments.value("next") {
                guard let count = Int(text), (1...FireDates.maximumUpcoming).contains(count) else {
                    throw UsageError("--next is '\(text)'; give how many upcoming dates to list, 1 to \(FireDates.maximumUpcoming)")
                }
                query = CLI.query([("next", String(count))])
            }
            let client = try cli.client(arguments)
            let app = try await cli.app(arguments, client)
            let items = try await client.list(.listRequests, ["app": app], query: query, limit: try cli.listLimit(arguments))
            if arguments.has("json") { cli.printJSON(items); return 0 }
            if items.isEmpty { cli.write("\(app): nothing pending.") }
            for item in items {
                var trigger = item["trigger"]?["type"]?.stringValue ?? "none"
                if trigger == "recurrence", let rule = item["trigger"]?["rrule"]?.stringValue { trigger = rule }
                let expires = item["expirationDate"]?.stringValue.map { "  (expires \($0))" } ?? ""
                let dismiss = item["dismissIn"]?.numberValue.map { "  (dismissed \(Int($0)) s after delivery)" }
                    ?? item["dismissAt"]?.stringValue.map { "  (dismissed at \($0))" } ?? ""
                cli.write("\(item["identifier"]?.stringValue ?? "?")  \(item["nextTriggerDate"]?.stringValue ?? "-")  \(trigger)  \(item["title"]?.stringValue ?? "")\(expires)\(dismiss)\(escalates(item))")
                for date in item["nextTriggerDates"]?.arrayValue.dropFirst() ?? [] { cli.write("    then \(date.stringValue ?? "?")") }
            }
            return 0
        })

    static let remove = Command(
        name: "remove", summary: "remove pending requests (by --id, or --all)",
        usage: "chime remove [--app APP] (--id ID ... | --all)", examples: ["chime remove --id Alarm", "chime remove --all --app com.example.alarm"],
        options: [.value("app", "the app (default: the only registered app)"), .value("id", "a request identifier (repeatable)", repeatable: true),
                  .flag("all", "remove every pending request of the app")],
        run: { arguments, cli in
            let ids = arguments.all("id") + arguments.positionals
            guard !ids.isEmpty || arguments.has("all") else { throw UsageError("say which: --id ID (repeatable) or --all") }
            guard ids.isEmpty || !arguments.has("all") else { throw UsageError("give --id or --all, not both") }
            let client = try cli.client(arguments)
            let app = try await cli.app(arguments, client)
            // The service takes at most 128 query arguments a call: remove in batches of 100.
            var removed: [String] = []
            for start in stride(from: 0, to: max(ids.count, 1), by: 100) {
                let batch = Array(ids[start..<min(ids.count, start + 100)])
                let response = try await client.send(.removeRequests, ["app": app], query: query(batch.map { ("identifier", $0) }))
                removed += response.json?["removed"]?.arrayValue.compactMap(\.stringValue) ?? []
            }
            if arguments.has("json") { cli.printJSON(["removed": .array(removed.map(JSONValue.string))]); return 0 }
            cli.write(removed.isEmpty ? "Nothing removed." : "Removed \(removed.joined(separator: ", ")).")
            return 0
        })

    static let delivered = Command(
        name: "delivered", summary: "list an app's delivered notifications, newest first",
        usage: "chime delivered [--app APP] [--thread THREAD] [--limit N] [--json]",
        examples: ["chime delivered", "chime delivered --thread chat-42 --json", "chime delivered --limit 10"],
        options: [.value("app", "the app (default: the only registered app)"), .value("thread", "only this thread"),
                  .value("limit", "show at most N, newest first (default: all, read a page at a time)")],
        run: { arguments, cli in
            let client = try cli.client(arguments)
            let app = try await cli.app(arguments, client)
            let thread = query(arguments.value("thread").map { [("thread", $0)] } ?? [])
            let items = try await client.list(.listNotifications, ["app": app], query: thread, limit: try cli.listLimit(arguments))
            if arguments.has("json") { cli.printJSON(items); return 0 }
            if items.isEmpty { cli.write("\(app): nothing delivered.") }
            for item in items {
                let actions = item["actions"]?.arrayValue.compactMap { $0["identifier"]?.stringValue } ?? []
                let dismiss = item["dismissAt"]?.stringValue.map { "  (dismissed at \($0))" } ?? ""
                cli.write("\(item["identifier"]?.stringValue ?? "?")  \(item["date"]?.stringValue ?? "")  \(headline(item))\(actions.isEmpty ? "" : "  actions: " + actions.joined(separator: ", "))\(dismiss)\(escalates(item))")
            }
            return 0
        })

    /// "  (alerted again every 60 s for 1800 s)" for an item that escalates, else "".
    static func escalates(_ item: JSONValue) -> String {
        guard let every = item["escalateEvery"]?.numberValue, let duration = item["escalateFor"]?.numberValue else { return "" }
        return "  (alerted again every \(Validation.seconds(every)) s for \(Validation.seconds(duration)) s)"
    }

    static let receipt = Command(
        name: "receipt", summary: "what became of an escalating notification: alerts so far, whether, when, how and where it was answered",
        usage: "chime receipt [--app APP] NOTIFICATION_ID [--json]",
        examples: ["chime receipt wake", "chime receipt wake --json"],
        options: [.value("app", "the app (default: the only registered app)")],
        run: { arguments, cli in
            guard arguments.positionals.count == 1 else { throw UsageError("give the notification's identifier") }
            let identifier = arguments.positionals[0]
            let client = try cli.client(arguments)
            let app = try await cli.app(arguments, client)
            let response = try await client.send(.receipt, ["app": app, "identifier": identifier])
            guard let answer = response.json else { throw CommandError("the service answered without a receipt") }
            if arguments.has("json") { cli.printJSON(answer); return 0 }
            let receipt: EscalationReceipt
            do throws(ChimeError) { receipt = try EscalationReceipt(json: answer) } catch {
                throw CommandError("the service's receipt is not readable: \(error.message)")
            }
            let text = { (date: Date) in JSONMapping.json(date).stringValue ?? "?" }
            let alerts = receipt.alerts
            let state: String
            if receipt.acknowledged {
                let action = receipt.actionIdentifier ?? "?"
                let how = action == UNNotificationDefaultActionIdentifier ? "opened" : action == UNNotificationDismissActionIdentifier ? "dismissed" : "answered with \(action)"
                state = "\(how) at \(receipt.acknowledgedAt.map(text) ?? "?")" + (receipt.surface.map { " (\($0))" } ?? "")
            } else if let removed = receipt.removedAt {
                state = "removed unanswered at \(text(removed))"
            } else if receipt.expired {
                state = "not answered: its escalation ended at \(text(receipt.endsAt))"
            } else {
                state = "not answered yet; next alert \(receipt.nextAlertAt.map(text) ?? "?")"
            }
            cli.write("\(identifier): \(state); alerted \(alerts) time\(alerts == 1 ? "" : "s"), last at \(text(receipt.lastAlertedAt)).")
            return 0
        })

    // MARK: respond, push

    static let respond = Command(
        name: "respond", summary: "answer a delivered notification as the user (an action, a reply, open or dismiss)",
        usage: "chime respond [--app APP] NOTIFICATION_ID ACTION [--text TEXT]",
        examples: ["chime respond Alarm snooze", "chime respond Alarm comment --text 'Call me'", "chime respond Alarm open", "chime respond Alarm dismiss"],
        options: [.value("app", "the app (default: the only registered app)"), .value("text", "the typed reply, for a text-input action")],
        run: { arguments, cli in
            guard arguments.positionals.count == 2 else { throw UsageError("give the notification's identifier and the action") }
            let (identifier, given) = (arguments.positionals[0], arguments.positionals[1])
            let action = given == "open" ? UNNotificationDefaultActionIdentifier : given == "dismiss" ? UNNotificationDismissActionIdentifier : given
            var body: JSONObject = ["actionIdentifier": .string(action), "surface": "cli"]
            if let text = arguments.value("text") { body["userText"] = .string(text) }
            let client = try cli.client(arguments)
            let app = try await cli.app(arguments, client)
            let response = try await client.send(.respond, ["app": app, "identifier": identifier], json: .object(body))
            if arguments.has("json") { cli.printJSON(response); return 0 }
            cli.write(response.status == 204 || response.body.isEmpty || response.json?["response"] == .null
                      ? "Answered \(identifier) with \(given)."
                      : "Answered \(identifier) with \(given); the app finds it in its outbox.")
            return 0
        })

    static let push = Command(
        name: "push", summary: "send a remote notification from an APNs payload or an iOS Simulator .apns file",
        usage: "chime push FILE.apns [--app APP]",
        examples: ["chime push drink.apns", "chime push payload.json --app com.example.drinks"],
        options: [.value("app", "the app (default: the file's \"Simulator Target Bundle\", else the only registered app)"),
                  .value("collapse-id", "replace the delivered notification with this identifier")],
        run: { arguments, cli in
            guard arguments.positionals.count == 1 else { throw UsageError("give one payload file") }
            let file = arguments.positionals[0]
            let data = try readFile(file, what: "the payload file")
            let decoded: APNsPayload
            do { decoded = try APNsPayload.decode(data) } catch let error as APNsPayloadError {
                throw CommandError("\(file): \(error.reason): \(error.message)\(error.field.map { " (field: \($0))" } ?? "")")
            }
            let client = try cli.client(arguments)
            var app = arguments.value("app") ?? decoded.simulatorTargetBundle
            if app == nil { app = try await cli.app(arguments, client) }
            guard let app else { throw UsageError("give --app") }
            let token = try await client.send(.deviceToken, ["app": app]).json?["deviceToken"]?.stringValue ?? ""
            var headers = ["apns-topic": app, "apns-push-type": decoded.isContentAvailable ? "background" : "alert"]
            if let collapse = arguments.value("collapse-id") { headers["apns-collapse-id"] = collapse }
            let response = try await client.send(.push, ["token": token], body: data, headers: headers)
            cli.write("Pushed to \(app): apns-id \(response.headers["apns-id"] ?? "?").")
            return 0
        })

    static let deviceToken = Command(
        name: "device-token", summary: "an app's device token for APNs providers; register or unregister it as registerForRemoteNotifications does",
        usage: "chime device-token [register|unregister] [--app APP]",
        examples: ["chime device-token --app com.example.chat", "chime device-token unregister --app com.example.chat",
                   "chime device-token register --app com.example.chat --json"],
        options: [.value("app", "the app (default: the only registered app)")],
        notes: ["After unregister, a push to the token is answered 410 Unregistered with the time of unregistering;",
                "register takes pushes again, with the same token."],
        run: { arguments, cli in
            let routes: [String: APIRoute] = ["register": .registerDevice, "unregister": .unregisterDevice]
            let action = arguments.positionals.first
            guard arguments.positionals.count <= 1, action.map({ routes[$0] != nil }) ?? true else {
                throw UsageError("say register or unregister, or nothing to show the token")
            }
            let client = try cli.client(arguments)
            let app = try await cli.app(arguments, client)
            let response = try await client.send(action.flatMap { routes[$0] } ?? .deviceToken, ["app": app])
            if arguments.has("json") { cli.printJSON(response); return 0 }
            let token = response.json?["deviceToken"]?.stringValue ?? "?"
            if let since = response.json?["unregistered"]?.stringValue {
                cli.write("\(app): device token \(token), unregistered since \(since): pushes to it get 410 Unregistered.")
            } else {
                cli.write("\(app): device token \(token), registered.")
            }
            return 0
        })

    // MARK: events, status

    static let events = Command(
        name: "events", summary: "follow the live events of one app or all: delivered, response, removed, settings, silentPush, scheduled, categories, app",
        usage: "chime events [--app APP] [--json]", examples: ["chime events", "chime events --app com.example.alarm --json"],
        options: [.value("app", "only this app (default: every app; scheduled, categories and app come on the every-app stream only)")],
        run: { arguments, cli in
            let client = try cli.client(arguments)
            let (stream, parameters) = arguments.value("app").map { (APIRoute.appEvents, ["app": $0]) } ?? (.allEvents, [:])
            let json = arguments.has("json")
            try await client.follow(stream, parameters) { kind, id, data in
                if json { cli.write(data); return }
                guard let event = try? JSONValue.parse(data) else { return }
                cli.write(describeEvent(kind: kind, id: id, event))
            }
            return 0
        })

    /// One line for an event: its id (`-` for hints that are not logged), kind, app and what it is about.
    package static func describeEvent(kind: String, id: String?, _ event: JSONValue) -> String {
        let app = event["app"]?.stringValue ?? ""
        var words: [String]
        switch kind {
        case "delivered", "silentPush":
            let notification = event["notification"]
            words = [notification?["identifier"]?.stringValue ?? "?", quoted(headline(notification))]
            if let actions = notification?["actions"]?.arrayValue.compactMap({ $0["identifier"]?.stringValue }), !actions.isEmpty {
                words.append("actions: " + actions.joined(separator: ", "))
            }
        case "response":
            let response = event["response"]
            let action = response?["actionIdentifier"]?.stringValue ?? "?"
            words = [response?["notification"]?["identifier"]?.stringValue ?? "?", "→", humanAction(action)]
            if let text = response?["userText"]?.stringValue { words.append(quoted(text)) }
        case "removed":
            let identifiers = event["identifiers"]?.arrayValue.compactMap(\.stringValue) ?? []
            words = ["\(event["scope"]?.stringValue ?? "?"):", identifiers.isEmpty ? "(none)" : identifiers.joined(separator: ", ")]
        case "scheduled":
            let identifiers = event["identifiers"]?.arrayValue.compactMap(\.stringValue) ?? []
            words = [identifiers.isEmpty ? "(more than 100 requests)" : identifiers.joined(separator: ", ")]
        case "settings":
            words = ["authorization: \(event[JSONFieldName.settings]?[JSONFieldName.authorizationStatus]?.stringValue ?? "?")"]
        case "categories":
            let names = event["categories"]?.arrayValue.compactMap { $0["identifier"]?.stringValue } ?? []
            words = [names.isEmpty ? "(none)" : names.joined(separator: ", ")]
        case "app":
            words = [event["change"]?.stringValue ?? "updated"]
        default:
            words = []
        }
        return ([id ?? "-", kind, app] + words).joined(separator: "  ")
    }

    /// What a notification says first: its title, else its body (an APNs alert given as a string is
    /// the body), else its subtitle.
    static func headline(_ notification: JSONValue?) -> String {
        for field in ["title", "body", "subtitle"] {
            if let text = notification?[field]?.stringValue, !text.isEmpty { return text }
        }
        return ""
    }

    static func quoted(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\n", with: " ") + "\"" }

    /// Apple's system action identifiers as the CLI spells them (`chime respond … open|dismiss`).
    static func humanAction(_ action: String) -> String {
        switch action {
        case UNNotificationDefaultActionIdentifier: "open"
        case UNNotificationDismissActionIdentifier: "dismiss"
        default: action
        }
    }

    static let version = Command(
        name: "version", summary: "print chime's version and the commit it was built from",
        usage: "chime version (or chime --version)", examples: ["chime version", "chime --version"], options: [],
        run: { arguments, cli in
            if arguments.has("json") {
                cli.write(JSONValue.object(["version": .string(ChimeVersion.number), "commit": .string(ChimeBuildInfo.commit)]).serialized())
            } else {
                cli.write(CLI.versionLine)
            }
            return 0
        })

    static let status = Command(
        name: "status", summary: "say whether the service runs, where, and what it holds",
        usage: "chime status [--data DIR] [--json]", examples: ["chime status", "chime status --json"],
        options: [],
        run: { arguments, cli in
            let client = try cli.client(arguments)
            let health = try await client.send(.health, allowing: [503])
            let apps = try await client.list(.listApps)
            if arguments.has("json") {
                cli.write(JSONValue.object(["url": .string(client.location), "healthy": .bool(health.status == 200),
                                            "apps": .array(apps.compactMap { $0["bundleIdentifier"] })]).serialized(pretty: true))
                return health.status == 200 ? 0 : 1
            }
            cli.write("Chime service at \(client.location): \(health.status == 200 ? "running" : "unhealthy (HTTP \(health.status))")")
            cli.write("Apps: \(apps.isEmpty ? "none" : apps.compactMap { $0["bundleIdentifier"]?.stringValue }.joined(separator: ", "))")
            return health.status == 200 ? 0 : 1
        })
}
