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
/// the calling task wakes the poll and ends the request with `CancellationError`: a stream that
/// returns was ended by the service, one that throws `CancellationError` was closed by the caller.
///
/// ```swift
/// let client = HTTPClient(endpoint: try HTTPEndpoint("unix:/run/chime/chime.sock"))
/// let health = try await client.request("GET", "/healthz")
/// try await client.events("/v1/events", headers: [("Authorization", "Bearer \(token)")],
///                         onResponse: { head in print("HTTP", head.status) },
///                         onComment: { _ in print("heartbeat") }) { event in
///     print(event.kind, event.data)
/// }
/// ```
public struct HTTPClient: Sendable {
    public var endpoint: HTTPEndpoint
    /// Seconds a request may take to connect and to finish; a stream's limit is for connecting only.
    public var timeout: Double
    /// A PEM file of CA certificates to trust instead of the system's (for a self-signed `chime serve --tls-cert`).
    public var caFile: String?
    /// A public-key pin (`sha256//<base64>`, curl's `--pinnedpubkey`): with no ``caFile``, the
    /// service is trusted when its certificate's key is this one, whatever CA signed it and whatever
    /// names it carries (the CLI takes it from the server.json of its own data directory).
    public var pinnedPublicKey: String?
    /// The command that starts a service at ``endpoint``, for the error when none listens.
    public var startCommand: String
    /// The local address to connect from (`127.0.0.2`: another client address on the same machine),
    /// or nil for the system's choice. TCP endpoints only.
    public var localAddress: String?

    public init(
        endpoint: HTTPEndpoint, timeout: Double = 60, caFile: String? = nil, pinnedPublicKey: String? = nil,
        startCommand: String = "chime serve", localAddress: String? = nil
    ) {
        self.endpoint = endpoint
        self.timeout = timeout
        self.caFile = caFile
        self.pinnedPublicKey = pinnedPublicKey
        self.startCommand = startCommand
        self.localAddress = localAddress
    }

    /// Sends a request and returns the whole answer, whatever its status.
    ///
    /// - Parameters:
    ///   - path: the target, percent-encoded, starting with `/` (`/v1/apps/com.example.alarm/requests?limit=10`).
    /// - Throws: ``HTTPClientError`` when no answer came; `CancellationError` when the task was cancelled.
    public func request(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil)
        async throws -> HTTPClient.Response
    {
        try await perform(method: method, path: path, headers: headers, body: body, onData: nil)
    }

    /// Sends a GET and hands the body of a 2xx answer to `onData` piece by piece as it arrives,
    /// until the service ends it (then returns) or the task is cancelled (`CancellationError`).
    ///
    /// - Parameters:
    ///   - onResponse: called once, before any body, with the answer's status and header fields
    ///     (an empty body) as soon as its head is in, whatever the status: a stream that sends
    ///     nothing yet is known to be open.
    /// - Throws: ``HTTPClientError``; `.status(N)` with the answer when it is not 2xx;
    ///   `.connectionLost` when the connection broke before the service ended the answer.
    ///
    /// ```swift
    /// try await client.stream("/v1/events", onResponse: { print($0.status) }) { bytes in print(bytes.count) }
    /// ```
    public func stream(
        _ path: String, headers: [(String, String)] = [],
        onResponse: @escaping @Sendable (HTTPClient.Response) -> Void = { _ in },
        onData: @escaping @Sendable ([UInt8]) -> Void
    ) async throws {
        let response = try await perform(
            method: "GET", path: path, headers: headers, body: nil, onResponse: onResponse, onData: onData)
        guard response.isSuccess else {
            throw HTTPClientError(
                .status(response.status), "the event stream at \(endpoint)\(path) answered HTTP \(response.status)",
                response: response)
        }
    }

