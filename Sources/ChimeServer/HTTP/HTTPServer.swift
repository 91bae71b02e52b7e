import ChimeCore
import CMicroHTTPD
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server over libmicrohttpd: one internal epoll thread, requests handed to an async
/// ``HTTPHandler`` while their connection is suspended, server-sent events without a thread per
/// subscriber, a soft connection limit answered with 503, and a graceful stop.
///
/// ```swift
/// let server = HTTPServer(configuration: .init(listen: .tcp(host: "127.0.0.1", port: 0)), handler: MyHandler())
/// try server.start()
/// print(server.url)         // http://127.0.0.1:41234
/// await server.stop()
/// ```
public final class HTTPServer: Sendable {
    /// The server's settings.
    public struct Configuration: Sendable {
        /// PEM text of a TLS key and certificate.
        public struct TLS: Sendable {
            public var keyPEM: String
            public var certificatePEM: String
            public init(keyPEM: String, certificatePEM: String) {
                self.keyPEM = keyPEM
                self.certificatePEM = certificatePEM
            }
        }

        public var listen: ListenAddress
        public var tls: TLS?
        /// Connections served at once; more are answered with 503 and closed.
        public var connectionLimit: Int
        /// Seconds of inactivity after which a connection is closed (slow clients).
        public var connectionTimeout: Int
        /// How often idle event streams get a heartbeat comment.
        public var heartbeatInterval: Duration
        /// How long ``HTTPServer/stop()`` waits for in-flight requests.
        public var shutdownGrace: Duration

        public init(listen: ListenAddress = .default, tls: TLS? = nil, connectionLimit: Int = 1024,
                    connectionTimeout: Int = 60, heartbeatInterval: Duration = .seconds(15),
                    shutdownGrace: Duration = .seconds(10)) {
            self.listen = listen
            self.tls = tls
            self.connectionLimit = connectionLimit
            self.connectionTimeout = connectionTimeout
            self.heartbeatInterval = heartbeatInterval
            self.shutdownGrace = shutdownGrace
        }
    }

    public let configuration: Configuration
    let core: ServerCore

    /// Creates a server; nothing listens until ``start()``.
    public init(configuration: Configuration, handler: any HTTPHandler, logger: ServerLogger = .silent,
                metrics: Metrics = Metrics()) {
        self.configuration = configuration
        self.core = ServerCore(configuration: configuration, handler: handler, logger: logger, metrics: metrics)
    }

    deinit {
        core.forceStop()
    }

    /// Binds the address and starts serving on the daemon's thread.
    ///
    /// - Throws: ``ServerError`` when the address cannot be bound or the TLS files are rejected.
    public func start() throws {
        try core.start()
    }

    /// The bound TCP port (the real one when configured with port 0); 0 for a Unix socket.
    public var port: UInt16 { core.boundPort }

    /// The base URL: `http://127.0.0.1:7878`, `https://…` with TLS, or `http://localhost` for a Unix
    /// socket (connect to ``Configuration/listen``'s path).
    public var url: String {
        let scheme = configuration.tls == nil ? "http" : "https"
        switch configuration.listen {
        case .tcp(let host, _): return "\(scheme)://\(host):\(port)"
        case .unix: return "\(scheme)://localhost"
        }
    }

    /// The number of open event streams.
    public var openStreams: Int { core.streamCount }

    /// Stops gracefully: stops accepting, answers new requests on open connections with 503, waits
    /// for in-flight requests (up to ``Configuration/shutdownGrace``), ends event streams, and stops
    /// the daemon.
    public func stop() async {
        await core.stop()
    }
}

/// The daemon's context, passed to every libmicrohttpd callback through `void *cls`.
/// `Sendable`: every mutable field is behind `state`; the daemon pointer is only used under it or
/// after the daemon thread is stopped.
final class ServerCore: Sendable {
    struct State {
        /// The bit pattern of libmicrohttpd's `struct MHD_Daemon *` (0: not running).
        var daemon = 0
        var listenFD: Int32 = -1
        var port: UInt16 = 0
        var draining = false
        var stopped = false
        var connections = 0
        var inFlight: [ObjectIdentifier: RequestState] = [:]
        var streams: [ObjectIdentifier: EventStream] = [:]
        var heartbeat: Task<Void, Never>?
    }

