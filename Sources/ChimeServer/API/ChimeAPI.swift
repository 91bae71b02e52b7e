import ChimeCore
import Foundation
import Synchronization

/// The HTTP API of the notification center: routes, Bearer authentication, JSON in and out.
///
/// Every rule lives in the engine; this type only translates HTTP to engine calls and engine
/// results and errors back to HTTP.
///
/// ```swift
/// let api = ChimeAPI(engine: engine, ownerTokenHash: Tokens.hash(ownerToken), metrics: metrics)
/// let server = HTTPServer(configuration: .init(), handler: api)
/// ```
public final class ChimeAPI: HTTPHandler {
    /// Body limits in bytes.
    public static let defaultBodyLimit = 64 * 1024
    public static let pushBodyLimit = 4096

    let engine: NotificationEngine
    let ownerTokenHash: String
    let metrics: Metrics
    let logger: ServerLogger
    /// Web sign-in: login codes, session cookies, CSRF tokens.
    let sessions: WebSessions
    /// Whether cookies get `Secure` (the server speaks HTTPS).
    let secureCookies: Bool
    /// Event frames encoded once for every stream that carries them.
    let frames = EventFeed.FrameCache()
    /// What the service asks of connected apps (service extension, willPresent) and their answers.
    let channels: AppChannels
    /// Every app's token hash: an app's request is authorized in O(1), off the engine's writer.
    let tokens = TokenIndex()
    private let tokensLoading = Mutex<Task<Void, any Error>?>(nil)
    /// Event feeds opened with a web session, by the session's hash: closed when it signs out.
    private let sessionFeeds = Mutex<[String: [ObjectIdentifier: EventFeed]]>([:])
    /// Tokens given to processes the service started for an app (background launch), by hash:
    /// valid for that app only, until the process ends.
    private let launchTokens = Mutex<[String: String]>([:])
    /// How many event streams each app has open with its own credential (its running process).
    private let appStreams = Mutex<[String: Int]>([:])
    private let appStreamClosed = Mutex<(@Sendable (String) -> Void)?>(nil)
    private let latenessSubscription: Int
    private let appSubscription: Int

    /// - Parameters:
    ///   - ownerTokenHash: the SHA-256 (hex) of the owner token.
    ///   - secureCookies: mark the web center's session cookie `Secure` (set when serving HTTPS).
    ///   - serviceExtensionTimeLimit: how long a connected app's notification service extension may
    ///     take on a push (30 s, as on iOS).
    public init(engine: NotificationEngine, ownerTokenHash: String, metrics: Metrics, logger: ServerLogger = .silent,
                secureCookies: Bool = false, serviceExtensionTimeLimit: TimeInterval = 30) {
        self.engine = engine
        self.ownerTokenHash = ownerTokenHash
        self.metrics = metrics
        self.logger = logger
        self.sessions = WebSessions(engine: engine)
        self.secureCookies = secureCookies
        self.channels = AppChannels(engine: engine, serviceExtensionTimeLimit: serviceExtensionTimeLimit)
        let clock = engine.clock
        latenessSubscription = engine.subscribe(app: nil) { [metrics] event in
            guard let notification = event.delivery?.notification else { return }
            switch notification.request.trigger {
            case .timeInterval?, .calendar?: metrics.recordLateness(clock.now.timeIntervalSince(notification.date))
            default: break
            }
        }
        // Keep the token index current for changes made elsewhere (another node, another path):
        // a removal is dropped as it is published, a change read again on the writer.
        appSubscription = engine.subscribe(app: nil) { [tokens, engine] event in
            guard case .app(let change) = event.payload else { return }
            let app = event.app
            switch change {
            case .removed: tokens.set(app: app, hash: nil)
            case .updated:
                engine.submit({ core in
                    if tokens.isLoaded { tokens.set(app: app, hash: try core.store.app(app)?.tokenHash) }
                }, completion: { _ in })
            }
        }
    }

    deinit {
        engine.unsubscribe(latenessSubscription)
        engine.unsubscribe(appSubscription)
    }

    /// Reads every app's token hash once, on the writer, before the first token is checked.
    func loadTokens() async throws {
        if tokens.isLoaded { return }
        let task = tokensLoading.withLock { loading -> Task<Void, any Error> in
            if let loading { return loading }
            let engine = self.engine
            let tokens = self.tokens
            let task = Task { try await engine.perform { core in tokens.load(try core.store.apps()) } }
            loading = task
            return task
        }
        do {
            try await task.value
        } catch {
            tokensLoading.withLock { $0 = nil }
            throw error
        }
    }

