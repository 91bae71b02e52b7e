import CMicroHTTPD
import ChimeCore
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An HTTP/1.1 server over libmicrohttpd: internal epoll threads (one per core), each request
/// started on the thread that read it (``HTTPHandler/start(_:answer:)``: an answer ready at once is
/// written without suspending the connection; otherwise the connection is suspended until the
/// answer comes), server-sent events without a thread per subscriber, a soft connection limit
/// answered with 503, and a graceful stop.
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
        /// Connections served at once. When they are all taken, a new connection takes the slot of
        /// the oldest one still sending its request (slow or silent clients go first); when none is
        /// slow, the new one is answered 503 and closed.
        public var connectionLimit: Int
        /// Connections served at once from one client address (default: three quarters of
        /// ``connectionLimit``), so one address cannot take every slot.
        public var connectionLimitPerAddress: Int?
        /// Seconds without any progress after which a connection is closed.
        public var connectionTimeout: Int
        /// How long a client has to send a complete request head, from connecting (or from the end
        /// of its previous response), however often it sends a byte.
        public var headerTimeout: Duration
        /// How long a client has to send a request's body once its head is complete.
        public var bodyTimeout: Duration
        /// Limits on a request head (target, query arguments, size).
        public var headLimits: HeadLimits
        /// The most bytes an event stream queues for a client that does not read; past it the
        /// client is disconnected (an event feed resumes with `Last-Event-ID`).
        public var streamQueueLimit: Int
        /// How often idle event streams get a heartbeat comment.
        public var heartbeatInterval: Duration
        /// How long ``HTTPServer/stop()`` waits for in-flight requests.
        public var shutdownGrace: Duration
        /// HTTP/2's settings and flood defences.
        public var http2: HTTP2Limits
        /// libmicrohttpd's threads: each serves its share of the HTTP/1.1 connections (read,
        /// parse, run the handlers that answer without waiting, write), so they use every core.
        /// Default: the number of active processors, at most 8.
        public var daemonThreads = min(8, max(1, ProcessInfo.processInfo.activeProcessorCount))
        /// Threads writing HTTP/1.1 event streams straight to their sockets once libmicrohttpd has
        /// sent their header (one `send` per stream and event; see ``StreamWriter``). 0 leaves the
        /// streams to libmicrohttpd, which resumes each suspended connection for each event.
        /// Default: as many as ``daemonThreads``.
        public var streamWriterThreads = min(8, max(1, ProcessInfo.processInfo.activeProcessorCount))

        public init(
            listen: ListenAddress = .default, tls: TLS? = nil, connectionLimit: Int = 1024,
            connectionLimitPerAddress: Int? = nil, connectionTimeout: Int = 60, headerTimeout: Duration = .seconds(10),
            bodyTimeout: Duration = .seconds(30), headLimits: HeadLimits = HeadLimits(),
            streamQueueLimit: Int = EventStream.defaultQueueLimit, heartbeatInterval: Duration = .seconds(15),
            shutdownGrace: Duration = .seconds(10), http2: HTTP2Limits = HTTP2Limits()
        ) {
            self.listen = listen
            self.tls = tls
            self.connectionLimit = connectionLimit
            self.connectionLimitPerAddress = connectionLimitPerAddress
            self.connectionTimeout = connectionTimeout
            self.headerTimeout = headerTimeout
            self.bodyTimeout = bodyTimeout
            self.headLimits = headLimits
            self.streamQueueLimit = streamQueueLimit
            self.heartbeatInterval = heartbeatInterval
            self.shutdownGrace = shutdownGrace
            self.http2 = http2
        }

        /// The slot policy these settings give.
        var slotLimits: ConnectionTable.Limits {
            let total = max(1, connectionLimit)
            return ConnectionTable.Limits(
                total: total, perAddress: max(1, connectionLimitPerAddress ?? total - total / 4),
                headTimeout: headerTimeout, bodyTimeout: bodyTimeout)
        }

        /// What libmicrohttpd itself accepts: the slots, plus room for connections being shed or
        /// refused (answered 503) until they are gone. Past it, connections wait in the kernel.
        var daemonConnectionLimit: Int { Self.daemonConnectionLimit(total: slotLimits.total) }

        static func daemonConnectionLimit(total: Int) -> Int { total + 64 + total / 4 }

        /// The largest connection limit, at most `asked`, whose connections — the slots and the
        /// room for those being shed (``daemonConnectionLimit``) — fit in `descriptors` (at least 1).
        static func connectionLimit(fittingDescriptors descriptors: Int, asked: Int) -> Int {
            guard daemonConnectionLimit(total: asked) > descriptors else { return asked }
            // total + total / 4 + 64 ≤ descriptors; the estimate is off by one or two either way
            // (the quarter is rounded down).
            var total = max(1, (descriptors - 64) * 4 / 5)
            while daemonConnectionLimit(total: total + 1) <= descriptors { total += 1 }
            while total > 1 && daemonConnectionLimit(total: total) > descriptors { total -= 1 }
            return total
        }
    }

    public let configuration: Configuration
    let core: ServerCore

    /// Creates a server; nothing listens until ``start()``.
    public init(
        configuration: Configuration, handler: any HTTPHandler, logger: ServerLogger = .silent,
        metrics: Metrics = Metrics()
    ) {
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

    /// Connections holding a slot, and all connections libmicrohttpd still holds (shed and refused
    /// ones among them, until they are gone).
    public var connections: (admitted: Int, open: Int) { core.guardian.counts }

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
        var port: UInt16 = 0
        var draining = false
        /// Set just before the daemon stops: no connection may be suspended any more.
        var stopping = false
        var inFlight: [ObjectIdentifier: RequestState] = [:]
        var streams: [ObjectIdentifier: EventStream] = [:]
        var heartbeat: Task<Void, Never>?
        /// The loop that accepts connections and serves HTTP/2, and its listener's id there.
        var loop: IOLoop?
        var listener = 0
        /// HTTP/2 connections open (ids on the loop), and their requests being handled.
        var http2Connections: Set<Int> = []
        var http2Requests = 0
        /// The certificate each TLS client presented, by the socket its HTTP/1.1 is handed to
        /// libmicrohttpd on. Set or cleared at every hand-over, so while a connection is open the
        /// entry for its socket is its own (a closed socket's number is handed over again before
        /// it is read again).
        var bridgedCertificates: [Int32: CertificateFingerprint] = [:]
    }

    let configuration: HTTPServer.Configuration
    let handler: any HTTPHandler
    let logger: ServerLogger
    let metrics: Metrics
    let state = Mutex(State())
    /// The slot policy: deadlines, the per-address share, shedding slow connections.
    let guardian: ConnectionGuard
    /// The TLS context, once started with TLS.
    nonisolated(unsafe) var tls: TLSContext?
    /// The threads writing HTTP/1.1 event streams (none: libmicrohttpd writes them).
    let writers: [StreamWriter]
    private let nextWriter = Atomic<Int>(0)

    init(configuration: HTTPServer.Configuration, handler: any HTTPHandler, logger: ServerLogger, metrics: Metrics) {
        self.configuration = configuration
        self.handler = handler
        self.logger = logger
        self.metrics = metrics
        self.guardian = ConnectionGuard(limits: configuration.slotLimits, logger: logger)
        self.writers = (0..<max(0, configuration.streamWriterThreads)).map { _ in StreamWriter() }
    }

    /// The writer for a new event stream, in turn (nil: libmicrohttpd writes it).
    private func pickWriter() -> StreamWriter? {
        guard !writers.isEmpty else { return nil }
        return writers[nextWriter.add(1, ordering: .relaxed).oldValue % writers.count]
    }

    var boundPort: UInt16 { state.withLock { $0.port } }
    var streamCount: Int { state.withLock { $0.streams.count } }

    // MARK: - Start and stop

    func start() throws {
        let context = Unmanaged.passUnretained(self).toOpaque()
        // Chime accepts connections itself (``Listener``, on the I/O loop) and hands HTTP/1.1 ones
        // to libmicrohttpd, which has no listening socket of its own.
        let flags =
            MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
            | MHD_USE_ERROR_LOG.rawValue | MHD_USE_NO_LISTEN_SOCKET.rawValue
        // TLS is Chime's (OpenSSL, for ALPN); libmicrohttpd gets HTTP/1.1-over-TLS decrypted.
        tls = try configuration.tls.map { try TLSContext($0) }
        let listenFD: Int32
        switch configuration.listen {
        case .tcp(let host, let requested): listenFD = try TCPSocket.listen(host: host, port: requested)
        case .unix(let path): listenFD = try UnixSocket.listen(path: path)
        }
        _ = fcntl(listenFD, F_SETFL, fcntl(listenFD, F_GETFL) | O_NONBLOCK)
        let port = TCPSocket.boundPort(listenFD)
        let daemon: OpaquePointer? = {
            var config = chime_mhd_config()
            config.flags = flags
            config.listen_fd = -1
            config.connection_limit = UInt32(configuration.daemonConnectionLimit)
            config.connection_timeout = UInt32(max(0, configuration.connectionTimeout))
            // Headers and libmicrohttpd's read and write buffers (bodies are copied out as they
            // arrive): 32 KiB keeps a thousand open event streams small and the per-connection
            // clearing cheap. `HeadLimits` stays below what it holds.
            config.connection_memory_limit = 32 * 1024
            config.thread_pool_size = UInt32(max(1, configuration.daemonThreads))
            config.handler = accessHandlerCallback
            config.completed = requestCompletedCallback
            config.notify_connection = connectionCallback
            config.logger = logCallback
            config.unescape = keepEscapesCallback
            config.uri_log = targetCallback
            config.context = context
            return chime_mhd_start_daemon(&config)
        }()
        guard let daemon else {
            close(listenFD)
            if case .unix(let path) = configuration.listen { unlink(path) }
            throw ServerError(.startFailed, "cannot serve on \(configuration.listen): libmicrohttpd did not start")
        }
        let loop = IOLoop()
        let listener = loop.add { Listener(id: $0, fd: listenFD, core: self, loop: loop) }
        let interval = configuration.heartbeatInterval
        let heartbeat = Task.detached { [weak self] in
            while !Task.isCancelled {
                try? await Sleep.for(interval)
                guard let self, !Task.isCancelled else { return }
                for stream in self.state.withLock({ Array($0.streams.values) }) { stream.sendComment("heartbeat") }
            }
        }
        state.withLock { state in
            state.daemon = Int(bitPattern: daemon)
            state.port = port
            state.heartbeat = heartbeat
            state.loop = loop
            state.listener = listener
        }
        guardian.start()
        for (index, writer) in writers.enumerated() { writer.start(name: "chime-http-streams-\(index)") }
        loop.start(name: "chime-http-accept")
    }

    func stop() async {
        let bits = state.withLock { state -> Int in
            guard !state.draining else { return 0 }
            state.draining = true
            return state.daemon
        }
        guard OpaquePointer(bitPattern: bits) != nil else { return }
        // Stop accepting (the listener closes its socket, so new connections are refused at once),
        // and tell HTTP/2 clients (GOAWAY) to start nothing new.
        let (loop, listener, connections) = state.withLock { ($0.loop, $0.listener, $0.http2Connections) }
        loop?.post(listener, .stopListening)
        for connection in connections { loop?.post(connection, .drain) }
        if case .unix(let path) = configuration.listen { unlink(path) }
        let clock = ContinuousClock()
        let deadline = clock.now + configuration.shutdownGrace
        while state.withLock({ !$0.inFlight.isEmpty || $0.http2Requests > 0 }), clock.now < deadline {
            try? await Sleep.for(.milliseconds(5))
        }
        // Answer what is still being handled with 503 (the handler's own answer is then dropped),
        // end the event streams, and give both a moment to be written.
        for requestState in state.withLock({ Array($0.inFlight.values) }) {
            requestState.finish(handler.unavailable(requestState.request, reason: "the server is stopping"))
        }
        for stream in state.withLock({ Array($0.streams.values) }) { stream.close() }
        let streamDeadline = clock.now + .seconds(2)
        while state.withLock({ $0.streams.values.contains { $0.isSuspended } || !$0.inFlight.isEmpty })
            || writers.contains(where: { $0.count > 0 }),
            clock.now < streamDeadline
        {
            try? await Sleep.for(.milliseconds(5))
        }
        forceStop()
    }

    /// Stops the daemon at once (after ``stop()``, or when the server is dropped).
    ///
    /// libmicrohttpd aborts the process when it is stopped while a connection is suspended, so
    /// first no connection may be suspended any more (`stopping`), every request still being
    /// handled is answered 503 (which resumes its connection; the handler's own answer is then
    /// dropped), and every event stream is closed (which resumes it): the daemon's stop moves
    /// resumed connections off its suspended list before it checks.
    func forceStop() {
        let (bits, heartbeat, loop, requests, streams) = state.withLock { state in
            defer {
                state.daemon = 0
                state.heartbeat = nil
                state.loop = nil
            }
            state.stopping = true
            return (
                state.daemon, state.heartbeat, state.loop, Array(state.inFlight.values), Array(state.streams.values)
            )
        }
        heartbeat?.cancel()
        guardian.stop()
        // The loop closes its listener, the connections it is sniffing and its HTTP/2 connections.
        loop?.stop()
        guard let daemon = OpaquePointer(bitPattern: bits) else { return }
        for requestState in requests {
            requestState.finish(handler.unavailable(requestState.request, reason: "the server is stopping"))
        }
        for stream in streams { stream.close() }
        // Streams a writer still has go back to libmicrohttpd (their connections closed), so
        // none is suspended when it stops.
        for writer in writers { writer.stop() }
        MHD_stop_daemon(daemon)
        if case .unix(let path) = configuration.listen { unlink(path) }
    }

    // MARK: - Callbacks

    func connectionEvent(
        _ connection: OpaquePointer?, _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, started: Bool
    ) {
        guard let socketContext else { return }
        if started {
            guard let connection else { return }
            socketContext.pointee = Unmanaged.passRetained(guardian.opened(connection)).toOpaque()
        } else if let opaque = socketContext.pointee {
            socketContext.pointee = nil
            guardian.closed(Unmanaged<ConnectionGuard.Entry>.fromOpaque(opaque).takeRetainedValue())
        }
    }

    /// The connection's entry in the slot policy.
    private func entry(_ connection: OpaquePointer) -> ConnectionGuard.Entry? {
        guard let opaque = chime_mhd_socket_context(connection) else { return nil }
        return Unmanaged<ConnectionGuard.Entry>.fromOpaque(opaque).takeUnretainedValue()
    }

    /// The request line is complete; its query is not split into arguments yet. A target over the
    /// limits has its query cut off before libmicrohttpd splits it (too many arguments would
    /// exhaust the connection's buffer, and libmicrohttpd 0.9.75 then sends nothing at all); the
    /// request is answered 414.
    func target(_ uri: UnsafePointer<CChar>?) -> UnsafeMutableRawPointer {
        let requestState = RequestState()
        if let uri {
            let bytes = strlen(uri)
            var arguments = 0
            if let question = strchr(uri, Int32(UInt8(ascii: "?"))) {
                arguments = 1
                var cursor = question + 1
                while cursor.pointee != 0 {
                    if cursor.pointee == CChar(UInt8(ascii: "&")) { arguments += 1 }
                    cursor += 1
                }
            }
            if let problem = RequestChecks.target(
                bytes: bytes, queryArguments: arguments, limits: configuration.headLimits)
            {
                requestState.problem = problem
                chime_mhd_drop_query(uri)
            }
        }
        return Unmanaged.passRetained(requestState).toOpaque()
    }

    func access(
        _ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
        version: UnsafePointer<CChar>?,
        upload: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>,
        requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        if requestContext.pointee == nil { requestContext.pointee = Unmanaged.passRetained(RequestState()).toOpaque() }
        let requestState = Unmanaged<RequestState>.fromOpaque(requestContext.pointee!).takeUnretainedValue()
        if !requestState.headSeen {
            // First call: the head is complete, the body (if any) is not read yet.
            requestState.headSeen = true
            let entry = self.entry(connection)
            requestState.entry = entry
            let (collected, problem) = collectHead(connection, url: url, method: method, version: version)
            var request = collected
            request.connection = entry?.connection
            requestState.request = request
            if let problem = requestState.problem ?? problem {
                logger.warning(
                    "request refused",
                    ["status": String(problem.status), "reason": problem.code, "remote": request.remoteAddress])
                return queue(handler.refused(request, problem: problem), for: requestState, on: connection, close: true)
            }
            if entry?.admitted == false {
                return queue(
                    handler.unavailable(request, reason: "too many connections; try again shortly"), for: requestState,
                    on: connection, close: true)
            }
            if state.withLock({ $0.draining }) {
                return queue(
                    handler.unavailable(request, reason: "the server is stopping"), for: requestState, on: connection,
                    close: true)
            }
            if let entry { guardian.enter(.readingBody, entry) }
            requestState.limit = handler.bodyLimit(for: request)
            if let length = request.header("content-length").flatMap(Int.init), length > requestState.limit {
                // Answer before reading the body; libmicrohttpd closes the connection afterwards.
                return queue(
                    handler.payloadTooLarge(request, limit: requestState.limit), for: requestState, on: connection,
                    close: true)
            }
            return .YES
        }
        if uploadSize.pointee > 0 {
            if !requestState.tooLarge {
                if requestState.request.body.count + uploadSize.pointee > requestState.limit {
                    requestState.tooLarge = true
                    requestState.request.body = []
                } else if let upload {
                    upload.withMemoryRebound(to: UInt8.self, capacity: uploadSize.pointee) {
                        requestState.request.body.append(
                            contentsOf: UnsafeBufferPointer(start: $0, count: uploadSize.pointee))
                    }
                }
            }
            uploadSize.pointee = 0
            return .YES
        }
        if let response = requestState.takeResponse() {
            return answer(response, for: requestState, on: connection)
        }
        if let entry = requestState.entry, !requestState.started { guardian.enter(.busy, entry) }
        if requestState.tooLarge {
            return queue(
                handler.payloadTooLarge(requestState.request, limit: requestState.limit), for: requestState,
                on: connection, close: true)
        }
        if requestState.started { return .YES }
        // The request is complete: hand it to the handler, unless the daemon is about to stop. It
        // stays in flight until its answer is written, so a stop answers it 503 if the handler has
        // not (and waits for an answer being written).
        requestState.started = true
        let admitted = state.withLock { state -> Bool in
            if state.stopping || state.draining { return false }
            state.inFlight[ObjectIdentifier(requestState)] = requestState
            return true
        }
        guard admitted else {
            return queue(
                handler.unavailable(requestState.request, reason: "the server is stopping"), for: requestState,
                on: connection, close: true)
        }
        // An answer ready at once is queued now, on this thread: no task, no suspension. Otherwise
        // the connection is suspended until the handler's answer resumes it, unless the answer
        // came already (from another thread, or from a stop).
        if let response = handler.start(requestState.request, answer: { requestState.finish($0) }) {
            return answer(response, for: requestState, on: connection)
        }
        if let response = requestState.parkUnlessAnswered(connection) {
            return answer(response, for: requestState, on: connection)
        }
        return .YES
    }

    /// Queues the handler's answer.
    private func answer(_ response: HTTPResponse, for requestState: RequestState, on connection: OpaquePointer)
        -> MHD_Result
    {
        // An answer of bytes stays in flight until libmicrohttpd has written it (`completed`), so
        // a graceful stop waits for it rather than closing its connection half-written; an event
        // stream leaves now (the stop ends streams itself).
        if case .stream = response.body {
            state.withLock { _ = $0.inFlight.removeValue(forKey: ObjectIdentifier(requestState)) }
        }
        return queue(response, for: requestState, on: connection, close: false)
    }

    private func queue(
        _ response: HTTPResponse, for requestState: RequestState, on connection: OpaquePointer,
        close: Bool
    ) -> MHD_Result {
        requestState.status = response.status
        requestState.route = response.route
        let mhdResponse: OpaquePointer?
        switch response.body {
        case .bytes(let bytes):
            mhdResponse = bytes.withUnsafeBytes { raw in
                MHD_create_response_from_buffer(
                    raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), .RESPMEM_MUST_COPY)
            }
        case .stream(let stream):
            let entry = requestState.entry
            let guardian = self.guardian
            stream.attach(
                MicroHTTPDSink(connection: Int(bitPattern: connection)), limit: configuration.streamQueueLimit
            ) {
                if let entry { guardian.disconnect(entry) }
            }
            if let entry { guardian.streaming(entry, stream: stream) }
            register(stream)
            let reader = MicroHTTPDStream(
                events: stream, connection: connection, writer: pickWriter(),
                chunked: requestState.request.protocolVersion != "HTTP/1.0")
            mhdResponse = MHD_create_response_from_callback(
                UInt64.max, 4096, streamReaderCallback,
                Unmanaged.passRetained(reader).toOpaque(), streamFreeCallback)
        }
        guard let mhdResponse else { return .NO }
        for (name, value) in response.headers { MHD_add_response_header(mhdResponse, name, value) }
        if close { MHD_add_response_header(mhdResponse, "Connection", "close") }
        let result = MHD_queue_response(connection, UInt32(response.status), mhdResponse)
        MHD_destroy_response(mhdResponse)
        return result
    }

    func completed(
        _ connection: OpaquePointer?, _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
        code: MHD_RequestTerminationCode
    ) {
        guard let requestContext, let opaque = requestContext.pointee else { return }
        requestContext.pointee = nil
        let requestState = Unmanaged<RequestState>.fromOpaque(opaque).takeRetainedValue()
        state.withLock { _ = $0.inFlight.removeValue(forKey: ObjectIdentifier(requestState)) }
        // The connection now waits for its next request head (or closes).
        if let connection, let entry = entry(connection) { guardian.enter(.awaitingHead, entry) }
        guard requestState.headSeen else { return }  // libmicrohttpd answered it itself (a malformed head)
        logRequest(
            requestState.request, status: requestState.status ?? 0, route: requestState.route,
            seconds: (ContinuousClock.now - requestState.startedAt).seconds,
            outcome: code == .REQUEST_TERMINATED_COMPLETED_OK ? "ok" : "aborted")
    }

    /// The metrics and the access-log line of a finished request, whichever protocol carried it.
    func logRequest(_ request: HTTPRequest, status: Int, route: String, seconds: Double, outcome: String) {
        metrics.recordRequest(route: route, status: status, seconds: seconds)
        logger.info(
            "request",
            [
                "method": request.method, "path": request.path, "status": String(status),
                "route": route, "ms": ServerLogger.milliseconds(seconds), "remote": request.remoteAddress,
                "outcome": outcome, "protocol": request.protocolVersion,
            ])
    }

    /// An event stream is answered: it gets heartbeats, and is closed when the server stops.
    func register(_ stream: EventStream) {
        let id = ObjectIdentifier(stream)
        let stopping = state.withLock { state -> Bool in
            state.streams[id] = stream
            return state.stopping
        }
        if stopping { stream.close() }
        stream.onEnd { [weak self] in self?.state.withLock { _ = $0.streams.removeValue(forKey: id) } }
    }

    // MARK: - Connections the loop accepted

    /// Whether the server is stopping (new requests are answered 503).
    var isDraining: Bool { state.withLock { $0.draining } }

    /// Gives an accepted HTTP/1.1 connection to libmicrohttpd (which closes it when done).
    func handToMicroHTTPD(_ fd: Int32, peer: PeerAddress, clientCertificate: CertificateFingerprint? = nil) {
        let bits = state.withLock { state in
            if tls != nil { state.bridgedCertificates[fd] = clientCertificate }
            return state.stopping ? 0 : state.daemon
        }
        guard let daemon = OpaquePointer(bitPattern: bits) else {
            close(fd)
            return
        }
        // On failure libmicrohttpd has closed the socket already.
        _ = peer.withPointer { MHD_add_connection(daemon, fd, $0, peer.length) }
    }

    func http2Opened(_ id: Int) { state.withLock { _ = $0.http2Connections.insert(id) } }
    func http2Closed(_ id: Int) { state.withLock { _ = $0.http2Connections.remove(id) } }
    func requestStarted() { state.withLock { $0.http2Requests += 1 } }
    func requestEnded() { state.withLock { $0.http2Requests -= 1 } }

    func log(_ message: String) {
        // A connection bridged from TLS is a Unix socket pair: TCP's options do not apply to it.
        for expected in ["TCP_NODELAY option", "TCP_CORK option", "Failed to push the data from buffers"]
        where message.contains(expected) {
            return
        }
        logger.warning("libmicrohttpd: \(message.trimmingCharacters(in: .whitespacesAndNewlines))")
    }

    /// The request as the handler sees it, and what is wrong with its head, if anything.
    private func collectHead(
        _ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
        version: UnsafePointer<CChar>?
    ) -> (HTTPRequest, RequestProblem?) {
        let collector = HeadCollector()
        let opaque = Unmanaged.passUnretained(collector).toOpaque()
        withExtendedLifetime(collector) {
            MHD_get_connection_values_n(connection, .HEADER_KIND, headerIterator, opaque)
            MHD_get_connection_values_n(connection, .GET_ARGUMENT_KIND, queryIterator, opaque)
        }
        // The path arrives as sent (see `keepEscapesCallback`): routes split it on `/` before decoding.
        let path =
            url.map { PercentEncoding.escapingNonASCII(UnsafeRawBufferPointer(start: $0, count: strlen($0))) } ?? "/"
        let methodText = method.map { String(cString: $0) } ?? "GET"
        let versionText = version.map { String(cString: $0) } ?? ""
        var request = HTTPRequest(
            method: methodText, path: path.isEmpty ? "/" : path,
            query: collector.arguments.query, headers: collector.headers, body: [],
            remoteAddress: Self.describe(chime_mhd_client_address(connection)))
        request.queryError = collector.arguments.error
        request.protocolVersion = versionText
        if tls != nil {
            let fd = chime_mhd_connection_fd(connection)
            request.clientCertificate = state.withLock { $0.bridgedCertificates[fd] }
        }
        let headSize = chime_mhd_header_size(connection)
        let problem =
            RequestChecks.head(bytes: headSize, limits: configuration.headLimits)
            ?? RequestChecks.method(methodText)
            ?? collector.layoutProblem(method: method, url: url, version: version, headSize: headSize)
            ?? RequestChecks.fields(collector.fields)
            ?? RequestChecks.framing(version: versionText, fields: collector.fields)
        return (request, problem)
    }

    static func describe(_ address: UnsafePointer<sockaddr>?) -> String {
        guard let address else { return "unix" }
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            let port = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                UInt16(bigEndian: $0.pointee.sin_port)
            }
            return "\(ConnectionGuard.addressKey(address)):\(port)"
        case AF_UNIX: return "unix"
        default: return "?"
        }
    }
}