    let configuration: HTTPServer.Configuration
    let handler: any HTTPHandler
    let logger: ServerLogger
    let metrics: Metrics
    let state = Mutex(State())
    /// Marks a connection accepted over the soft limit (stored as its socket context).
    nonisolated(unsafe) static let overLimit = UnsafeMutableRawPointer(bitPattern: 0x1)!  // a constant address, never dereferenced

    init(configuration: HTTPServer.Configuration, handler: any HTTPHandler, logger: ServerLogger, metrics: Metrics) {
        self.configuration = configuration
        self.handler = handler
        self.logger = logger
        self.metrics = metrics
    }

    var boundPort: UInt16 { state.withLock { $0.port } }
    var streamCount: Int { state.withLock { $0.streams.count } }

    // MARK: - Start and stop

    func start() throws {
        let context = Unmanaged.passUnretained(self).toOpaque()
        var flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
            | MHD_USE_ERROR_LOG.rawValue
        if configuration.tls != nil { flags |= MHD_USE_TLS.rawValue }
        var listenFD: Int32 = -1
        var port: UInt16 = 0
        var address = sockaddr_in()
        switch configuration.listen {
        case .tcp(let host, let requested):
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = requested.bigEndian
            guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
                throw ServerError(.invalidConfiguration, "\(host) is not an IPv4 address")
            }
            port = requested
        case .unix(let path):
            listenFD = try UnixSocket.listen(path: path)
        }
        let key = configuration.tls.map { strdup($0.keyPEM) } ?? nil
        let cert = configuration.tls.map { strdup($0.certificatePEM) } ?? nil
        defer {
            free(key)
            free(cert)
        }
        let daemon: OpaquePointer? = withUnsafePointer(to: &address) { addressPointer in
            addressPointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddrPointer in
                var config = chime_mhd_config()
                config.flags = flags
                config.port = port
                config.bind_address = listenFD >= 0 ? nil : sockaddrPointer
                config.listen_fd = listenFD
                // libmicrohttpd refuses outright past its own limit; keep a margin for the 503 answers.
                config.connection_limit = UInt32(configuration.connectionLimit + 64)
                config.connection_timeout = UInt32(max(0, configuration.connectionTimeout))
                // Headers and libmicrohttpd's read and write buffers (bodies are copied out as they
                // arrive): 32 KiB keeps a thousand open event streams small and the per-connection
                // clearing cheap.
                config.connection_memory_limit = 32 * 1024
                config.tls_key = UnsafePointer(key)
                config.tls_cert = UnsafePointer(cert)
                config.handler = accessHandlerCallback
                config.completed = requestCompletedCallback
                config.notify_connection = connectionCallback
                config.logger = logCallback
                config.unescape = keepEscapesCallback
                config.context = context
                return chime_mhd_start_daemon(&config)
            }
        }
        guard let daemon else {
            if listenFD >= 0 { close(listenFD) }
            let reason = configuration.tls != nil
                ? "check that --tls-key and --tls-cert are a matching PEM key and certificate, and that the address is free"
                : "is the address in use or not available?"
            throw ServerError(.startFailed, "cannot serve on \(configuration.listen): \(reason)")
        }
        let bound = chime_mhd_bound_port(daemon)
        let interval = configuration.heartbeatInterval
        let heartbeat = Task.detached { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self, !Task.isCancelled else { return }
                for stream in self.state.withLock({ Array($0.streams.values) }) { stream.sendComment("heartbeat") }
            }
        }
        state.withLock { state in
            state.daemon = Int(bitPattern: daemon)
            state.listenFD = -1  // libmicrohttpd closes its listening socket when stopped unless quiesced
            state.port = bound
            state.heartbeat = heartbeat
        }
    }

    func stop() async {
        let bits = state.withLock { state -> Int in
            guard !state.draining else { return 0 }
            state.draining = true
            return state.daemon
        }
        guard let daemon = OpaquePointer(bitPattern: bits) else { return }
        // Stop accepting; the returned socket is closed after the daemon stops.
        let quiesced = MHD_quiesce_daemon(daemon)
        // Refuse new connections at once instead of leaving them in the kernel's backlog: the
        // socket stays open (libmicrohttpd's thread may still look at it) but stops listening.
        if quiesced >= 0 {
            shutdown(quiesced, Int32(SHUT_RDWR))
            // Closed by `forceStop` after the daemon stops (the same socket when we made it).
            state.withLock { $0.listenFD = quiesced }
        }
        if case .unix(let path) = configuration.listen { unlink(path) }
        let clock = ContinuousClock()
        let deadline = clock.now + configuration.shutdownGrace
        while state.withLock({ !$0.inFlight.isEmpty }), clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        // Requests still running past the grace period are answered with 503 so their connections
        // can be resumed (libmicrohttpd must not be stopped with suspended connections).
        for request in state.withLock({ Array($0.inFlight.values) }) {
            request.finish(handler.unavailable(request.request, reason: "the server is stopping"))
        }
        for stream in state.withLock({ Array($0.streams.values) }) { stream.close() }
        let streamDeadline = clock.now + .seconds(2)
        while state.withLock({ $0.streams.values.contains { $0.isSuspended } || !$0.inFlight.isEmpty }),
              clock.now < streamDeadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        forceStop()
    }

    /// Stops the daemon at once (after ``stop()``, or when the server is dropped).
    func forceStop() {
        let (bits, heartbeat, listenFD) = state.withLock { state -> (Int, Task<Void, Never>?, Int32) in
            defer {
                state.daemon = 0
                state.stopped = true
                state.heartbeat = nil
            }
            return (state.daemon, state.heartbeat, state.listenFD)
        }
        heartbeat?.cancel()
        guard let daemon = OpaquePointer(bitPattern: bits) else { return }
        for stream in state.withLock({ Array($0.streams.values) }) { stream.close() }
        MHD_stop_daemon(daemon)
        if listenFD >= 0 { close(listenFD) }
        if case .unix(let path) = configuration.listen { unlink(path) }
    }

    // MARK: - Callbacks

    func connectionEvent(_ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, started: Bool) {
        guard let socketContext else { return }
        if started {
            let over = state.withLock { state -> Bool in
                if state.connections >= configuration.connectionLimit { return true }
                state.connections += 1
                return false
            }
            socketContext.pointee = over ? Self.overLimit : nil
        } else if socketContext.pointee != Self.overLimit {
            state.withLock { $0.connections -= 1 }
        }
    }

    func access(_ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
                upload: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>,
                requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
        guard let opaque = requestContext.pointee else {
            // First call: the head is complete, the body (if any) is not read yet.
            let request = collectHead(connection, url: url, method: method)
            let requestState = RequestState(request: request, connection: connection)
            requestContext.pointee = Unmanaged.passRetained(requestState).toOpaque()
            let draining = state.withLock { $0.draining }
            if chime_mhd_socket_context(connection) == Self.overLimit {
                return queue(handler.unavailable(request, reason: "too many connections; try again shortly"), for: requestState,
                             on: connection, close: true)
            }
            if draining {
                return queue(handler.unavailable(request, reason: "the server is stopping"), for: requestState, on: connection, close: true)
            }
            requestState.limit = handler.bodyLimit(for: request)
            if let length = request.header("content-length").flatMap(Int.init), length > requestState.limit {
                // Answer before reading the body; libmicrohttpd closes the connection afterwards.
                return queue(handler.payloadTooLarge(request, limit: requestState.limit), for: requestState, on: connection, close: true)
            }
            return .YES
        }
        let requestState = Unmanaged<RequestState>.fromOpaque(opaque).takeUnretainedValue()
        if uploadSize.pointee > 0 {
            if !requestState.tooLarge {
                if requestState.request.body.count + uploadSize.pointee > requestState.limit {
                    requestState.tooLarge = true
                    requestState.request.body = []
                } else if let upload {
                    upload.withMemoryRebound(to: UInt8.self, capacity: uploadSize.pointee) {
                        requestState.request.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: uploadSize.pointee))
                    }
                }
            }
            uploadSize.pointee = 0
            return .YES
        }
        if let response = requestState.takeResponse() {
            state.withLock { _ = $0.inFlight.removeValue(forKey: ObjectIdentifier(requestState)) }
            return queue(response, for: requestState, on: connection, close: false)
        }
        if requestState.tooLarge {
            return queue(handler.payloadTooLarge(requestState.request, limit: requestState.limit), for: requestState,
                         on: connection, close: true)
        }
        if requestState.started { return .YES }
        // The request is complete: park the connection and run the handler.
        requestState.started = true
        state.withLock { $0.inFlight[ObjectIdentifier(requestState)] = requestState }
        MHD_suspend_connection(connection)
        let handler = self.handler
        let request = requestState.request
        Task {
            let response = await handler.handle(request)
            requestState.finish(response)
        }
        return .YES
    }

    private func queue(_ response: HTTPResponse, for requestState: RequestState, on connection: OpaquePointer,
                       close: Bool) -> MHD_Result {
        requestState.status = response.status
        requestState.route = response.route
        let mhdResponse: OpaquePointer?
        switch response.body {
        case .bytes(let bytes):
            mhdResponse = bytes.withUnsafeBytes { raw in
                MHD_create_response_from_buffer(raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), .RESPMEM_MUST_COPY)
            }
        case .stream(let stream):
            stream.attach(connection)
            let id = ObjectIdentifier(stream)
            state.withLock { $0.streams[id] = stream }
            stream.onEnd { [weak self] in self?.state.withLock { _ = $0.streams.removeValue(forKey: id) } }
            mhdResponse = MHD_create_response_from_callback(UInt64.max, 4096, streamReaderCallback,
                                                            Unmanaged.passRetained(stream).toOpaque(), streamFreeCallback)
        }
        guard let mhdResponse else { return .NO }
        for (name, value) in response.headers { MHD_add_response_header(mhdResponse, name, value) }
        if close { MHD_add_response_header(mhdResponse, "Connection", "close") }
        let result = MHD_queue_response(connection, UInt32(response.status), mhdResponse)
        MHD_destroy_response(mhdResponse)
        return result
    }

    func completed(_ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, code: MHD_RequestTerminationCode) {
        guard let requestContext, let opaque = requestContext.pointee else { return }
        requestContext.pointee = nil
        let requestState = Unmanaged<RequestState>.fromOpaque(opaque).takeRetainedValue()
        state.withLock { _ = $0.inFlight.removeValue(forKey: ObjectIdentifier(requestState)) }
        let seconds = Double((ContinuousClock.now - requestState.started_at).components.attoseconds) / 1e18
            + Double((ContinuousClock.now - requestState.started_at).components.seconds)
        let status = requestState.status ?? 0
        let route = requestState.route
        metrics.recordRequest(route: route, status: status, seconds: seconds)
        let outcome = code == .REQUEST_TERMINATED_COMPLETED_OK ? "ok" : "aborted"
        logger.info("request", [
            "method": requestState.request.method, "path": requestState.request.path, "status": String(status),
            "route": route, "ms": String(format: "%.2f", seconds * 1000), "remote": requestState.request.remoteAddress,
            "outcome": outcome,
        ])
    }

    func log(_ message: String) {
        logger.warning("libmicrohttpd: \(message.trimmingCharacters(in: .whitespacesAndNewlines))")
    }

    private func collectHead(_ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?) -> HTTPRequest {
        let collector = HeadCollector()
        let opaque = Unmanaged.passUnretained(collector).toOpaque()
        withExtendedLifetime(collector) {
            MHD_get_connection_values(connection, .HEADER_KIND, headerIterator, opaque)
            MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, queryIterator, opaque)
        }
        // The path arrives as sent (see `keepEscapesCallback`): routes split it on `/` before decoding.
        let path = url.map { PercentEncoding.escapingNonASCII(UnsafeRawBufferPointer(start: $0, count: strlen($0))) } ?? "/"
        var request = HTTPRequest(method: method.map { String(cString: $0) } ?? "GET", path: path.isEmpty ? "/" : path,
                                  query: collector.query, headers: collector.headers, body: [],
                                  remoteAddress: Self.describe(chime_mhd_client_address(connection)))
        request.queryError = collector.queryError
        return request
    }

    static func describe(_ address: UnsafePointer<sockaddr>?) -> String {
        guard let address else { return "unix" }
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
                var copy = inet.pointee.sin_addr
                var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
                inet_ntop(AF_INET, &copy, &text, socklen_t(text.count))
                return "\(cText(text)):\(UInt16(bigEndian: inet.pointee.sin_port))"
            }
        case AF_UNIX: return "unix"
        default: return "?"
        }
    }
}

