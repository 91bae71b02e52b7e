import CNGHTTP2
import ChimeCore
import Foundation

/// The HTTP/2 settings and defences of a server (RFC 9113), on top of what nghttp2 checks itself
/// (framing, HPACK, flow control, stream states, header validity).
public struct HTTP2Limits: Sendable, Equatable {
    /// SETTINGS_MAX_CONCURRENT_STREAMS: streams a client may have open at once. Also the most
    /// requests of one connection being handled at once, counting those whose stream the client
    /// already reset (so resetting streams cannot pile up work: CVE-2023-44487), when
    /// ``maxHandlers`` is not lower.
    public var maxConcurrentStreams: Int
    /// Requests of one connection handed to the handler at once. Further complete requests wait,
    /// their streams open (so within ``maxConcurrentStreams``), and are handed over in the order
    /// they came as answers come back: a connection is slowed, not refused, and the answers being
    /// made for one connection at once (and the memory they take) are bounded. A waiting request
    /// whose stream the client resets is dropped without being handled.
    public var maxHandlers: Int
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
    /// DATA frames with nothing in them (and no END_STREAM) in a row, with no byte of a body or a
    /// new request between them; past it the connection is ended (GOAWAY ENHANCE_YOUR_CALM): an
    /// empty-frame flood costs the server work for nothing (CVE-2019-9518).
    public var maxEmptyFrames: Int
    /// Frames nghttp2 refuses as a stream's error (a malformed request: its stream is reset); past
    /// it the connection is ended (GOAWAY ENHANCE_YOUR_CALM): a flood of them costs the server work for nothing.
    public var maxInvalidFrames: Int
    /// Bytes of answers a connection may hold that its client has not taken (its flow-control
    /// windows shut, or it reads slowly). While it holds this much, complete requests wait to be
    /// handled; an answer that comes back while it does is dropped and its stream reset
    /// (ENHANCE_YOUR_CALM), so a client that never opens its windows holds at most this and one answer.
    public var maxQueuedResponseBytes: Int
    /// How long an answer may wait with nothing of it taken (its flow-control window shut): then
    /// its stream is reset (ENHANCE_YOUR_CALM), or the connection ended (GOAWAY ENHANCE_YOUR_CALM)
    /// when the connection's own window is the one shut.
    public var stallTimeout: Duration

    public init(
        maxConcurrentStreams: Int = 128, maxHandlers: Int = 32, refusedStreamsBeforeGoaway: Int = 256,
        resetBurst: Int = 1000,
        resetsPerSecond: Int = 33, maxQueuedAcks: Int = 1000, maxSettingsEntries: Int = 32, maxContinuations: Int = 8,
        maxEmptyFrames: Int = 64, maxInvalidFrames: Int = 64, maxQueuedResponseBytes: Int = 8 << 20,
        stallTimeout: Duration = .seconds(30)
    ) {
        self.maxConcurrentStreams = maxConcurrentStreams
        self.maxHandlers = maxHandlers
        self.refusedStreamsBeforeGoaway = refusedStreamsBeforeGoaway
        self.resetBurst = resetBurst
        self.resetsPerSecond = resetsPerSecond
        self.maxQueuedAcks = maxQueuedAcks
        self.maxSettingsEntries = maxSettingsEntries
        self.maxContinuations = maxContinuations
        self.maxEmptyFrames = maxEmptyFrames
        self.maxInvalidFrames = maxInvalidFrames
        self.maxQueuedResponseBytes = maxQueuedResponseBytes
        self.stallTimeout = stallTimeout
    }
}

/// A response as an HTTP/2 session sends it: the head, and bytes or a body read as it comes.
struct HTTP2Response {
    enum Body {
        case bytes([UInt8])
        /// Read while the stream lasts (an event stream), through nghttp2's flow control.
        case source(any HTTP2BodySource)
    }

    var status: Int
    var headers: [(name: String, value: String)]
    var body: Body
    /// The route's template, for the access log.
    var route: String
}

