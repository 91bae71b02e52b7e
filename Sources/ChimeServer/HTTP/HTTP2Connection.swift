import ChimeCore
import CMicroHTTPD
import CNGHTTP2
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The HTTP/2 settings and defences of a server (RFC 9113), on top of what nghttp2 checks itself
/// (framing, HPACK, flow control, stream states, header validity).
public struct HTTP2Limits: Sendable, Equatable {
    /// SETTINGS_MAX_CONCURRENT_STREAMS: streams a client may have open at once. Also the most
    /// requests of one connection being handled at once, counting those whose stream the client
    /// already reset (so resetting streams cannot pile up work: CVE-2023-44487).
    public var maxConcurrentStreams: Int
    /// Streams refused past that share before the connection is ended (GOAWAY ENHANCE_YOUR_CALM).
    public var refusedStreamsBeforeGoaway: Int
    /// RST_STREAM frames a client may send: a burst, then so many a second (nghttp2's token bucket;
    /// past it GOAWAY).
    public var resetBurst: Int
    public var resetsPerSecond: Int
    /// SETTINGS and PING acknowledgements queued for a client that does not read; past it the
    /// connection is ended (SETTINGS and PING floods).
    public var maxQueuedAcks: Int
    /// Entries in one SETTINGS frame.
    public var maxSettingsEntries: Int
    /// CONTINUATION frames after one HEADERS frame.
    public var maxContinuations: Int

    public init(maxConcurrentStreams: Int = 128, refusedStreamsBeforeGoaway: Int = 256, resetBurst: Int = 1000,
                resetsPerSecond: Int = 33, maxQueuedAcks: Int = 1000, maxSettingsEntries: Int = 32, maxContinuations: Int = 8) {
        self.maxConcurrentStreams = maxConcurrentStreams
        self.refusedStreamsBeforeGoaway = refusedStreamsBeforeGoaway
        self.resetBurst = resetBurst
        self.resetsPerSecond = resetsPerSecond
        self.maxQueuedAcks = maxQueuedAcks
        self.maxSettingsEntries = maxSettingsEntries
        self.maxContinuations = maxContinuations
    }
}

/// One request of an HTTP/2 connection: its head as it arrives, its body, and its answer.
final class HTTP2Stream {
    let id: Int32
    let started = ContinuousClock.now
    var method = ""
    var path = ""
    var authority: String?
    var fields: [(name: String, value: String)] = []
    var cookies: [String] = []
    var headBytes = 0
    var problem: RequestProblem?
    var request = HTTPRequest(method: "GET", path: "/")
    var limit = 0
    var tooLarge = false
    /// The handler runs (or has run) for it.
    var dispatched = false
    /// A response was submitted.
    var answered = false
    var status: Int?
    var route = "unmatched"
    /// A byte body being written, from `offset`.
    var body: [UInt8] = []
    var offset = 0
    var events: EventStream?

    init(id: Int32) { self.id = id }
}

/// An HTTP/2 connection, server side, through nghttp2's session: requests become ``HTTPRequest``s
/// for the same handler as HTTP/1.1's, with the same checks, limits, metrics and access log;
/// responses go back as HEADERS and DATA, event streams as DATA frames while events come (deferred
/// while nothing is queued; nghttp2 respects the client's flow-control windows, and a client that
/// stops reading lets the event stream's bounded queue fill and is reset).
///
/// Lives on the I/O loop's thread only.
final class HTTP2Connection: LoopClient {
    let id: Int
    private let transport: ByteTransport
    private let core: ServerCore
    private let loop: IOLoop
    private let peer: PeerAddress
    private let entry: ConnectionGuard.Entry
    private var session: OpaquePointer?
    private var streams: [Int32: HTTP2Stream] = [:]
    /// Requests being handled, including those whose stream is gone.
    private var handling = 0
    private var refused = 0
    private var pending: [UInt8] = []
    private var pendingOffset = 0
    private var closed = false
    private var phase = ConnectionTable.Phase.awaitingHead
    private let scheme: String

