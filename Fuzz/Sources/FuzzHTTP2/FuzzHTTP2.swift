import CNGHTTP2
import ChimeCore
import Foundation
import FuzzSupport

// Fuzz target: Chime's HTTP/2 server session (HTTP2Session, compiled from the server's own
// Sources/ChimeServer/HTTP/HTTP2Session.swift through a symlink) driven in memory. Not nghttp2's
// framing itself, but what Chime does with what nghttp2 hands up. The input is read as choices: the
// limits (small, so that every one is reached), then a client's operations after the preface —
// HEADERS (a header list from tables and the input's bytes, compressed with nghttp2's deflater,
// split over CONTINUATIONs, padded, with priority; or a raw block), DATA, RST_STREAM, SETTINGS,
// PING, WINDOW_UPDATE, CONTINUATION, GOAWAY, PRIORITY, a raw frame — and the handler's: answering a
// request (a status, headers, a byte body or one read as it comes), a body source's bytes, end or
// failure, a stream reset for a slow reader, the server's GOAWAY, the client reading or not.
// Checks:
// - every request the handler gets has a method that is a token, a path from `/` (or `*` for
//   OPTIONS) of visible ASCII within the target limit, at most the query arguments allowed, a Host
//   (the :authority when one was sent) of an authority's characters, header names that are lowercase
//   tokens and not connection-specific, values without NUL/CR/LF or surrounding blanks, a body within
//   its limit and as long as its Content-Length; when its head was sent in one block, the method,
//   path and fields sent;
// - a head is refused exactly when a model of the limits says so (431 past the head's bytes, 414
//   past the target's or the query's, 400 for a method that is not a token), never handed on; 413
//   only past the limit;
// - the handler never has more requests of the connection than SETTINGS_MAX_CONCURRENT_STREAMS or
//   the connection's share of handlers (the rest wait, and are handed over as answers come back),
//   the session ends the connection for refused streams only then, and counts what the handler holds;
// - the server's first frame is its SETTINGS with the documented values; it never pushes; every
//   answer reaches the client with its status unless the stream or the connection was reset,
//   without connection-specific fields, DATA only where a body is allowed and as the handler gave
//   it; RST_STREAM ENHANCE_YOUR_CALM only where the server reset a slow reader;
// - the session holds at most a head and a body limit per stream, and no more streams than the
//   limit; each stream ends once, `ok` only when answered; a body source is not read once detached.

let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

/// The fuzzer's bytes read as choices; zeros once they run out.
struct Choices {
    let bytes: [UInt8]
    var index = 0

    var isEmpty: Bool { index >= bytes.count }

    mutating func byte() -> UInt8 {
        defer { index += 1 }
        return index < bytes.count ? bytes[index] : 0
    }

    mutating func below(_ upper: Int) -> Int { upper <= 1 ? 0 : Int(byte()) % upper }

    mutating func uint32() -> UInt32 { (0..<4).reduce(0) { value, _ in value << 8 | UInt32(byte()) } }

    mutating func take(_ count: Int) -> [UInt8] { (0..<count).map { _ in byte() } }

    /// One of `table`, or (for the last choice) bytes of the input.
    mutating func pick(_ table: [String], raw: Int = 24) -> [UInt8] {
        let choice = below(table.count + 1)
        return choice < table.count ? Array(table[choice].utf8) : take(below(raw))
    }
}

/// A body read as it comes, as an event stream is.
final class FuzzSource: HTTP2BodySource {
    var queued: [UInt8] = []
    var produced: [UInt8] = []
    var ended = false
    var failed = false
    var detached = false

    var queuedBytes: Int { queued.count }

    func read(into buffer: UnsafeMutableRawPointer, max: Int) -> Int {
        require(!detached, "a body source was read after its stream was gone")
        if failed { return -2 }
        if !queued.isEmpty {
            let count = min(max, queued.count)
            queued.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: count) }
            produced += queued.prefix(count)
            queued.removeFirst(count)
            return count
        }
        return ended ? -1 : 0
    }

    func detach() { detached = true }
}

/// `tchar` (RFC 9110 §5.6.2), written apart from the server's.
func isToken(_ bytes: some Collection<UInt8>) -> Bool {
    !bytes.isEmpty
        && bytes.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
}

