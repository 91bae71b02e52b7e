import CCurl
import ChimeCore
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Chime's HTTP client, on libcurl: the `chime` CLI, the app library's service backend
/// (`CHIME_SERVICE`) and the tests all talk to `chime serve` through it, over TCP or a Unix socket.
///
/// Each request runs on a thread of its own that sleeps in curl's poll (see ``CurlTransfer``), so
/// an idle event stream costs no CPU and Swift's cooperative threads are never blocked. Cancelling
/// the calling task wakes the poll and ends the request with `CancellationError`.
///
/// ```swift
/// let client = HTTPClient(endpoint: try HTTPEndpoint("unix:/run/chime/chime.sock"))
/// let health = try await client.request("GET", "/healthz")
/// try await client.events("/v1/events", headers: [("Authorization", "Bearer \(token)")]) { event in
///     print(event.kind, event.data)
/// }
/// ```
public struct HTTPClient: Sendable {
    public var endpoint: HTTPEndpoint
    /// Seconds a request may take to connect and to finish; a stream's limit is for connecting only.
    public var timeout: Double
    /// A PEM file of CA certificates to trust instead of the system's (for a self-signed `chime serve --tls-cert`).
    public var caFile: String?
    /// The command that starts a service at ``endpoint``, for the error when none listens.
    public var startCommand: String

    public init(endpoint: HTTPEndpoint, timeout: Double = 60, caFile: String? = nil, startCommand: String = "chime serve") {
        self.endpoint = endpoint
        self.timeout = timeout
        self.caFile = caFile
        self.startCommand = startCommand
    }

    /// Sends a request and returns the whole answer, whatever its status.
    ///
    /// - Parameters:
    ///   - path: the target, percent-encoded, starting with `/` (`/v1/apps/com.example.alarm/requests?limit=10`).
    /// - Throws: ``HTTPClientError`` when no answer came; `CancellationError` when the task was cancelled.
    public func request(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil) async throws -> HTTPClient.Response {
        try await perform(method: method, path: path, headers: headers, body: body, onData: nil)
    }

    /// Sends a GET and hands the body of a 2xx answer to `onData` piece by piece as it arrives,
    /// until the service ends it (then returns) or the task is cancelled (`CancellationError`).
    ///
    /// - Throws: ``HTTPClientError``; `.status(N)` with the answer when it is not 2xx.
    public func stream(_ path: String, headers: [(String, String)] = [], onData: @escaping @Sendable ([UInt8]) -> Void) async throws {
        let response = try await perform(method: "GET", path: path, headers: headers, body: nil, onData: onData)
        guard response.isSuccess else {
            throw HTTPClientError(.status(response.status), "the event stream at \(endpoint)\(path) answered HTTP \(response.status)", response: response)
        }
    }

    /// ``stream(_:headers:onData:)`` of a `text/event-stream`, split into events by ChimeCore's
    /// ``ServerSentEventParser``.
    public func events(_ path: String, headers: [(String, String)] = [],
                       onEvent: @escaping @Sendable (ServerSentEventParser.Event) -> Void) async throws {
        let parser = Mutex(ServerSentEventParser())
        try await stream(path, headers: headers + [("Accept", "text/event-stream")]) { bytes in
            for event in parser.withLock({ $0.feed(bytes) }) { onEvent(event) }
        }
    }

    private func perform(method: String, path: String, headers: [(String, String)], body: [UInt8]?,
                         onData: (@Sendable ([UInt8]) -> Void)?) async throws -> HTTPClient.Response {
        guard path.hasPrefix("/"), path.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw HTTPClientError(.badRequest, "bad request path \(path); it starts with / and has spaces and other reserved characters percent-encoded")
        }
        var socket: String?
        if case .unixSocket(let path) = endpoint { socket = path }
        let options = CurlTransfer.Options(url: endpoint.url(for: path), unixSocket: socket, method: method, headers: headers, body: body,
                                           timeout: timeout, streaming: onData != nil, caFile: caFile)
        let transfer = try CurlTransfer(options, onData: onData)
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPClient.Response, any Error>) in
                    let thread = Thread { continuation.resume(with: Result { try transfer.run() }) }
                    thread.name = "chime-http"
                    thread.start()
                }
            } onCancel: {
                transfer.cancel()
            }
        } catch let failure as CurlTransfer.Failure {
            throw explain(failure)
        }
    }

    /// What curl's failure means for someone reaching `chime serve`: the one place this is said.
    func explain(_ failure: CurlTransfer.Failure) -> HTTPClientError {
        let code = Int(failure.code.rawValue)
        switch failure.code {
        case CURLE_COULDNT_CONNECT where failure.osError == EACCES || failure.osError == EPERM:
            let hint = if case .unixSocket = endpoint { " (the socket is mode 0600)" } else { "" }
            return HTTPClientError(.permissionDenied, "permission denied connecting to \(endpoint); run as the user who started `chime serve`\(hint)", curlCode: code)
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST:
            // curl's own text names "localhost port 80" for a Unix socket; the system's reason is clearer.
            let reason = failure.code == CURLE_COULDNT_CONNECT && failure.osError != 0 ? String(cString: strerror(failure.osError)) : failure.reason
            return HTTPClientError(.noService, "no chime serve at \(endpoint) (\(reason)); start it with `\(startCommand)`", curlCode: code)
        case CURLE_OPERATION_TIMEDOUT:
            return HTTPClientError(.timedOut, "the Chime service at \(endpoint) did not answer within \(Self.seconds(timeout)); is it overloaded or stopped?", curlCode: code)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM:
            return HTTPClientError(.tls, "TLS with \(endpoint) failed: \(failure.reason); for a self-signed certificate give its CA file (CHIME_CA_FILE)", curlCode: code)
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE:
            return HTTPClientError(.connectionLost, "the Chime service at \(endpoint) closed the connection before the end of its answer (\(failure.reason)); did it stop?", curlCode: code)
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
            return HTTPClientError(.badRequest, "cannot send to \(endpoint): \(failure.reason)", curlCode: code)
        default:
            return HTTPClientError(.failed, "talking to the Chime service at \(endpoint): \(failure.reason)", curlCode: code)
        }
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}
