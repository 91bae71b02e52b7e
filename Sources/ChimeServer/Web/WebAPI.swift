import ChimeCore
import Foundation

/// The web notification center's side of the API: its files, signing in and out, and the
/// settings switches. See ``WebSessions`` for the sign-in flow and the CSRF rules.
extension ChimeAPI {
    // MARK: Files

    /// `GET /`: the center's page.
    func webPage(_ request: HTTPRequest, route: Route) -> HTTPResponse {
        webFile("index.html", request: request, route: route)
    }

    /// `GET /{asset}`: one of its files (the route matches only names ``WebAssets`` has).
    func webAsset(_ request: HTTPRequest, route: Route) -> HTTPResponse {
        webFile(route["asset"], request: request, route: route)
    }

    /// A file of the center, with its security headers; `304` when the browser's copy is current.
    func webFile(_ name: String, request: HTTPRequest, route: Route) -> HTTPResponse {
        guard let file = WebAssets.file(named: name) else {
            return APIError.notFound("no file \(name)").response(route: route.template)
        }
        var headers: [(name: String, value: String)] = [
            ("ETag", file.etag), ("Cache-Control", "no-cache"), ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
        ]
        if file.contentType.hasPrefix("text/html") {
            headers += [
                ("Content-Security-Policy", WebAssets.contentSecurityPolicy), ("X-Frame-Options", "DENY"),
                ("Cross-Origin-Opener-Policy", "same-origin"),
            ]
        }
        if let tags = request.header("if-none-match"),
            tags.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == file.etag })
        {
            return HTTPResponse(status: 304, headers: headers, route: route.template)
        }
        return HTTPResponse(
            status: 200, headers: [("Content-Type", file.contentType)] + headers, body: .bytes(file.bytes),
            route: route.template)
    }

    // MARK: Sessions

    /// `POST /v1/session` `{"code": "..."}`: trades a one-time login code for a session cookie.
    func createSession(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        try checkOrigin(request)
        typealias Field = JSONFieldName.Session
        let object = try JSONObjectReader(try jsonBody(request), what: "a sign-in", accepted: Field.login)
        let code = try object.requiredString(Field.code, hint: " (the sign-in link's code)")
        guard try await sessions.redeemLinkCode(code) else {
            throw APIError(
                401, "invalidLogin",
                "this sign-in link was already used or has expired (links last 2 minutes and work once); run `chime open` for a new one",
                field: Field.code)
        }
        let (secret, expires) = try await sessions.startSession()
        var response = json(Self.session(secret: secret, expires: expires), status: 201, route: route)
        response.headers += [
            ("Set-Cookie", WebSessions.setCookie(secret, secure: secureCookie(for: request))),
            ("Cache-Control", "no-store"),
        ]
        return response
    }

    /// `POST /v1/session/links` (owner token), optionally `{"base": "https://chime.example.org"}`: a
    /// one-time login code, and with a base the link and its QR code.
    func createLoginLink(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        // Optionally the base URL the link is for (the web center signing in another device
        // sends the address it is open at): then the link and its QR code come back too.
        var base: String?
        if let body = try jsonBody(request, optional: true) {
            let field = JSONFieldName.Session.base
            base = try JSONObjectReader(body, what: "a sign-in link's address", accepted: [field]).string(field)
            if let text = base {
                guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil,
                    url.query == nil, url.fragment == nil, text.utf8.count <= 512
                else {
                    throw APIError.badRequest(
                        "invalidValue",
                        "base is '\(text.prefix(80))'; give the http(s) address the center is open at, such as https://chime.example.org",
                        field: JSONFieldName.Session.base)
                }
            }
        }
        let (code, expires) = try await sessions.makeLinkCode()
        while base?.hasSuffix("/") == true { base?.removeLast() }
        return json(try LoginLink(code: code, expires: expires, base: base).json, status: 201, route: route)
    }

    /// Whether the session cookie gets `Secure`: when this server speaks HTTPS, or when a reverse
    /// proxy in front of it does (`X-Forwarded-Proto: https`; a client that only claims so gets a
    /// cookie its browser keeps to HTTPS, which takes nothing from anyone).
    func secureCookie(for request: HTTPRequest) -> Bool {
        secureCookies
            || request.header("x-forwarded-proto")?.split(separator: ",").first?.trimmingCharacters(in: .whitespaces)
                .lowercased() == "https"
    }

    /// `GET /v1/session`: whether the browser is signed in, and its CSRF token.
    func currentSession(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        guard let secret = WebSessions.sessionCookie(in: request), let expires = try await sessions.validate(secret)
        else {
            throw APIError(401, "signedOut", "not signed in; run `chime open` and follow the link it prints")
        }
        var response = json(Self.session(secret: secret, expires: expires), route: route)
        response.headers.append(("Cache-Control", "no-store"))
        return response
    }

    /// What `POST` and `GET /v1/session` answer: the session's CSRF token and when it ends.
    static func session(secret: String, expires: Date) -> JSONValue {
        [
            JSONFieldName.Session.csrfToken: .string(WebSessions.csrfToken(forSession: secret)),
            JSONFieldName.Session.expires: JSONMapping.json(expires),
        ]
    }

    /// `DELETE /v1/session`: signs out (the session ends on the server too).
    func deleteSession(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        guard let secret = WebSessions.sessionCookie(in: request) else {
            throw APIError(401, "signedOut", "not signed in")
        }
        try await checkSession(secret, request: request)
        try await sessions.endSession(secret)
        endFeeds(ofSession: secret)
        return HTTPResponse(
            status: 204, headers: [("Set-Cookie", WebSessions.setCookie(nil, secure: secureCookie(for: request)))],
            route: route.template)
    }

    /// Checks a request authenticated by the session cookie: a live session, and for a state
    /// change the session's CSRF token in `X-CSRF-Token` and a same-origin request.
    func checkSession(_ secret: String, request: HTTPRequest) async throws {
        guard try await sessions.validate(secret) != nil else {
            throw APIError(401, "signedOut", "the session has ended; run `chime open` to sign in again")
        }
        let method = request.method.uppercased()
        guard method != "GET", method != "HEAD" else { return }
        try checkChange(secret, request: request)
    }

    /// What a change made with the session cookie must show: a request from the center's own
    /// origin, with the session's CSRF token. Writes, and reads that change what the service
    /// does (an event stream that declares itself an app's service extension or its front).
    func checkChange(_ secret: String, request: HTTPRequest) throws {
        try checkOrigin(request)
        guard let presented = request.header("x-csrf-token"), !presented.isEmpty else {
            throw APIError(
                403, "csrf", "a change made with the session cookie needs the X-CSRF-Token header from GET /v1/session")
        }
        guard Tokens.equal(presented, WebSessions.csrfToken(forSession: secret)) else {
            throw APIError(403, "csrf", "the X-CSRF-Token header does not match this session; reload the page")
        }
    }

    /// Refuses requests a browser marks as coming from another site.
    func checkOrigin(_ request: HTTPRequest) throws {
        if let site = request.header("sec-fetch-site"), site != "same-origin", site != "none" {
            throw APIError(403, "csrf", "a request from another site (Sec-Fetch-Site: \(site)) cannot use the session")
        }
        if let origin = request.header("origin"), let host = request.header("host") {
            let stripped = origin.replacingOccurrences(of: "http://", with: "").replacingOccurrences(
                of: "https://", with: "")
            guard stripped == host else {
                throw APIError(
                    403, "csrf", "a request from another origin (\(origin.prefix(100))) cannot use the session")
            }
        }
    }

    // MARK: Settings

    /// `PATCH /v1/apps/{app}/settings`: `{"soundSetting": "disabled", "showPreviewsSetting": "never"}`
    /// (``SettingsChange/init(json:)``). An app the user has not allowed has none to change: 409.
    func updateSettings(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let change = try SettingsChange(json: try jsonBody(request))
        return json(try await engine.changeSettings(app: route["app"], change).json, route: route)
    }
}