    init(id: Int, transport: ByteTransport, peer: PeerAddress, core: ServerCore, loop: IOLoop, secure: Bool) {
        self.id = id
        self.transport = transport
        self.peer = peer
        self.core = core
        self.loop = loop
        self.scheme = secure ? "https" : "http"
        self.entry = core.guardian.opened(fd: transport.fd, address: peer.key)
        startSession()
        core.http2Opened(id)
        flush()
    }

    private var limits: HTTP2Limits { core.configuration.http2 }

    private func startSession() {
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, beginHeadersCallback)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, headerCallback)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, frameCallback)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, dataCallback)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, streamCloseCallback)
        var option: OpaquePointer?
        nghttp2_option_new(&option)
        nghttp2_option_set_max_outbound_ack(option, limits.maxQueuedAcks)
        nghttp2_option_set_max_settings(option, limits.maxSettingsEntries)
        nghttp2_option_set_max_continuations(option, limits.maxContinuations)
        nghttp2_option_set_stream_reset_rate_limit(option, UInt64(limits.resetBurst), UInt64(limits.resetsPerSecond))
        // Closed streams are not kept for the priority tree: the server does not use priorities.
        nghttp2_option_set_no_closed_streams(option, 1)
        var session: OpaquePointer?
        nghttp2_session_server_new2(&session, callbacks, Unmanaged.passUnretained(self).toOpaque(), option)
        nghttp2_option_del(option)
        nghttp2_session_callbacks_del(callbacks)
        self.session = session
        var settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                                   value: UInt32(max(1, limits.maxConcurrentStreams))),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue),
                                   value: UInt32(core.configuration.headLimits.headBytes)),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
        ]
        nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
    }

    // MARK: - The loop

    var interests: [(fd: Int32, events: Int16)] {
        guard !closed else { return [] }
        var events: Int16 = 0
        if pendingOffset < pending.count {
            events |= transport.waitsFor == Int16(POLLIN) ? Int16(POLLIN) : Int16(POLLOUT)
        } else {
            events |= transport.waitsFor
        }
        return [(transport.fd, events)]
    }

    func ready(fd: Int32, revents: Int16) {
        guard !closed else { return }
        if pendingOffset < pending.count {
            flush()
            if pendingOffset < pending.count || closed { return }
        }
        readAvailable()
    }

    func tick(now: ContinuousClock.Instant) {}

    func receive(_ message: LoopMessage) {
        guard !closed, let session else { return }
        switch message {
        case .respond(let streamID, let response):
            handling -= 1
            if let stream = streams[streamID], !stream.answered { answer(stream, with: response) }
        case .resume(let streamID):
            if streams[streamID] != nil { nghttp2_session_resume_data(session, streamID) }
        case .reset(let streamID):
            if streams[streamID] != nil {
                nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, NGHTTP2_ENHANCE_YOUR_CALM.rawValue)
            }
        case .drain:
            nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nghttp2_session_get_last_proc_stream_id(session),
                                  NGHTTP2_NO_ERROR.rawValue, nil, 0)
        case .stopListening:
            break
        }
        flush()
    }

    func shutDown() { close() }

    /// Reads what the socket has and feeds it to the session, until it would block or output backs up.
    private func readAvailable() {
        var buffer = [UInt8](repeating: 0, count: 16384)
        while !closed {
            let result = buffer.withUnsafeMutableBytes { transport.receive(into: $0.baseAddress!, count: $0.count) }
            switch result {
            case .moved(let count):
                let consumed = buffer.withUnsafeBytes { nghttp2_session_mem_recv(session, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), count) }
                if consumed < 0 {
                    core.logger.info("HTTP/2 connection ended", ["reason": String(cString: nghttp2_strerror(Int32(consumed))),
                                                                "remote": peer.description])
                    flush()
                    close()
                    return
                }
                flush()
                // The client is not reading what it asked for: read no more until it does.
                if pendingOffset < pending.count { return }
            case .wouldBlock:
                if !transport.hasBufferedInput { return }
            case .ended, .failed:
                close()
                return
            }
        }
    }

    /// Writes what the session has to send; closes the connection when the session is done.
    private func flush() {
        guard !closed, let session else { return }
        while true {
            if pendingOffset < pending.count {
                let result = pending.withUnsafeBytes { transport.send(from: $0.baseAddress! + pendingOffset, count: pending.count - pendingOffset) }
                switch result {
                case .moved(let count):
                    pendingOffset += count
                    if pendingOffset < pending.count { continue }
                    pending.removeAll(keepingCapacity: true)
                    pendingOffset = 0
                case .wouldBlock: return
                case .ended, .failed:
                    close()
                    return
                }
            }
            var data: UnsafePointer<UInt8>?
            let count = nghttp2_session_mem_send(session, &data)
            if count < 0 {
                close()
                return
            }
            guard count > 0, let data else { break }
            var sent = 0
            while sent < count {
                let result = transport.send(from: UnsafeRawPointer(data) + sent, count: count - sent)
                guard case .moved(let moved) = result else {
                    if result != .wouldBlock {
                        close()
                        return
                    }
                    break
                }
                sent += moved
            }
            if sent < count {
                pending.append(contentsOf: UnsafeBufferPointer(start: data + sent, count: count - sent))
                return
            }
        }
        if nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0 { close() }
        updatePhase()
    }

    private func close() {
        guard !closed else { return }
        closed = true
        for stream in streams.values { finish(stream, outcome: "aborted") }
        streams.removeAll()
        if let session { nghttp2_session_del(session) }
        session = nil
        core.guardian.closed(entry)
        if pendingOffset < pending.count || chime_unsent_bytes(transport.fd) > 0 {
            // The client does not read what it was sent (a flood, a stall): reset the connection
            // rather than leave the kernel holding the unsent bytes behind a closed window.
            var abort = linger(l_onoff: 1, l_linger: 0)
            setsockopt(transport.fd, SOL_SOCKET, SO_LINGER, &abort, socklen_t(MemoryLayout<linger>.size))
        }
        transport.close()
        core.http2Closed(id)
        loop.remove(id)
    }

    /// Tells the slot policy what the connection does: idle (no stream; the head timeout runs),
    /// receiving requests (the body timeout runs), or serving.
    private func updatePhase() {
        let now: ConnectionTable.Phase
        if streams.isEmpty && handling == 0 {
            now = .awaitingHead
        } else if handling > 0 || streams.values.contains(where: { $0.dispatched }) {
            now = .busy
        } else {
            now = .readingBody
        }
        guard now != phase, !closed else { return }
        phase = now
        core.guardian.enter(now, entry)
    }

    // MARK: - nghttp2's callbacks

    fileprivate func beginHeaders(_ frame: UnsafePointer<nghttp2_frame>) -> Int32 {
        guard frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue), frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST else { return 0 }
        let streamID = frame.pointee.hd.stream_id
        if handling >= limits.maxConcurrentStreams {
            // The client resets streams to open new ones while their work goes on (rapid reset).
            refused += 1
            if refused > limits.refusedStreamsBeforeGoaway {
                core.logger.warning("HTTP/2 connection ended", ["reason": "too many refused streams", "remote": peer.description])
                nghttp2_session_terminate_session(session, NGHTTP2_ENHANCE_YOUR_CALM.rawValue)
            } else {
                nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, NGHTTP2_REFUSED_STREAM.rawValue)
            }
            return 0
        }
        streams[streamID] = HTTP2Stream(id: streamID)
        return 0
    }

    fileprivate func header(_ frame: UnsafePointer<nghttp2_frame>, name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> Int32 {
        guard let stream = streams[frame.pointee.hd.stream_id], !stream.dispatched else { return 0 }
        stream.headBytes += name.count + value.count + 32
        let headLimit = core.configuration.headLimits.headBytes
        if stream.headBytes > headLimit {
            if stream.problem == nil { stream.problem = RequestChecks.head(bytes: stream.headBytes, limits: core.configuration.headLimits) }
            // An HPACK bomb: stop decoding into this stream well past the limit.
            return stream.headBytes > 4 * headLimit ? NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue : 0
        }
        let nameText = String(decoding: name, as: UTF8.self)
        switch nameText {
        case ":method": stream.method = String(decoding: value, as: UTF8.self)
        case ":path": stream.path = PercentEncoding.escapingNonASCII(value)
        case ":authority": stream.authority = String(decoding: value, as: UTF8.self)
        case ":scheme": break
        case "cookie": stream.cookies.append(String(decoding: value, as: UTF8.self))
        default:
            if !nameText.hasPrefix(":") { stream.fields.append((nameText, String(decoding: value, as: UTF8.self))) }
        }
        return 0
    }

    fileprivate func frameReceived(_ frame: UnsafePointer<nghttp2_frame>) -> Int32 {
        let type = frame.pointee.hd.type
        guard type == UInt8(NGHTTP2_HEADERS.rawValue) || type == UInt8(NGHTTP2_DATA.rawValue),
              let stream = streams[frame.pointee.hd.stream_id] else { return 0 }
        let endOfStream = frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        if type == UInt8(NGHTTP2_HEADERS.rawValue), frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST {
            headComplete(stream)
        }
        if endOfStream, !stream.answered, !stream.dispatched { dispatch(stream) }
        updatePhase()
        return 0
    }

    fileprivate func dataChunk(stream streamID: Int32, _ data: UnsafeRawBufferPointer) -> Int32 {
        guard let stream = streams[streamID], !stream.answered, !stream.dispatched else { return 0 }
        if stream.request.body.count + data.count > stream.limit {
            stream.tooLarge = true
            stream.request.body = []
            answer(stream, with: core.handler.payloadTooLarge(stream.request, limit: stream.limit))
        } else {
            stream.request.body.append(contentsOf: data)
        }
        return 0
    }

    fileprivate func streamClosed(_ streamID: Int32, errorCode: UInt32) -> Int32 {
        guard let stream = streams.removeValue(forKey: streamID) else { return 0 }
        finish(stream, outcome: errorCode == NGHTTP2_NO_ERROR.rawValue && stream.answered ? "ok" : "aborted")
        updatePhase()
        return 0
    }

    /// The head is complete: the request as the handler sees it, checked as HTTP/1.1's head is.
    private func headComplete(_ stream: HTTP2Stream) {
        var target = stream.path
        var queryText: Substring = ""
        if let question = target.firstIndex(of: "?") {
            queryText = target[target.index(after: question)...]
            target = String(target[..<question])
        }
        var headers: [String: String] = [:]
        for (name, value) in stream.fields { headers[name] = value }
        if !stream.cookies.isEmpty { headers["cookie"] = stream.cookies.joined(separator: "; ") }
        // :authority is HTTP/2's Host (RFC 9113 §8.3.1), for the same Host check.
        if let authority = stream.authority, headers["host"] == nil { headers["host"] = authority }
        let arguments = queryText.isEmpty ? [] : queryText.split(separator: "&", omittingEmptySubsequences: false)
        let collector = HeadCollector()
        if stream.problem == nil, stream.path.utf8.count <= core.configuration.headLimits.targetBytes,
           arguments.count <= core.configuration.headLimits.queryArguments {
            for argument in arguments where !argument.isEmpty {
                let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                // `+` is a space in a query argument, as libmicrohttpd hands it over.
                func bytes(_ text: Substring) -> [UInt8] { text.utf8.map { $0 == UInt8(ascii: "+") ? 0x20 : $0 } }
                collector.decodeArgument(rawKey: bytes(parts[0]), rawValue: parts.count > 1 ? bytes(parts[1]) : [])
            }
        }
        var request = HTTPRequest(method: stream.method, path: target.isEmpty ? "/" : target, query: collector.query,
                                  headers: headers, body: [], remoteAddress: peer.description)
        request.queryError = collector.queryError
        request.protocolVersion = "HTTP/2"
        stream.request = request
        if stream.problem == nil {
            stream.problem = RequestChecks.target(bytes: stream.path.utf8.count, queryArguments: arguments.count,
                                                  limits: core.configuration.headLimits)
                ?? RequestChecks.method(stream.method)
        }
        if let problem = stream.problem {
            core.logger.warning("request refused", ["status": String(problem.status), "reason": problem.code, "remote": peer.description])
            answer(stream, with: core.handler.refused(request, problem: problem))
            return
        }
        stream.limit = core.handler.bodyLimit(for: request)
        if let length = request.header("content-length").flatMap(Int.init), length > stream.limit {
            stream.tooLarge = true
            answer(stream, with: core.handler.payloadTooLarge(request, limit: stream.limit))
        }
    }

    /// The request is complete: answer it as the server would before the handler, or hand it over.
    private func dispatch(_ stream: HTTP2Stream) {
        stream.dispatched = true
        let request = stream.request
        if !entry.admitted {
            answer(stream, with: core.handler.unavailable(request, reason: "too many connections; try again shortly"))
            return
        }
        if core.isDraining {
            answer(stream, with: core.handler.unavailable(request, reason: "the server is stopping"))
            return
        }
        handling += 1
        let handler = core.handler
        let loop = self.loop
        let connection = id
        let streamID = stream.id
        let core = self.core
        core.requestStarted()
        Task {
            let response = await handler.handle(request)
            loop.post(connection, .respond(stream: streamID, response))
            core.requestEnded()
        }
    }

    /// Submits the response's HEADERS and its body's data source.
    private func answer(_ stream: HTTP2Stream, with response: HTTPResponse) {
        guard let session, !stream.answered else { return }
        stream.answered = true
        stream.status = response.status
        stream.route = response.route
        var fields: [(String, String)] = [(":status", String(response.status))]
        for (name, value) in response.headers {
            let lower = name.lowercased()
            // Connection-specific fields do not exist in HTTP/2 (RFC 9113 §8.2.2).
            if ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"].contains(lower) { continue }
            fields.append((lower, value))
        }
        let hasBody = stream.request.method != "HEAD" && response.status != 204 && response.status != 304
        switch response.body {
        case .bytes(let bytes):
            stream.body = hasBody ? bytes : []
            if !fields.contains(where: { $0.0 == "content-length" }) { fields.append(("content-length", String(bytes.count))) }
        case .stream(let events):
            stream.events = events
            let sink = HTTP2Sink(loop: loop, connection: id, stream: stream.id)
            let loop = self.loop
            let connection = id
            let streamID = stream.id
            events.attach(sink, limit: core.configuration.streamQueueLimit) { loop.post(connection, .reset(stream: streamID)) }
            core.register(events)
        }
        // Names and values side by side in one buffer; nghttp2 copies them when the response is submitted.
        var storage: [UInt8] = []
        var spans: [(name: Int, nameLength: Int, value: Int, valueLength: Int)] = []
        for (name, value) in fields {
            let nameStart = storage.count
            storage.append(contentsOf: name.utf8)
            let valueStart = storage.count
            storage.append(contentsOf: value.utf8)
            spans.append((nameStart, valueStart - nameStart, valueStart, storage.count - valueStart))
        }
        var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: Unmanaged.passUnretained(stream).toOpaque()),
                                             read_callback: dataSourceCallback)
        // An empty body ends the stream with the HEADERS frame, as Apple's 200 does (some
        // providers read any DATA frame as an error body).
        let withBody = (hasBody && !stream.body.isEmpty) || stream.events != nil
        let result: Int32 = storage.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            let list = spans.map {
                nghttp2_nv(name: base + $0.name, value: base + $0.value, namelen: $0.nameLength, valuelen: $0.valueLength,
                           flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
            }
            return withBody ? nghttp2_submit_response(session, stream.id, list, list.count, &provider)
                : nghttp2_submit_response(session, stream.id, list, list.count, nil)
        }
        if result != 0 {
            nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream.id, NGHTTP2_INTERNAL_ERROR.rawValue)
        }
    }

    /// The data source: the byte body, or the event stream's queue (deferred while it is empty).
    fileprivate func readBody(_ streamID: Int32, into buffer: UnsafeMutablePointer<UInt8>, length: Int,
                              flags: UnsafeMutablePointer<UInt32>) -> Int {
        guard let stream = streams[streamID] else { return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
        if let events = stream.events {
            let count = events.read(into: UnsafeMutableRawPointer(buffer), max: length)
            switch count {
            case -1:
                flags.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue)
                return 0
            case -2: return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
            case 0: return Int(NGHTTP2_ERR_DEFERRED.rawValue)
            default: return count
            }
        }
        let count = min(length, stream.body.count - stream.offset)
        if count > 0 {
            stream.body.withUnsafeBytes { raw in
                UnsafeMutableRawPointer(buffer).copyMemory(from: raw.baseAddress! + stream.offset, byteCount: count)
            }
            stream.offset += count
        }
        if stream.offset >= stream.body.count { flags.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue) }
        return count
    }

    /// The stream is gone: its event stream detached, the request logged and counted.
    private func finish(_ stream: HTTP2Stream, outcome: String) {
        stream.events?.detach()
        stream.events = nil
        guard !stream.method.isEmpty else { return }
        core.logRequest(stream.request, status: stream.status ?? 0, route: stream.route,
                        seconds: (ContinuousClock.now - stream.started).seconds, outcome: outcome)
    }
}

