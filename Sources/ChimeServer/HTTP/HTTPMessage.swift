import Foundation

/// A request as the server collected it: head, query and body, ready for an async handler.
public struct HTTPRequest: Sendable {
    /// `GET`, `POST`, … as sent.
    public var method: String
    /// The path without the query, percent-decoded by libmicrohttpd (`/v1/apps/com.example.alarm`).
    public var path: String
    /// Query arguments in order; a repeated key appears once per value.
    public var query: [(name: String, value: String)]
    /// Header fields with lowercased names; a repeated header keeps its last value.
    public var headers: [String: String]
    /// The body (at most the route's limit).
    public var body: [UInt8]
    /// The client's address for the access log (`127.0.0.1:51234`, or `unix`).
    public var remoteAddress: String

    public init(method: String, path: String, query: [(name: String, value: String)] = [], headers: [String: String] = [:],
                body: [UInt8] = [], remoteAddress: String = "") {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// A header's value by case-insensitive name.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// Every value of a query argument.
    public func queryValues(_ name: String) -> [String] { query.filter { $0.name == name }.map(\.value) }
}

/// A response: status, header fields and a body that is either bytes or a live event stream.
public struct HTTPResponse: Sendable {
    public enum Body: Sendable {
        case bytes([UInt8])
        /// A server-sent event stream that stays open until closed by either side.
        case stream(EventStream)
    }

    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: Body
    /// The route's template for metrics and the access log (`/v1/apps/{app}/requests`).
    public var route: String

    public init(status: Int, headers: [(name: String, value: String)] = [], body: Body = .bytes([]), route: String = "unmatched") {
        self.status = status
        self.headers = headers
        self.body = body
        self.route = route
    }

    /// A response with a byte body and its content type.
    public init(status: Int, contentType: String, body: [UInt8], route: String = "unmatched") {
        self.init(status: status, headers: [("Content-Type", contentType)], body: .bytes(body), route: route)
    }

    /// A header's value by case-insensitive name.
    public func header(_ name: String) -> String? {
        headers.last { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// What the server asks of the application: body limits, the handler, and the answers it gives
/// without running the handler.
public protocol HTTPHandler: Sendable {
    /// The largest body accepted for this request head, in bytes.
    func bodyLimit(for request: HTTPRequest) -> Int
    /// Handles a complete request. Must not throw: errors become error responses.
    func handle(_ request: HTTPRequest) async -> HTTPResponse
    /// The answer for a body over the limit (the rest of the body is not read).
    func payloadTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse
    /// The answer when the server is overloaded or stopping.
    func unavailable(_ request: HTTPRequest, reason: String) -> HTTPResponse
}