/// One request's state between libmicrohttpd's calls. Touched on the daemon thread, except
/// `response`, which the handler's task sets under the lock before resuming the connection.
final class RequestState: @unchecked Sendable {
    var request: HTTPRequest
    let connection: OpaquePointer
    let started_at = ContinuousClock.now
    var limit = 0
    var tooLarge = false
    var started = false
    var status: Int?
    var route = "unmatched"
    private let finished = Mutex<(response: HTTPResponse?, done: Bool)>((nil, false))

    init(request: HTTPRequest, connection: OpaquePointer) {
        self.request = request
        self.connection = connection
    }

    /// Stores the handler's response and resumes the connection; only the first call counts.
    func finish(_ response: HTTPResponse) {
        finished.withLock { finished in
            guard !finished.done else { return }
            finished = (response, true)
            MHD_resume_connection(connection)
        }
    }

    func takeResponse() -> HTTPResponse? {
        finished.withLock { finished in
            defer { finished.response = nil }
            return finished.response
        }
    }
}

/// Collects header fields and query arguments from libmicrohttpd's iterators.
final class HeadCollector {
    var headers: [String: String] = [:]
    var query: [(name: String, value: String)] = []
    /// The first query argument that did not decode.
    var queryError: QueryDecodingError?

    /// Decodes a query argument as libmicrohttpd hands it over: `+` already a space, `%HH` not yet
    /// decoded (see `keepEscapesCallback`). One that does not decode keeps its text as sent.
    func addArgument(key: UnsafePointer<CChar>, value: UnsafePointer<CChar>?) {
        let rawKey = Self.bytes(key)
        let rawValue = value.map(Self.bytes) ?? []
        var name = String(decoding: rawKey, as: UTF8.self)
        do {
            name = try PercentEncoding.decode(bytes: rawKey)
            query.append((name, try PercentEncoding.decode(bytes: rawValue)))
        } catch {
            if queryError == nil { queryError = QueryDecodingError(name: name, problem: error) }
            query.append((name, String(decoding: rawValue, as: UTF8.self)))
        }
    }