    // MARK: - HTTPHandler

    public func bodyLimit(for request: HTTPRequest) -> Int {
        request.path.hasPrefix("/3/") ? Self.pushBodyLimit : Self.defaultBodyLimit
    }

    public func payloadTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse {
        if request.path.hasPrefix("/3/") {
            return APNsEndpoint.reason("PayloadTooLarge", status: 413, message: "the payload is over \(limit) bytes")
        }
        return APIError(413, "tooLarge", "the body is over the limit of \(limit) bytes for this route").response(route: Route.match(request).template)
    }

    /// The JSON error of the route's kind: `{"error": …}`, or `{"reason": …}` on the push endpoint.
    public func refused(_ request: HTTPRequest, problem: RequestProblem) -> HTTPResponse {
        if request.path.hasPrefix("/3/") {
            return APNsEndpoint.reason(problem.status == 414 ? "BadPath" : "BadRequest", status: problem.status, message: problem.message)
        }
        return APIError(problem.status, problem.code, problem.message).response(route: "refused")
    }

    public func unavailable(_ request: HTTPRequest, reason: String) -> HTTPResponse {
        var error = APIError(503, "unavailable", reason)
        error.headers = [("Retry-After", "1")]
        return error.response(route: Route.match(request).template)
    }

    public func handle(_ request: HTTPRequest) async -> HTTPResponse {
        let route = Route.match(request)
        do {
            return try await dispatch(request, route: route)
        } catch {
            let apiError = APIError.from(error)
            if apiError.status >= 500 {
                logger.error("handler failed", ["route": route.template, "error": String(describing: error)])
            }
            return apiError.response(route: route.template)
        }
    }

    // MARK: - Dispatch