/// The path as the request has it: bytes outside visible ASCII as `%HH`.
func escaped(_ bytes: [UInt8]) -> String {
    bytes.map { $0 > 0x20 && $0 < 0x7F ? String(UnicodeScalar($0)) : String(format: "%%%02X", $0) }.joined()
}

/// The body limit the handler gives a request: a function of its path, so that the checks can
/// compute it again.
func handlerBodyLimit(_ request: HTTPRequest, seed: UInt8) -> Int {
    request.path.utf8.reduce(Int(seed)) { ($0 &* 31 &+ Int($1)) & 0xFFFF } % 512
}

/// A head the client sent in one block, as it was sent.
struct SentHead {
    /// The fields as nghttp2 hands them up: those whose name is not a token (nor a pseudo-header's)
    /// it passes over (RFC 9113 §8.2.1 lets a server ignore them).
    var fields: [(name: [UInt8], value: [UInt8])]

    init(fields: [(name: [UInt8], value: [UInt8])]) {
        self.fields = fields.filter { $0.name.first == UInt8(ascii: ":") || isToken($0.name) }
    }

    func value(_ name: String) -> [UInt8]? { fields.last { $0.name == Array(name.utf8) }?.value }
    var path: [UInt8]? { value(":path") }

    /// The model's refusal: 431 past the head's bytes, 414 past the target's bytes or the query's
    /// arguments, 400 for a method that is not a token.
    func problem(_ limits: HeadLimits) -> Int? {
        let size = fields.reduce(0) { $0 + $1.name.count + $1.value.count + 32 }
        if size > limits.headBytes { return 431 }
        let target = escaped(path ?? [])
        let query = target.firstIndex(of: "?").map { target[target.index(after: $0)...] } ?? ""
        let arguments = query.isEmpty ? 0 : query.split(separator: "&", omittingEmptySubsequences: false).count
        if target.utf8.count > limits.targetBytes || arguments > limits.queryArguments { return 414 }
        let method = value(":method") ?? []
        if !isToken(method) { return 400 }
        // RFC 9113 §8.3.1: a path from / (* for OPTIONS), no CONNECT, Host once and naming the :authority.
        if method == Array("CONNECT".utf8) { return 501 }
        let path = self.path ?? []
        if path.first != UInt8(ascii: "/") && !(path == [UInt8(ascii: "*")] && method == Array("OPTIONS".utf8)) {
            return 400
        }
        let hosts = fields.filter { $0.name == Array("host".utf8) }
        if hosts.count > 1 { return 400 }
        if let authority = value(":authority"), let host = hosts.first,
            String(decoding: host.value, as: UTF8.self).lowercased()
                != String(decoding: authority, as: UTF8.self).lowercased()
        {
            return 400
        }
        return nil
    }
}

/// The handler, the client and the checks, for one input.
final class Recorder: HTTP2SessionDelegate {
    let limits: HTTP2Limits
    let headLimits: HeadLimits
    let limitSeed: UInt8
    var session: HTTP2Session?
    /// Requests the handler holds, in the order received.
    var holding: [Int32] = []
    var dispatched: Set<Int32> = []
    var refusedHeads: Set<Int32> = []
    var ended: Set<Int32> = []
    /// Heads sent in one block on a new stream, by stream.
    var sent: [Int32: SentHead] = [:]
    /// Streams whose head came in pieces the model does not follow (a raw block, trailers).
    var unmodelled: Set<Int32> = []
    var dataSent: [Int32: Int] = [:]
    var clientReset: Set<Int32> = []
    var serverResetForSpeed: Set<Int32> = []
    var failingSources: Set<Int32> = []
    /// What the client should see: each answered stream's status, body and method.
    var answers: [Int32: (status: Int, body: [UInt8]?, source: FuzzSource?, method: String)] = [:]
    var sources: [Int32: FuzzSource] = [:]
    /// What the client saw.
    var statuses: [Int32: Int] = [:]
    var data: [Int32: [UInt8]] = [:]
    var serverReset: [Int32: UInt32] = [:]
    var goaways: [UInt32] = []
    var framesSeen = 0
    var drained = false
    var failed = false
    let frames = ServerFrames()

    init(limits: HTTP2Limits, headLimits: HeadLimits, limitSeed: UInt8) {
        self.limits = limits
        self.headLimits = headLimits
        self.limitSeed = limitSeed
    }