    /// ``stream(_:headers:onResponse:onData:)`` of a `text/event-stream`, split by ChimeCore's
    /// ``ServerSentEventParser`` into events (`onEvent`) and comment lines (`onComment`: the
    /// service's heartbeats, their text after the colon), in the order they came.
    public func events(
        _ path: String, headers: [(String, String)] = [],
        onResponse: @escaping @Sendable (HTTPClient.Response) -> Void = { _ in },
        onComment: @escaping @Sendable (String) -> Void = { _ in },
        onEvent: @escaping @Sendable (ServerSentEventParser.Event) -> Void
    ) async throws {
        let parser = Mutex(ServerSentEventParser())
        try await stream(path, headers: headers + [("Accept", "text/event-stream")], onResponse: onResponse) { bytes in
            for item in parser.withLock({ $0.items(bytes) }) {
                switch item {
                case .event(let event): onEvent(event)
                case .comment(let text): onComment(text)
                }
            }
        }
    }

    private func perform(
        method: String, path: String, headers: [(String, String)], body: [UInt8]?,
        onResponse: (@Sendable (HTTPClient.Response) -> Void)? = nil,
        onData: (@Sendable ([UInt8]) -> Void)?
    ) async throws -> HTTPClient.Response {
        guard path.hasPrefix("/"), path.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw HTTPClientError(
                .badRequest,
                "bad request path \(path); it starts with / and has spaces and other reserved characters percent-encoded"
            )
        }
        var socket: String?
        if case .unixSocket(let path) = endpoint { socket = path }
        if let localAddress {
            guard socket == nil else {
                throw HTTPClientError(
                    .badRequest, "the local address \(localAddress) applies to TCP only; \(endpoint) is a Unix socket")
            }
            guard !localAddress.isEmpty, localAddress.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw HTTPClientError(.badRequest, "the local address '\(localAddress)' is not an address or host name")
            }
        }
        let options = CurlTransfer.Options(
            url: endpoint.url(for: path), unixSocket: socket, method: method, headers: headers, body: body,
            timeout: timeout, streaming: onData != nil, caFile: caFile,
            pinnedPublicKey: pinnedPublicKey, localAddress: localAddress)
        let transfer = try CurlTransfer(options, onResponse: onResponse, onData: onData)
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation {
                    (continuation: CheckedContinuation<HTTPClient.Response, any Error>) in
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
            return HTTPClientError(
                .permissionDenied,
                "permission denied connecting to \(endpoint); run as the user who started `chime serve`\(hint)",
                curlCode: code)
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST:
            // curl's own text names "localhost port 80" for a Unix socket; the system's reason is clearer.
            let reason =
                failure.code == CURLE_COULDNT_CONNECT && failure.osError != 0
                ? String(cString: strerror(failure.osError)) : failure.reason
            return HTTPClientError(
                .noService, "no chime serve at \(endpoint) (\(reason)); start it with `\(startCommand)`", curlCode: code
            )
        case CURLE_OPERATION_TIMEDOUT:
            return HTTPClientError(
                .timedOut,
                "the Chime service at \(endpoint) did not answer within \(Self.seconds(timeout)); is it overloaded or stopped?",
                curlCode: code)
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return HTTPClientError(
                .tls,
                "TLS with \(endpoint) failed: its certificate's key is not the one the service of this data directory serves (tlsPin in server.json); is another server on that address?",
                curlCode: code)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM:
            return HTTPClientError(
                .tls,
                "TLS with \(endpoint) failed: \(failure.reason); for a self-signed certificate give its CA file (CHIME_CA_FILE)",
                curlCode: code)
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE:
            return HTTPClientError(
                .connectionLost,
                "the Chime service at \(endpoint) closed the connection before the end of its answer (\(failure.reason)); did it stop?",
                curlCode: code)
        case CURLE_INTERFACE_FAILED:
            return HTTPClientError(
                .badRequest,
                "cannot connect to \(endpoint) from the local address \(localAddress ?? "-") (\(failure.reason)); give an address of this machine",
                curlCode: code)
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
            return HTTPClientError(.badRequest, "cannot send to \(endpoint): \(failure.reason)", curlCode: code)
        default:
            return HTTPClientError(
                .failed, "talking to the Chime service at \(endpoint): \(failure.reason)", curlCode: code)
        }
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}
