import CMicroHTTPD
import ChimeCore
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An HTTP/2 connection, server side: an ``HTTP2Session`` (nghttp2's session and Chime's handling
/// of its streams) over the connection's socket. Requests become ``HTTPRequest``s for the same
/// handler as HTTP/1.1's, with the same checks, limits, metrics and access log; responses go back
/// as HEADERS and DATA, event streams as DATA frames while events come (deferred while nothing is
/// queued; nghttp2 respects the client's flow-control windows, and a client that stops reading lets
/// the event stream's bounded queue fill and is reset).
///
/// Lives on the I/O loop's thread only.
final class HTTP2Connection: LoopClient {
    let id: Int
    private let transport: ByteTransport
    private let core: ServerCore
    private let loop: IOLoop
    private let peer: PeerAddress
    private let entry: ConnectionGuard.Entry
    private var session: HTTP2Session?
    private var pending: [UInt8] = []
    private var pendingOffset = 0
    private var closed = false
    private var phase = ConnectionTable.Phase.awaitingHead
    /// Closing gracefully: the GOAWAY is sent and the write side shut; what the client still sends
    /// is read and dropped until it closes or this instant, so the kernel does not answer it with a
    /// reset that could discard the GOAWAY before the client read it.
    private var lingerUntil: ContinuousClock.Instant?
    private var released = false

    /// The most bytes read from the client in one turn of the loop before other connections get theirs.
    static let readShare = 256 * 1024
    /// How long a closed connection reads and drops what its client still sends.
    static let lingerTime: Duration = .seconds(2)

    /// `clientCertificate`: what the TLS client presented in the handshake, handed to every request.
    init(
        id: Int, transport: ByteTransport, peer: PeerAddress, core: ServerCore, loop: IOLoop,
        clientCertificate: CertificateFingerprint? = nil
    ) {
        self.id = id
        self.transport = transport
        self.peer = peer
        self.core = core
        self.loop = loop
        self.entry = core.guardian.opened(fd: transport.fd, address: peer.key) { [loop] in loop.post(id, .expire) }
        chime_tcp_nodelay(transport.fd)
        session = HTTP2Session(
            limits: core.configuration.http2, headLimits: core.configuration.headLimits,
            remoteAddress: peer.description, connection: entry.connection, clientCertificate: clientCertificate,
            delegate: self)
        core.http2Opened(id)
        flush()
    }

    // MARK: - The loop

    var interests: [(fd: Int32, events: Int16)] {
        if lingerUntil != nil { return [(transport.fd, Int16(POLLIN))] }
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
        if lingerUntil != nil { return drop() }
        guard !closed else { return }
        if pendingOffset < pending.count {
            flush()
            if pendingOffset < pending.count || closed { return }
        }
        readAvailable()
    }

    func tick(now: ContinuousClock.Instant) {
        if let until = lingerUntil {
            if now >= until { release() }
            return
        }
        guard !closed, let session else { return }
        session.expireStalled(now: now)
        flush()
    }

    func receive(_ message: LoopMessage) {
        guard !closed, let session else { return }
        switch message {
        case .respond(let streamID, let make):
            session.handled(streamID) { http2Response(make(), stream: streamID) }
        case .resume(let streamID): session.resume(streamID)
        case .reset(let streamID): session.reset(streamID)
        case .drain: session.drain()
        case .expire: session.terminate()
        case .stopListening: break
        }
    }

    /// Written once for all of a turn's answers (and the waiting requests handed over in their
    /// place together), not once per answer.
    func receivedAll() {
        flush()
    }

    func shutDown() {
        close()
        release()
    }

    /// Reads what the socket has and feeds it to the session, until it would block or output backs up.
    private func readAvailable() {
        var buffer = [UInt8](repeating: 0, count: 16384)
        var read = 0
        while !closed, let session {
            if read >= Self.readShare {
                // A client sending without pause (a flood) gets its share; the others get theirs.
                // What is still in the kernel makes poll report the socket next turn; only input the
                // transport holds (TLS) needs asking for, or the client would be served twice a turn.
                if transport.hasBufferedInput { loop.readAgain(id) }
                return
            }
            let result = buffer.withUnsafeMutableBytes { transport.receive(into: $0.baseAddress!, count: $0.count) }
            switch result {
            case .moved(let count):
                read += count
                if let failure = buffer.withUnsafeBytes({
                    session.receive(UnsafeRawBufferPointer(rebasing: $0[..<count]))
                }) {
                    core.logger.info("HTTP/2 connection ended", ["reason": failure, "remote": peer.description])
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
                let result = pending.withUnsafeBytes {
                    transport.send(from: $0.baseAddress! + pendingOffset, count: pending.count - pendingOffset)
                }
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
            guard let output = session.nextOutput() else {
                close()
                return
            }
            guard let data = output.baseAddress, !output.isEmpty else { break }
            var sent = 0
            while sent < output.count {
                let result = transport.send(from: data + sent, count: output.count - sent)
                guard case .moved(let moved) = result else {
                    if result != .wouldBlock {
                        close()
                        return
                    }
                    break
                }
                sent += moved
            }
            if sent < output.count {
                pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: output[sent...]))
                return
            }
        }
        if session.isFinished {
            close()
            return
        }
        session.dispatchWaiting()
        updatePhase()
    }

    private func close() {
        guard !closed else { return }
        closed = true
        session?.close()
        session = nil
        core.guardian.closed(entry)
        core.http2Closed(id)
        if pendingOffset < pending.count || chime_unsent_bytes(transport.fd) > 0 {
            // The client does not read what it was sent (a flood, a stall): reset the connection
            // rather than leave the kernel holding the unsent bytes behind a closed window.
            var abort = linger(l_onoff: 1, l_linger: 0)
            setsockopt(transport.fd, SOL_SOCKET, SO_LINGER, &abort, socklen_t(MemoryLayout<linger>.size))
            release()
            return
        }
        // Everything was sent (a GOAWAY last): shut the write side and read what the client still
        // sends for a moment, so its GOAWAY is not lost to a reset of the kernel's.
        Glibc.shutdown(transport.fd, Int32(SHUT_WR))
        lingerUntil = .now + Self.lingerTime
    }

    /// Reads and drops what the client of a closing connection still sends; closes at its end.
    private func drop() {
        var scratch = [UInt8](repeating: 0, count: 16384)
        for _ in 0..<16 {
            let count = recv(transport.fd, &scratch, scratch.count, Int32(MSG_DONTWAIT))
            if count > 0 { continue }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
            release()
            return
        }
    }

    /// Closes the socket and forgets the connection.
    private func release() {
        guard closed, !released else { return }
        released = true
        lingerUntil = nil
        transport.close()
        loop.remove(id)
    }

    /// Tells the slot policy what the connection does: idle (no stream; the head timeout runs),
    /// receiving requests (the body timeout runs), or serving.
    private func updatePhase() {
        guard !closed, let session else { return }
        let now: ConnectionTable.Phase =
            switch session.activity {
            case .idle: .awaitingHead
            case .receiving: .readingBody
            case .busy: .busy
            }
        guard now != phase else { return }
        phase = now
        core.guardian.enter(now, entry)
    }

    /// The handler's response as the session sends it; an event stream is attached to the stream
    /// (resumed and reset through the loop) and registered with the server.
    private func http2Response(_ response: HTTPResponse, stream streamID: Int32) -> HTTP2Response {
        switch response.body {
        case .bytes(let bytes):
            return HTTP2Response(
                status: response.status, headers: response.headers, body: .bytes(bytes), route: response.route)
        case .stream(let events):
            let loop = self.loop
            let connection = id
            events.attach(
                HTTP2Sink(loop: loop, connection: connection, stream: streamID),
                limit: core.configuration.streamQueueLimit
            ) {
                loop.post(connection, .reset(stream: streamID))
            }
            core.register(events)
            return HTTP2Response(
                status: response.status, headers: response.headers, body: .source(events), route: response.route)
        }
    }
}

// MARK: - What the session asks of the server

extension HTTP2Connection: HTTP2SessionDelegate {
    func bodyLimit(for request: HTTPRequest) -> Int { core.handler.bodyLimit(for: request) }

    func refused(_ request: HTTPRequest, problem: RequestProblem, stream: Int32) -> HTTP2Response {
        core.logger.warning(
            "request refused", ["status": String(problem.status), "reason": problem.code, "remote": peer.description])
        return http2Response(core.handler.refused(request, problem: problem), stream: stream)
    }

    func payloadTooLarge(_ request: HTTPRequest, limit: Int, stream: Int32) -> HTTP2Response {
        http2Response(core.handler.payloadTooLarge(request, limit: limit), stream: stream)
    }

    /// Answers as the server would before the handler (too many connections, stopping), or runs the handler.
    func dispatch(_ request: HTTPRequest, stream streamID: Int32) -> HTTP2Dispatch {
        if !entry.admitted {
            return .answer(
                http2Response(
                    core.handler.unavailable(request, reason: "too many connections; try again shortly"),
                    stream: streamID))
        }
        if core.isDraining {
            return .answer(
                http2Response(core.handler.unavailable(request, reason: "the server is stopping"), stream: streamID))
        }
        let loop = self.loop
        let connection = id
        let core = self.core
        core.requestStarted()
        // An answer ready at once goes out in this turn of the loop; a later one is posted to it.
        let now = core.handler.start(request) { make in
            loop.post(connection, .respond(stream: streamID, make))
            core.requestEnded()
        }
        if let now {
            core.requestEnded()
            return .answer(http2Response(now, stream: streamID))
        }
        return .handling
    }

    /// The stream is gone: the request logged and counted.
    func ended(_ stream: HTTP2Stream, outcome: String) {
        guard !stream.method.isEmpty else { return }
        core.logRequest(
            stream.request, status: stream.status ?? 0, route: stream.route,
            seconds: (ContinuousClock.now - stream.started).seconds, outcome: outcome)
    }

    func ending(reason: String) {
        core.logger.warning("HTTP/2 connection ended", ["reason": reason, "remote": peer.description])
    }
}

/// An event stream is a body read as it comes.
extension EventStream: HTTP2BodySource {}

/// An event stream on an HTTP/2 stream: resuming posts to the loop, which resumes the stream's data.
struct HTTP2Sink: StreamSink {
    let loop: IOLoop
    let connection: Int
    let stream: Int32
    func suspend() {}
    func resume() { loop.post(connection, .resume(stream: stream)) }
}
