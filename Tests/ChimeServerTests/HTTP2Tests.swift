import ChimeCore
import ChimeTesting
import Foundation
import Synchronization
import TestThreads
import Testing

@testable import ChimeServer

/// HTTP/2 on the same listener as HTTP/1.1: h2c with prior knowledge on TCP and a Unix socket,
/// through curl (nghttp2 inside), with the same handler, checks, limits, metrics and access log.
@Suite("HTTP/2", .testThreads)
struct HTTP2Tests {
    /// What curl printed and what it says it spoke.
    struct CurlResult {
        var status: Int
        var version: String
        var body: String
    }

    /// One request with curl; `-w` appends the status and the HTTP version after a marker line.
    static func curl(_ arguments: [String]) async throws -> CurlResult {
        let output = try await ChildProcess.run(
            "/usr/bin/curl",
            arguments: ["-s", "--max-time", "60", "-w", "\n@@%{http_code} %{http_version}"] + arguments,
            timeout: 90)
        let text = output.text
        guard let marker = text.range(of: "\n@@", options: .backwards) else {
            throw ServerError(.startFailed, "curl printed no status: \(text) \(output.errorText)")
        }
        let tail = text[marker.upperBound...].split(separator: " ")
        return CurlResult(
            status: Int(tail.first ?? "") ?? 0, version: tail.count > 1 ? String(tail[1]) : "",
            body: String(text[..<marker.lowerBound]))
    }