// MARK: - C callbacks (no captures: the context arrives through `cls`)

private let accessHandlerCallback: MHD_AccessHandlerCallback = {
    cls, connection, url, method, version, upload, uploadSize, requestContext in
    guard let cls, let connection, let uploadSize, let requestContext else { return .NO }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    return core.access(
        connection, url: url, method: method, version: version, upload: upload, uploadSize: uploadSize,
        requestContext: requestContext)
}

private let requestCompletedCallback: MHD_RequestCompletedCallback = { cls, connection, requestContext, code in
    guard let cls else { return }
    Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().completed(connection, requestContext, code: code)
}

private let connectionCallback: MHD_NotifyConnectionCallback = { cls, connection, socketContext, code in
    guard let cls else { return }
    Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
        .connectionEvent(connection, socketContext, started: code == .CONNECTION_NOTIFY_STARTED)
}

private let targetCallback: chime_mhd_uri_callback = { cls, uri, _ in
    guard let cls else { return nil }
    return Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().target(uri)
}

private let logCallback: MHD_LogCallback = { cls, format, arguments in
    guard let cls, let format else { return }
    var buffer = [CChar](repeating: 0, count: 512)
    guard let arguments else { return }
    _ = vsnprintf(&buffer, buffer.count, format, arguments)
    Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().log(cText(buffer))
}

private let headerIterator: MHD_KeyValueIteratorN = { cls, _, key, keySize, value, valueSize in
    guard let cls, let key else { return .YES }
    Unmanaged<HeadCollector>.fromOpaque(cls).takeUnretainedValue().addHeader(
        key: key, keySize: keySize, value: value, valueSize: valueSize)
    return .YES
}

private let queryIterator: MHD_KeyValueIteratorN = { cls, _, key, keySize, value, valueSize in
    guard let cls, let key else { return .YES }
    Unmanaged<HeadCollector>.fromOpaque(cls).takeUnretainedValue().addArgument(
        key: key, keySize: keySize, value: value, valueSize: valueSize)
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
    return Unmanaged<MicroHTTPDStream>.fromOpaque(cls).takeUnretainedValue().read(
        into: UnsafeMutableRawPointer(buffer), max: max)
}

private let streamFreeCallback: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    Unmanaged<MicroHTTPDStream>.fromOpaque(cls).takeRetainedValue().events.detach()
}
