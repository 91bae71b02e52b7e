import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

/// The server side of the web notification center: its files and their headers, signing in with a
/// one-time code, the session cookie, CSRF, and the settings switches. The browser itself is
/// tested by Tests/web (headless chromium).
@Suite("Web center API", .testThreads)
struct WebCenterAPITests {
    /// Signs in: a login code from the owner, traded for a session.
    static func signIn(_ harness: ServiceHarness) async throws -> (cookie: String, csrf: String) {
        let link = try await harness.owner.request(.createLoginLink)
        #expect(link.status == 201)
        guard case .string(let code)? = link.json?["code"], case .string(let path)? = link.json?["path"] else {
            throw TestClientError(description: "no login code: \(link.text)")
        }
        #expect(path == "/#login=\(code)")
        let session = try await harness.client(token: nil).request(.createSession, json: #"{"code": "\#(code)"}"#)
        #expect(session.status == 201)
        let setCookie = session.headers["set-cookie"] ?? ""
        #expect(setCookie.contains("HttpOnly"))
        #expect(setCookie.contains("SameSite=Strict"))
        #expect(setCookie.contains("Path=/"))
        guard let value = setCookie.split(separator: ";").first, value.hasPrefix("chime_session="),
            case .string(let csrf)? = session.json?["csrfToken"]
        else {
            throw TestClientError(description: "no session: \(session.text)")
        }
        return (String(value), csrf)
    }

    @Test("the page and its files: CSP without inline script, no framing, ETag revalidation")
    func files() async throws {
        try await ServiceHarness.with { harness in
            let anonymous = harness.client(token: nil)
            let page = try await anonymous.get("/")
            #expect(page.status == 200)
            #expect(page.headers["content-type"] == "text/html; charset=utf-8")
            let policy = page.headers["content-security-policy"] ?? ""
            #expect(policy.contains("script-src 'self'"))
            #expect(!policy.contains("unsafe-inline"))
            #expect(policy.contains("frame-ancestors 'none'"))
            #expect(page.headers["x-content-type-options"] == "nosniff")
            #expect(page.text.contains("center.js"))
            let etag = try #require(page.headers["etag"])
            let again = try await anonymous.get("/", headers: [("If-None-Match", etag)])
            #expect(again.status == 304)
            #expect(again.body.isEmpty)

            let script = try await anonymous.get("/center.js")
            #expect(script.status == 200)
            #expect(script.headers["content-type"] == "text/javascript; charset=utf-8")
            let style = try await anonymous.get("/center.css")
            #expect(style.headers["content-type"] == "text/css; charset=utf-8")
            #expect(try await anonymous.get("/nothing.js").status == 404)
            #expect(try await anonymous.get("/.env").status == 404)
            #expect(try await anonymous.request("POST", "/").status == 405)
        }
    }

    @Test("the page's script is modules: each one it imports is served as JavaScript, revalidated like the rest")
    func scriptModules() async throws {
        // The page loads center.js as a module; it and the modules it imports name their imports
        // as "./NAME.js", and each must be an embedded file (a missing one stops the whole page).
        let page = try #require(WebAssets.embedded["index.html"])
        #expect(page.contains(#"<script type="module" src="/center.js"></script>"#))
        #expect(
            page.components(separatedBy: "<script").count == 2,
            "one script element: the modules are imported, not listed")
        var wanted: Set<String> = ["center.js"]
        var seen: Set<String> = []
        while let name = wanted.popFirst() {
            seen.insert(name)
            let source = try #require(WebAssets.embedded[name], "\(name) is imported but not in Web/")
            for line in source.split(separator: "\n") where line.hasPrefix("import ") {
                let specifier = try #require(
                    line.split(separator: "\"").dropFirst().first, "an import without a quoted name: \(line)")
                #expect(specifier.hasPrefix("./") && specifier.hasSuffix(".js"), "\(name) imports \(specifier)")
                let imported = String(specifier.dropFirst(2))
                if !seen.contains(imported) { wanted.insert(imported) }
            }
        }
        let modules = Set(WebAssets.embedded.keys.filter { $0.hasSuffix(".js") && $0 != "sw.js" })
        #expect(seen == modules, "every script in Web/ but the service worker is reached from center.js")
        try await ServiceHarness.with { harness in
            let anonymous = harness.client(token: nil)
            for name in seen.sorted() + ["sw.js"] {
                let file = try await anonymous.get("/" + name)
                #expect(file.status == 200, "\(name)")
                #expect(file.headers["content-type"] == "text/javascript; charset=utf-8", "\(name)")
                #expect(file.headers["cache-control"] == "no-cache", "\(name)")
                let etag = try #require(file.headers["etag"], "\(name)")
                #expect(
                    try await anonymous.get("/" + name, headers: [("If-None-Match", etag)]).status == 304, "\(name)")
            }
        }
    }

    @Test("the embedded files are the ones in Web/")
    func embeddedFilesCurrent() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let web = root.appendingPathComponent("Web")
        let names = try FileManager.default.contentsOfDirectory(atPath: web.path).filter { !$0.hasPrefix(".") }
        #expect(!names.isEmpty)
        for name in names
        where ["html", "css", "js", "svg", "json", "webmanifest"].contains(where: { name.hasSuffix("." + $0) }) {
            let data = try Data(contentsOf: web.appendingPathComponent(name))
            var text = String(decoding: data, as: UTF8.self)
            while text.hasSuffix("\n") { text.removeLast() }
            #expect(WebAssets.embedded[name] == text, "Web/\(name) changed: run scripts/generate-web-assets.sh")
        }
    }

    @Test("a login code works once; the session reaches every route as the owner; signing out ends it")
    func signInOnce() async throws {
        try await ServiceHarness.with { harness in
            let link = try await harness.owner.post("/v1/session/links")
            guard case .string(let code)? = link.json?["code"] else {
                Issue.record("no code")
                return
            }
            let anonymous = harness.client(token: nil)
            #expect(try await anonymous.post("/v1/session", json: #"{"code": "\#(code)"}"#).status == 201)
            let reused = try await anonymous.post("/v1/session", json: #"{"code": "\#(code)"}"#)
            #expect(reused.status == 401)
            #expect(reused.json?["error"]?["field"] == .string("code"))
            #expect(try await anonymous.post("/v1/session", json: #"{"code": "guess"}"#).status == 401)
            #expect(try await anonymous.post("/v1/session", json: #"{"code": 5}"#).status == 400)
            #expect(try await anonymous.post("/v1/session", json: #"{"token": "x"}"#).status == 400)
            // Only the owner makes links.
            let appToken = try await harness.createApp("com.example.alarm")
            #expect(try await harness.client(token: appToken).post("/v1/session/links").status == 403)
            #expect(try await anonymous.post("/v1/session/links").status == 401)

            let (cookie, csrf) = try await Self.signIn(harness)
            let apps = try await anonymous.get("/v1/apps", headers: [("Cookie", cookie)])
            #expect(apps.status == 200)
            #expect(apps.json?.arrayCount == 1)
            let session = try await anonymous.get("/v1/session", headers: [("Cookie", cookie)])
            #expect(session.json?["csrfToken"] == .string(csrf))
            #expect(try await anonymous.get("/v1/session").status == 401)
            #expect(try await anonymous.get("/v1/session", headers: [("Cookie", "chime_session=forged")]).status == 401)

            let out = try await anonymous.request(
                "DELETE", "/v1/session", headers: [("Cookie", cookie), ("X-CSRF-Token", csrf)])
            #expect(out.status == 204)
            #expect(out.headers["set-cookie"]?.contains("Max-Age=0") == true)
            #expect(try await anonymous.get("/v1/apps", headers: [("Cookie", cookie)]).status == 401)
        }
    }

    @Test("a change with the cookie needs the session's CSRF token and a same-origin request")
    func csrf() async throws {
        try await ServiceHarness.with { harness in
            let (cookie, csrf) = try await Self.signIn(harness)
            let anonymous = harness.client(token: nil)
            let body = Array(#"{"bundleIdentifier": "com.example.a"}"#.utf8)
            func create(_ headers: [(String, String)]) async throws -> TestResponse {
                try await anonymous.request(
                    "POST", "/v1/apps", headers: headers, body: body, contentType: "application/json")
            }
            let missing = try await create([("Cookie", cookie)])
            #expect(missing.status == 403)
            #expect(missing.errorCode == "csrf")
            let wrong = (csrf.first == "0" ? "1" : "0") + csrf.dropFirst()
            #expect(try await create([("Cookie", cookie), ("X-CSRF-Token", wrong)]).status == 403)
            #expect(
                try await create([("Cookie", cookie), ("X-CSRF-Token", csrf), ("Origin", "http://evil.example")]).status
                    == 403)
            #expect(
                try await create([("Cookie", cookie), ("X-CSRF-Token", csrf), ("Sec-Fetch-Site", "cross-site")]).status
                    == 403)
            // Nothing was created by the refused requests.
            #expect(try await harness.owner.get("/v1/apps").json?.arrayCount == 0)
            let made = try await create([
                ("Cookie", cookie), ("X-CSRF-Token", csrf), ("Origin", harness.service.url),
                ("Sec-Fetch-Site", "same-origin"),
            ])
            #expect(made.status == 201)
            // Without the cookie there is no session to borrow.
            #expect(try await create([("X-CSRF-Token", csrf)]).status == 401)
        }
    }

    @Test("behind a TLS proxy (X-Forwarded-Proto: https) the cookie is Secure; plain HTTP alone it is not")
    func secureBehindProxy() async throws {
        try await ServiceHarness.with { harness in
            for (headers, secure) in [([("X-Forwarded-Proto", "https")], true), ([], false)]
                as [([(String, String)], Bool)]
            {
                guard case .string(let code)? = try await harness.owner.post("/v1/session/links").json?["code"] else {
                    Issue.record("no code")
                    return
                }
                let session = try await harness.client(token: nil).post(
                    "/v1/session", json: #"{"code": "\#(code)"}"#, headers: headers)
                #expect(session.status == 201)
                #expect((session.headers["set-cookie"] ?? "").contains("Secure") == secure, "\(headers)")
            }
        }
    }

    @Test("a link for another device: with the base it is for, the whole link and its QR code; a bad base is refused")
    func linkForAnotherDevice() async throws {
        try await ServiceHarness.with { harness in
            let link = try await harness.owner.post(
                "/v1/session/links", json: #"{"base": "https://chime.example.org/"}"#)
            #expect(link.status == 201)
            guard case .string(let url)? = link.json?["url"], case .string(let code)? = link.json?["code"],
                case .string(let svg)? = link.json?["qrSVG"]
            else {
                Issue.record("no link: \(link.text)")
                return
            }
            #expect(url == "https://chime.example.org/#login=\(code)")
            #expect(svg.hasPrefix("<svg"))
            for base in ["javascript:alert(1)", "chime.example.org", "https://x.org/?a=1"] {
                let refused = try await harness.owner.post("/v1/session/links", json: #"{"base": "\#(base)"}"#)
                #expect(refused.status == 400 && refused.json?["error"]?["field"] == "base", "\(base)")
            }
        }
    }

    @Test("a session survives a restart of the service")
    func sessionSurvivesRestart() async throws {
        let directory = ServiceHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = ChimeService.Configuration(
            dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0), autoAllow: true)
        let first = try await RunningService.start(configuration: configuration, logger: .silent)
        let harness = ServiceHarness(service: first, directory: directory)
        let (cookie, _) = try await Self.signIn(harness)
        await first.stop()
        let second = try await RunningService.start(configuration: configuration, logger: .silent)
        let status = try await TestClient(port: second.port).get("/v1/session", headers: [("Cookie", cookie)]).status
        await second.stop()
        #expect(status == 200)
    }

    @Test("settings switches: only for an allowed app, only what it asked for, each field checked")
    func settings() async throws {
        try await ServiceHarness.with(autoAllow: false) { harness in
            let token = try await harness.createApp("com.example.alarm")
            let base = "/v1/apps/com.example.alarm"
            let owner = harness.owner
            func patch(_ json: String, client: TestClient? = nil) async throws -> TestResponse {
                try await (client ?? owner).request(
                    "PATCH", base + "/settings", body: Array(json.utf8), contentType: "application/json")
            }
            #expect(try await patch(#"{"soundSetting": "disabled"}"#).status == 409)
            _ = try await harness.client(token: token).post(
                base + "/authorization", json: #"{"options": ["alert", "sound"]}"#)
            _ = try await owner.post(base + "/authorization/answer", json: #"{"allow": true}"#)

            let changed = try await patch(#"{"soundSetting": "disabled", "showPreviewsSetting": "never"}"#)
            #expect(changed.status == 200)
            #expect(changed.json?["soundSetting"] == .string("disabled"))
            #expect(changed.json?["alertSetting"] == .string("enabled"))
            #expect(changed.json?["showPreviewsSetting"] == .string("never"))
            #expect(try await owner.get(base + "/settings").json?["soundSetting"] == .string("disabled"))

            let notAsked = try await patch(#"{"badgeSetting": "enabled"}"#)
            #expect(notAsked.status == 400)
            #expect(notAsked.json?["error"]?["field"] == .string("badgeSetting"))
            let badValue = try await patch(#"{"alertSetting": "on"}"#)
            #expect(badValue.json?["error"]?["field"] == .string("alertSetting"))
            #expect(try await patch(#"{"volume": 3}"#).json?["error"]?["field"] == .string("volume"))
            #expect(try await patch(#"{"showPreviewsSetting": 1}"#).status == 400)
            // The user's switches are not the app's to flip.
            #expect(
                try await patch(#"{"soundSetting": "enabled"}"#, client: harness.client(token: token)).status == 403)
        }
    }

    @Test("the owner's stream carries refresh hints (scheduled, categories, app) without ids; an app's stream does not")
    func hints() async throws {
        try await ServiceHarness.with { harness in
            let owner = try await SSEClient.open(
                harness.endpoint, path: "/v1/events", token: harness.service.ownerToken)
            let token = try await harness.createApp("com.example.alarm")
            let appStream = try await SSEClient.open(
                harness.endpoint, path: "/v1/apps/com.example.alarm/events", token: token)
            let app = harness.client(token: token)
            let base = "/v1/apps/com.example.alarm"
            _ = try await app.post(base + "/authorization", json: #"{"options": ["alert"]}"#)
            _ = try await app.put(base + "/categories", json: alarmCategory)
            _ = try await app.post(
                base + "/requests",
                json:
                    #"{"identifier": "later", "title": "A", "trigger": {"type": "timeInterval", "timeInterval": 600}}"#)
            _ = try await app.post(base + "/requests", json: #"{"identifier": "now", "title": "B"}"#)

            var kinds: [String] = []
            while !kinds.contains("delivered") {
                let event = try await owner.next()
                kinds.append(event.event ?? "")
                if ["scheduled", "categories", "app"].contains(event.event ?? "") {
                    #expect(event.id == nil, "hints are not in the log, so they have no id")
                    #expect(event.json?["app"] == .string("com.example.alarm"))
                }
                if event.event == "scheduled" { #expect(event.json?["identifiers"] == .array([.string("later")])) }
            }
            // The registration's app event, then the authorization's (the record's prompt state) with its settings.
            #expect(kinds == ["app", "app", "settings", "categories", "scheduled", "delivered"])
            let first = try await appStream.next()
            #expect(first.event == "settings")
            #expect(try await appStream.next().event == "delivered")
        }
    }

    /// The web center applies a `scheduled` event to its pending list without reading it (Tests/web):
    /// the event carries the requests as `GET .../requests` lists them; an add too large to carry
    /// (more than 100 requests; more than 64 KiB of them: NotificationHubTests) carries none, and
    /// the list is read.
    @Test("a scheduled event carries the requests as the pending list has them; a large add carries none")
    func scheduledCarriesTheRequests() async throws {
        // A manual clock: on the system clock, a run across 09:00 (the service's zone) fired the
        // daily request "sun" in the middle of the events this test reads one by one.
        try await ServiceHarness.with(clock: ManualClock(now: Date(timeIntervalSince1970: 1_796_212_800))) { harness in
            let owner = try await SSEClient.open(
                harness.endpoint, path: "/v1/events", token: harness.service.ownerToken)
            defer { owner.close() }
            let token = try await harness.createApp("com.example.tea")
            let app = harness.client(token: token)
            let base = "/v1/apps/com.example.tea"
            _ = try await app.post(base + "/authorization", json: #"{"options": ["alert"]}"#)
            /// The next `scheduled` event, skipping others.
            func nextScheduled() async throws -> JSONValue {
                while true {
                    let event = try await owner.next()
                    if event.event == "scheduled" { return try #require(event.json) }
                }
            }
            /// An add of requests `identifiers`.
            func add(_ identifiers: [String]) async throws {
                let requests = identifiers.map {
                    #"{"identifier": "\#($0)", "title": "Tea", "trigger": {"type": "timeInterval", "timeInterval": 600}}"#
                }
                let answer = try await app.post(base + "/requests", json: "[" + requests.joined(separator: ", ") + "]")
                #expect(answer.status == 201, "\(answer.text)")
            }

            try await add(["tea", "walk"])
            _ = try await app.post(
                base + "/requests",
                json:
                    #"{"identifier": "sun", "title": "Sun", "trigger": {"type": "calendar", "dateComponents": {"hour": 9}, "repeats": true}}"#
            )
            let first = try await nextScheduled()
            let second = try await nextScheduled()
            let listed = try #require(try await app.get(base + "/requests").json)
            guard case .array(let items) = listed, items.count == 3 else {
                Issue.record("the pending list: \(listed)")
                return
            }
            #expect(first["identifiers"] == .array([.string("tea"), .string("walk")]))
            #expect(first["requests"] == .array(Array(items[0..<2])))
            #expect(second["identifiers"] == .array([.string("sun")]))
            #expect(second["requests"] == .array([items[2]]))
            #expect(items[2]["nextTriggerDate"].map { $0 != .null } == true)

            try await add((0..<101).map { "many\($0)" })
            let many = try await nextScheduled()
            #expect(many["identifiers"] == .array([]))
            #expect(many["requests"] == nil)
        }
    }

    @Test("delivered notifications carry the presentation the settings allow")
    func presentation() async throws {
        try await ServiceHarness.with { harness in
            let token = try await harness.createApp("com.example.alarm")
            let app = harness.client(token: token)
            let base = "/v1/apps/com.example.alarm"
            _ = try await app.post(base + "/authorization", json: #"{"options": ["alert", "sound", "badge"]}"#)
            _ = try await app.post(
                base + "/requests",
                json: #"[{"identifier": "loud", "title": "A", "sound": "default"},"#
                    + #"{"identifier": "quiet", "title": "B", "interruptionLevel": "passive"}]"#)
            // Both are delivered by the scheduler: wait until the list has them (not for a fixed time).
            var list = try await app.get(base + "/notifications")
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                if case .array(let items)? = list.json, items.count == 2 { break }
                try await Sleep.for(.milliseconds(10))
                list = try await app.get(base + "/notifications")
            }
            guard case .array(let items)? = list.json else {
                Issue.record("no list: \(list.text)")
                return
            }
            let byIdentifier = Dictionary(
                uniqueKeysWithValues: items.compactMap { item -> (String, JSONValue)? in
                    guard case .string(let identifier)? = item["identifier"], let presentation = item["presentation"]
                    else { return nil }
                    return (identifier, presentation)
                })
            #expect(byIdentifier["loud"] == .array([.string("sound"), .string("list"), .string("banner")]))
            #expect(byIdentifier["quiet"] == .array([.string("list")]))
        }
    }
}