    private func dispatch(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        switch route.endpoint {
        case .none:
            throw APIError.notFound("no route \(request.path); see GET /openapi.json for the API")
        case .methodNotAllowed(let allowed):
            var error = APIError(405, "methodNotAllowed", "\(request.method) is not allowed on \(request.path); allowed: \(allowed.joined(separator: ", "))")
            error.headers = [("Allow", allowed.joined(separator: ", "))]
            throw error
        case .invalidEncoding(let message, let field):
            throw APIError.badRequest("invalidEncoding", message, field: field)
        case .push:
            return await APNsEndpoint(api: self).handle(request)
        case .healthz:
            return json(["status": "ok"], route: route)
        case .metrics:
            return try await metricsResponse(route: route)
        case .openAPI:
            return HTTPResponse(status: 200, contentType: "application/json", body: Array(OpenAPIDocument.json.utf8), route: route.template)
        case .webPage:
            return webFile("index.html", request: request, route: route)
        case .webAsset(let name):
            return webFile(name, request: request, route: route)
        case .createSession:
            return try await createSession(request, route: route)
        case .getSession:
            return try await currentSession(request, route: route)
        case .deleteSession:
            return try await deleteSession(request, route: route)
        default:
            break
        }

        let caller = try await authenticate(request)
        if let app = route.app {
            try await authorize(caller, app: app)
            if route.endpoint.isOwnerOnly, caller != .owner {
                throw APIError.forbidden("this route is for the owner token (the user's own tools), not for apps")
            }
        } else if caller != .owner {
            throw try await forbiddenOrUnauthorized(request, "this route is for the owner token")
        }
        let app = route.app ?? ""

        switch route.endpoint {
        case .listApps:
            let page = try Page(request)
            let apps = try await engine.apps(after: page.after, limit: page.limit + 1)
            return page.response(apps.map { ($0.json, $0.bundleIdentifier) }, request: request, route: route)
        case .createApp:
            return try await createApp(request, route: route)
        case .getApp:
            return json(try await engine.app(app).json, route: route)
        case .updateApp:
            let object = try Fields(try jsonBody(request), accepted: ["launch"])
            guard let value = object.object["launch"] else {
                throw APIError.badRequest("invalidValue", "launch is missing; give a command line, an array of words, or null to remove it",
                                          field: "launch")
            }
            return json(try await engine.setLaunchCommand(try LaunchCommand.decode(value), app: app).json, route: route)
        case .removeApp:
            // The index drops the app (and the app's event streams end) as the removal is announced.
            try await engine.removeApp(app)
            return HTTPResponse(status: 204, route: route.template)
        case .rotateToken:
            let token = Tokens.make()
            _ = try await storeTokenHash(Tokens.hash(token), app: app, create: false)
            return json(["bundleIdentifier": .string(app), "token": .string(token)], route: route)
        case .requestAuthorization:
            let body = try jsonBody(request, optional: true)
            var options: UNAuthorizationOptions = [.alert, .sound, .badge]
            if let body {
                let object = try Fields(body, accepted: ["options"])
                if let value = object["options"] { options = try UNAuthorizationOptions(json: value, field: "options") }
            }
            let (granted, settings) = try await engine.requestAuthorization(app: app, options: options)
            return json(["granted": .bool(granted), "status": .string(settings.authorizationStatus.name), "settings": settings.json], route: route)
        case .answerAuthorization:
            let object = try Fields(try jsonBody(request), accepted: ["allow"])
            let allow = try object.requiredBool("allow")
            let settings = try await engine.answerAuthorization(app: app, allow: allow)
            return json(["granted": .bool(settings.authorizationStatus.allowsDelivery), "status": .string(settings.authorizationStatus.name),
                         "settings": settings.json], route: route)
        case .settings:
            return json(try await engine.settings(app: app).json, route: route)
        case .setBadge:
            let object = try Fields(try jsonBody(request), accepted: ["badge"])
            guard let value = object["badge"] else { throw APIError.badRequest("invalidValue", "badge is missing; give a count, 0 clears it", field: "badge") }
            guard case .integer(let count) = value, let badge = Int(exactly: count) else {
                throw APIError.badRequest("invalidValue", "badge: expected a whole number, found \(value.kindDescription)", field: "badge")
            }
            try await engine.setBadge(badge, app: app)
            return json(["badge": .integer(Int64(badge))], route: route)
        case .updateSettings:
            return json(try await updateSettings(request, app: app).json, route: route)
        case .createLoginLink:
            // Optionally the base URL the link is for (the web center signing in another device
            // sends the address it is open at): then the link and its QR code come back too.
            var base: String?
            if let body = try jsonBody(request, optional: true) {
                base = try Fields(body, accepted: ["base"]).string("base")
                if let text = base {
                    guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil,
                          url.query == nil, url.fragment == nil, text.utf8.count <= 512 else {
                        throw APIError.badRequest("invalidValue", "base is '\(text.prefix(80))'; give the http(s) address the center is open at, such as https://chime.example.org",
                                                  field: "base")
                    }
                }
            }
            let (code, expires) = try await sessions.makeLinkCode()
            var answer: JSONObject = ["code": .string(code), "path": .string("/#login=\(code)"), "expires": JSONMapping.json(expires)]
            if var base {
                while base.hasSuffix("/") { base.removeLast() }
                let link = base + "/#login=\(code)"
                answer["url"] = .string(link)
                answer["qrSVG"] = .string(try QRCode(link).svg())
            }
            return json(.object(answer), status: 201, route: route)
        case .getCategories:
            // Categories are few and replaced together; the cursor is a position.
            let page = try Page(request)
            let start = Int(try page.number())
            let categories = try await engine.categories(app: app).enumerated().dropFirst(start).prefix(page.limit + 1)
            return page.response(categories.map { ($0.element.json, String($0.offset + 1)) }, request: request, route: route)
        case .putCategories:
            let categories = try JSONMapping.categories(try jsonBody(request))
            try await engine.setCategories(categories, app: app)
            return json(.array(categories.map(\.json)), route: route)
        case .addRequests:
            let body = try jsonBody(request)
            let requests = try JSONMapping.requests(body)
            if requests.isEmpty { throw APIError.badRequest("invalidValue", "the array is empty; send one request object or a non-empty array") }
            let dates = try await engine.add(requests, app: app)
            let now = engine.clock.now
            let added = zip(requests, dates).map { PendingRequest(request: $0, nextFireDate: $1, anchor: now).json }
            if case .array = body { return json(.array(added), status: 201, route: route) }
            return json(added[0], status: 201, route: route)
        case .send:
            return try await send(request, app: app, route: route)
        case .listRequests:
            let page = try Page(request)
            let pending = try await engine.pending(app: app, after: try page.number(), limit: page.limit + 1)
            return page.response(pending.map { ($0.json, String($0.sequence)) }, request: request, route: route)
        case .removeRequests:
            let identifiers = request.queryValues("identifier")
            let removed = try await engine.removePending(app: app, identifiers: identifiers.isEmpty ? nil : identifiers)
            return json(["removed": .array(removed.map(JSONValue.string))], route: route)
        case .listNotifications:
            let thread = request.queryValues("thread").last
            let categories = Dictionary(try await engine.categories(app: app).map { ($0.identifier, $0) }, uniquingKeysWith: { a, _ in a })
            let page = try Page(request)
            let delivered = try await engine.delivered(app: app, thread: thread, after: try page.deliveredCursor(), limit: page.limit + 1)
            let settings = try await engine.settings(app: app)
            // Each with the presentation a surface gives it now (the app is not in front): what
            // the web center uses to decide on a banner and a sound.
            return page.response(delivered.map { notification in
                (notification.json(category: categories[notification.request.content.categoryIdentifier],
                                   presentation: Presentation.background(for: notification.request.content, settings: settings)),
                 Page.cursor(notification))
            }, request: request, route: route)
        case .removeNotifications:
            let identifiers = request.queryValues("identifier")
            let thread = request.queryValues("thread").last
            let removed = try await engine.removeDelivered(app: app, identifiers: identifiers.isEmpty ? nil : identifiers, thread: thread)
            return json(["removed": .array(removed.map(JSONValue.string))], route: route)
        case .respond(let identifier):
            let object = try Fields(try jsonBody(request), accepted: ["actionIdentifier", "userText"])
            let action = try object.requiredString("actionIdentifier")
            let text = try object.string("userText")
            guard let response = try await engine.respond(app: app, notification: identifier, action: action, userText: text) else {
                return HTTPResponse(status: 204, route: route.template)
            }
            return json(response.json, status: 201, route: route)
        case .outbox:
            let page = try Page(request)
            let responses = try await engine.outbox(app: app, after: try page.number(), limit: page.limit + 1)
            return page.response(responses.map { ($0.json, String($0.id)) }, request: request, route: route)
        case .acknowledge(let idText):
            guard let id = Int64(idText) else {
                throw APIError.notFound("response id \(idText) is not a number; use the id from GET /v1/apps/\(app)/responses", field: "id")
            }
            guard try await engine.acknowledge(response: id, app: app) else {
                throw APIError.notFound("no response \(id) in \(app)'s outbox (already acknowledged?)", field: "id")
            }
            return json(["acknowledged": .integer(id)], route: route)
        case .appEvents:
            // A Chime app says what it does while connected: run its service extension, answer willPresent.
            let serviceExtension = try Self.flag(request, "serviceExtension"), foreground = try Self.flag(request, "foreground")
            let response = try await openFeed(request, app: app, caller: caller, route: route)
            if case .app = caller, case .stream(let stream) = response.body { countAppStream(app, stream) }
            if case .stream(let stream) = response.body {
                channels.connect(app: app, stream: stream, client: request.queryValues("client").last,
                                 serviceExtension: serviceExtension, foreground: foreground)
            }
            return response
        case .serviceExtensionContent(let id):
            let content = try NotificationContent(json: try jsonBody(request), field: "")
            try Validation.validate(content, field: "")
            guard channels.answerServiceExtension(app: app, id: id, content: content) else {
                throw APIError.notFound("no push \(id) waits for \(app)'s service extension (its time ran out, or it was answered)", field: "id")
            }
            return HTTPResponse(status: 204, route: route.template)
        case .presentation(let identifier):
            let object = try Fields(try jsonBody(request), accepted: ["options"])
            guard let value = object["options"] else {
                throw APIError.badRequest("invalidValue", "options is missing; give willPresent's answer, such as [\"banner\", \"sound\"]", field: "options")
            }
            let options = try UNNotificationPresentationOptions(json: value, field: "options")
            guard channels.reportPresentation(app: app, identifier: identifier, options: options) else {
                throw APIError(409, "notInFront", "\(app) has no event stream open with foreground=true; its willPresent answer is not asked for")
            }
            return HTTPResponse(status: 204, route: route.template)
        case .allEvents:
            return try await openFeed(request, app: nil, caller: caller, route: route)
        case .location:
            let coordinate = try Coordinate(json: try jsonBody(request), field: "")
            let delivered = try await engine.updateLocation(coordinate)
            return json(["delivered": .array(delivered.map { $0.json })], route: route)
        case .deviceToken:
            return json(["deviceToken": .string(try await engine.app(app).deviceToken)], route: route)
        case .none, .methodNotAllowed, .invalidEncoding, .push, .healthz, .metrics, .openAPI, .webPage, .webAsset, .createSession, .getSession,
             .deleteSession:
            throw APIError.notFound("no route \(request.path)")
        }
    }

