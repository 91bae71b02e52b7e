/// Why a request got no answer: the one translation of curl's failures into what to do, for the
/// CLI, the app library and the tests alike.
///
/// ```swift
/// do { _ = try await client.request("GET", "/healthz") }
/// catch let error as HTTPClientError where error.code == .noService { print(error) }
/// ```
public struct HTTPClientError: Error, Sendable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// Nothing listens there (refused, no socket file, no such host).
        case noService
        /// The socket or address is not the caller's to use.
        case permissionDenied
        /// No answer within the time limit.
        case timedOut
        /// TLS failed: an untrusted certificate, a handshake error, an unreadable CA file.
        case tls
        /// The service closed the connection before the end of its answer.
        case connectionLost
        /// The request cannot be sent as given (path, header, endpoint).
        case badRequest
        /// The service answered, but not with 2xx (streams only; ``HTTPClient/request(_:_:headers:body:)`` returns it).
        case status(Int)
        /// Anything else curl reports.
        case failed
    }

    public var code: Code
    /// What happened and what to do, for a person.
    public var message: String
    /// The answer, for `.status`.
    public var response: HTTPClient.Response?
    /// curl's own code, when curl failed.
    public var curlCode: Int?

    public init(_ code: Code, _ message: String, response: HTTPClient.Response? = nil, curlCode: Int? = nil) {
        self.code = code
        self.message = message
        self.response = response
        self.curlCode = curlCode
    }

    public var description: String { message }
}