    private static func bytes(_ text: UnsafePointer<CChar>) -> [UInt8] {
        Array(UnsafeRawBufferPointer(start: text, count: strlen(text)))
    }
}

// MARK: - C callbacks (no captures: the context arrives through `cls`)

private let accessHandlerCallback: MHD_AccessHandlerCallback = { cls, connection, url, method, _, upload, uploadSize, requestContext in
    guard let cls, let connection, let uploadSize, let requestContext else { return .NO }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    return core.access(connection, url: url, method: method, upload: upload, uploadSize: uploadSize, requestContext: requestContext)
}

private let requestCompletedCallback: MHD_RequestCompletedCallback = { cls, _, requestContext, code in
    guard let cls else { return }
    Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().completed(requestContext, code: code)
}

private let connectionCallback: MHD_NotifyConnectionCallback = { cls, _, socketContext, code in
    guard let cls else { return }
    Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
        .connectionEvent(socketContext, started: code == .CONNECTION_NOTIFY_STARTED)
}

private let logCallback: MHD_LogCallback = { cls, format, arguments in
    guard let cls, let format else { return }
    var buffer = [CChar](repeating: 0, count: 512)
    guard let arguments else { return }
    _ = vsnprintf(&buffer, buffer.count, format, arguments)
    Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().log(cText(buffer))
}