    func bodyLimit(for request: HTTPRequest) -> Int { handlerBodyLimit(request, seed: limitSeed) }

    func refused(_ request: HTTPRequest, problem: RequestProblem, stream: Int32) -> HTTP2Response {
        require([400, 414, 431, 501].contains(problem.status) && !problem.message.isEmpty, "refused with \(problem)")
        require(
            !dispatched.contains(stream) && !refusedHeads.contains(stream),
            "stream \(stream) refused after it was handled")
        if let head = sent[stream], !unmodelled.contains(stream) {
            require(
                head.problem(headLimits) == problem.status,
                "stream \(stream) refused \(problem) where the model says \(String(describing: head.problem(headLimits)))"
            )
        }
        refusedHeads.insert(stream)
        let body = Array((problem.message + "\n").utf8)
        answers[stream] = (problem.status, body, nil, request.method)
        return HTTP2Response(
            status: problem.status, headers: [("Content-Type", "text/plain")], body: .bytes(body), route: "refused")
    }

    func payloadTooLarge(_ request: HTTPRequest, limit: Int, stream: Int32) -> HTTP2Response {
        require(
            limit == bodyLimit(for: request), "413 with limit \(limit), the handler said \(bodyLimit(for: request))")
        let length = request.header("content-length").flatMap { Int($0) } ?? -1
        require(
            length > limit || dataSent[stream, default: 0] > limit,
            "413 for stream \(stream): Content-Length \(length), \(dataSent[stream, default: 0]) bytes sent, limit \(limit)"
        )
        answers[stream] = (413, [], nil, request.method)
        return HTTP2Response(status: 413, headers: [], body: .bytes([]), route: "refused")
    }

    func dispatch(_ request: HTTPRequest, stream: Int32) -> HTTP2Dispatch {
        require(stream > 0 && stream % 2 == 1, "a request on stream \(stream), not one a client opens")
        require(!dispatched.contains(stream) && !refusedHeads.contains(stream), "stream \(stream) handled twice")
        dispatched.insert(stream)
        check(request, stream: stream)
        // Some requests are answered at once (as the server does for too many connections).
        if (stream >> 1) % 5 == 3 {
            answers[stream] = (503, Array("busy".utf8), nil, request.method)
            return .answer(
                HTTP2Response(
                    status: 503, headers: [("Retry-After", "1")], body: .bytes(Array("busy".utf8)), route: "x"))
        }
        let share = min(limits.maxConcurrentStreams, limits.maxHandlers)
        require(
            holding.count < share,
            "the handler got a request of stream \(stream) while holding \(holding.count), the share is \(share)")
        holding.append(stream)
        return .handling
    }

