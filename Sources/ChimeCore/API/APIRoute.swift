/// One route of the HTTP API as the server and its clients both know it: method, path template,
/// and the OpenAPI operation's id and summary. Each route is declared once, as a `static let` of
/// this type (the list is ``all``); the service's route table adds who may call it and its handler,
/// and the clients (the CLI, a center on the service, the tests) build their requests from it.
///
/// A template's segments are literals or `{name}` parameters. ``path(_:)`` fills them in, each value
/// percent-encoded as one segment, so a `/` inside an identifier travels as `%2F`:
///
/// ```swift
/// let route = APIRoute.respond           // POST /v1/apps/{app}/notifications/{identifier}/responses
/// route.method                           // .post
/// route.path(["app": "com.example.chat", "identifier": "chat/42"])
/// // "/v1/apps/com.example.chat/notifications/chat%2F42/responses"
/// ```
public struct APIRoute: Sendable, Hashable, CustomStringConvertible {
    /// The methods the API uses.
    public enum Method: String, Sendable, CaseIterable {
        case get = "GET", post = "POST", put = "PUT", patch = "PATCH", delete = "DELETE"
    }

    public let method: Method
    /// `/v1/apps/{app}/requests`: also the route's name in the service's metrics and access log.
    public let template: String
    /// The operation's `operationId` in `docs/openapi.json`.
    public let operationID: String
    /// The operation's `summary` in `docs/openapi.json`.
    public let summary: String
    /// The template split at its slashes (`/v1/apps/{app}`: `v1`, `apps`, the parameter `app`); `/`
    /// is one empty literal.
    public let segments: [Segment]
    /// The template's parameter names, in order: `["app", "identifier"]`.
    public let parameters: [String]

    /// A segment of a template.
    public enum Segment: Sendable, Hashable {
        case literal(String)
        /// `{name}`: one whole segment of the path, percent-encoded.
        case parameter(String)
    }

    /// Declares a route. A parameter is a whole segment between slashes (`/{app}/`), never part of one.
    ///
    /// ```swift
    /// APIRoute(.get, "/v1/apps/{app}/settings", operationID: "getSettings", summary: "getNotificationSettings")
    /// ```
    public init(_ method: Method, _ template: String, operationID: String, summary: String) {
        self.method = method
        self.template = template
        self.operationID = operationID
        self.summary = summary
        precondition(template.hasPrefix("/"), "the template \(template) must start with /")
        segments = template.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { segment in
            segment.hasPrefix("{") && segment.hasSuffix("}") && segment.count > 2
                ? .parameter(String(segment.dropFirst().dropLast())) : .literal(String(segment))
        }
        parameters = segments.compactMap { if case .parameter(let name) = $0 { name } else { nil } }
    }

    /// The path of a request to this route: the template with each `{name}` replaced by
    /// `values[name]`, percent-encoded (``PercentEncoding/encode(_:)``) as one segment. The values
    /// must name exactly the template's parameters; anything else is a mistake in the caller's code
    /// and stops the program with a message naming the route.
    ///
    /// ```swift
    /// APIRoute.listRequests.path(["app": "com.example.alarm"])   // "/v1/apps/com.example.alarm/requests"
    /// APIRoute.health.path()                                      // "/healthz"
    /// ```
    public func path(_ values: [String: String] = [:]) -> String {
        precondition(
            Set(values.keys) == Set(parameters),
            "\(self) takes the parameters \(parameters), not \(values.keys.sorted())")
        var path = ""
        for segment in segments {
            path += "/"
            switch segment {
            case .literal(let text): path += text
            case .parameter(let name): path += PercentEncoding.encode(values[name] ?? "")
            }
        }
        return path
    }

    /// `POST /v1/apps/{app}/requests`.
    public var description: String { "\(method.rawValue) \(template)" }
}
