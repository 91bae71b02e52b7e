import CMicroHTTPD
import CNGHTTP2
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The server's listening socket, on the I/O loop: accepts connections and hands each to what
/// serves its protocol: a ``TLSHandshake`` with TLS (ALPN picks the protocol), a ``Sniffer`` otherwise.
final class Listener: LoopClient {
    let id: Int
    private var fd: Int32
    private let core: ServerCore
    private let loop: IOLoop
    /// Connections still being sniffed, oldest first.
    private var sniffing: [Int] = []

    init(id: Int, fd: Int32, core: ServerCore, loop: IOLoop) {
        self.id = id
        self.fd = fd
        self.core = core
        self.loop = loop
    }

    var interests: [(fd: Int32, events: Int16)] { fd >= 0 ? [(fd, Int16(POLLIN))] : [] }

    func ready(fd: Int32, revents: Int16) {
        // A batch at a time, so connections already open get their turn.
        for _ in 0..<64 {
            var peer = PeerAddress()
            let client = withUnsafeMutablePointer(to: &peer.storage) { storage in
                storage.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    chime_accept(fd, $0, &peer.length)
                }
            }
            guard client >= 0 else { return }
            let core = self.core
            let loop = self.loop
            // Silent connections are bounded as libmicrohttpd bounds its slow ones: past the
            // connection limit, the one waiting longest goes.
            sniffing.removeAll { !((loop.client($0) as? any PendingConnection)?.isWaiting ?? false) }
            if sniffing.count >= max(1, core.configuration.connectionLimit), let oldest = sniffing.first {
                sniffing.removeFirst()
                (loop.client(oldest) as? any PendingConnection)?.drop()
            }
            if let tls = core.tls {
                // Chime writes this socket itself (TLS records, for HTTP/2 and the bridge alike).
                chime_tcp_nodelay(client)
                guard let ssl = tls.connection(client, requestCertificate: core.handler.requestsClientCertificates)
                else {
                    close(client)
                    continue
                }
                sniffing.append(
                    loop.add {
                        TLSHandshake(
                            id: $0, transport: TLSTransport(fd: client, ssl: ssl), peer: peer, core: core, loop: loop)
                    })
            } else {
                sniffing.append(loop.add { Sniffer(id: $0, fd: client, peer: peer, core: core, loop: loop) })
            }
        }
    }

    func tick(now: ContinuousClock.Instant) {}

    func receive(_ message: LoopMessage) {
        if case .stopListening = message { stopListening() }
    }

    func shutDown() { stopListening() }

    private func stopListening() {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
    }
}

/// A plain connection whose first bytes tell its protocol: HTTP/2's client preface means h2c
/// with prior knowledge (RFC 9113 §3.3); anything else is HTTP/1.1, handed to libmicrohttpd with
/// nothing read from it (the bytes are only peeked at).
final class Sniffer: PendingConnection {
    let id: Int
    private let fd: Int32
    private let peer: PeerAddress
    private let core: ServerCore
    private let loop: IOLoop
    private let deadline: ContinuousClock.Instant
    /// Only the preface's first byte came: wait for the next tick rather than poll a socket that
    /// stays readable.
    private var waiting = false
    private var done = false

    init(id: Int, fd: Int32, peer: PeerAddress, core: ServerCore, loop: IOLoop) {
        self.id = id
        self.fd = fd
        self.peer = peer
        self.core = core
        self.loop = loop
        self.deadline = .now + core.configuration.headerTimeout
    }

    var interests: [(fd: Int32, events: Int16)] { done || waiting ? [] : [(fd, Int16(POLLIN))] }

    func ready(fd: Int32, revents: Int16) { look() }

    func tick(now: ContinuousClock.Instant) {
        guard !done else { return }
        if now >= deadline {
            // Nothing recognisable within the head timeout, as a silent HTTP/1.1 client would get.
            finish()
            close(fd)
            return
        }
        if waiting { look() }
    }

    func receive(_ message: LoopMessage) {}

    func shutDown() {
        guard !done else { return }
        done = true
        close(fd)
    }

    /// Whether it still waits for the connection's first bytes.
    var isWaiting: Bool { !done }

    /// Closes the connection (the listener needs room for a newer one).
    func drop() {
        guard !done else { return }
        finish()
        close(fd)
    }

    private func look() {
        let preface = Array(
            UnsafeRawBufferPointer(start: chime_h2_client_preface(), count: chime_h2_client_preface_length()))
        var bytes = [UInt8](repeating: 0, count: preface.count)
        let count = recv(fd, &bytes, bytes.count, Int32(MSG_PEEK))
        if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
        guard count > 0 else {
            finish()
            close(fd)
            return
        }
        if bytes[0..<count] != preface[0..<count] {
            finish()
            core.handToMicroHTTPD(fd, peer: peer)
        } else if count >= 2 {
            // "PR" starts no HTTP/1.1 method: the rest must be the preface, which nghttp2 checks.
            finish()
            loop.replace(
                id,
                with: HTTP2Connection(id: id, transport: SocketTransport(fd: fd), peer: peer, core: core, loop: loop))
        } else {
            waiting = true
        }
    }

    private func finish() {
        done = true
        loop.remove(id)
    }
}