/// A body read as it comes (an event stream's queue).
protocol HTTP2BodySource: AnyObject {
    /// Bytes waiting to be read.
    var queuedBytes: Int { get }
    /// Up to `max` bytes into `buffer`: their count; 0 when none are ready (the stream waits until
    /// ``HTTP2Session/resume(_:)``); -1 at the end; -2 when the stream is to be reset.
    func read(into buffer: UnsafeMutableRawPointer, max: Int) -> Int
    /// The stream is gone: the source is never read again.
    func detach()
}

/// What a complete request becomes: answered at once, or handed to the handler, whose answer comes
/// back through ``HTTP2Session/handled(_:response:)``.
enum HTTP2Dispatch {
    case handling
    case answer(HTTP2Response)
}

/// What an ``HTTP2Session`` asks of the connection that drives it: the server's handler and log
/// (``HTTP2Connection``), or a recorder (the fuzz target).
protocol HTTP2SessionDelegate: AnyObject {
    /// The largest body accepted for this head, in bytes.
    func bodyLimit(for request: HTTPRequest) -> Int
    /// The answer to a head refused before the handler (the head's limits, a method that is not a token).
    func refused(_ request: HTTPRequest, problem: RequestProblem, stream: Int32) -> HTTP2Response
    /// The answer to a body over `limit` (by its Content-Length or its bytes).
    func payloadTooLarge(_ request: HTTPRequest, limit: Int, stream: Int32) -> HTTP2Response
    /// A complete request, its body within its limit.
    func dispatch(_ request: HTTPRequest, stream: Int32) -> HTTP2Dispatch
    /// A stream is gone: `outcome` is `ok` (answered and closed cleanly) or `aborted`.
    func ended(_ stream: HTTP2Stream, outcome: String)
    /// The session ends the connection itself, for `reason` (a client that keeps opening streams
    /// past its share).
    func ending(reason: String)
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
    /// The head is complete (HEADERS with END_HEADERS came).
    var headComplete = false
    var problem: RequestProblem?
    var request = HTTPRequest(method: "GET", path: "/")
    var limit = 0
    var tooLarge = false
    /// The request is complete: the handler runs (or has run) for it, or it waits its turn.
    var dispatched = false
    /// It waits its turn (in ``HTTP2Session``'s `waiting`), since `waitingSince`.
    var waits = false
    var waitingSince = ContinuousClock.now
    /// A response was submitted.
    var answered = false
    var status: Int?
    var route = "unmatched"
    /// A byte body being written, from `offset`.
    var body: [UInt8] = []
    var offset = 0
    var source: (any HTTP2BodySource)?
    /// When the client last took bytes of the answer (or the answer was queued).
    var lastProgress = ContinuousClock.now

    init(id: Int32) { self.id = id }

    /// Bytes of the answer not yet handed to nghttp2.
    var untaken: Int { source?.queuedBytes ?? (body.count - offset) }
}

/// The server side of one HTTP/2 connection, without I/O: nghttp2's session (framing, HPACK, flow
/// control, the protocol's checks) and what Chime does with what it hands up — the request built
/// from a stream's head (checked as HTTP/1.1's is), body limits, and how many requests a connection
/// may have handled at once (rapid reset). Bytes go in through ``receive(_:)`` and come out of
/// ``nextOutput()``; the connection (``HTTP2Connection``) moves them over its socket, the fuzz
/// target (Fuzz/Sources/FuzzHTTP2) in memory.
///
/// ```swift
/// let session = HTTP2Session(limits: HTTP2Limits(), headLimits: HeadLimits(), remoteAddress: "unix",
///                            connection: HTTPConnection(), delegate: self)
/// _ = bytes.withUnsafeBytes { session.receive($0) }   // the delegate's dispatch gets each request
/// while let out = session.nextOutput(), !out.isEmpty { send(out) }
/// ```
///
/// Used on one thread only.
final class HTTP2Session {
    let limits: HTTP2Limits
    let headLimits: HeadLimits
    private let remoteAddress: String
    /// The certificate the TLS client presented, handed to every request of the connection.
    private let clientCertificate: CertificateFingerprint?
    /// What every request of the connection carries as ``HTTPRequest/connection``.
    private let connection: HTTPConnection
    private unowned let delegate: any HTTP2SessionDelegate
    private var session: OpaquePointer?
    /// Streams whose head began within the share, by id, until nghttp2 closes them.
    private(set) var streams: [Int32: HTTP2Stream] = [:]
    /// Requests handed to the handler whose answer has not come back, including those whose stream is gone.
    private(set) var handling = 0
    /// Streams refused because ``handling`` was at the share.
    private(set) var refused = 0
    /// Bytes of byte-body answers not yet handed to nghttp2 (their client has not opened its window for them).
    private(set) var queuedResponseBytes = 0
    /// Complete requests waiting to be handled until fewer than ``HTTP2Limits/maxHandlers`` are and
    /// ``queuedResponseBytes`` is under its limit, oldest first.
    private(set) var waiting: [Int32] = []
    /// Empty DATA frames in a row.
    private var emptyFrames = 0
    /// Frames nghttp2 refused as a stream's error.
    private var invalidFrames = 0
    /// The session ended the connection for the client's doing (GOAWAY queued).
    private var ending = false

