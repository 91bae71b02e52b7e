import ChimeCore
import ChimeCrypto
import ChimeHTTP
import ChimeServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension CLI {
    // MARK: apps

    static let apps = Command(
        name: "apps",
        summary: "register apps, answer their permission requests, rotate their tokens, set their launch commands",
        usage:
            "chime apps add|list|set|remove|rotate-token|allow|deny [BUNDLE_IDENTIFIER] [--launch 'COMMAND' | --no-launch] "
            + "[--apns-key AuthKey_KEYID.p8 --key-id KEYID --team-id TEAMID | --team-id TEAMID | --no-apns] [--apns-certificate FILE.pem | --no-apns-certificate]",
        examples: [
            "chime apps add com.example.alarm", "chime apps add com.example.alarm --json", "chime apps list",
            "chime apps add com.example.organizer --launch '/opt/organizer/bin/organizer'",
            "chime apps set com.example.organizer --launch 'organizer --tasks \"/srv/my tasks.json\"'",
            "chime apps set com.example.organizer --no-launch",
            "chime apps set com.example.alarm --apns-key AuthKey_ABCDE12345.p8 --key-id ABCDE12345 --team-id TEAM123456",
            "chime apps set com.example.organizer --team-id TEAM123456",
            "chime apps set com.example.alarm --apns-certificate push-cert.pem",
            "chime apps allow com.example.alarm", "chime apps rotate-token com.example.alarm",
            "chime apps remove com.example.alarm",
        ],
        options: [
            .value(
                "launch",
                "with add or set: the command the service starts to hand the app an answer while it is not running (split into words like a shell, but run without one)"
            ),
            .flag("no-launch", "with set: no command; answers wait until the app runs"),
            .value(
                "apns-key",
                "with set: the team's APNs key (the .p8 file from Apple); only its public key is sent to the service and kept"
            ),
            .value("key-id", "with --apns-key: the key's id (the JWT's kid)"),
            .value(
                "team-id",
                "with set: the team id (the JWT's iss); alone, it makes the app one of the team's, so its keys may push to it"
            ),
            .flag("no-apns", "with set: no provider key or team; providers push with the app's token"),
            .value(
                "apns-certificate",
                "with set: the provider's TLS client certificate (PEM); a provider connecting with it may push to the app (only its fingerprints and dates are sent and kept)"
            ),
            .flag("no-apns-certificate", "with set: no provider certificate"),
            .flag(
                "token-only",
                "with add or rotate-token: print only the token, for scripts: TOKEN=$(chime apps add APP --token-only)"),
        ],
        run: { arguments, cli in
            typealias Field = JSONFieldName.App
            guard let action = arguments.positionals.first else {
                throw UsageError("say what to do: add, list, set, remove, rotate-token, allow or deny")
            }
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
                do throws(ChimeError) {
                    launch = .array(try LaunchCommand(parsing: text, field: "--launch").arguments.map(JSONValue.string))
                } catch {
                    throw UsageError(error.message)
                }
            }
            let client = try cli.client(arguments)
            if action == "list" {
                let apps = try await client.list(.listApps)
                if arguments.has("json") {
                    cli.printJSON(apps)
                    return 0
                }
                if apps.isEmpty { cli.write("No apps. Register one with `chime apps add BUNDLE_IDENTIFIER`.") }
                for app in try appRecords(apps) {
                    let launch = app.launchCommand.map { "  launch: \($0)" } ?? ""
                    cli.write(
                        "\(app.bundleIdentifier)  authorization: \(app.settings.authorizationStatus.name)\(launch)")
                }
                return 0
            }
            guard arguments.positionals.count == 2 else {
                throw UsageError("give one bundle identifier: chime apps \(action) BUNDLE_IDENTIFIER")
            }
            let bundle = arguments.positionals[1]
            switch action {
            case "add", "rotate-token":
                var body: JSONObject = [Field.bundleIdentifier: .string(bundle)]
                if let launch { body[Field.launch] = launch }
                let response =
                    action == "add"
                    ? try await client.send(.createApp, json: .object(body))
                    : try await client.send(.rotateToken, ["app": bundle])
                if arguments.has("token-only") {
                    cli.write(response.json?[Field.token]?.stringValue ?? "")
                } else if arguments.has("json") {
                    cli.write(
                        JSONValue.object([
                            Field.bundleIdentifier: .string(bundle), Field.token: response.json?[Field.token] ?? .null,
                        ]).serialized())
                } else {
                    cli.write("\(bundle): token \(response.json?[Field.token]?.stringValue ?? "?")")
                    cli.write(
                        "This is the only time the token is shown; the app sends it as `Authorization: Bearer <token>`."
                    )
                    if let words = launch?.arrayValue.compactMap(\.stringValue),
                        let command = try? LaunchCommand(arguments: words)
                    {
                        cli.write("Answers given while \(bundle) is not running start: \(command)")
                    }
                }
            case "set":
                guard !(launch != nil && arguments.has("no-launch")),
                    launch != nil || arguments.has("no-launch") || apns != nil || certificate != nil
                else {
                    throw UsageError(
                        "say what to set: --launch 'COMMAND' or --no-launch, --apns-key FILE --key-id ID --team-id TEAM, --team-id TEAM or --no-apns, "
                            + "or --apns-certificate FILE.pem or --no-apns-certificate")
                }
                var body: JSONObject = [:]
                if launch != nil || arguments.has("no-launch") { body[Field.launch] = launch ?? .null }
                if let apns { body[Field.apns] = apns }
                if let certificate { body[Field.apnsCertificate] = certificate }
                let response = try await client.send(.updateApp, ["app": bundle], json: .object(body))
                if arguments.has("json") {
                    cli.printJSON(response)
                    return 0
                }
                // What the service now holds, read as the Apple layer reads an app.
                let record = try readAnswer("app") { () throws(ChimeError) in
                    try AppRecord(json: response.json ?? .null)
                }
                if apns != nil, let provider = record.apnsProvider {
                    let key = provider.key.map { " (key \($0.id) registered here)" } ?? ""
                    let team = provider.teamID
                    cli.write(
                        "\(bundle): an app of team \(team)\(key); provider tokens from the team's keys may push to it.")
                } else if apns != nil {
                    cli.write("\(bundle): no provider key or team; providers push with the app's token.")
                }
                if case .string? = certificate, let pinned = record.apnsCertificate {
                    cli.write(
                        "\(bundle): a provider presenting the certificate \(pinned.sha256Hex) (valid until \(JSONMapping.formatDate(pinned.notAfter))) may push to it."
                    )
                } else if certificate != nil {
                    cli.write("\(bundle): no provider certificate.")
                }
                if launch != nil, let command = record.launchCommand {
                    cli.write("\(bundle): answers given while it is not running start \(command)")
                } else if arguments.has("no-launch") {
                    cli.write("\(bundle): no launch command; answers wait in its outbox until it runs.")
                }
            case "remove":
                try await client.send(.removeApp, ["app": bundle])
                cli.write("Removed \(bundle) and everything it had.")
            default:
                let response = try await client.send(
                    .answerAuthorization, ["app": bundle], json: [JSONFieldName.allow: .bool(action == "allow")])
                if arguments.has("json") {
                    cli.printJSON(response)
                } else {
                    // The answer as the Apple layer reads it; the service's, never a guess of the CLI's.
                    let answer = try AuthorizationAnswer(json: response.json ?? .null)
                    let switches: [(String, KeyPath<NotificationSettings, UNNotificationSetting>)] = [
                        ("alert", \.alertSetting), ("sound", \.soundSetting), ("badge", \.badgeSetting),
                    ]
                    let enabled = switches.filter { answer.settings[keyPath: $0.1] == .enabled }.map(\.0)
                    cli.write(
                        "\(bundle): \(answer.status.name)"
                            + (enabled.isEmpty ? "" : " (\(enabled.joined(separator: ", ")))"))
                }
            }
            return 0
        })

    /// `apnsCertificate` for `PATCH /v1/apps/{app}` from `--apns-certificate FILE.pem` (the file's
    /// certificate; a private key in it is not sent) or `--no-apns-certificate` (null); nil when neither.
    static func apnsCertificate(_ arguments: ParsedArguments, action: String) throws -> JSONValue? {
        let file = arguments.value("apns-certificate")
        guard file != nil || arguments.has("no-apns-certificate") else { return nil }
        guard action == "set" else {
            throw UsageError("--apns-certificate and --no-apns-certificate go with `chime apps set`")
        }
        guard let file else { return .null }
        guard !arguments.has("no-apns-certificate") else {
            throw UsageError("give --apns-certificate FILE.pem or --no-apns-certificate, not both")
        }
        let text = String(decoding: try readFile(file, what: "the certificate file"), as: UTF8.self)
        // Only the certificate leaves this machine: a key kept in the same file stays behind.
        guard let begin = text.range(of: "-----BEGIN CERTIFICATE-----"),
            let end = text.range(of: "-----END CERTIFICATE-----", range: begin.upperBound..<text.endIndex)
        else {
            throw UsageError(
                "\(file) holds no certificate (-----BEGIN CERTIFICATE-----); give the provider's certificate in PEM")
        }
        return .string(String(text[begin.lowerBound..<end.upperBound]) + "\n")
    }

    /// `apns` for `PATCH /v1/apps/{app}` from `--apns-key FILE --key-id ID --team-id TEAM`,
    /// `--team-id TEAM` or `--no-apns` (nil when none is given). The `.p8` file is read here and only
    /// its public key goes to the service: the private key never leaves this machine.
    static func apnsProvider(_ arguments: ParsedArguments, action: String) throws -> JSONValue? {
        let file = arguments.value("apns-key")
        let keyID = arguments.value("key-id")
        let team = arguments.value("team-id")
        let given = file != nil || keyID != nil || team != nil || arguments.has("no-apns")
        guard given else { return nil }
        guard action == "set" else {
            throw UsageError("--apns-key, --key-id, --team-id and --no-apns go with `chime apps set`")
        }
        if arguments.has("no-apns") {
            guard file == nil, keyID == nil, team == nil else {
                throw UsageError("--no-apns goes alone, without --apns-key, --key-id or --team-id")
            }
            return .null
        }
        guard let team else {
            throw UsageError("give the team id with --team-id TEAMID (the JWT's iss; 10 characters at Apple)")
        }
        guard APNsProvider.isIdentifier(team) else {
            throw UsageError("--team-id \(team) is not a team id: 1 to 64 letters and digits")
        }
        typealias Field = JSONFieldName.Provider
        var object: JSONObject = [Field.teamId: .string(team)]
        switch (file, keyID) {
        case (nil, nil): break
        case (let file?, let keyID?):
            guard APNsProvider.isIdentifier(keyID) else {
                throw UsageError("--key-id \(keyID) is not a key id: 1 to 64 letters and digits")
            }
            let text = String(decoding: try readFile(file, what: "the APNs key file"), as: UTF8.self)
            let key: P256PrivateKey
            do { key = try P256PrivateKey(pemRepresentation: text) } catch {
                throw UsageError(
                    "\(file) is not an APNs key (a .p8 file: a P-256 private key in PEM): \(error.message)")
            }
            object[Field.keyId] = .string(keyID)
            object[Field.key] = .string(key.publicKey.pemRepresentation)
        case (nil, _?): throw UsageError("--key-id goes with --apns-key AuthKey_KEYID.p8")
        case (_?, nil):
            let guess = file.map { ($0 as NSString).lastPathComponent }.flatMap { name -> String? in
                name.hasPrefix("AuthKey_") && name.hasSuffix(".p8") ? String(name.dropFirst(8).dropLast(3)) : nil
            }
            throw UsageError("give the key's id with --key-id" + (guess.map { " (the file's name says \($0))" } ?? ""))
        }
        return .object(object)
    }
}