    /// What every request handed to the handler is.
    func check(_ request: HTTPRequest, stream: Int32) {
        let method = Array(request.method.utf8)
        require(isToken(method), "method \(request.method.debugDescription) is not a token")
        let path = Array(request.path.utf8)
        require(
            path.first == UInt8(ascii: "/") || (request.path == "*" && request.method == "OPTIONS"),
            "path \(request.path.debugDescription) does not start with /")
        require(
            path.allSatisfy { $0 > 0x20 && $0 < 0x7F } && !path.contains(UInt8(ascii: "?")),
            "path \(request.path.debugDescription) holds a byte outside visible ASCII or a ?")
        require(path.count <= headLimits.targetBytes, "path of \(path.count) bytes past \(headLimits.targetBytes)")
        require(request.query.count <= headLimits.queryArguments, "\(request.query.count) query arguments")
        require(
            request.protocolVersion == "HTTP/2" && request.remoteAddress == "fuzz",
            "protocol \(request.protocolVersion)")
        let host = Array((request.header("host") ?? "").utf8)
        require(
            !host.isEmpty && host.allSatisfy { $0 > 0x20 && $0 < 0x7F && !"/?#\\\"<>{}|^`".utf8.contains($0) },
            "host \(String(describing: request.header("host")).debugDescription) is not an authority")
        for (name, value) in request.headers {
            require(isToken(name.utf8) && name == name.lowercased(), "header name \(name.debugDescription)")
            require(
                !["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"].contains(name),
                "connection-specific header \(name)")
            require(name != "te" || value == "trailers", "te: \(value.debugDescription)")
            let bytes = Array(value.utf8)
            require(!bytes.contains { $0 == 0 || $0 == 0x0A || $0 == 0x0D }, "\(name) holds NUL, CR or LF")
            require(
                name == "cookie"
                    || (bytes.first.map { $0 != 0x20 && $0 != 0x09 } ?? true
                        && bytes.last.map { $0 != 0x20 && $0 != 0x09 } ?? true),
                "\(name): \(value.debugDescription) has surrounding blanks")
        }
        let limit = bodyLimit(for: request)
        require(request.body.count <= limit, "a body of \(request.body.count) bytes past the limit \(limit)")
        if let length = request.header("content-length") {
            require(
                Int(length) == request.body.count, "Content-Length \(length) with a body of \(request.body.count) bytes"
            )
        }
        guard let head = sent[stream], !unmodelled.contains(stream) else { return }
        require(
            head.problem(headLimits) == nil,
            "stream \(stream) handed on where the model refuses it (\(String(describing: head.problem(headLimits))))")
        require(
            head.value(":method").map { String(decoding: $0, as: UTF8.self) } == request.method,
            "method \(request.method) for \(String(describing: head.value(":method")))")
        let target = escaped(head.path ?? [])
        let sentPath = String(target.prefix { $0 != "?" })
        require(request.path == (sentPath.isEmpty ? "/" : sentPath), "path \(request.path) for \(target)")
        if let authority = head.value(":authority") {
            require(
                request.header("host") == String(decoding: authority, as: UTF8.self),
                "host \(String(describing: request.header("host"))) for :authority \(String(decoding: authority, as: UTF8.self))"
            )
        }
        for (name, value) in head.fields where !name.starts(with: Array(":".utf8)) && name != Array("cookie".utf8) {
            let text = String(decoding: name, as: UTF8.self)
            if text == "host" && head.value(":authority") != nil { continue }
            let last = head.value(text).map { String(decoding: $0, as: UTF8.self) }
            require(
                request.header(text) == last,
                "\(text): \(String(describing: request.header(text))) for \(String(decoding: value, as: UTF8.self))")
        }
    }

    func ended(_ stream: HTTP2Stream, outcome: String) {
        require(!ended.contains(stream.id), "stream \(stream.id) ended twice")
        ended.insert(stream.id)
        require(
            outcome == "aborted" || (outcome == "ok" && stream.answered),
            "stream \(stream.id) ended \(outcome) unanswered")
    }

    func ending(reason: String) {
        // The session's other reasons (empty-frame floods, header lists far over the limit, shut
        // windows) are the client's doing; refusing streams is only for a client past its share.
        guard reason == "too many refused streams" else { return }
        require(
            holding.count >= limits.maxConcurrentStreams,
            "the session ended the connection (\(reason)) while the handler held \(holding.count) of \(limits.maxConcurrentStreams)"
        )
    }

    /// Reads what the session has to send and checks each frame.
    func read() {
        guard let session else { return }
        for _ in 0..<10_000 {
            guard let output = session.nextOutput() else {
                failed = true
                return
            }
            if output.isEmpty { return }
            for frame in frames.read(output) { see(frame) }
        }
        fatalError("the session kept writing")
    }

