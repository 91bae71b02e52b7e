import ChimeCore
import Foundation

/// A request as the server collected it: head, query and body, ready for an async handler.
public struct HTTPRequest: Sendable {
    /// `GET`, `POST`, … as sent.
    public var method: String
    /// The path without the query, exactly as sent: still percent-encoded, so a `/` written as
    /// `%2F` stays inside its segment (`/v1/apps/com.example.alarm/notifications/chat%2F42/responses`).
    /// Always ASCII: bytes the client sent unescaped outside ASCII arrive as `%HH`. Split and
    /// decode it with ``pathSegments()``; log it as it is.
    public var path: String
    /// Query arguments in order, decoded (`+` is a space, `%HH` escapes are UTF-8 bytes); a
    /// repeated key appears once per value. An argument that does not decode keeps its text as sent
    /// and is described in ``queryError``.
    public var query: [(name: String, value: String)]
    /// Why a query argument could not be decoded (an invalid `%` escape or bytes that are not
    /// UTF-8), or nil. Handlers answer 400 rather than act on such an argument.
    public var queryError: QueryDecodingError?
    /// Header fields with lowercased names; a repeated header keeps its last value.
    public var headers: [String: String]
    /// The body (at most the route's limit).
    public var body: [UInt8]
    /// The client's address for the access log (`127.0.0.1:51234`, or `unix`).
    public var remoteAddress: String
    /// `HTTP/1.1`, `HTTP/1.0` or `HTTP/2`: what carried the request.
    public var protocolVersion = "HTTP/1.1"
    /// The certificate the client presented on TLS (asked for while the handler
    /// ``HTTPHandler/requestsClientCertificates``), or nil.
    public var clientCertificate: CertificateFingerprint?
    /// The connection that carried it (its HTTP/2 connection, or its HTTP/1.1 connection shared
    /// by keep-alive requests), or nil for a request not read from a socket.
    public var connection: HTTPConnection?

    public init(
        method: String, path: String, query: [(name: String, value: String)] = [], headers: [String: String] = [:],
        body: [UInt8] = [], remoteAddress: String = ""
    ) {
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

    /// The path's segments between `/`s, each percent-decoded: `/v1/apps/a/notifications/chat%2F42/responses`
    /// gives `["v1", "apps", "a", "notifications", "chat/42", "responses"]`. A leading `/` starts
    /// no segment; `/` alone gives `[""]`.
    ///
    /// - Throws: ``PercentDecodingError`` naming the first segment with an invalid escape or bytes
    ///   that are not UTF-8.
    public func pathSegments() throws(PercentDecodingError) -> [String] {
        try PercentEncoding.segments(ofPath: path)
    }
}

/// A query argument that does not decode: its name (as far as it decodes) and the problem.
public struct QueryDecodingError: Error, Sendable, CustomStringConvertible {
    /// The argument's name, decoded when possible, else as sent.
    public var name: String
    /// What is wrong with its name or value.
    public var problem: PercentDecodingError

    /// An error for the argument `name` with `problem`.
    public init(name: String, problem: PercentDecodingError) {
        self.name = name
        self.problem = problem
    }

    /// `query argument 'identifier': '100%' has an incomplete percent escape …`.
    public var description: String { "query argument '\(name)': \(problem)" }
}

/// A request's query arguments decoded one at a time, as HTTP/1.1's and HTTP/2's requests both
/// hand them over: `+` already a space, `%HH` escapes not yet decoded. An argument that does not
/// decode keeps its text as sent, and the first such is the request's ``HTTPRequest/queryError``.
struct QueryArguments {
    var query: [(name: String, value: String)] = []
    var error: QueryDecodingError?

    mutating func add(rawKey: [UInt8], rawValue: [UInt8]) {
        var name = String(decoding: rawKey, as: UTF8.self)
        do {
            name = try PercentEncoding.decode(bytes: rawKey)
            query.append((name, try PercentEncoding.decode(bytes: rawValue)))
        } catch {
            if self.error == nil { self.error = QueryDecodingError(name: name, problem: error) }
            query.append((name, String(decoding: rawValue, as: UTF8.self)))
        }
    }
}