    /// `connection`: what every request carries as ``HTTPRequest/connection`` (the connection's
    /// ``ConnectionGuard/Entry/connection``).
    init(
        limits: HTTP2Limits, headLimits: HeadLimits, remoteAddress: String, connection: HTTPConnection,
        clientCertificate: CertificateFingerprint? = nil, delegate: any HTTP2SessionDelegate
    ) {
        self.limits = limits
        self.headLimits = headLimits
        self.remoteAddress = remoteAddress
        self.connection = connection
        self.clientCertificate = clientCertificate
        self.delegate = delegate
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, beginHeadersCallback)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, headerCallback)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, frameCallback)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, dataCallback)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, streamCloseCallback)
        nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(callbacks, invalidFrameCallback)
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
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                value: UInt32(max(1, limits.maxConcurrentStreams))),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue),
                value: UInt32(headLimits.headBytes)),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
        ]
        nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
    }

    deinit {
        if let session { nghttp2_session_del(session) }
    }

    // MARK: - Bytes in and out

    /// Feeds bytes the client sent (after the connection preface's first bytes were only peeked at,
    /// the preface too). Nil, or why the session ended (nghttp2's words): then send what
    /// ``nextOutput()`` still has and close.
    func receive(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard let session else { return "the session is closed" }
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        // Ended by the session itself (a flood): what the client still sends is not looked at.
        guard !ending else { return nil }
        let consumed = nghttp2_session_mem_recv(session, base, bytes.count)
        guard consumed < 0 else { return nil }
        if consumed == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS.rawValue {
            // nghttp2 stops reading; the client is told why (GOAWAY) before the connection closes.
            terminate(code: NGHTTP2_ENHANCE_YOUR_CALM.rawValue)
        }
        return String(cString: nghttp2_strerror(Int32(consumed)))
    }

    /// The next bytes to send, valid until the next call; empty when there are none now, nil when
    /// the session failed (close the connection).
    func nextOutput() -> UnsafeRawBufferPointer? {
        guard let session else { return nil }
        var data: UnsafePointer<UInt8>?
        let count = nghttp2_session_mem_send(session, &data)
        guard count >= 0 else { return nil }
        return UnsafeRawBufferPointer(start: count > 0 ? data : nil, count: count)
    }

    /// Neither side has more to say (both sent GOAWAY, or the session failed): close the connection.
    var isFinished: Bool {
        guard let session else { return true }
        return nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0
    }

    /// What the connection does, for the slot policy: nothing (the head timeout runs), receiving
    /// requests (the body timeout runs), or serving.
    enum Activity { case idle, receiving, busy }

    var activity: Activity {
        if streams.isEmpty && handling == 0 { return .idle }
        if handling > 0 || streams.values.contains(where: { $0.dispatched }) { return .busy }
        // A head still arriving is timed as HTTP/1.1's: from the end of the previous request (or the
        // connection's start), however slowly its bytes come.
        return streams.values.contains(where: { $0.headComplete }) ? .receiving : .idle
    }

    /// Bytes held for the streams' requests: header fields and bodies. At most the head's limit and
    /// the body's limit per stream.
    var bufferedBytes: Int {
        streams.values.reduce(0) { total, stream in
            total + stream.request.body.count
                + stream.fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count }
                + stream.cookies.reduce(0) { $0 + $1.utf8.count } + stream.method.utf8.count + stream.path.utf8.count
                + (stream.authority?.utf8.count ?? 0)
        }
    }

    // MARK: - The connection's calls

    /// The handler answered a request ``HTTP2SessionDelegate/dispatch(_:stream:)`` handed over:
    /// `response` is made and sent only when its stream still waits for it. Waiting requests are
    /// handed over in its place by the next ``dispatchWaiting()``.
    func handled(_ streamID: Int32, response: () -> HTTP2Response) {
        handling -= 1
        guard let session, let stream = streams[streamID], !stream.answered else { return }
        if queuedResponseBytes >= limits.maxQueuedResponseBytes {
            // The client has not taken what it was sent: this answer is not kept too (the access
            // log has the stream aborted).
            nghttp2_submit_rst_stream(
                session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, NGHTTP2_ENHANCE_YOUR_CALM.rawValue)
            return
        }
        answer(stream, with: response())
    }

    /// Whether a complete request may be handed to the handler now: fewer than
    /// ``HTTP2Limits/maxHandlers`` are handled, and the connection holds less than its limit of
    /// answers not taken.
    private var mayHandOver: Bool {
        handling < limits.maxHandlers && queuedResponseBytes < limits.maxQueuedResponseBytes
    }

    /// Hands waiting requests to the handler, oldest first, while it may (after an answer came
    /// back, and after output was sent).
    func dispatchWaiting() {
        while !waiting.isEmpty, mayHandOver, session != nil {
            let id = waiting.removeFirst()
            if let stream = streams[id] {
                stream.waits = false
                if !stream.answered { handOver(stream) }
            }
        }
    }

    /// Resets streams whose answer has waited `stallTimeout` with nothing of it taken, and with
    /// them the requests that have waited as long to be handled (behind answers the client does
    /// not take, they would only be made to be reset in turn); ends the connection when its own
    /// flow-control window is what is shut. Called about four times a second.
    func expireStalled(now: ContinuousClock.Instant) {
        guard let session else { return }
        var stalled: [Int32] = []
        for stream in streams.values
        where stream.answered && stream.untaken > 0 && now - stream.lastProgress >= limits.stallTimeout {
            stalled.append(stream.id)
        }
        guard !stalled.isEmpty else { return }
        if nghttp2_session_get_remote_window_size(session) <= 0 {
            terminate(code: NGHTTP2_ENHANCE_YOUR_CALM.rawValue, because: "the client's flow-control window stayed shut")
            return
        }
        waiting.removeAll { id in
            guard let stream = streams[id], now - stream.waitingSince >= limits.stallTimeout else { return false }
            stream.waits = false
            stalled.append(id)
            return true
        }
        for id in stalled.sorted() {
            streams[id]?.lastProgress = now
            nghttp2_submit_rst_stream(
                session, UInt8(NGHTTP2_FLAG_NONE.rawValue), id, NGHTTP2_ENHANCE_YOUR_CALM.rawValue)
        }
    }

    /// A body source has bytes (or its end) again.
    func resume(_ streamID: Int32) {
        guard let session, streams[streamID] != nil else { return }
        nghttp2_session_resume_data(session, streamID)
    }

    /// Resets a stream whose client does not keep up (ENHANCE_YOUR_CALM).
    func reset(_ streamID: Int32) {
        guard let session, streams[streamID] != nil else { return }
        nghttp2_submit_rst_stream(
            session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, NGHTTP2_ENHANCE_YOUR_CALM.rawValue)
    }

    /// Ends the connection at once: GOAWAY `code` and no more streams. NO_ERROR for a connection
    /// past its deadline, or whose slot went to a newcomer. With a `reason`, the client's doing
    /// (a flood, ENHANCE_YOUR_CALM): said once, through the delegate, and what the client still
    /// sends is not looked at.
    func terminate(code: UInt32 = NGHTTP2_NO_ERROR.rawValue, because reason: String? = nil) {
        guard let session else { return }
        if let reason {
            guard !ending else { return }
            ending = true
            delegate.ending(reason: reason)
        }
        nghttp2_session_terminate_session(session, code)
    }

    /// The server is stopping: GOAWAY (NO_ERROR); the streams begun are finished.
    func drain() {
        guard let session else { return }
        nghttp2_submit_goaway(
            session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nghttp2_session_get_last_proc_stream_id(session),
            NGHTTP2_NO_ERROR.rawValue, nil, 0)
    }

    /// Ends every stream (aborted) and frees nghttp2's session.
    func close() {
        guard let session else { return }
        let open = streams.values.sorted { $0.id < $1.id }
        streams.removeAll()
        for stream in open { finish(stream, outcome: "aborted") }
        nghttp2_session_del(session)
        self.session = nil
    }

    // MARK: - nghttp2's callbacks

    fileprivate func beginHeaders(_ frame: UnsafePointer<nghttp2_frame>) -> Int32 {
        guard frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue),
            frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST
        else { return 0 }
        let streamID = frame.pointee.hd.stream_id
        if handling >= limits.maxConcurrentStreams {
            // The client resets streams to open new ones while their work goes on (rapid reset).
            refused += 1
            if refused > limits.refusedStreamsBeforeGoaway {
                terminate(code: NGHTTP2_ENHANCE_YOUR_CALM.rawValue, because: "too many refused streams")
            } else {
                nghttp2_submit_rst_stream(
                    session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, NGHTTP2_REFUSED_STREAM.rawValue)
            }
            return 0
        }
        streams[streamID] = HTTP2Stream(id: streamID)
        return 0
    }

    fileprivate func header(
        _ frame: UnsafePointer<nghttp2_frame>, name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer
    ) -> Int32 {
        guard let stream = streams[frame.pointee.hd.stream_id], !stream.dispatched else { return 0 }
        stream.headBytes += name.count + value.count + 32
        if stream.headBytes > headLimits.headBytes {
            if stream.problem == nil {
                stream.problem = RequestChecks.head(bytes: stream.headBytes, limits: headLimits)
            }
            // An HPACK bomb (or a client ignoring SETTINGS_MAX_HEADER_LIST_SIZE): well past the limit,
            // nothing more is decoded into the stream and the connection is ended.
            guard stream.headBytes > 4 * headLimits.headBytes else { return 0 }
            terminate(
                code: NGHTTP2_ENHANCE_YOUR_CALM.rawValue,
                because: "a header list over four times SETTINGS_MAX_HEADER_LIST_SIZE")
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue
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
        if type == UInt8(NGHTTP2_DATA.rawValue) {
            let empty =
                frame.pointee.hd.length == frame.pointee.data.padlen
                && frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) == 0
            emptyFrames = empty ? emptyFrames + 1 : 0
            if emptyFrames > limits.maxEmptyFrames {
                terminate(code: NGHTTP2_ENHANCE_YOUR_CALM.rawValue, because: "a flood of empty DATA frames")
                return 0
            }
        } else if type == UInt8(NGHTTP2_HEADERS.rawValue) {
            emptyFrames = 0
        }
        guard type == UInt8(NGHTTP2_HEADERS.rawValue) || type == UInt8(NGHTTP2_DATA.rawValue),
            let stream = streams[frame.pointee.hd.stream_id]
        else { return 0 }
        let endOfStream = frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        if type == UInt8(NGHTTP2_HEADERS.rawValue), frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST {
            stream.headComplete = true
            headComplete(stream)
        }
        if endOfStream, !stream.answered, !stream.dispatched { dispatch(stream) }
        return 0
    }

    fileprivate func invalidFrame() -> Int32 {
        invalidFrames += 1
        if invalidFrames > limits.maxInvalidFrames {
            terminate(code: NGHTTP2_ENHANCE_YOUR_CALM.rawValue, because: "a flood of invalid frames")
        }
        return 0
    }

    fileprivate func dataChunk(stream streamID: Int32, _ data: UnsafeRawBufferPointer) -> Int32 {
        guard let stream = streams[streamID], !stream.answered, !stream.dispatched else { return 0 }
        if stream.request.body.count + data.count > stream.limit {
            stream.tooLarge = true
            stream.request.body = []
            answer(stream, with: delegate.payloadTooLarge(stream.request, limit: stream.limit, stream: stream.id))
        } else {
            stream.request.body.append(contentsOf: data)
        }
        return 0
    }

    fileprivate func streamClosed(_ streamID: Int32, errorCode: UInt32) -> Int32 {
        guard let stream = streams.removeValue(forKey: streamID) else { return 0 }
        if stream.waits, let index = waiting.firstIndex(of: streamID) { waiting.remove(at: index) }
        finish(stream, outcome: errorCode == NGHTTP2_NO_ERROR.rawValue && stream.answered ? "ok" : "aborted")
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
        // :authority is HTTP/2's Host (RFC 9113 §8.3.1), for the same Host check; a Host field
        // beside it must name the same (checked below).
        if let authority = stream.authority { headers["host"] = authority }
        let arguments = queryText.isEmpty ? [] : queryText.split(separator: "&", omittingEmptySubsequences: false)
        var query = QueryArguments()
        if stream.problem == nil, stream.path.utf8.count <= headLimits.targetBytes,
            arguments.count <= headLimits.queryArguments
        {
            for argument in arguments where !argument.isEmpty {
                let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                // `+` is a space in a query argument, as libmicrohttpd hands it over.
                func bytes(_ text: Substring) -> [UInt8] { text.utf8.map { $0 == UInt8(ascii: "+") ? 0x20 : $0 } }
                query.add(rawKey: bytes(parts[0]), rawValue: parts.count > 1 ? bytes(parts[1]) : [])
            }
        }
        var request = HTTPRequest(
            method: stream.method, path: target.isEmpty ? "/" : target, query: query.query,
            headers: headers, body: [], remoteAddress: remoteAddress)
        request.queryError = query.error
        request.protocolVersion = "HTTP/2"
        request.clientCertificate = clientCertificate
        request.connection = connection
        stream.request = request
        if stream.problem == nil {
            stream.problem =
                RequestChecks.target(bytes: stream.path.utf8.count, queryArguments: arguments.count, limits: headLimits)
                ?? RequestChecks.method(stream.method)
                ?? RequestChecks.http2Target(
                    method: stream.method, path: stream.path, authority: stream.authority,
                    hosts: stream.fields.filter { $0.name == "host" }.map(\.value))
        }
        if let problem = stream.problem {
            answer(stream, with: delegate.refused(request, problem: problem, stream: stream.id))
            return
        }
        stream.limit = delegate.bodyLimit(for: request)
        if let length = request.header("content-length").flatMap(Int.init), length > stream.limit {
            stream.tooLarge = true
            answer(stream, with: delegate.payloadTooLarge(request, limit: stream.limit, stream: stream.id))
        }
    }

    /// The request is complete: the delegate answers it or hands it to the handler, or it waits
    /// its turn while the connection has its share of requests handled or holds its limit of
    /// answers not taken.
    private func dispatch(_ stream: HTTP2Stream) {
        stream.dispatched = true
        if !waiting.isEmpty || !mayHandOver {
            stream.waits = true
            stream.waitingSince = .now
            waiting.append(stream.id)
            return
        }
        handOver(stream)
    }

    private func handOver(_ stream: HTTP2Stream) {
        switch delegate.dispatch(stream.request, stream: stream.id) {
        case .handling: handling += 1
        case .answer(let response): answer(stream, with: response)
        }
    }

    /// Submits the response's HEADERS and its body's data source.
    private func answer(_ stream: HTTP2Stream, with response: HTTP2Response) {
        guard let session, !stream.answered else { return }
        stream.answered = true
        stream.status = response.status
        stream.route = response.route
        var fields: [(String, String)] = [(":status", String(response.status))]
        for (name, value) in response.headers {
            let lower = name.lowercased()
            // Connection-specific fields do not exist in HTTP/2 (RFC 9113 §8.2.2).
            if ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"].contains(lower) {
                continue
            }
            fields.append((lower, value))
        }
        let hasBody = stream.request.method != "HEAD" && response.status != 204 && response.status != 304
        switch response.body {
        case .bytes(let bytes):
            stream.body = hasBody ? bytes : []
            queuedResponseBytes += stream.body.count
            if !fields.contains(where: { $0.0 == "content-length" }) {
                fields.append(("content-length", String(bytes.count)))
            }
        case .source(let source):
            stream.source = source
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
        stream.lastProgress = .now
        var provider = nghttp2_data_provider(
            source: nghttp2_data_source(ptr: Unmanaged.passUnretained(stream).toOpaque()),
            read_callback: dataSourceCallback)
        // An empty body ends the stream with the HEADERS frame, as Apple's 200 does (some
        // providers read any DATA frame as an error body).
        let withBody = (hasBody && !stream.body.isEmpty) || stream.source != nil
        let result: Int32 = storage.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            let list = spans.map {
                nghttp2_nv(
                    name: base + $0.name, value: base + $0.value, namelen: $0.nameLength, valuelen: $0.valueLength,
                    flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
            }
            return withBody
                ? nghttp2_submit_response(session, stream.id, list, list.count, &provider)
                : nghttp2_submit_response(session, stream.id, list, list.count, nil)
        }
        if result != 0 {
            nghttp2_submit_rst_stream(
                session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream.id, NGHTTP2_INTERNAL_ERROR.rawValue)
        }
    }

    /// The data source: the byte body, or the body source (deferred while it has nothing).
    fileprivate func readBody(
        _ streamID: Int32, into buffer: UnsafeMutablePointer<UInt8>, length: Int,
        flags: UnsafeMutablePointer<UInt32>
    ) -> Int {
        guard let stream = streams[streamID] else { return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
        if let source = stream.source {
            let count = source.read(into: UnsafeMutableRawPointer(buffer), max: length)
            switch count {
            case -1:
                flags.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue)
                return 0
            case -2: return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
            case 0: return Int(NGHTTP2_ERR_DEFERRED.rawValue)
            default:
                stream.lastProgress = .now
                return count
            }
        }
        let count = min(length, stream.body.count - stream.offset)
        if count > 0 {
            stream.body.withUnsafeBytes { raw in
                UnsafeMutableRawPointer(buffer).copyMemory(from: raw.baseAddress! + stream.offset, byteCount: count)
            }
            stream.offset += count
            queuedResponseBytes -= count
            stream.lastProgress = .now
        }
        if stream.offset >= stream.body.count { flags.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue) }
        return count
    }

    /// The stream is gone: its body source detached, the delegate told.
    private func finish(_ stream: HTTP2Stream, outcome: String) {
        queuedResponseBytes -= stream.body.count - stream.offset
        stream.body = []
        stream.offset = 0
        stream.source?.detach()
        stream.source = nil
        delegate.ended(stream, outcome: outcome)
    }
}

