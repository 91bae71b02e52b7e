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
    /// Starts handling a complete request on the server's thread that read it, without blocking
    /// it: returns the answer when it is ready at once (a refusal, a liveness check), or returns
    /// nil and calls `answer` exactly once, from any thread (even before this returns), when it
    /// is ready. The default runs ``handle(_:)`` in a task.
    func start(_ request: HTTPRequest, answer: @escaping HTTPAnswer) -> HTTPResponse?
    /// The answer for a body over the limit (the rest of the body is not read).
    func payloadTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse
    /// The answer when the server is overloaded or stopping.
    func unavailable(_ request: HTTPRequest, reason: String) -> HTTPResponse
    /// The answer for a request whose head the server refuses before the handler sees it (broken
    /// framing, a head over the limits); the connection is closed after it.
    func refused(_ request: HTTPRequest, problem: RequestProblem) -> HTTPResponse
}

/// How a handler hands over an answer it makes later (``HTTPHandler/start(_:answer:)``): called
/// once, from any thread, with a function that makes the response. The server runs that function
/// on its own thread when it writes the answer, so the thread that finished the work (the
/// engine's writer) spends nothing on encoding it.
public typealias HTTPAnswer = @Sendable (_ make: @escaping @Sendable () -> HTTPResponse) -> Void

extension HTTPHandler {
    /// None by default.
    public var requestsClientCertificates: Bool { false }

    /// ``handle(_:)`` in a task.
    public func start(_ request: HTTPRequest, answer: @escaping HTTPAnswer) -> HTTPResponse? {
        Task {
            let response = await handle(request)
            answer { response }
        }
        return nil
    }

    /// Plain text: the problem's status and message.
    public func refused(_ request: HTTPRequest, problem: RequestProblem) -> HTTPResponse {
        HTTPResponse(
            status: problem.status, contentType: "text/plain; charset=utf-8",
            body: Array((problem.message + "\n").utf8),
            route: "refused")
    }
}