    func see(_ frame: ServerFrames.Frame) {
        defer { framesSeen += 1 }
        if framesSeen == 0 {
            guard case .settings(ack: false, let entries) = frame else {
                fatalError("the server's first frame is \(frame), not SETTINGS")
            }
            let expected: [(UInt16, UInt32)] = [
                (3, UInt32(max(1, limits.maxConcurrentStreams))), (6, UInt32(headLimits.headBytes)), (2, 0),
            ]
            require(
                entries.map(\.id) == expected.map(\.0) && entries.map(\.value) == expected.map(\.1),
                "the server's SETTINGS \(entries)")
            return
        }
        switch frame {
        case .headers(let stream, let fields, let endStream):
            let id = Int32(stream)
            guard statuses[id] == nil else { return }  // trailers are not sent; nghttp2 would refuse them anyway
            require(fields.first?.name == ":status", "a response on stream \(stream) without :status first: \(fields)")
            let status = Int(fields.first!.value) ?? -1
            statuses[id] = status
            guard let answer = answers[id] else {
                fatalError("a response \(status) on stream \(stream), which was not answered")
            }
            require(answer.status == status, "stream \(stream) answered \(answer.status), the client got \(status)")
            for (name, value) in fields.dropFirst() {
                require(name == name.lowercased() && !name.hasPrefix(":"), "response field \(name)")
                require(
                    !["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"].contains(name),
                    "a connection-specific field in a response: \(name)")
                if name == "content-length", let body = answer.body {
                    let expected =
                        answer.method == "HEAD" || status == 204 || status == 304 ? value : String(body.count)
                    require(value == expected, "content-length \(value) for a body of \(body.count) bytes")
                }
            }
            let bodyAllowed = answer.method != "HEAD" && status != 204 && status != 304
            if endStream { require(answer.source == nil, "an event stream ended with its head") }
            if !bodyAllowed || answer.body?.isEmpty == true {
                require(endStream || answer.source != nil, "no body, yet the head did not end stream \(stream)")
            }
        case .data(let stream, let bytes, _):
            let id = Int32(stream)
            guard let answer = answers[id], statuses[id] != nil else {
                fatalError("DATA on stream \(stream) before its response")
            }
            data[id, default: []] += bytes
            let given = answer.body ?? answer.source?.produced ?? []
            require(
                data[id]!.count <= given.count && Array(given.prefix(data[id]!.count)) == data[id]!,
                "stream \(stream): DATA \(data[id]!.count) bytes, not what the handler gave (\(given.count))")
            let bodyAllowed = answer.method != "HEAD" && answer.status != 204 && answer.status != 304
            require(
                bodyAllowed || bytes.isEmpty, "DATA on stream \(stream), answered \(answer.status) to \(answer.method)")
        case .rstStream(let stream, let code):
            serverReset[Int32(stream)] = code
            if code == ErrorCode.enhanceYourCalm {
                require(
                    serverResetForSpeed.contains(Int32(stream)),
                    "stream \(stream) reset ENHANCE_YOUR_CALM, not a slow reader")
            }
        case .goaway(_, let code):
            goaways.append(code)
        case .pushPromise(let stream):
            fatalError("the server pushed on stream \(stream), with SETTINGS_ENABLE_PUSH 0")
        case .settings, .other:
            break
        }
    }

    /// After every operation: what the session holds.
    func checkBounds() {
        guard let session else { return }
        require(
            session.handling == holding.count,
            "the session counts \(session.handling) requests handled, the handler holds \(holding.count)")
        require(
            session.streams.count <= max(1, limits.maxConcurrentStreams),
            "\(session.streams.count) streams held, SETTINGS_MAX_CONCURRENT_STREAMS \(limits.maxConcurrentStreams)")
        let bound = session.streams.count * (headLimits.headBytes + 512)
        require(
            session.bufferedBytes <= bound,
            "\(session.bufferedBytes) bytes held for \(session.streams.count) streams (bound \(bound))")
    }
}

/// The client: frames from the fuzzer's choices.
struct Client {
    var choices: Choices
    let encoder = HeaderEncoder()
    var nextStream: UInt32 = 1
    var opened: [UInt32] = []
    /// The last stream chosen was a new one.
    var fresh = false

    static let methods = [
        "GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "CONNECT", "PATCH", "G ET", "", "get", "GET\u{0}",
    ]
    static let schemes = ["https", "http", "", "ftp", "h ttp"]
    static let paths = [
        "/", "/healthz", "/v1/apps?x=1&y=2", "/%zz?a=%FF", "*", "", "a/b", "/a?&&&&&&&&&", "/caf\u{e9}", "/a b", "/?",
        "/v1/apps/com.example.alarm/requests", "//x", "/#f",
    ]
    static let authorities = [
        "127.0.0.1:8080", "localhost", "", "evil.example", "a b", "[::1]:1", "host/x", "u@h", "h:",
    ]
    static let names = [
        "content-length", "host", "cookie", "te", "connection", "x-a", "Upper", "accept", "transfer-encoding",
        "upgrade",
        "content-type", ":path", ":method", ":status", ":protocol", "keep-alive", "authorization", "x y", "",
    ]
    static let values = [
        "0", "5", "100", "trailers", "gzip", "close", " lead", "trail ", "a\u{0}b", "a\rb", "127.0.0.1",
        "18446744073709551616",
        "-1", "1, 1", "a=1", "",
    ]

    init(_ choices: Choices) { self.choices = choices }

