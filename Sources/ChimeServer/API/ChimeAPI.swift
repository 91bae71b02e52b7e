import ChimeCore
import Foundation
import Synchronization

/// The HTTP API of the notification center: its routes (``routes``, one table), Bearer
/// authentication, JSON in and out.
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
    /// APNs provider tokens: which token each registered team key uses, since when.
    let providerTokens = ProviderTokens()
    /// TLS clients are asked for a certificate while an app has one registered (the index is
    /// loaded as the service starts: ``loadTokens()``).
    public var requestsClientCertificates: Bool { tokens.hasCertificates }
    private let tokensLoading = Mutex<Task<Void, any Error>?>(nil)
    /// The `Host` names answered (``HostNames``); `nil`: every one (a Unix socket, in-process use).
    let hostNames: HostNames?
    /// Web Push: the VAPID public key and the allowed push services; `nil` when off.
    let webPush: WebPush?
    /// Event feeds opened with a web session, by the session's hash: closed when it signs out.
    private let sessionFeeds = Mutex<[String: [ObjectIdentifier: EventFeed]]>([:])
    /// Tokens given to processes the service started for an app (background launch), by hash:
    /// valid for that app only, until the process ends.
    private let launchTokens = Mutex<[String: String]>([:])
    /// How many event streams each app (with its own credential) and each web session has open,
    /// held to their shares.
    let streamShares: StreamShares
    private let appStreamClosed = Mutex<(@Sendable (String) -> Void)?>(nil)
    private let latenessSubscription: Int
    private let appSubscription: Int

    /// - Parameters:
    ///   - ownerTokenHash: the SHA-256 (hex) of the owner token.
    ///   - secureCookies: mark the web center's session cookie `Secure` (set when serving HTTPS).
    ///   - serviceExtensionTimeLimit: how long a connected app's notification service extension may
    ///     take on a push (30 s, as on iOS).
    ///   - streamLimits: the event streams one app and one web session may hold open at once.
    ///   - hostNames: the `Host` names answered (others get 421, but on `/healthz`); `nil`: every one.
    ///   - webPush: the VAPID public key and allowed push services of the Web Push routes; `nil`: they answer 503.
    public init(
        engine: NotificationEngine, ownerTokenHash: String, metrics: Metrics, logger: ServerLogger = .silent,
        secureCookies: Bool = false, serviceExtensionTimeLimit: TimeInterval = 30,
        streamLimits: StreamLimits = StreamLimits(),
        hostNames: HostNames? = nil, webPush: WebPush? = nil
    ) {
        self.hostNames = hostNames
        self.webPush = webPush
        self.engine = engine
        self.ownerTokenHash = ownerTokenHash
        self.metrics = metrics
        self.logger = logger
        self.sessions = WebSessions(engine: engine)
        self.secureCookies = secureCookies
        self.channels = AppChannels(engine: engine, serviceExtensionTimeLimit: serviceExtensionTimeLimit)
        self.streamShares = StreamShares(limits: streamLimits)
        let clock = engine.clock
        // Firing as it happens: each timed delivery's lateness, a log line for each request the
        // scheduler set aside (its count is a gauge in /metrics), and each expiry and
        // auto-dismissal counted.
        latenessSubscription = engine.subscribe(app: nil) { [metrics, logger] event in
            if case .quarantined(let entry) = event.payload {
                logger.warning(
                    "a due request could not be delivered and was set aside; the rest fires (GET /v1/quarantine)",
                    ["app": entry.app, "identifier": entry.identifier, "reason": entry.reason, "id": String(entry.id)])
                return
            }
            if case .expired = event.payload {
                metrics.recordExpired()
                return
            }
            if case .removed(let identifiers, .delivered, .autoDismiss) = event.payload {
                metrics.recordAutoDismissed(identifiers.count)
                return
            }
            if case .realerted = event.payload {
                metrics.recordRealerted()
                return
            }
            guard let notification = event.delivery?.notification else { return }
            switch notification.request.trigger {
            case .timeInterval?, .calendar?: metrics.recordLateness(clock.now.timeIntervalSince(notification.date))
            default: break
            }
        }
        // Keep the token index current for changes made elsewhere (another node, another path):
        // a removal is dropped as it is published, a change read again on the writer.
        appSubscription = engine.subscribe(app: nil) { [tokens, engine] event in
            guard case .app(let change, _) = event.payload else { return }
            let app = event.app
            switch change {
            case .removed: tokens.update(app: app, record: nil)
            case .updated:
                engine.withApp(app) { record in
                    if tokens.isLoaded { tokens.update(app: app, record: record) }
                }
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
            let task = Task { try await engine.withApps { apps in tokens.load(apps) } }
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

    /// Whether the request is for the APNs provider endpoint (everything under `/3/`), which takes
    /// APNs' body limit and answers refusals in APNs' error shape.
    static func isPush(_ request: HTTPRequest) -> Bool { request.path.hasPrefix(pushPrefix) }
    private static let pushPrefix =
        "/" + (APIRoute.push.template.split(separator: "/").first.map(String.init) ?? "3") + "/"

    public func bodyLimit(for request: HTTPRequest) -> Int {
        Self.isPush(request) ? Self.pushBodyLimit : Self.defaultBodyLimit
    }

    public func payloadTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse {
        if Self.isPush(request) {
            return APNsEndpoint.reason("PayloadTooLarge", status: 413, message: "the payload is over \(limit) bytes")
        }
        return APIError(413, "tooLarge", "the body is over the limit of \(limit) bytes for this route").response(
            route: Self.routes.match(request).template)
    }

    /// The JSON error of the route's kind: `{"error": …}`, or `{"reason": …}` on the push endpoint.
    public func refused(_ request: HTTPRequest, problem: RequestProblem) -> HTTPResponse {
        if Self.isPush(request) {
            return APNsEndpoint.reason(
                problem.status == 414 ? "BadPath" : "BadRequest", status: problem.status, message: problem.message)
        }
        return APIError(problem.status, problem.code, problem.message).response(route: "refused")
    }

    public func unavailable(_ request: HTTPRequest, reason: String) -> HTTPResponse {
        var error = APIError(503, "unavailable", reason)
        error.headers = [("Retry-After", "1")]
        return error.response(route: Self.routes.match(request).template)
    }

    /// Matches the request in ``routes``, checks the entry's access, and runs its handler.
    public func handle(_ request: HTTPRequest) async -> HTTPResponse {
        let route = Self.routes.match(request)
        do {
            return await run(try entry(of: route, request), request, route: route, admission: .mustWait)
        } catch {
            return failure(error, route: route)
        }
    }

    /// The largest body a route's non-waiting handler takes on the server's thread (parsing and
    /// checking it there); a larger one is handled in a task, so one bulk add does not hold up
    /// the other connections that thread serves.
    static let startedBodyLimit = 16 * 1024

    /// ``handle(_:)`` without waiting where nothing needs to: a refusal (no route, a method the
    /// route lacks, a bad encoding, a missing or wrong token the index knows) is answered at once,
    /// as are routes whose answer is ready (`/healthz`); a route with a non-waiting handler
    /// (``RouteTable/Starter``: adds) hands its work to the engine's writer here and answers from
    /// the operation's completion. Everything else — a caller only the store can check, handlers
    /// that read or wait — runs in a task.
    public func start(_ request: HTTPRequest, answer: @escaping HTTPAnswer) -> HTTPResponse? {
        var route = Self.routes.match(request)
        do {
            let entry = try entry(of: route, request)
            let admission = try admitNow(request, to: entry.access, route: route)
            if let starter = entry.starter, request.body.count <= Self.startedBodyLimit,
                case .admitted(let caller) = admission
            {
                route.caller = caller
                return try starter(self)(request, route, answer)
            }
            Task {
                let response = await run(entry, request, route: route, admission: admission)
                answer { response }
            }
            return nil
        } catch {
            return failure(error, route: route)
        }
    }

    /// The route's entry, or the refusal of a request no entry takes: a `Host` this service does
    /// not answer as (421), no route (404), a method the route lacks (405), a path or query that
    /// does not decode (400).
    private func entry(of route: Route, _ request: HTTPRequest) throws -> RouteTable.Entry {
        if let hostNames, request.path != APIRoute.health.template, !hostNames.allows(request.header("host")) {
            throw APIError(
                421, "misdirectedRequest",
                "this service answers as its address, localhost or its --public-url name, not \(request.header("host")?.prefix(100) ?? ""); start it with --public-url https://NAME when it is reached through NAME"
            )
        }
        switch route.outcome {
        case .notFound:
            throw APIError.notFound("no route \(request.path); see GET /openapi.json for the API")
        case .methodNotAllowed(let allowed):
            var error = APIError(
                405, "methodNotAllowed",
                "\(request.method) is not allowed on \(request.path); allowed: \(allowed.joined(separator: ", "))")
            error.headers = [("Allow", allowed.joined(separator: ", "))]
            throw error
        case .invalidEncoding(let message, let field):
            throw APIError.badRequest("invalidEncoding", message, field: field)
        case .handler(let entry):
            return entry
        }
    }

    /// Checks the caller (unless ``admitNow(_:to:route:)`` already admitted it) and runs the
    /// entry's handler.
    private func run(_ entry: RouteTable.Entry, _ request: HTTPRequest, route: Route, admission: Admission) async
        -> HTTPResponse
    {
        var route = route
        do {
            switch admission {
            case .admitted(let caller): route.caller = caller
            case .mustWait: route.caller = try await admit(request, to: entry.access, route: route)
            }
            return try await entry.handler(self)(request, route)
        } catch {
            return failure(error, route: route)
        }
    }

    /// The answer for an error a handler threw, or met later (an operation that failed on the
    /// writer): its JSON error, logged when it is the server's own failure (5xx).
    func failure(_ error: any Error, route: Route) -> HTTPResponse {
        let apiError = APIError.from(error)
        if apiError.status >= 500 {
            logger.error("handler failed", ["route": route.template, "error": String(describing: error)])
        }
        return apiError.response(route: route.template)
    }

    // MARK: - Authentication

    enum Caller: Equatable {
        case owner
        /// A token that is not the owner's: the SHA-256 of what was presented.
        case app(tokenHash: String)
    }

    /// What a request presents: a bearer token's caller, or a web session's cookie (checked in
    /// the store).
    enum Credential {
        case caller(Caller)
        case session(secret: String)
    }

    /// Whether a caller may go on to a route's handler, as far as can be told without waiting.
    enum Admission {
        /// It may, as this caller (nil on the routes that read no credential).
        case admitted(Caller?)
        /// Only the store can tell: ``admit(_:to:route:)`` decides.
        case mustWait
    }

    func bearerToken(_ request: HTTPRequest) -> String? {
        guard let value = request.header("authorization") else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, FieldText.equalsLowercase(parts[0], "bearer") else { return "" }
        var token = parts[1]
        while token.last == " " || token.last == "\t" { token.removeLast() }
        return String(token)
    }

    /// The request's credential: a web session's cookie when it has no `Authorization`, else the
    /// caller its bearer token names (the owner, or an app's token by its hash).
    func credential(_ request: HTTPRequest) throws -> Credential {
        let token = bearerToken(request)
        if token == nil, let secret = WebSessions.sessionCookie(in: request) { return .session(secret: secret) }
        guard let token else {
            throw APIError.unauthorized(
                "missing Authorization: Bearer <token>; use the app's token or the owner token from the data directory's owner-token file"
            )
        }
        guard !token.isEmpty else { throw APIError.unauthorized("the Authorization header must be \"Bearer <token>\"") }
        let hash = Tokens.hash(token)
        if Tokens.equal(hash, ownerTokenHash) { return .caller(.owner) }
        return .caller(.app(tokenHash: hash))
    }

    func authenticate(_ request: HTTPRequest) async throws -> Caller {
        switch try credential(request) {
        case .caller(let caller):
            return caller
        case .session(let secret):
            try await checkSession(secret, request: request)
            return .owner
        }
    }

    /// Who may go on to a route's handler, by the route's access: nil for the routes that read no
    /// credential (or their own), else the authenticated caller. Runs before every handler.
    func admit(_ request: HTTPRequest, to access: RouteTable.Access, route: Route) async throws -> Caller? {
        switch access {
        case .public, .session, .provider:
            return nil
        case .owner:
            let caller = try await authenticate(request)
            guard caller == .owner else {
                throw try await forbiddenOrUnauthorized(request, "this route is for the owner token")
            }
            return caller
        case .app, .ownerOnApp:
            // The path's app must be a bundle identifier (ASCII) before any credential is compared
            // with it: a look-alike (U+212A KELVIN SIGN for K) equals the real name under String's
            // `==`, but is another name to the store.
            try Validation.validateBundleIdentifier(route["app"], field: "app")
            let caller = try await authenticate(request)
            try await authorize(caller, app: route["app"])
            if access == .ownerOnApp, caller != .owner { throw Self.ownerOnlyOnApp }
            return caller
        }
    }

    /// ``admit(_:to:route:)`` as far as it goes without waiting, in the same order and with the
    /// same refusals: `.mustWait` for a web session, the owner on an app's routes (the app must
    /// exist), a refused owner route (the answer depends on whose token it is), and an app's token
    /// the index cannot answer alone.
    func admitNow(_ request: HTTPRequest, to access: RouteTable.Access, route: Route) throws -> Admission {
        switch access {
        case .public, .session, .provider:
            return .admitted(nil)
        case .owner:
            guard case .caller(.owner) = try credential(request) else { return .mustWait }
            return .admitted(.owner)
        case .app, .ownerOnApp:
            try Validation.validateBundleIdentifier(route["app"], field: "app")
            guard case .caller(let caller) = try credential(request), try authorizeNow(caller, app: route["app"]) else {
                return .mustWait
            }
            if access == .ownerOnApp, caller != .owner { throw Self.ownerOnlyOnApp }
            return .admitted(caller)
        }
    }

    private static let ownerOnlyOnApp = APIError.forbidden(
        "this route is for the owner token (the user's own tools), not for apps")
    private static let anotherAppsToken = APIError.forbidden(
        "this token belongs to another app; an app's token reaches only /v1/apps/{its bundle identifier}/…")
    private static let invalidToken = APIError.unauthorized(
        "the token is not valid; use the token printed when the app was registered")

    /// Checks that the caller may use `/v1/apps/{app}/…`. Another app's token gets 403 whether or
    /// not `app` exists, so nothing leaks about other apps. An app's token is checked in the token
    /// index, without the writer; a token it does not know is looked up in the store
    /// (``appOwning(_:app:)``).
    func authorize(_ caller: Caller, app: String) async throws {
        if try authorizeNow(caller, app: app) { return }
        switch caller {
        case .owner:
            guard try await lookup(app) != nil else {
                throw APIError.notFound("no app \(app); register it with POST /v1/apps", field: "app")
            }
        case .app(let hash):
            switch try await appOwning(hash, app: app) {
            case let owned? where owned.isLiterally(app): return
            case _?: throw Self.anotherAppsToken
            case nil: throw Self.invalidToken
            }
        }
    }

    /// ``authorize(_:app:)`` from what is in memory: true when an app's token (or a launch's) may
    /// use `app`'s routes, a refusal when it may not, false when only the store can tell (the
    /// owner: the app must exist; the index not loaded yet; a token it does not know on a shared
    /// store, which another node may have made a moment ago).
    func authorizeNow(_ caller: Caller, app: String) throws -> Bool {
        guard case .app(let hash) = caller else { return false }
        if let launched = launchTokens.withLock({ $0[hash] }) {
            guard launched.isLiterally(app) else { throw Self.anotherAppsToken }
            return true
        }
        guard tokens.isLoaded else { return false }
        if let owner = tokens.app(forHash: hash) {
            guard owner.isLiterally(app) else { throw Self.anotherAppsToken }
            return true
        }
        if engine.isStoreShared { return false }
        throw Self.invalidToken
    }

    /// The app whose token hashes to `hash`, for a request to `app`'s routes. The index answers a
    /// hash it knows. On a shared database another node may have made the token a moment ago,
    /// before the change feed told this node, so there an unknown hash has the index take `app`'s
    /// record from the store again (on the writer, in commit order: the read a feed announcement
    /// would bring; an app that does not exist costs the same read) and asks once more — within
    /// the index's limits (``TokenIndex/mayRead(app:at:)``: a miss the store confirmed stands for a
    /// while, and all apps share a budget of reads). A store of this node's own holds nothing the
    /// index has not seen: no read.
    func appOwning(_ hash: String, app: String) async throws -> String? {
        try await loadTokens()
        if let owner = tokens.app(forHash: hash) { return owner }
        guard engine.isStoreShared else { return nil }
        guard tokens.mayRead(app: app) else {
            metrics.recordTokenRead(.skipped)
            return nil
        }
        try await engine.withAppNow(app) { [tokens] record in tokens.update(app: app, record: record) }
        if let owner = tokens.app(forHash: hash) {
            metrics.recordTokenRead(.found)
            return owner
        }
        tokens.missed(app: app)
        metrics.recordTokenRead(.missing)
        return nil
    }

    func forbiddenOrUnauthorized(_ request: HTTPRequest, _ message: String) async throws -> APIError {
        guard let token = bearerToken(request), !token.isEmpty else {
            return APIError.unauthorized("missing Authorization: Bearer <token>")
        }
        if try await owner(ofTokenHash: Tokens.hash(token)) != nil { return APIError.forbidden(message) }
        return APIError.unauthorized("the token is not valid")
    }

    /// The app whose token hashes to `hash`, if any. A hash the index does not know is looked up
    /// in the records of the apps the request names (`candidates`: a push's topic), as
    /// ``appOwning(_:app:)`` does.
    func owner(ofTokenHash hash: String, candidates: [String] = []) async throws -> String? {
        try await loadTokens()
        if let owner = tokens.app(forHash: hash) { return owner }
        for app in candidates where (try? Validation.validateBundleIdentifier(app, field: "app")) != nil {
            if let owner = try await appOwning(hash, app: app) { return owner }
        }
        return nil
    }

    // MARK: - Event feeds

    /// Opens an event feed that ends when the credential that opened it stops being valid: an
    /// app's token rotated or the app removed, a web session signed out or expired. An app's own
    /// credential and a web session each hold at most their share of streams (429 past it).
    func openFeed(_ request: HTTPRequest, app: String?, route: Route) async throws -> HTTPResponse {
        let credential: EventFeed.Credential
        switch route.caller {
        case nil:
            throw APIError(
                500, "internal", "an event feed needs an authenticated caller; its route's access reads none")
        case .app(let hash)?: credential = .app(tokenHash: hash)
        case .owner?:
            if bearerToken(request) == nil, let secret = WebSessions.sessionCookie(in: request),
                let expires = try await sessions.validate(secret)
            {
                credential = .session(hash: Tokens.hash(secret), expires: expires)
            } else {
                credential = .owner
            }
        }
        let holder: StreamShares.Holder?
        switch credential {
        case .owner: holder = nil
        case .session(let hash, _): holder = .session(hash)
        case .app: holder = app.map(StreamShares.Holder.app)
        }
        if let holder, !streamShares.claim(holder) { throw streamShares.refusal(holder) }
        let response: HTTPResponse
        do {
            response = try await openCountedFeed(request, app: app, credential: credential, route: route)
        } catch {
            if let holder { streamShares.release(holder) }
            throw error
        }
        if let holder {
            if case .stream(let stream) = response.body {
                stream.onEnd { [weak self] in
                    guard let self else { return }
                    self.streamShares.release(holder)
                    if case .app(let app) = holder { self.onAppStreamClosed?(app) }
                }
            } else {
                streamShares.release(holder)
            }
        }
        return response
    }

    private func openCountedFeed(_ request: HTTPRequest, app: String?, credential: EventFeed.Credential, route: Route)
        async throws -> HTTPResponse
    {
        let engine = self.engine
        return try await EventFeed.open(
            engine: engine, app: app, credential: credential, request: request, route: route.template, frames: frames,
            stillValid: { [weak self] feed in
                guard case .app(let hash) = feed.credential, let app else { return true }
                // A launched process's token lasts as long as the process, whatever the app's token.
                if let launched = self?.launchTokens.withLock({ $0[hash] }), launched.isLiterally(app) { return true }
                // Read after the change that prompted the question committed.
                let stored = try? await engine.registeredApp(app)?.tokenHash
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
        streamShares.count(.app(app)) > 0
    }

    /// Called with the app when one of its own streams ends (the launcher looks again).
    var onAppStreamClosed: (@Sendable (String) -> Void)? {
        get { appStreamClosed.withLock { $0 } }
        set { appStreamClosed.withLock { $0 = newValue } }
    }

    // MARK: - Bodies and answers

    /// The body as JSON; 415 unless the content type is JSON, 400 when malformed or (unless
    /// `optional`) empty.
    func jsonBody(_ request: HTTPRequest, optional: Bool = false) throws -> JSONValue? {
        if request.body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            if optional { return nil }
            throw APIError.badRequest(
                "malformedInput", "the body is empty; send a JSON document (Content-Type: application/json)")
        }
        try requireJSONContentType(request)
        do {
            return try JSONValue.parse(request.body)
        } catch {
            throw APIError.badRequest(
                "malformedInput", "the body is not valid JSON: \(error.message)", field: error.field)
        }
    }

    func jsonBody(_ request: HTTPRequest) throws -> JSONValue {
        try jsonBody(request, optional: false)!
    }

    /// The request's media type: its Content-Type before any parameter, trimmed and lowercased
    /// (`application/json` for `Application/JSON; charset=utf-8`); empty without one.
    static func mediaType(of request: HTTPRequest) -> String {
        request.header("content-type")?.split(separator: ";").first.map { FieldText.trimmed($0).lowercased() } ?? ""
    }

    func requireJSONContentType(_ request: HTTPRequest) throws {
        let type = Self.mediaType(of: request)
        guard type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json")) else {
            throw APIError(
                415, "unsupportedMediaType",
                type.isEmpty
                    ? "the body has no Content-Type; send it as application/json"
                    : "Content-Type \(type) is not accepted here; send the body as application/json")
        }
    }

    /// A boolean query argument: absent is `false`; `true`/`1` and `false`/`0` are accepted.
    static func flag(_ request: HTTPRequest, _ name: String) throws -> Bool {
        guard let value = request.queryValues(name).last else { return false }
        switch value.lowercased() {
        case "true", "1", "": return true
        case "false", "0": return false
        default:
            throw APIError.badRequest(
                "invalidValue", "\(name) is \"\(value.prefix(40))\"; accepted: true, false", field: name)
        }
    }

    func json(_ value: JSONValue, status: Int = 200, route: Route) -> HTTPResponse {
        HTTPResponse(
            status: status, contentType: "application/json", body: value.serializedBytes(), route: route.template)
    }
}