private let headerIterator: MHD_KeyValueIterator = { cls, _, key, value in
    guard let cls, let key else { return .YES }
    let collector = Unmanaged<HeadCollector>.fromOpaque(cls).takeUnretainedValue()
    collector.headers[String(cString: key).lowercased()] = value.map { String(cString: $0) } ?? ""
    return .YES
}

private let queryIterator: MHD_KeyValueIterator = { cls, _, key, value in
    guard let cls, let key else { return .YES }
    Unmanaged<HeadCollector>.fromOpaque(cls).takeUnretainedValue().addArgument(key: key, value: value)
    return .YES
}

/// Leaves `%HH` escapes in the path and in query arguments as they are: the path is split on `/`
/// before its segments are decoded (so `%2F` stays inside a segment), and query arguments are
/// decoded by `HeadCollector` with errors reported instead of passed over.
private let keepEscapesCallback: chime_mhd_unescape_callback = { _, _, text in
    guard let text else { return 0 }
    return strlen(text)
}

private let streamReaderCallback: MHD_ContentReaderCallback = { cls, _, buffer, max in
    guard let cls, let buffer else { return -2 }
    return Unmanaged<EventStream>.fromOpaque(cls).takeUnretainedValue().read(into: buffer, max: max)
}

private let streamFreeCallback: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    Unmanaged<EventStream>.fromOpaque(cls).takeRetainedValue().detach()
}

/// The text of a NUL-terminated C buffer.
func cText(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