// MARK: - C callbacks (the session arrives through `user_data`)

private func session(_ userData: UnsafeMutableRawPointer?) -> HTTP2Session? {
    userData.map { Unmanaged<HTTP2Session>.fromOpaque($0).takeUnretainedValue() }
}

private let beginHeadersCallback: nghttp2_on_begin_headers_callback = { _, frame, userData in
    guard let frame, let session = session(userData) else { return 0 }
    return session.beginHeaders(frame)
}

private let headerCallback: nghttp2_on_header_callback = {
    _, frame, name, nameLength, value, valueLength, _, userData in
    guard let frame, let name, let session = session(userData) else { return 0 }
    return session.header(
        frame, name: UnsafeRawBufferPointer(start: name, count: nameLength),
        value: UnsafeRawBufferPointer(start: value, count: value == nil ? 0 : valueLength))
}

private let frameCallback: nghttp2_on_frame_recv_callback = { _, frame, userData in
    guard let frame, let session = session(userData) else { return 0 }
    return session.frameReceived(frame)
}

private let dataCallback: nghttp2_on_data_chunk_recv_callback = { _, _, streamID, data, length, userData in
    guard let session = session(userData) else { return 0 }
    return session.dataChunk(stream: streamID, UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : length))
}

private let invalidFrameCallback: nghttp2_on_invalid_frame_recv_callback = { _, _, _, userData in
    session(userData)?.invalidFrame() ?? 0
}

private let streamCloseCallback: nghttp2_on_stream_close_callback = { _, streamID, errorCode, userData in
    guard let session = session(userData) else { return 0 }
    return session.streamClosed(streamID, errorCode: errorCode)
}

private let dataSourceCallback: nghttp2_data_source_read_callback = { _, streamID, buffer, length, flags, _, userData in
    guard let buffer, let flags, let session = session(userData) else {
        return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue)
    }
    return session.readBody(streamID, into: buffer, length: length, flags: flags)
}