    /// A stream: mostly a new one, sometimes one opened before, or any number.
    mutating func stream(new: Bool) -> UInt32 {
        fresh = false
        switch choices.below(8) {
        case 0...4 where new:
            fresh = true
            defer { nextStream += 2 }
            opened.append(nextStream)
            return nextStream
        case 0...5 where !opened.isEmpty: return opened[choices.below(opened.count)]
        case 6: return 0
        default: return choices.uint32() & 0x7FFF_FFFF
        }
    }

    mutating func fields() -> [(name: [UInt8], value: [UInt8])] {
        let omit = choices.byte()
        var fields: [(name: [UInt8], value: [UInt8])] = []
        if omit & 1 == 0 { fields.append((Array(":method".utf8), choices.pick(Self.methods))) }
        if omit & 2 == 0 { fields.append((Array(":scheme".utf8), choices.pick(Self.schemes))) }
        if omit & 4 == 0 {
            var path = choices.pick(Self.paths, raw: 40)
            // Long targets and many query arguments, for the limits.
            if omit & 0x40 != 0 {
                path += Array(
                    repeating: choices.byte() & 1 == 0 ? UInt8(ascii: "&") : UInt8(ascii: "a"),
                    count: choices.below(256) * 4)
            }
            fields.append((Array(":path".utf8), path))
        }
        if omit & 8 == 0 { fields.append((Array(":authority".utf8), choices.pick(Self.authorities))) }
        for _ in 0..<choices.below(omit & 0x10 != 0 ? 12 : 4) {
            let name = choices.pick(Self.names, raw: 12)
            var value = choices.pick(Self.values, raw: 32)
            if choices.below(8) == 0 { value += Array(repeating: UInt8(ascii: "v"), count: choices.below(256) * 8) }
            fields.insert(
                (name, value), at: omit & 0x20 != 0 && fields.count > 1 ? choices.below(fields.count) : fields.count)
        }
        return fields
    }