    /// A server with `handler` on a Unix socket in a short temporary directory.
    static func withUnixServer(
        _ handler: TestHandler, metrics: Metrics = Metrics(), logger: ServerLogger = .silent,
        _ body: (String, HTTPServer) async throws -> Void
    ) async throws {
        let directory = "/tmp/chime-h2-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socket = directory + "/http.sock"
        let server = HTTPServer(
            configuration: .init(listen: .unix(path: socket)), handler: handler, logger: logger, metrics: metrics)
        try server.start()
        do {
            try await body(socket, server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test("h2c and HTTP/1.1 on one TCP port of chime serve: the same answers, access rules and metrics")
    func sameListenerTCP() async throws {
        let lines = Mutex<[String]>([])
        try await ServiceHarness.with(logger: ServerLogger(sink: { line in lines.withLock { $0.append(line) } })) {
            harness in
            let base = "http://127.0.0.1:\(harness.service.port)"
            let h2 = try await Self.curl(["--http2-prior-knowledge", base + "/healthz"])
            #expect(h2.status == 200 && h2.version == "2" && h2.body.contains("ok"))
            let h1 = try await Self.curl([base + "/healthz"])
            #expect(h1.status == 200 && h1.version == "1.1" && h1.body == h2.body)

            // The same access rules: no token 401, the owner's token 200.
            let refused = try await Self.curl(["--http2-prior-knowledge", base + "/v1/apps"])
            #expect(refused.status == 401 && refused.version == "2")
            let token = harness.service.ownerToken
            let add = try await Self.curl([
                "--http2-prior-knowledge", "-X", "POST", "-H", "Authorization: Bearer \(token)",
                "-H", "Content-Type: application/json", "--data-binary",
                #"{"bundleIdentifier": "com.example.h2"}"#, base + "/v1/apps",
            ])
            #expect(add.status == 201, "\(add.body)")
            let listed = try await Self.curl([
                "--http2-prior-knowledge", "-H", "Authorization: Bearer \(token)", base + "/v1/apps?limit=5",
            ])
            #expect(listed.status == 200 && listed.body.contains("com.example.h2"))
            // A Host that is not the service's is refused as over HTTP/1.1 (:authority is HTTP/2's Host).
            let rebound = try await Self.curl([
                "--http2-prior-knowledge", "-H", "Host: attacker.example", base + "/v1/apps",
            ])
            #expect(rebound.status == 421)

            let metrics = try await Self.curl(["--http2-prior-knowledge", base + "/metrics"])
            #expect(metrics.body.contains(#"route="/v1/apps""#))
        }
        let logged = lines.withLock { $0 }.filter { $0.contains("INFO request") }
        #expect(
            logged.contains {
                $0.contains("path=/healthz") && $0.contains("protocol=HTTP/2") && $0.contains("status=200")
            })
        #expect(logged.contains { $0.contains("path=/healthz") && $0.contains("protocol=HTTP/1.1") })
        #expect(
            logged.contains {
                $0.contains("path=/v1/apps") && $0.contains("status=401") && $0.contains("protocol=HTTP/2")
            })
    }

    @Test("h2c over a Unix socket: path, query, body and limits as over HTTP/1.1")
    func unixSocket() async throws {
        let metrics = Metrics()
        try await Self.withUnixServer(TestHandler(), metrics: metrics) { socket, _ in
            let echo = try await Self.curl([
                "--http2-prior-knowledge", "--unix-socket", socket, "-X", "POST", "--data-binary", "12345",
                "http://localhost/a%2Fb?x=1&y=%C3%BC+z&x=2",
            ])
            #expect(echo.version == "2")
            #expect(echo.body == "POST /a%2Fb 5 x=1 y=ü z x=2")
            let plain = try await Self.curl([
                "--unix-socket", socket, "-X", "POST", "--data-binary", "12345",
                "http://localhost/a%2Fb?x=1&y=%C3%BC+z&x=2",
            ])
            #expect(plain.version == "1.1" && plain.body == echo.body)

            // A body over the route's limit: 413, before and without a Content-Length.
            let large = try await Self.curl([
                "--http2-prior-knowledge", "--unix-socket", socket, "--data-binary",
                String(repeating: "x", count: 100), "http://localhost/small",
            ])
            #expect(large.status == 413 && large.body == "too large")
            // A head over the limit: 431, the server's own answer.
            let header = try await Self.curl([
                "--http2-prior-knowledge", "--unix-socket", socket, "-H",
                "X-Big: " + String(repeating: "b", count: 17_000), "http://localhost/echo",
            ])
            #expect(header.status == 431)
            // A target over the limit: 414.
            let target = try await Self.curl([
                "--http2-prior-knowledge", "--unix-socket", socket,
                "http://localhost/echo?" + String(repeating: "q", count: 9000),
            ])
            #expect(target.status == 414)
        }
        #expect(metrics.requestCount(route: "/echo", status: 200) == 2)
        #expect(metrics.requestCount(route: "/413", status: 413) == 1)
    }

    @Test("an event stream over HTTP/2: events as DATA frames as they are sent, the end when the server ends it")
    func eventStream() async throws {
        let handler = TestHandler()
        try await Self.withUnixServer(handler) { socket, server in
            let follower = Task {
                try await Self.curl([
                    "--http2-prior-knowledge", "-N", "--unix-socket", socket, "http://localhost/stream",
                ])
            }
            var stream: EventStream?
            let deadline = ContinuousClock.now + .seconds(60)
            while stream == nil, ContinuousClock.now < deadline {
                stream = handler.streams.withLock { $0.first }
                if stream == nil { try await Sleep.for(.milliseconds(10)) }
            }
            let open = try #require(stream)
            // The first event was queued with the response; wait until curl has it (the queue drains).
            while open.queuedBytes > 0, ContinuousClock.now < deadline { try await Sleep.for(.milliseconds(10)) }
            #expect(server.openStreams == 1)
            open.sendComment("heartbeat")
            open.send(event: "delivered", id: "2", data: "line 1\nline 2 ü")
            open.close()
            let result = try await follower.value
            #expect(result.status == 200 && result.version == "2")
            #expect(
                result.body
                    == "id: 1\nevent: hello\ndata: first\n\n: heartbeat\n\nid: 2\nevent: delivered\ndata: line 1\ndata: line 2 ü\n\n"
            )
        }
    }

    // MARK: - TLS, ALPN and clients from PyPI

