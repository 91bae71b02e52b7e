import ChimeCore
import Foundation

/// The service's routes: each ``APIRoute`` declaration (method, path template, the OpenAPI
/// operation's id and summary, shared with the clients) with who may call it and its handler. The
/// matcher works from the templates alone, ``ChimeAPI`` checks the access before it calls the
/// handler, and a test holds `docs/openapi.json` and ``APIRoute/all`` to the table. The API's own
/// table is ``ChimeAPI/routes``.
///
/// A template's segments are literals or `{name}` parameters; a parameter matches one non-empty
/// percent-decoded segment, a literal wins over a parameter, and entries sharing a template are told
/// apart by method (HEAD runs GET; another method gets 405 with the template's methods).
///
/// ```swift
/// let table = RouteTable([
///     .init(.health, .public, ChimeAPI.health),
///     .init(.getApp, .app, ChimeAPI.getApp),
/// ])
/// let route = table.match(HTTPRequest(method: "GET", path: "/v1/apps/com.example.chat"))
/// // route.template == "/v1/apps/{app}", route["app"] == "com.example.chat"
/// ```
struct RouteTable: Sendable {
    /// Who may call a route, checked before its handler runs (``ChimeAPI/admit(_:to:route:)``).
    /// In `docs/openapi.json`, `public` and `session` routes have `security: []`.
    enum Access: Sendable, Equatable {
        /// Anyone; no credential is read (liveness, the web center's files).
        case `public`
        /// The web center's sign-in: no Bearer token; the handler reads the session cookie itself.
        case session
        /// The owner only (owner token or web session): routes that name no app.
        case owner
        /// The app named by `{app}` with its own token (or one issued for its launch), or the owner.
        case app
        /// The owner only, on a route of the app named by `{app}` (which must exist): the user's
        /// answers and app management.
        case ownerOnApp
        /// The handler checks the credential in its own terms: the APNs provider API.
        case provider
    }

    /// How a request's path is held to the template.
    enum Matching: Sendable {
        /// Segment by segment: literals equal, parameters non-empty.
        case segments
        /// As `segments`, and every parameter passes `test` (`/{asset}`: a file the center has).
        case segmentsWhere(@Sendable (String) -> Bool)
        /// Every path under the template's first segment (`/3/…`), whatever the method and query:
        /// the handler answers a bad path, method or query in its own terms.
        case everythingUnderFirstSegment
    }

    typealias Handler = @Sendable (ChimeAPI) -> @Sendable (HTTPRequest, Route) async throws -> HTTPResponse

    /// A handler in the form that does not wait (``HTTPHandler/start(_:answer:)``), run on the
    /// server's thread that read the request: it returns the answer when it is ready at once, or
    /// returns nil and calls `answer` once when it is (from the engine's writer, as an operation
    /// commits). An error it throws is answered as the async form's; one that comes later it makes
    /// into an answer with ``ChimeAPI/failure(_:route:)``.
    typealias Starter =
        @Sendable (ChimeAPI) -> @Sendable (HTTPRequest, Route, @escaping HTTPAnswer) throws -> HTTPResponse?

    /// One route: its declaration (shared with the clients), its access and its handler. (A class,
    /// so that matching passes one reference around rather than copying strings and closures.)
    final class Entry: Sendable {
        /// Method, template, `operationId` and `summary`.
        let route: APIRoute
        let access: Access
        let matching: Matching
        let handler: Handler
        /// The handler's form that does not wait, for the routes that have one.
        let starter: Starter?

        init(_ route: APIRoute, _ access: Access, matching: Matching = .segments, _ handler: @escaping Handler) {
            self.route = route
            self.access = access
            self.matching = matching
            self.handler = handler
            starter = nil
        }

        /// A route whose answer is ready at once: it reads nothing the engine holds.
        init(
            _ route: APIRoute, _ access: Access, matching: Matching = .segments,
            now: @escaping @Sendable (ChimeAPI) -> @Sendable (HTTPRequest, Route) throws -> HTTPResponse
        ) {
            self.route = route
            self.access = access
            self.matching = matching
            handler = { api in
                let answer = now(api)
                return { request, route in try answer(request, route) }
            }
            starter = { api in
                let answer = now(api)
                return { request, route, _ in try answer(request, route) }
            }
        }

        /// A route whose handler hands its work to the engine's writer and answers from the
        /// operation's completion; its async form (in-process calls, and requests whose caller
        /// can only be checked by waiting) awaits that answer.
        init(_ route: APIRoute, _ access: Access, matching: Matching = .segments, starting: @escaping Starter) {
            self.route = route
            self.access = access
            self.matching = matching
            starter = starting
            handler = { api in
                let start = starting(api)
                return { request, route in
                    try await withCheckedThrowingContinuation { continuation in
                        do {
                            let now = try start(request, route) { make in continuation.resume(returning: make()) }
                            if let now { continuation.resume(returning: now) }
                        } catch {
                            continuation.resume(throwing: error)
                        }
                    }
                }
            }
        }

        /// Whether the handler answers every path under the first segment (and the query) itself.
        var ownsFirstSegment: Bool {
            if case .everythingUnderFirstSegment = matching { return true }
            return false
        }
    }