    // MARK: - Apps

    private func createApp(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let object = try Fields(try jsonBody(request), accepted: ["bundleIdentifier", "launch"])
        let bundle = try object.requiredString("bundleIdentifier")
        let launch = try object.object["launch"].flatMap { value throws(ChimeError) in try LaunchCommand.decode(value) }
        try Validation.validateBundleIdentifier(bundle)
        if let existing = try await lookup(bundle), existing.tokenHash != nil {
            throw APIError(409, "appExists", "\(bundle) is already registered; rotate its token with POST /v1/apps/\(bundle)/token",
                           field: "bundleIdentifier")
        }
        let token = Tokens.make()
        var record = try await storeTokenHash(Tokens.hash(token), app: bundle, create: true)
        if let launch { record = try await engine.setLaunchCommand(launch, app: bundle) }
        guard case .object(var object) = record.json else { throw APIError(500, "internal", "unexpected app encoding") }
        object["token"] = .string(token)
        return json(.object(object), status: 201, route: route)
    }

    /// Writes the app's token hash, creating the record if asked, in one engine operation (through
    /// the engine's write-through app cache, so a later settings write keeps the new hash). The
    /// token index takes the new hash in the same operation, so the old token fails from the
    /// moment the change commits.
    private func storeTokenHash(_ hash: String, app: String, create: Bool) async throws -> AppRecord {
        let deviceToken = Tokens.make()
        try await loadTokens()
        let tokens = self.tokens
        do {
            return try await engine.perform { core in
                var record: AppRecord
                if let existing = try core.store.app(app) {
                    record = existing
                } else if create {
                    record = AppRecord(bundleIdentifier: app, created: core.clock.now, deviceToken: deviceToken)
                } else {
                    throw ChimeError(.notFound, field: "app", "no app \(app)")
                }
                record.tokenHash = hash
                try core.putApp(record)
                tokens.set(app: app, hash: hash)
                return record
            }
        } catch {
            // The transaction may have failed after the index took the hash: read the store again.
            engine.submit({ core in tokens.set(app: app, hash: try core.store.app(app)?.tokenHash) }, completion: { _ in })
            throw error
        }
    }