    /// The next operation's bytes for the server, and what the recorder should know of it.
    mutating func operation(_ recorder: Recorder) -> [UInt8] {
        switch choices.below(20) {
        case 0...4:  // HEADERS, maybe with CONTINUATIONs
            let flags = choices.byte()
            let stream = stream(new: true)
            let structured = flags & 0x80 == 0
            let list = structured ? fields() : []
            let block = structured ? encoder.encode(list) : choices.take(choices.below(64))
            let id = Int32(bitPattern: stream)
            if structured, fresh, recorder.sent[id] == nil {
                recorder.sent[id] = SentHead(fields: list)
            } else {
                recorder.unmodelled.insert(id)
            }
            let pieces = 1 + choices.below(flags & 0x40 != 0 ? 4 : 1)
            let size = max(1, (block.count + pieces - 1) / pieces)
            var chunks = stride(from: 0, to: max(block.count, 1), by: size).map {
                Array(block[$0..<min($0 + size, block.count)])
            }
            if chunks.isEmpty { chunks = [[]] }
            var out: [UInt8] = []
            for (index, chunk) in chunks.enumerated() {
                let last = index == chunks.count - 1
                if index == 0 {
                    var payload = chunk
                    var frameFlags = (flags & 1 != 0 ? FrameFlag.endStream : 0) | (last ? FrameFlag.endHeaders : 0)
                    if flags & 2 != 0 {
                        frameFlags |= FrameFlag.priority
                        payload = bigEndian(choices.uint32() & 0x7FFF_FFFF) + [choices.byte()] + payload
                    }
                    if flags & 4 != 0 {
                        frameFlags |= FrameFlag.padded
                        let pad = choices.below(8)
                        payload = [UInt8(pad)] + payload + Array(repeating: 0, count: pad)
                    }
                    out += frame(FrameType.headers.rawValue, flags: frameFlags, stream: stream, payload)
                } else {
                    out += frame(
                        FrameType.continuation.rawValue, flags: last ? FrameFlag.endHeaders : 0, stream: stream, chunk)
                }
            }
            return out
        case 5...7:  // DATA
            let flags = choices.byte()
            let stream = stream(new: false)
            let count = choices.below(4) == 0 ? choices.below(256) * 8 : choices.below(64)
            recorder.dataSent[Int32(bitPattern: stream), default: 0] += count
            var payload = Array(repeating: flags, count: count)
            var frameFlags = flags & 1 != 0 ? FrameFlag.endStream : 0
            if flags & 2 != 0 {
                frameFlags |= FrameFlag.padded
                payload = [UInt8(flags >> 4)] + payload + Array(repeating: 0, count: Int(flags >> 4))
            }
            return frame(FrameType.data.rawValue, flags: frameFlags, stream: stream, payload)
        case 8:
            let stream = stream(new: false)
            recorder.clientReset.insert(Int32(bitPattern: stream))
            return frame(FrameType.rstStream.rawValue, flags: 0, stream: stream, bigEndian(UInt32(choices.below(16))))
        case 9:
            if choices.below(3) == 0 { return frame(FrameType.settings.rawValue, flags: FrameFlag.ack, stream: 0, []) }
            var entries: [UInt8] = []
            for _ in 0..<choices.below(6) {
                let id = UInt8(1 + choices.below(7))
                let value = choices.below(2) == 0 ? UInt32(choices.below(70_000)) : choices.uint32()
                entries += [0, id] + bigEndian(value)
            }
            return frame(FrameType.settings.rawValue, flags: 0, stream: 0, entries)
        case 10:
            return frame(
                FrameType.ping.rawValue, flags: choices.below(4) == 0 ? FrameFlag.ack : 0, stream: 0, choices.take(8))
        case 11:
            let stream = choices.below(2) == 0 ? 0 : stream(new: false)
            return frame(
                FrameType.windowUpdate.rawValue, flags: 0, stream: stream,
                bigEndian(choices.below(4) == 0 ? choices.uint32() : UInt32(choices.below(70_000))))
        case 12:
            return frame(
                FrameType.continuation.rawValue, flags: choices.byte() & FrameFlag.endHeaders,
                stream: stream(new: false),
                choices.take(choices.below(16)))
        case 13:
            return frame(
                FrameType.goaway.rawValue, flags: 0, stream: 0,
                bigEndian(choices.uint32() & 0x7FFF_FFFF) + bigEndian(UInt32(choices.below(14))))
        case 14:
            return frame(
                FrameType.priority.rawValue, flags: 0, stream: stream(new: false),
                bigEndian(choices.uint32()) + [choices.byte()])
        case 15:  // any frame
            let type = choices.byte() % 12
            let flags = choices.byte()
            let stream = stream(new: false)
            let id = Int32(bitPattern: stream)
            let payload = choices.take(choices.below(32))
            switch FrameType(rawValue: type) {
            case .headers?, .continuation?: recorder.unmodelled.insert(id)
            case .rstStream?: recorder.clientReset.insert(id)
            case .data?: recorder.dataSent[id, default: 0] += payload.count
            default: break
            }
            return frame(type, flags: flags, stream: stream, payload)
        default:
            handlerOperation(recorder)
            return []
        }
    }

    /// The handler's side: answers, body sources, resets, GOAWAY, reading.
    mutating func handlerOperation(_ recorder: Recorder) {
        guard let session = recorder.session else { return }
        switch choices.below(6) {
        case 0, 1:
            guard !recorder.holding.isEmpty else { return }
            let stream = recorder.holding.remove(at: choices.below(recorder.holding.count))
            answer(stream, recorder: recorder, session: session)
        case 2:  // a body source gets bytes, ends, or fails
            guard !recorder.sources.isEmpty else { return }
            let (stream, source) = recorder.sources.sorted { $0.key < $1.key }[choices.below(recorder.sources.count)]
            switch choices.below(4) {
            case 0: source.ended = true
            case 1:
                source.failed = true
                recorder.failingSources.insert(stream)
            default: source.queued += choices.take(choices.below(64))
            }
            session.resume(stream)
        case 3:
            guard !recorder.sources.isEmpty else { return }
            let stream = recorder.sources.keys.sorted()[choices.below(recorder.sources.count)]
            recorder.serverResetForSpeed.insert(stream)
            session.reset(stream)
        case 4:
            recorder.drained = true
            session.drain()
        default:
            recorder.read()
        }
    }