    /// A path parameter: its name and the segment that holds it.
    struct Parameter: Sendable {
        let name: String
        let index: Int
    }

    /// The entries that share a template, compiled once. (A class for the same reason as ``Entry``:
    /// the matcher walks a list of these for every request.)
    private final class Pattern: Sendable {
        let template: String
        let segments: [APIRoute.Segment]
        let parameters: [Parameter]
        /// The first entry's `segmentsWhere` test, if any.
        let test: (@Sendable (String) -> Bool)?
        let entries: [Entry]
        /// The methods, sorted: the `Allow` header of a 405.
        let allowed: [String]

        init(_ entries: [Entry]) {
            template = entries[0].route.template
            segments = entries[0].route.segments
            parameters = segments.enumerated().compactMap { index, segment in
                if case .parameter(let name) = segment { Parameter(name: name, index: index) } else { nil }
            }
            if case .segmentsWhere(let test) = entries[0].matching { self.test = test } else { test = nil }
            self.entries = entries
            allowed = entries.map(\.route.method.rawValue).sorted()
        }

        /// Whether the decoded segments (as many as the template's) fit. The last segment tells
        /// this API's templates apart soonest, so the comparison runs from the end.
        func matches(_ path: [String]) -> Bool {
            var index = segments.count - 1
            while index >= 0 {
                switch segments[index] {
                case .literal(let literal):
                    if path[index] != literal { return false }
                case .parameter:
                    if path[index].isEmpty { return false }
                    if let test, !test(path[index]) { return false }
                }
                index -= 1
            }
            return true
        }

        /// Where a literal stands before a parameter: patterns of one length are tried in this order.
        func precedes(_ other: Pattern) -> Bool {
            for (mine, theirs) in zip(segments, other.segments) {
                switch (mine, theirs) {
                case (.literal, .parameter): return true
                case (.parameter, .literal): return false
                default: continue
                }
            }
            return false
        }
    }

    /// Every entry, in declaration order.
    let entries: [Entry]
    /// Patterns by their number of segments, literals before parameters.
    private let patterns: [[Pattern]]
    /// Entries that own everything under their first segment, with that segment between slashes
    /// (`/3/`). The bare segment (`/3`) is not under it: it is matched like any other path (a 404
    /// with Chime's error body, as the OpenAPI document says of `/{asset}`).
    private let owners: [(under: String, entry: Entry)]

    init(_ entries: [Entry]) {
        self.entries = entries
        var byTemplate: [String: Int] = [:]
        var groups: [[Entry]] = []
        var owners: [(under: String, entry: Entry)] = []
        for entry in entries {
            if entry.ownsFirstSegment {
                let first = if case .literal(let text)? = entry.route.segments.first { text } else { "" }
                owners.append(("/" + first + "/", entry))
            } else if let index = byTemplate[entry.route.template] {
                groups[index].append(entry)
            } else {
                byTemplate[entry.route.template] = groups.count
                groups.append([entry])
            }
        }
        let compiled = groups.map(Pattern.init)
        var patterns = [[Pattern]](repeating: [], count: (compiled.map(\.segments.count).max() ?? 0) + 1)
        for pattern in compiled {
            let count = pattern.segments.count
            // Insert before the first pattern it precedes; otherwise declaration order.
            let position = patterns[count].firstIndex { pattern.precedes($0) } ?? patterns[count].count
            patterns[count].insert(pattern, at: position)
        }
        self.patterns = patterns
        self.owners = owners
    }

    /// The route of a request: its entry (or why there is none) and its path parameters. Path
    /// segments are percent-decoded one by one after splitting on `/`, so a parameter may hold a `/`
    /// sent as `%2F`; one trailing slash is ignored. A query argument that does not decode is a
    /// 400, except under a route that answers its query itself.
    func match(_ request: HTTPRequest) -> Route {
        var route = matchPath(request)
        if let problem = request.queryError {
            if case .handler(let entry) = route.outcome, entry.ownsFirstSegment { return route }
            route.outcome = .invalidEncoding(message: problem.description, field: problem.name)
        }
        return route
    }

    private func matchPath(_ request: HTTPRequest) -> Route {
        let path = request.path
        for owner in owners where path.hasPrefix(owner.under) {
            return Route(outcome: .handler(owner.entry), template: owner.entry.route.template)
        }
        var segments: [String]
        do {
            segments = try request.pathSegments()
        } catch {
            return Route(
                outcome: .invalidEncoding(message: "path segment \(error)", field: "path"), template: "unmatched")
        }
        if segments.count > 1, segments.last == "" { segments.removeLast() }
        guard segments.count < patterns.count,
            let pattern = patterns[segments.count].first(where: { $0.matches(segments) })
        else {
            return Route(outcome: .notFound, template: "unmatched")
        }
        let method = request.method.uppercased()
        var entry = pattern.entries.first { $0.route.method.rawValue == method }
        if entry == nil, method == "HEAD" { entry = pattern.entries.first { $0.route.method == .get } }
        guard let entry else {
            return Route(
                outcome: .methodNotAllowed(pattern.allowed), template: pattern.template, segments: segments,
                parameters: pattern.parameters)
        }
        return Route(
            outcome: .handler(entry), template: pattern.template, segments: segments, parameters: pattern.parameters)
    }
}