    /// A test CA and a certificate it signed for 127.0.0.1 and localhost, made by openssl in `directory`.
    static func makeCertificates(in directory: String) async throws -> (ca: String, certificate: String, key: String) {
        let steps: [[String]] = [
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                directory + "/ca.key",
                "-out", directory + "/ca.pem", "-days", "1", "-subj", "/CN=Chime Test CA",
            ],
            [
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                directory + "/key.pem",
                "-out", directory + "/leaf.csr", "-subj", "/CN=localhost",
            ],
            [
                "x509", "-req", "-in", directory + "/leaf.csr", "-CA", directory + "/ca.pem", "-CAkey",
                directory + "/ca.key",
                "-CAcreateserial", "-out", directory + "/cert.pem", "-days", "1", "-extfile", directory + "/leaf.ext",
            ],
        ]
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(
            toFile: directory + "/leaf.ext", atomically: true, encoding: .utf8)
        for step in steps {
            let made = try await ChildProcess.run("/usr/bin/openssl", arguments: step, timeout: 60)
            #expect(made.termination.succeeded, "\(made.errorText)")
        }
        return (directory + "/ca.pem", directory + "/cert.pem", directory + "/key.pem")
    }

    /// The environment's python (scripts/http2-test-env.sh), set up once per test process.
    static let python = Task<String, any Error> {
        let output = try await ChildProcess.run(Self.packageRoot + "/scripts/http2-test-env.sh", timeout: 600)
        guard output.termination.succeeded else {
            throw ServerError(.startFailed, "http2-test-env.sh: \(output.errorText)")
        }
        return output.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// One command of Tests/Support/HTTP2Clients/clients.py, and its JSON answer.
    static func client(_ arguments: String...) async throws -> JSONValue {
        let output = try await ChildProcess.run(
            try await python.value, arguments: [packageRoot + "/Tests/Support/HTTP2Clients/clients.py"] + arguments,
            environment: ["PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"], timeout: 120)
        guard output.termination.succeeded else {
            throw ServerError(.startFailed, "clients.py \(arguments.first ?? ""): \(output.errorText)")
        }
        return try JSONValue.parse(output.text)
    }

    /// The `index`th of a clients.py answer's results.
    static func result(_ answer: JSONValue, _ index: Int) -> JSONValue? {
        guard case .array(let results)? = answer["results"], index < results.count else { return nil }
        return results[index]
    }

    /// A JSON body's field, from curl's output.
    static func field(_ body: String, _ name: String) -> String? {
        (try? JSONValue.parse(body))?[name].flatMap { if case .string(let text) = $0 { text } else { nil } }
    }

    /// A provider's service: TLS with a test CA, the app registered and authorized, a team key
    /// (`AuthKey_KEY1234567.p8`, key id KEY1234567, team TEAM123456) registered for it, and another
    /// key (`Other.p8`) made but not registered.
    struct ProviderSetup {
        let harness: ServiceHarness
        let files: (ca: String, certificate: String, key: String)
        let directory: String
        let base: String
        /// curl's arguments with the owner's token, and with the app's.
        let owner: [String]
        let app: [String]
        let device: String
    }

    static func withProviderApp(_ bundleIdentifier: String, _ body: (ProviderSetup) async throws -> Void) async throws {
        let directory = "/tmp/chime-h2apns-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = try await makeCertificates(in: directory)
        for name in ["AuthKey_KEY1234567.p8", "Other.p8"] {
            let key = try await ChildProcess.run(
                "/usr/bin/openssl",
                arguments: [
                    "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-out", directory + "/" + name,
                ], timeout: 60)
            #expect(key.termination.succeeded, "\(key.errorText)")
        }
        try await ServiceHarness.with(tls: (files.certificate, files.key)) { harness in
            let base = "https://localhost:\(harness.service.port)"
            let owner = [
                "--http2", "--cacert", files.ca, "-H", "Authorization: Bearer \(harness.service.ownerToken)", "-H",
                "Content-Type: application/json",
            ]
            let created = try await curl(
                owner + ["--data-binary", #"{"bundleIdentifier": "\#(bundleIdentifier)"}"#, base + "/v1/apps"])
            #expect(created.status == 201 && created.version == "2")
            let appToken = try #require(field(created.body, "token"))
            let app = ["--http2", "--cacert", files.ca, "-H", "Authorization: Bearer \(appToken)"]
            #expect(
                try await curl(app + ["-X", "POST", base + "/v1/apps/\(bundleIdentifier)/authorization"]).status == 200)
            let pem = try String(contentsOfFile: directory + "/AuthKey_KEY1234567.p8", encoding: .utf8)
            let registration = JSONValue.object([
                "apns": ["teamId": "TEAM123456", "keyId": "KEY1234567", "key": .string(pem)]
            ]).serialized()
            let registered = try await curl(
                owner + ["-X", "PATCH", "--data-binary", registration, base + "/v1/apps/\(bundleIdentifier)"])
            #expect(registered.status == 200, "\(registered.body)")
            let device = try #require(
                field(try await curl(app + [base + "/v1/apps/\(bundleIdentifier)/device-token"]).body, "deviceToken"))
            try await body(
                ProviderSetup(
                    harness: harness, files: files, directory: directory, base: base, owner: owner, app: app,
                    device: device))
        }
    }

    @Test("TLS with a test CA: ALPN h2 for curl --http2 and httpx, http/1.1 for curl --http1.1, on one port")
    func tlsALPN() async throws {
        let directory = "/tmp/chime-h2tls-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = try await Self.makeCertificates(in: directory)
        try await ServiceHarness.with(tls: (files.certificate, files.key)) { harness in
            let base = "https://localhost:\(harness.service.port)"
            let token = harness.service.ownerToken
            let h2 = try await Self.curl(["--http2", "--cacert", files.ca, base + "/healthz"])
            #expect(h2.status == 200 && h2.version == "2")
            let h1 = try await Self.curl([
                "--http1.1", "--cacert", files.ca, "-H", "Authorization: Bearer \(token)", base + "/v1/apps",
            ])
            #expect(h1.status == 200 && h1.version == "1.1")
            // Not trusted without the CA.
            let untrusted = try await ChildProcess.run(
                "/usr/bin/curl", arguments: ["-s", "--http2", base + "/healthz"], timeout: 60)
            #expect(untrusted.termination.succeeded == false)

            // 300 requests at once through one connection (SETTINGS_MAX_CONCURRENT_STREAMS is 128: httpx queues the rest).
            let many = try await Self.client("many", base + "/v1/apps", files.ca, token, "300")
            #expect(many["statuses"] == .object(["200": .integer(300)]), "\(many)")
            #expect(many["versions"] == .array([.string("HTTP/2")]))
        }
    }

    @Test(
        "aioapns, given only a host, port and CA, delivers a push signed with a .p8 key; refusals carry Apple's reasons"
    )
    func providerLibrary() async throws {
        try await Self.withProviderApp("com.example.provider") { setup in
            let (harness, files, directory, base, owner, app, device) = (
                setup.harness, setup.files, setup.directory, setup.base, setup.owner,
                setup.app, setup.device
            )
            let port = String(harness.service.port)
            let key = directory + "/AuthKey_KEY1234567.p8"
            // One provider token for all: the push, an unknown device, then the headers' refusals as the library sends them.
            let cases =
                #"[{}, {}, {"push_type": "background", "priority": 10}, {"collapse_key": "\#(String(repeating: "c", count: 65))"}, "#
                + #"{"push_type": "background", "priority": 5, "collapse_key": "sync"}, "#
                + #"{"push_type": "voip", "topic": "com.example.provider.voip"}, {"push_type": "voip"}, "#
                + #"{"push_type": "liveactivity", "topic": "com.example.provider.push-type.liveactivity"}, {"topic": "com.example.provider.complication"}]"#
            let first = try await Self.client(
                "aioapns", "localhost", port, files.ca, key, "KEY1234567", "TEAM123456", "com.example.provider",
                [device, String(repeating: "ab", count: 32), device, device, device, device, device, device, device]
                    .joined(separator: ","),
                "alert", "10", cases)
            let sent = try #require(Self.result(first, 0))
            #expect(sent["success"] == .bool(true), "\(first)")
            #expect(sent["apnsId"] == sent["sent"])
            let delivered = try await Self.curl(owner + [base + "/v1/apps/com.example.provider/notifications"])
            #expect(delivered.body.contains("From aioapns"), "\(delivered.body)")
            // A device token the app was not given: BadDeviceToken (the same provider token).
            #expect(Self.result(first, 1)?["reason"] == .string("BadDeviceToken"), "\(first)")
            #expect(
                Self.result(first, 2)?["status"] == .string("400")
                    && Self.result(first, 2)?["reason"] == .string("BadPriority"), "\(first)")
            #expect(
                Self.result(first, 3)?["status"] == .string("400")
                    && Self.result(first, 3)?["reason"] == .string("BadCollapseId"), "\(first)")
            #expect(Self.result(first, 4)?["success"] == .bool(true), "\(first)")
            // Apple's topic suffixes: a VoIP push to bundle id + .voip; to the bare bundle id, InvalidPushType; a live
            // activity to .push-type.liveactivity; an alert (aioapns's type) to the .complication topic, InvalidPushType.
            #expect(Self.result(first, 5)?["success"] == .bool(true), "\(first)")
            #expect(
                Self.result(first, 6)?["status"] == .string("400")
                    && Self.result(first, 6)?["reason"] == .string("InvalidPushType"), "\(first)")
            #expect(Self.result(first, 7)?["success"] == .bool(true), "\(first)")
            #expect(
                Self.result(first, 8)?["status"] == .string("400")
                    && Self.result(first, 8)?["reason"] == .string("InvalidPushType"), "\(first)")

            // curl over HTTP/2 with the app's token: each header's refusal, Apple's reason in the body, apns-id echoed.
            let id = "123E4567-E89B-12D3-A456-426614174000"
            let refusals: [(header: String, value: String, reason: String)] = [
                ("apns-id", "123e4567-e89b-12d3-a456", "BadMessageId"), ("apns-push-type", "banner", "InvalidPushType"),
                ("apns-priority", "7", "BadPriority"), ("apns-priority", "05", "BadPriority"),
                ("apns-expiration", "-1", "BadExpirationDate"), ("apns-expiration", "tomorrow", "BadExpirationDate"),
                ("apns-collapse-id", String(repeating: "é", count: 33), "BadCollapseId"),
            ]
            for refusal in refusals {
                var headers = ["-H", "apns-topic: com.example.provider", "-H", "\(refusal.header): \(refusal.value)"]
                if refusal.header != "apns-id" { headers += ["-H", "apns-id: \(id)"] }
                let answer = try await Self.curl(
                    app + headers + ["-i", "--data-binary", #"{"aps": {"alert": "x"}}"#, base + "/3/device/" + device])
                let head = answer.body.components(separatedBy: "\r\n\r\n").first ?? ""
                let json = answer.body.components(separatedBy: "\r\n\r\n").last ?? ""
                #expect(answer.status == 400 && answer.version == "2", "\(refusal): \(answer.body)")
                #expect(Self.field(json, "reason") == refusal.reason, "\(refusal): \(answer.body)")
                if refusal.header != "apns-id" {
                    #expect(head.lowercased().contains("apns-id: \(id.lowercased())"), "\(answer.body)")
                }
            }

            // Topic suffixes over curl: the push type a topic is for, else InvalidPushType; every 200 has an apns-unique-id.
            let suffixes: [(topic: String, type: String?, status: Int, reason: String?)] = [
                ("com.example.provider.voip", "voip", 200, nil), ("com.example.provider.voip", nil, 200, nil),
                ("com.example.provider.push-type.liveactivity", "liveactivity", 200, nil),
                ("com.example.provider", "complication", 400, "InvalidPushType"),
                ("com.example.provider.voip", "alert", 400, "InvalidPushType"),
                ("com.example.stranger.voip", "voip", 400, "TopicDisallowed"),
            ]
            for suffix in suffixes {
                var headers = ["-H", "apns-topic: \(suffix.topic)", "-H", "apns-id: \(id)"]
                if let type = suffix.type { headers += ["-H", "apns-push-type: \(type)"] }
                let answer = try await Self.curl(
                    app + headers + ["-i", "--data-binary", #"{"aps": {"alert": "x"}}"#, base + "/3/device/" + device])
                let parts = answer.body.components(separatedBy: "\r\n\r\n")
                let head = (parts.first ?? "").lowercased()
                #expect(answer.status == suffix.status && answer.version == "2", "\(suffix): \(answer.body)")
                #expect(head.contains("apns-id: \(id.lowercased())"), "\(answer.body)")
                if let reason = suffix.reason {
                    #expect(
                        Self.field(parts.last ?? "", "reason") == reason && !head.contains("apns-unique-id"),
                        "\(suffix): \(answer.body)")
                } else {
                    let unique = head.split(separator: "\r\n").first { $0.hasPrefix("apns-unique-id: ") }.map {
                        String($0.dropFirst(16))
                    }
                    #expect(unique.map(APNsEndpoint.isUUID) == true, "\(answer.body)")
                }
            }

            // unregisterForRemoteNotifications over HTTP/2: a push is 410 Unregistered with the time in milliseconds; registering again takes pushes.
            let gone = try await Self.curl(app + ["-X", "DELETE", base + "/v1/apps/com.example.provider/device-token"])
            #expect(
                gone.status == 200 && gone.version == "2" && Self.field(gone.body, "unregistered") != nil,
                "\(gone.body)")
            let pushed =
                app + [
                    "-H", "apns-topic: com.example.provider", "--data-binary", #"{"aps": {"alert": "x"}}"#,
                    base + "/3/device/" + device,
                ]
            let refused = try await Self.curl(pushed)
            let answer = try JSONValue.parse(Array(refused.body.utf8))
            #expect(refused.status == 410 && answer["reason"] == .string("Unregistered"), "\(refused.body)")
            let since = try #require(Self.field(gone.body, "unregistered").flatMap(JSONMapping.parseDate))
            #expect(
                answer["timestamp"] == .integer(Int64((since.timeIntervalSince1970 * 1000).rounded())),
                "\(refused.body)")
            #expect(
                try await Self.curl(app + ["-X", "POST", base + "/v1/apps/com.example.provider/device-token"]).status
                    == 200)
            #expect(try await Self.curl(pushed).status == 200)

            // Another client, on its own connection, makes a new token for the same key at once: taken, as Apple counts
            // token updates per connection.
            let again = try await Self.client(
                "aioapns", "localhost", port, files.ca, key, "KEY1234567", "TEAM123456", "com.example.provider", device)
            #expect(Self.result(again, 0)?["success"] == .bool(true), "\(again)")
            // One connection changing its token within 20 minutes: TooManyProviderTokenUpdates; its first token keeps working.
            let changes = try await Self.client(
                "token-changes", "https://localhost:\(port)/3/device/\(device)", files.ca, key, "KEY1234567",
                "TEAM123456",
                "com.example.provider", "ABA")
            let statuses = (0..<3).map { Self.result(changes, $0)?["status"] }
            let reasons = (0..<3).map { Self.result(changes, $0)?["reason"] }
            #expect(
                changes["distinct"] == .integer(2) && statuses == [.integer(200), .integer(429), .integer(200)],
                "\(changes)")
            #expect(
                reasons[1] == .string("TooManyProviderTokenUpdates")
                    && Self.result(changes, 1)?["version"] == .string("HTTP/2"), "\(changes)")
            // Another key under the same key id: InvalidProviderToken.
            let forged = try await Self.client(
                "aioapns", "localhost", port, files.ca, directory + "/Other.p8",
                "KEY1234567", "TEAM123456", "com.example.provider", device)
            #expect(
                Self.result(forged, 0)?["status"] == .string("403")
                    && Self.result(forged, 0)?["reason"] == .string("InvalidProviderToken"),
                "\(forged)")
        }
    }

    @Test(
        "kalyke-apns (httpx), given Chime's URL and CA, delivers two pushes signed with a .p8 key (its iat a string, a new token and connection each); a forged key is InvalidProviderToken"
    )
    func httpxProviderLibrary() async throws {
        try await Self.withProviderApp("com.example.kalyke") { setup in
            let (files, directory, base, owner, device) = (
                setup.files, setup.directory, setup.base, setup.owner, setup.device
            )
            // Two pushes: kalyke opens a new connection with a new token for each, which Apple takes (its 20-minute rule is a
            // connection changing its token).
            let sent = try await Self.client(
                "kalyke", base, files.ca, directory + "/AuthKey_KEY1234567.p8", "KEY1234567", "TEAM123456",
                "com.example.kalyke", device, "2")
            #expect(sent["success"] == .bool(true) && sent["delivered"] == .integer(2), "\(sent)")
            let delivered = try await Self.curl(owner + [base + "/v1/apps/com.example.kalyke/notifications"])
            #expect(delivered.body.contains("From kalyke"), "\(delivered.body)")
            // Another key under the same key id: refused with Apple's reason, which kalyke raises as its exception of that name.
            let forged = try await Self.client(
                "kalyke", base, files.ca, directory + "/Other.p8", "KEY1234567", "TEAM123456", "com.example.kalyke",
                device)
            #expect(forged["reason"] == .string("InvalidProviderToken"), "\(forged)")
        }
    }

    @Test(
        "a provider's client certificate authorizes its app's topics over HTTP/2 and HTTP/1.1 (curl --cert, httpx, aioapns); Apple's reasons otherwise"
    )
    func clientCertificates() async throws {
        let directory = "/tmp/chime-h2cert-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = try await Self.makeCertificates(in: directory)
        // Self-signed provider certificates made by openssl, the topic in the subject's UID as in Apple's.
        for name in ["provider", "stranger"] {
            let made = try await ChildProcess.run(
                "/usr/bin/openssl",
                arguments: [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                    "\(directory)/\(name)-key.pem",
                    "-out", "\(directory)/\(name).pem", "-days", "2", "-subj",
                    "/UID=com.example.certified/CN=Apple Push Services: com.example.certified",
                ], timeout: 60)
            #expect(made.termination.succeeded, "\(made.errorText)")
            let both =
                try String(contentsOfFile: "\(directory)/\(name).pem", encoding: .utf8)
                + String(contentsOfFile: "\(directory)/\(name)-key.pem", encoding: .utf8)
            try both.write(toFile: "\(directory)/\(name)-both.pem", atomically: true, encoding: .utf8)
        }
        let clock = ManualClock(now: Date())
        try await ServiceHarness.with(clock: clock, tls: (files.certificate, files.key)) { harness in
            let base = "https://localhost:\(harness.service.port)"
            let owner = [
                "--http2", "--cacert", files.ca, "-H", "Authorization: Bearer \(harness.service.ownerToken)", "-H",
                "Content-Type: application/json",
            ]
            var appToken = ""
            for app in ["com.example.certified", "com.example.other"] {
                let created = try await Self.curl(
                    owner + ["--data-binary", #"{"bundleIdentifier": "\#(app)"}"#, base + "/v1/apps"])
                #expect(created.status == 201, "\(created.body)")
                if app == "com.example.certified" { appToken = try #require(Self.field(created.body, "token")) }
            }
            let app = ["--http2", "--cacert", files.ca, "-H", "Authorization: Bearer \(appToken)"]
            #expect(
                try await Self.curl(app + ["-X", "POST", base + "/v1/apps/com.example.certified/authorization"]).status
                    == 200)
            let device = try #require(
                Self.field(
                    try await Self.curl(app + [base + "/v1/apps/com.example.certified/device-token"]).body,
                    "deviceToken"))
            func push(
                _ certificate: String?, topic: String? = "com.example.certified", type: String? = nil,
                http1: Bool = false
            ) async throws -> (status: Int, reason: String?, head: String) {
                var arguments = [
                    http1 ? "--http1.1" : "--http2", "--cacert", files.ca, "-i", "--data-binary",
                    #"{"aps": {"alert": "x"}}"#,
                ]
                if let certificate {
                    arguments += [
                        "--cert", "\(directory)/\(certificate).pem", "--key", "\(directory)/\(certificate)-key.pem",
                    ]
                }
                if let topic { arguments += ["-H", "apns-topic: \(topic)"] }
                if let type { arguments += ["-H", "apns-push-type: \(type)"] }
                let answer = try await Self.curl(arguments + [base + "/3/device/" + device])
                #expect(answer.version == (http1 ? "1.1" : "2"), "\(answer.body)")
                let parts = answer.body.components(separatedBy: "\r\n\r\n")
                return (answer.status, Self.field(parts.last ?? "", "reason"), (parts.first ?? "").lowercased())
            }
            // No app has a certificate yet: none is asked for, so none is sent.
            let unasked = try await push("provider")
            #expect(unasked.status == 403 && unasked.reason == "MissingProviderToken", "\(unasked)")

            let pem = try String(contentsOfFile: "\(directory)/provider.pem", encoding: .utf8)
            let registered = try await Self.curl(
                owner + [
                    "-X", "PATCH", "--data-binary", JSONValue.object(["apnsCertificate": .string(pem)]).serialized(),
                    base + "/v1/apps/com.example.certified",
                ])
            #expect(registered.status == 200, "\(registered.body)")
            let fingerprint = try await ChildProcess.run(
                "/usr/bin/openssl",
                arguments: ["x509", "-in", "\(directory)/provider.pem", "-noout", "-fingerprint", "-sha256"],
                timeout: 60)
            let expected = fingerprint.text.split(separator: "=").last.map {
                $0.replacingOccurrences(of: ":", with: "").lowercased().trimmingCharacters(in: .whitespacesAndNewlines)
            }
            #expect(
                (try JSONValue.parse(registered.body))["apnsCertificate"]?["sha256"] == expected.map(JSONValue.string),
                "\(registered.body)")

            let accepted = try await push("provider")
            #expect(accepted.status == 200 && accepted.head.contains("apns-unique-id: "), "\(accepted)")
            // one topic: apns-topic may be left out, as with Apple
            #expect(try await push("provider", topic: nil).status == 200)
            #expect(try await push("provider", topic: "com.example.certified.voip", type: "voip").status == 200)
            #expect(try await push("provider", topic: "com.example.other").reason == "TopicDisallowed")
            let stranger = try await push("stranger")
            #expect(stranger.status == 403 && stranger.reason == "BadCertificate", "\(stranger)")
            #expect(try await push(nil).reason == "MissingProviderToken")
            // Apple takes Live Activity pushes with a provider token only.
            let liveActivity = try await push(
                "provider", topic: "com.example.certified.push-type.liveactivity", type: "liveactivity")
            #expect(liveActivity.status == 400 && liveActivity.reason == "TopicDisallowed", "\(liveActivity)")
            // HTTP/1.1 over TLS carries the certificate too; a connection after it without one is not taken for it.
            let http1 = try await push("provider", http1: true)
            #expect(http1.status == 200 && http1.head.contains("apns-unique-id: "), "\(http1)")
            #expect(try await push("stranger", http1: true).reason == "BadCertificate")
            #expect(try await push(nil, http1: true).reason == "MissingProviderToken")
            #expect(try await push("provider", topic: "com.example.other", http1: true).reason == "TopicDisallowed")

            let httpx = try await Self.client(
                "cert-push", base + "/3/device/" + device, files.ca, "\(directory)/provider.pem",
                "\(directory)/provider-key.pem",
                "com.example.certified")
            #expect(httpx["status"] == .integer(200) && httpx["version"] == .string("HTTP/2"), "\(httpx)")
            let unmodified = try await Self.client(
                "aioapns-cert", "localhost", String(harness.service.port), files.ca, "\(directory)/provider-both.pem",
                device)
            #expect(unmodified["success"] == .bool(true), "\(unmodified)")
            let delivered = try await Self.curl(owner + [base + "/v1/apps/com.example.certified/notifications"])
            #expect(delivered.body.contains("with a certificate"), "\(delivered.body)")

            // Past the certificate's notAfter: BadCertificate; with the certificate removed too.
            clock.advance(by: 3 * 86_400)
            let expired = try await push("provider")
            #expect(expired.status == 403 && expired.reason == "BadCertificate", "\(expired)")
            #expect(
                try await Self.curl(
                    owner + [
                        "-X", "PATCH", "--data-binary", #"{"apnsCertificate": null}"#,
                        base + "/v1/apps/com.example.certified",
                    ]
                ).status == 200)
            #expect(try await push("provider").reason == "MissingProviderToken")
        }
    }

    @Test(
        "rapid reset (CVE-2023-44487): resets within nghttp2's budget are served; a flood of them ends the connection with GOAWAY"
    )
    func rapidReset() async throws {
        try await ServiceHarness.with { harness in
            let port = String(harness.service.port)
            // Fewer than SETTINGS_MAX_CONCURRENT_STREAMS (128) reset streams: their work is bounded, the next request is served.
            let within = try await Self.client("rapid-reset", "127.0.0.1", port, "-", "/healthz", "100")
            #expect(within["status"] == .integer(200), "\(within)")
            let flood = try await Self.client("rapid-reset", "127.0.0.1", port, "-", "/healthz", "3000")
            #expect(flood["goaway"] == .string("ENHANCE_YOUR_CALM") || flood["closed"] == .bool(true), "\(flood)")
            #expect(flood["status"] == .null, "\(flood)")
            // The service goes on.
            #expect(try await Self.curl(["--http2-prior-knowledge", "http://127.0.0.1:\(port)/healthz"]).status == 200)
        }
    }

    /// fuzz-http2's findings (Fuzz/README.md), over the wire: nghttp2 leaves these to the server
    /// (RFC 9113 §8.3.1), and before they were handed to the handler — a Host field naming another
    /// authority than :authority was what the Host check saw, so a request for any authority passed
    /// it with `Host: 127.0.0.1`; a :path not from `/` (with a :scheme other than http or https) and
    /// CONNECT (no :path at all) reached the routes as paths.
    @Test(
        "heads nghttp2 lets through: Host naming another authority than :authority, :path not from /, CONNECT",
        arguments: [
            (
                #"[[":method","GET"],[":scheme","http"],[":authority","evil.example"],[":path","/healthz"],["host","127.0.0.1"]]"#,
                400, ":authority"
            ),
            (
                #"[[":method","GET"],[":scheme","ftp"],[":authority","127.0.0.1"],[":path","healthz"]]"#, 400,
                "must start with /"
            ),
            (#"[[":method","CONNECT"],[":authority","127.0.0.1:1"]]"#, 501, "CONNECT is not served"),
            // The same authority in another case, and OPTIONS *, are requests like any other.
            (
                #"[[":method","GET"],[":scheme","http"],[":authority","127.0.0.1"],[":path","/healthz"],["host","127.0.0.1"]]"#,
                200, "ok"
            ),
        ])
    func headsNghttp2LetsThrough(fields: String, status: Int, says: String) async throws {
        try await ServiceHarness.with { harness in
            let answer = try await Self.client("request", "127.0.0.1", String(harness.service.port), "-", fields)
            #expect(answer["status"] == .integer(Int64(status)), "\(fields): \(answer)")
            guard case .string(let body)? = answer["body"] else {
                Issue.record("no body: \(answer)")
                return
            }
            #expect(body.contains(says), "\(fields): \(body)")
        }
    }

    @Test("PING and SETTINGS floods from a client that does not read: the connection is ended, the service goes on")
    func floods() async throws {
        try await ServiceHarness.with { harness in
            let port = String(harness.service.port)
            for kind in ["ping-flood", "settings-flood"] {
                let answer = try await Self.client(kind, "127.0.0.1", port, "-", "200000")
                #expect(answer["closed"] == .bool(true) || answer["goaway"] != .null, "\(kind): \(answer)")
                #expect(
                    answer["error"] != .string("TimeoutError") && answer["error"] != .string("timeout"),
                    "\(kind): \(answer)")
            }
            #expect(try await Self.curl(["--http2-prior-knowledge", "http://127.0.0.1:\(port)/healthz"]).status == 200)
        }
    }
}