    mutating func answer(_ stream: Int32, recorder: Recorder, session: HTTP2Session) {
        let statuses = [200, 201, 204, 304, 400, 404, 429, 500, 101, 199]
        let status = statuses[choices.below(statuses.count)]
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json")]
        if choices.below(4) == 0 {
            headers.append(
                (["Connection", "Transfer-Encoding", "Keep-Alive", "Upgrade", "X-Chime"][choices.below(5)], "x"))
        }
        let method = session.streams[stream]?.request.method ?? ""
        let shape = choices.byte()
        var body = Array(repeating: shape, count: Int(shape) * 3)
        // An event stream answers GET (the server's routes never stream a HEAD).
        if shape & 3 == 0, status == 200, method != "HEAD" {
            let source = FuzzSource()
            session.handled(stream) {
                recorder.answers[stream] = (status, nil, source, method)
                recorder.sources[stream] = source
                return HTTP2Response(status: status, headers: headers, body: .source(source), route: "/events")
            }
            session.dispatchWaiting()
            return
        }
        if shape & 4 != 0 { body = [] }
        session.handled(stream) {
            recorder.answers[stream] = (status, body, nil, method)
            return HTTP2Response(status: status, headers: headers, body: .bytes(body), route: "/x")
        }
        // As the connection does after a turn's answers: the waiting requests take their places.
        session.dispatchWaiting()
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP2(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var choices = Choices(bytes: fuzzBytes(start, count))
    let config = choices.take(8)
    let limits = HTTP2Limits(
        maxConcurrentStreams: 1 + Int(config[0] % 6), maxHandlers: 1 + Int(config[1] >> 4) % 8,
        refusedStreamsBeforeGoaway: Int(config[1] % 10),
        resetBurst: 2 + Int(config[2] % 30), resetsPerSecond: 1, maxQueuedAcks: 2 + Int(config[3] % 40),
        maxSettingsEntries: 1 + Int(config[4] % 8), maxContinuations: Int(config[4] >> 4 % 4))
    let headLimits = HeadLimits(
        targetBytes: 16 + Int(config[5]) * 4, queryArguments: Int(config[6] % 8),
        headBytes: 128 + Int(config[6] >> 3) * 64)
    let recorder = Recorder(limits: limits, headLimits: headLimits, limitSeed: config[7])
    let session = HTTP2Session(
        limits: limits, headLimits: headLimits, remoteAddress: "fuzz", connection: HTTPConnection(), delegate: recorder)
    recorder.session = session
    var client = Client(choices)
    var reading = true
    func feed(_ bytes: [UInt8]) {
        guard !recorder.failed, !bytes.isEmpty else { return }
        if let failure = bytes.withUnsafeBytes({ session.receive($0) }) {
            require(!failure.isEmpty, "a failure without words")
            recorder.failed = true
        }
    }
    // The preface and the client's SETTINGS (rarely left out: the server ends the connection).
    let opening =
        config[2] & 0x80 == 0 ? preface + frame(FrameType.settings.rawValue, flags: 0, stream: 0, []) : preface
    feed(opening)
    var operations = 0
    while !client.choices.isEmpty, !recorder.failed, operations < 400 {
        operations += 1
        if client.choices.below(16) == 0 { reading.toggle() }
        feed(client.operation(recorder))
        if reading { recorder.read() }
        recorder.checkBounds()
    }
    // The handler answers what it holds; the client reads everything.
    while !recorder.failed, !recorder.holding.isEmpty {
        client.answer(recorder.holding.removeFirst(), recorder: recorder, session: session)
        recorder.checkBounds()
    }
    // Each answer handed the next waiting request over: none is left waiting.
    require(
        recorder.failed || session.waiting.isEmpty,
        "\(session.waiting.count) requests left waiting with no handler busy")
    for source in recorder.sources.values { source.ended = true }
    for stream in recorder.sources.keys.sorted() { session.resume(stream) }
    recorder.read()
    if !recorder.failed, recorder.goaways.isEmpty {
        // Every answer the client should have seen, unless its stream was reset by either side.
        for (stream, answer) in recorder.answers.sorted(by: { $0.key < $1.key })
        where !recorder.clientReset.contains(stream) && recorder.serverReset[stream] == nil {
            require(
                recorder.statuses[stream] == answer.status,
                "stream \(stream) answered \(answer.status), the client saw \(String(describing: recorder.statuses[stream]))"
            )
        }
    }
    session.close()
    require(session.nextOutput() == nil, "a closed session wrote")
    recorder.session = nil
    withExtendedLifetime(recorder) {}
    return 0
}
