import ChimeCore
import ChimeCrypto
import ChimeHTTP
import ChimeServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension CLI {
    // MARK: serve

    /// `chime serve`'s flags (also the settings of its `--config` file).
    static let serveOptions: [OptionSpec] = [
        .value("listen", "HOST:PORT or unix:/path (default 127.0.0.1:7878)"),
        .value(
            "database",
            "postgresql://USER@HOST:PORT/DB: a PostgreSQL database shared by several nodes (default: SQLite in the data directory; also CHIME_DATABASE_URL)"
        ),
        .value("tls-cert", "PEM certificate: serve HTTPS"), .value("tls-key", "PEM private key for --tls-cert"),
        .flag("auto-allow", "answer every app's authorization request with yes"),
        .value("log-format", "text (default) or json"),
        .value("durability", "normal (default: survives a killed process) or full (survives power loss)"),
        .value("launch-timeout", "seconds a process started to hand an app its answers may run (default 30)"),
        .value(
            "desktop",
            "desktop pop-ups: auto (default: when the session bus has a notification server), on (fail at start without one) or off"
        ),
        .value(
            "config", "a TOML or JSON file with any of these settings (flags given here win): listen = \"0.0.0.0:7878\""
        ),
        .value("max-connections", "connections served at once (default 1024); slow clients give up their slots first"),
        .value(
            "max-connections-per-address",
            "connections served at once from one client address (default 3/4 of --max-connections)"),
        .value(
            "public-url",
            "the https://NAME the service is reached at through a name (a reverse proxy): that name is answered in Host, besides IP addresses and localhost (others get 421)"
        ),
        .value(
            "max-streams-per-app", "event streams one app may hold open with its own token (default 16; past it 429)"),
        .value(
            "max-streams-per-session", "event streams one web center sign-in may hold open (default 16; past it 429)"),
        .value(
            "app-max-pending",
            "pending requests one app may have (default 1000000; 0: no bound); past it its adds get 507"),
        .value(
            "app-max-delivered",
            "delivered notifications one app keeps (default 10000; 0: no bound); past it its oldest are removed"),
        .value(
            "app-max-mb",
            "megabytes of pending and delivered notifications one app may keep (default 1024; 0: no bound)"),
        .value("event-log-max-events", "events kept for resumed streams (default 100000)"),
        .value("event-log-max-mb", "megabytes of events kept (default 64)"),
        .value("event-log-max-days", "days an event is kept (default 7), and an ended escalation's receipt"),
        .value(
            "escalation-min-every",
            "the shortest time between an escalating notification's alerts a request may ask (default 10s)"),
        .value("escalation-max-for", "the longest an escalation may last (default 24h)"),
        .value(
            "web-push-contact",
            "the contact push services see in every push's VAPID token: mailto:you@example.org or https://… (default: --public-url when https, else mailto:chime@HOSTNAME)"
        ),
        .value(
            "web-push-endpoints",
            "push services Web Push may go to besides the public ones (FCM, Mozilla, Apple, Microsoft): URL prefixes, comma-separated, as https://up.example.org/ (a self-hosted UnifiedPush distributor); private and loopback addresses only when listed here"
        ),
    ]

    static let serve = Command(
        name: "serve", summary: "run the notification center as a service (HTTP API, APNs endpoint, events)",
        usage:
            "chime serve [--config FILE] [--data DIR] [--listen HOST:PORT | --listen unix:/path] [--tls-cert FILE --tls-key FILE] [--auto-allow] [--desktop auto|on|off] [--database URL]",
        examples: [
            "chime serve", "chime serve --listen 127.0.0.1:8080 --auto-allow",
            "chime serve --listen unix:/run/chime.sock",
            "chime serve --log-format json --durability full", "chime serve --desktop off",
            "chime serve --config /etc/chime/chime.toml",
            "chime serve --listen 0.0.0.0:7878 --database postgresql://chime@db.internal:5432/chime?sslmode=require",
        ],
        options: serveOptions,
        run: { given, _ in
            guard given.positionals.isEmpty else {
                throw UsageError("serve takes no arguments; got \(given.positionals.joined(separator: " "))")
            }
            var arguments = given
            if let path = given.value("config") {
                arguments = try ConfigFile(path: path).merged(into: given, options: serveOptions + CLI.common)
            }
            var configuration = ChimeService.Configuration()
            if let data = arguments.value("data") { configuration.dataDirectory = data }
            if let listen = arguments.value("listen") {
                do { configuration.listen = try ListenAddress(parsing: listen) } catch {
                    throw UsageError("--listen: \(error)")
                }
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
                guard let seconds = Int(text), seconds > 0 else {
                    throw UsageError("--launch-timeout is '\(text)'; give a whole number of seconds, more than 0")
                }
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
                    throw UsageError(
                        "--public-url is '\(text)'; give the address the service is reached at, such as https://chime.example.org"
                    )
                }
                configuration.publicURL = text
            }
            if let limit = try positiveInteger(arguments, "max-streams-per-app") {
                configuration.streamLimits.perApp = limit
            }
            if let limit = try positiveInteger(arguments, "max-streams-per-session") {
                configuration.streamLimits.perSession = limit
            }
            if let bound = try quotaBound(arguments, "app-max-pending") { configuration.quota.pending = bound }
            if let bound = try quotaBound(arguments, "app-max-delivered") { configuration.quota.delivered = bound }
            if let megabytes = try quotaBound(arguments, "app-max-mb") {
                configuration.quota.bytes = megabytes.map { $0 << 20 }
            }
            if let count = try positiveInteger(arguments, "event-log-max-events") {
                configuration.eventRetention.count = count
            }
            if let megabytes = try positiveInteger(arguments, "event-log-max-mb") {
                configuration.eventRetention.bytes = megabytes << 20
            }
            if let days = try positiveInteger(arguments, "event-log-max-days") {
                configuration.eventRetention.age = TimeInterval(days) * 86_400
            }
            if let text = arguments.value("escalation-min-every") {
                do throws(UsageError) { configuration.escalationLimits.minimumInterval = try parseDuration(text) } catch
                { throw UsageError("--escalation-min-every: \(error.message)") }
            }
            if let text = arguments.value("escalation-max-for") {
                do throws(UsageError) { configuration.escalationLimits.maximumDuration = try parseDuration(text) } catch
                { throw UsageError("--escalation-max-for: \(error.message)") }
            }
            guard configuration.escalationLimits.minimumInterval > 0,
                configuration.escalationLimits.maximumDuration > configuration.escalationLimits.minimumInterval
            else {
                throw UsageError(
                    "--escalation-min-every must be more than 0 and less than --escalation-max-for (defaults 10s and 24h)"
                )
            }
            if let text = arguments.value("web-push-endpoints") {
                do throws(ChimeError) {
                    configuration.webPushEndpoints = try WebPushEndpoints(
                        listed: text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
                } catch { throw UsageError(error.message) }
            }
            if let contact = arguments.value("web-push-contact") {
                guard (contact.hasPrefix("mailto:") || contact.hasPrefix("https://")) && contact.count > 8 else {
                    throw UsageError(
                        "--web-push-contact is '\(contact.prefix(80))'; give mailto:you@example.org or an https:// URL (RFC 8292: how a push service reaches you)"
                    )
                }
                configuration.webPushContact = contact
            }
            configuration.database = try databaseURL(arguments, environment: ProcessInfo.processInfo.environment)
            if configuration.database != nil, arguments.value("durability") != nil {
                throw UsageError(
                    "--durability is for the SQLite store; with --database, durability is the PostgreSQL server's (synchronous_commit)"
                )
            }
            try await ChimeService.run(configuration: configuration)
            return 0
        })

    /// `--name N`, a whole number of at least 1, or nil when not given.
    static func positiveInteger(_ arguments: ParsedArguments, _ name: String) throws -> Int? {
        guard let text = arguments.value(name) else { return nil }
        guard let number = Int(text), number >= 1 else {
            throw UsageError("--\(name) is '\(text)'; give a whole number of at least 1")
        }
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
            throw UsageError(
                "\(source) is '\(given.prefix(60))'; give a PostgreSQL URL, postgresql://USER@HOST:PORT/DB (libpq's parameters such as ?sslmode=require may follow)"
            )
        }
        return given
    }
}
