import Foundation

/// A request's place in the API: which endpoint, with which path parameters, and the route
/// template used in metrics and the access log.
struct Route: Sendable {
    enum Endpoint: Sendable, Equatable {
        case none
        case methodNotAllowed([String])
        /// A path segment or query argument that is not valid percent-encoding: a 400 naming it.
        case invalidEncoding(message: String, field: String)
        case healthz, metrics, openAPI
        case push
        case listApps, createApp, getApp, updateApp, removeApp, rotateToken
        case requestAuthorization, answerAuthorization, settings
        case getCategories, putCategories
        case addRequests, listRequests, removeRequests
        /// A one-line send: the body is the text, headers the rest.
        case send
        case listNotifications, removeNotifications
        case respond(identifier: String)
        case outbox
        case acknowledge(id: String)
        case appEvents, allEvents
        /// A connected app's answers: its service extension's content, its `willPresent` answer.
        case serviceExtensionContent(id: String)
        case presentation(identifier: String)
        case location
        case deviceToken
        case updateSettings
        case setBadge
        /// The web notification center: its page and its static files.
        case webPage
        case webAsset(name: String)
        /// Web sign-in: the session (cookie), and one-time login links (owner token).
        case getSession, createSession, deleteSession
        case createLoginLink

        /// App-scoped routes only the owner token reaches: the user's answers and app management.
        var isOwnerOnly: Bool {
            switch self {
            case .answerAuthorization, .respond, .rotateToken, .removeApp, .updateApp, .updateSettings: true
            default: false
            }
        }
    }

    var endpoint: Endpoint
    var template: String
    /// The `{app}` path parameter.
    var app: String?

    /// Matches a request against the routing table. Path segments are percent-decoded one by one
    /// after splitting on `/`, so a parameter may hold a `/` sent as `%2F`.
    static func match(_ request: HTTPRequest) -> Route {
        var route = matchPath(request)
        if let problem = request.queryError, route.endpoint != .push {
            route.endpoint = .invalidEncoding(message: problem.description, field: problem.name)
        }
        return route
    }

    private static func matchPath(_ request: HTTPRequest) -> Route {
        let method = request.method.uppercased()
        let path = request.path
        if path.hasPrefix("/3/") || path == "/3" { return Route(endpoint: .push, template: "/3/device/{token}") }
        var segments: [String]
        do {
            segments = try request.pathSegments()
        } catch {
            return Route(endpoint: .invalidEncoding(message: "path segment \(error)", field: "path"), template: "unmatched")
        }
        if segments.count > 1, segments.last == "" { segments.removeLast() }

        func pick(_ template: String, _ table: [String: Endpoint], app: String? = nil) -> Route {
            if let endpoint = table[method] { return Route(endpoint: endpoint, template: template, app: app) }
            if method == "HEAD", let endpoint = table["GET"] { return Route(endpoint: endpoint, template: template, app: app) }
            return Route(endpoint: .methodNotAllowed(table.keys.sorted()), template: template, app: app)
        }

        switch segments.count {
        case 1 where segments[0] == "healthz": return pick("/healthz", ["GET": .healthz])
        case 1 where segments[0] == "metrics": return pick("/metrics", ["GET": .metrics])
        case 1 where segments[0] == "openapi.json": return pick("/openapi.json", ["GET": .openAPI])
        case 1 where segments[0] == "": return pick("/", ["GET": .webPage])
        case 1 where WebAssets.file(named: segments[0]) != nil:
            return pick("/{asset}", ["GET": .webAsset(name: segments[0])])
        default: break
        }
        guard segments.first == "v1", segments.count >= 2 else { return Route(endpoint: .none, template: "unmatched") }
        let rest = Array(segments.dropFirst())
        switch rest.count {
        case 1 where rest[0] == "apps": return pick("/v1/apps", ["GET": .listApps, "POST": .createApp])
        case 1 where rest[0] == "events": return pick("/v1/events", ["GET": .allEvents])
        case 1 where rest[0] == "location": return pick("/v1/location", ["POST": .location])
        case 1 where rest[0] == "session":
            return pick("/v1/session", ["GET": .getSession, "POST": .createSession, "DELETE": .deleteSession])
        case 2 where rest == ["session", "links"]: return pick("/v1/session/links", ["POST": .createLoginLink])
        default: break
        }
        guard rest[0] == "apps", rest.count >= 2, !rest[1].isEmpty else { return Route(endpoint: .none, template: "unmatched") }
        let app = rest[1]
        let tail = Array(rest.dropFirst(2))
        let base = "/v1/apps/{app}"
        switch tail.count {
        case 0: return pick(base, ["GET": .getApp, "PATCH": .updateApp, "DELETE": .removeApp], app: app)
        case 1:
            switch tail[0] {
            case "token": return pick(base + "/token", ["POST": .rotateToken], app: app)
            case "authorization": return pick(base + "/authorization", ["POST": .requestAuthorization], app: app)
            case "settings": return pick(base + "/settings", ["GET": .settings, "PATCH": .updateSettings], app: app)
            case "categories": return pick(base + "/categories", ["GET": .getCategories, "PUT": .putCategories], app: app)
            case "requests":
                return pick(base + "/requests", ["GET": .listRequests, "POST": .addRequests, "DELETE": .removeRequests], app: app)
            case "notifications":
                return pick(base + "/notifications", ["GET": .listNotifications, "DELETE": .removeNotifications], app: app)
            case "responses": return pick(base + "/responses", ["GET": .outbox], app: app)
            case "events": return pick(base + "/events", ["GET": .appEvents], app: app)
            case "device-token": return pick(base + "/device-token", ["GET": .deviceToken], app: app)
            case "send": return pick(base + "/send", ["POST": .send], app: app)
            case "badge": return pick(base + "/badge", ["PUT": .setBadge], app: app)
            default: break
            }
        case 2 where tail == ["authorization", "answer"]:
            return pick(base + "/authorization/answer", ["POST": .answerAuthorization], app: app)
        case 3 where tail[0] == "notifications" && tail[2] == "responses" && !tail[1].isEmpty:
            return pick(base + "/notifications/{identifier}/responses", ["POST": .respond(identifier: tail[1])], app: app)
        case 2 where tail[0] == "service-extension" && !tail[1].isEmpty:
            return pick(base + "/service-extension/{id}", ["POST": .serviceExtensionContent(id: tail[1])], app: app)
        case 3 where tail[0] == "notifications" && tail[2] == "presentation" && !tail[1].isEmpty:
            return pick(base + "/notifications/{identifier}/presentation", ["POST": .presentation(identifier: tail[1])], app: app)
        case 3 where tail[0] == "responses" && tail[2] == "ack" && !tail[1].isEmpty:
            return pick(base + "/responses/{id}/ack", ["POST": .acknowledge(id: tail[1])], app: app)
        default: break
        }
        return Route(endpoint: .none, template: "unmatched")
    }
}