/// An event stream on an HTTP/2 stream: resuming posts to the loop, which resumes the stream's data.
struct HTTP2Sink: StreamSink {
    let loop: IOLoop
    let connection: Int
    let stream: Int32
    func suspend() {}
    func resume() { loop.post(connection, .resume(stream: stream)) }
}

// MARK: - C callbacks (the connection arrives through `user_data`)

private func connection(_ userData: UnsafeMutableRawPointer?) -> HTTP2Connection? {
    userData.map { Unmanaged<HTTP2Connection>.fromOpaque($0).takeUnretainedValue() }
}

private let beginHeadersCallback: nghttp2_on_begin_headers_callback = { _, frame, userData in
    guard let frame, let connection = connection(userData) else { return 0 }
    return connection.beginHeaders(frame)
}

private let headerCallback: nghttp2_on_header_callback = { _, frame, name, nameLength, value, valueLength, _, userData in
    guard let frame, let name, let connection = connection(userData) else { return 0 }
    return connection.header(frame, name: UnsafeRawBufferPointer(start: name, count: nameLength),
                             value: UnsafeRawBufferPointer(start: value, count: value == nil ? 0 : valueLength))
}

private let frameCallback: nghttp2_on_frame_recv_callback = { _, frame, userData in
    guard let frame, let connection = connection(userData) else { return 0 }
    return connection.frameReceived(frame)
}

private let dataCallback: nghttp2_on_data_chunk_recv_callback = { _, _, streamID, data, length, userData in
    guard let connection = connection(userData) else { return 0 }
    return connection.dataChunk(stream: streamID, UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : length))
}

private let streamCloseCallback: nghttp2_on_stream_close_callback = { _, streamID, errorCode, userData in
    guard let connection = connection(userData) else { return 0 }
    return connection.streamClosed(streamID, errorCode: errorCode)
}

private let dataSourceCallback: nghttp2_data_source_read_callback = { _, streamID, buffer, length, flags, _, userData in
    guard let buffer, let flags, let connection = connection(userData) else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
    return connection.readBody(streamID, into: buffer, length: length, flags: flags)
}