    /// The app's record without creating it.
    func lookup(_ app: String) async throws -> AppRecord? {
        try await engine.perform { try $0.store.app(app) }
    }

    // MARK: - Authentication

    enum Caller: Equatable {
        case owner
        /// A token that is not the owner's: the SHA-256 of what was presented.
        case app(tokenHash: String)
    }

    func bearerToken(_ request: HTTPRequest) -> String? {
        guard let value = request.header("authorization") else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return "" }
        var token = parts[1]
        while token.last == " " || token.last == "\t" { token.removeLast() }
        return String(token)
    }

    func authenticate(_ request: HTTPRequest) async throws -> Caller {
        if bearerToken(request) == nil, let secret = WebSessions.sessionCookie(in: request) {
            try await checkSession(secret, request: request)
            return .owner
        }
        guard let token = bearerToken(request) else {
            throw APIError.unauthorized("missing Authorization: Bearer <token>; use the app's token or the owner token from the data directory's owner-token file")
        }
        guard !token.isEmpty else { throw APIError.unauthorized("the Authorization header must be \"Bearer <token>\"") }
        let hash = Tokens.hash(token)
        if Tokens.equal(hash, ownerTokenHash) { return .owner }
        return .app(tokenHash: hash)
    }

    /// Checks that the caller may use `/v1/apps/{app}/…`. Another app's token gets 403 whether or
    /// not `app` exists, so nothing leaks about other apps. An app's token is checked in the token
    /// index: no store read and no trip through the writer, known token or not.
    func authorize(_ caller: Caller, app: String) async throws {
        if case .app(let hash) = caller, let launched = launchTokens.withLock({ $0[hash] }) {
            guard launched == app else {
                throw APIError.forbidden("this token belongs to another app; an app's token reaches only /v1/apps/{its bundle identifier}/…")
            }
            return
        }
        switch caller {
        case .owner:
            guard try await lookup(app) != nil else {
                throw APIError.notFound("no app \(app); register it with POST /v1/apps", field: "app")
            }
        case .app(let hash):
            try await loadTokens()
            switch tokens.app(forHash: hash) {
            case app?: return
            case _?: throw APIError.forbidden("this token belongs to another app; an app's token reaches only /v1/apps/{its bundle identifier}/…")
            case nil: throw APIError.unauthorized("the token is not valid; use the token printed when the app was registered")
            }
        }
    }

    func forbiddenOrUnauthorized(_ request: HTTPRequest, _ message: String) async throws -> APIError {
        guard let token = bearerToken(request), !token.isEmpty else { return APIError.unauthorized("missing Authorization: Bearer <token>") }
        if try await owner(ofTokenHash: Tokens.hash(token)) != nil { return APIError.forbidden(message) }
        return APIError.unauthorized("the token is not valid")
    }

    /// The app whose token hashes to `hash`, if any.
    func owner(ofTokenHash hash: String) async throws -> String? {
        try await loadTokens()
        return tokens.app(forHash: hash)
    }

    // MARK: - Event feeds

    /// Opens an event feed that ends when the credential that opened it stops being valid: an
    /// app's token rotated or the app removed, a web session signed out or expired.
    private func openFeed(_ request: HTTPRequest, app: String?, caller: Caller, route: Route) async throws -> HTTPResponse {
        let credential: EventFeed.Credential
        switch caller {
        case .app(let hash): credential = .app(tokenHash: hash)
        case .owner:
            if bearerToken(request) == nil, let secret = WebSessions.sessionCookie(in: request),
               let expires = try await sessions.validate(secret) {
                credential = .session(hash: Tokens.hash(secret), expires: expires)
            } else {
                credential = .owner
            }
        }
        let engine = self.engine
        return try await EventFeed.open(
            engine: engine, app: app, credential: credential, request: request, route: route.template, frames: frames,
            stillValid: { [weak self] feed in
                guard case .app(let hash) = feed.credential, let app else { return true }
                // A launched process's token lasts as long as the process, whatever the app's token.
                if self?.launchTokens.withLock({ $0[hash] }) == app { return true }
                // Read on the writer, after the change that prompted the question.
                let stored = try? await engine.perform { core in try core.store.app(app)?.tokenHash }
                return stored.flatMap { $0 }.map { Tokens.equal($0, hash) } ?? false
            },
            opened: { [weak self] feed in self?.track(feed) })
    }

    /// Remembers a feed opened with a web session, and ends it when the session expires.
    private func track(_ feed: EventFeed) {
        guard case .session(let hash, let expires) = feed.credential else { return }
        let id = ObjectIdentifier(feed)
        sessionFeeds.withLock { $0[hash, default: [:]][id] = feed }
        let clock = engine.clock
        let expiry = Task {
            try? await clock.sleep(until: expires)
            if !Task.isCancelled { feed.end() }
        }
        feed.onEnd { [weak self] in
            expiry.cancel()
            self?.sessionFeeds.withLock { feeds in
                feeds[hash]?[id] = nil
                if feeds[hash]?.isEmpty == true { feeds[hash] = nil }
            }
        }
    }

    /// Ends the feeds a web session opened (it signed out).
    func endFeeds(ofSession secret: String) {
        let feeds = sessionFeeds.withLock { $0.removeValue(forKey: Tokens.hash(secret)) } ?? [:]
        for feed in feeds.values { feed.end() }
    }

    // MARK: - Background launch

    /// A token for a process the service starts for `app`: it authorizes that app's routes until
    /// ``revokeLaunchToken(_:)``. Never stored; the app's own token is not needed.
    func issueLaunchToken(for app: String) -> String {
        let token = Tokens.make()
        launchTokens.withLock { $0[Tokens.hash(token)] = app }
        return token
    }

    func revokeLaunchToken(_ token: String) {
        _ = launchTokens.withLock { $0.removeValue(forKey: Tokens.hash(token)) }
    }

    /// Whether the app has an event stream open with its own credential (its process is running).
    func hasAppStream(_ app: String) -> Bool {
        appStreams.withLock { ($0[app] ?? 0) > 0 }
    }

    /// Called with the app when one of its own streams ends (the launcher looks again).
    var onAppStreamClosed: (@Sendable (String) -> Void)? {
        get { appStreamClosed.withLock { $0 } }
        set { appStreamClosed.withLock { $0 = newValue } }
    }

    private func countAppStream(_ app: String, _ stream: EventStream) {
        appStreams.withLock { $0[app, default: 0] += 1 }
        stream.onEnd { [weak self] in
            guard let self else { return }
            self.appStreams.withLock { streams in
                streams[app, default: 1] -= 1
                if streams[app] == 0 { streams[app] = nil }
            }
            self.onAppStreamClosed?(app)
        }
    }

    // MARK: - Bodies and answers

    /// The body as JSON; 415 unless the content type is JSON, 400 when malformed or (unless
    /// `optional`) empty.
    func jsonBody(_ request: HTTPRequest, optional: Bool = false) throws -> JSONValue? {
        if request.body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            if optional { return nil }
            throw APIError.badRequest("malformedInput", "the body is empty; send a JSON document (Content-Type: application/json)")
        }
        try requireJSONContentType(request)
        do {
            return try JSONValue.parse(request.body)
        } catch {
            throw APIError.badRequest("malformedInput", "the body is not valid JSON: \(error.message)", field: error.field)
        }
    }

    func jsonBody(_ request: HTTPRequest) throws -> JSONValue {
        try jsonBody(request, optional: false)!
    }

    func requireJSONContentType(_ request: HTTPRequest) throws {
        let type = request.header("content-type")?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        guard type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json")) else {
            throw APIError(415, "unsupportedMediaType",
                           type.isEmpty ? "the body has no Content-Type; send it as application/json"
                                        : "Content-Type \(type) is not accepted here; send the body as application/json")
        }
    }

    /// A boolean query argument: absent is `false`; `true`/`1` and `false`/`0` are accepted.
    static func flag(_ request: HTTPRequest, _ name: String) throws -> Bool {
        guard let value = request.queryValues(name).last else { return false }
        switch value.lowercased() {
        case "true", "1", "": return true
        case "false", "0": return false
        default: throw APIError.badRequest("invalidValue", "\(name) is \"\(value.prefix(40))\"; accepted: true, false", field: name)
        }
    }

    func json(_ value: JSONValue, status: Int = 200, route: Route) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", body: value.serializedBytes(), route: route.template)
    }

    private func metricsResponse(route: Route) async throws -> HTTPResponse {
        let pending = try await engine.pendingCount()
        let delivered = try await engine.deliveredCount()
        let text = metrics.render(gauges: [
            ("chime_pending", "Pending notification requests, all apps.", Double(pending)),
            ("chime_delivered", "Delivered notifications still in the notification center, all apps.", Double(delivered)),
        ])
        return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: Array(text.utf8), route: route.template)
    }
}

