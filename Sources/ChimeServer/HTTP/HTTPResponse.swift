import ChimeCore
import Foundation

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

    public init(
        status: Int, headers: [(name: String, value: String)] = [], body: Body = .bytes([]), route: String = "unmatched"
    ) {
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
    /// Whether new TLS connections ask the client for a certificate (read as each connection
    /// starts; a browser may then offer the user's certificates, so ask only when one is used).
    var requestsClientCertificates: Bool { get }
    /// The largest body accepted for this request head, in bytes.
    func bodyLimit(for request: HTTPRequest) -> Int
    /// Handles a complete request. Must not throw: errors become error responses.
    func handle(_ request: HTTPRequest) async -> HTTPResponse
    /// The answer for a body over the limit (the rest of the body is not read).
    func payloadTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse
    /// The answer when the server is overloaded or stopping.
    func unavailable(_ request: HTTPRequest, reason: String) -> HTTPResponse
    /// The answer for a request whose head the server refuses before the handler sees it (broken
    /// framing, a head over the limits); the connection is closed after it.
    func refused(_ request: HTTPRequest, problem: RequestProblem) -> HTTPResponse
}

extension HTTPHandler {
    /// None by default.
    public var requestsClientCertificates: Bool { false }

    /// Plain text: the problem's status and message.
    public func refused(_ request: HTTPRequest, problem: RequestProblem) -> HTTPResponse {
        HTTPResponse(
            status: problem.status, contentType: "text/plain; charset=utf-8",
            body: Array((problem.message + "\n").utf8),
            route: "refused")
    }
}