/// Reads a small JSON object body: unknown fields are errors that name them.
struct Fields {
    let object: JSONObject

    init(_ value: JSONValue, accepted: [String]) throws {
        guard case .object(let object) = value else {
            throw APIError.badRequest("invalidValue", "expected a JSON object with \(accepted.joined(separator: ", ")), found \(value.kindDescription)")
        }
        for key in object.keys where !accepted.contains(key) {
            throw APIError.badRequest("invalidValue", "\(key) is not a field here; accepted: \(accepted.joined(separator: ", "))", field: key)
        }
        self.object = object
    }

    subscript(key: String) -> JSONValue? {
        if case .null? = object[key] { return nil }
        return object[key]
    }

    func string(_ key: String) throws -> String? {
        guard let value = self[key] else { return nil }
        guard case .string(let text) = value else {
            throw APIError.badRequest("invalidValue", "\(key): expected a string, found \(value.kindDescription)", field: key)
        }
        return text
    }

    func requiredString(_ key: String) throws -> String {
        guard let text = try string(key) else { throw APIError.badRequest("invalidValue", "\(key) is missing; give a string", field: key) }
        return text
    }

    func requiredBool(_ key: String) throws -> Bool {
        guard let value = self[key] else { throw APIError.badRequest("invalidValue", "\(key) is missing; give true or false", field: key) }
        guard case .bool(let flag) = value else {
            throw APIError.badRequest("invalidValue", "\(key): expected true or false, found \(value.kindDescription)", field: key)
        }
        return flag
    }
}
