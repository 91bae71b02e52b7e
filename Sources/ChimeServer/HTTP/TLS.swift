import CLibSSL
import CMicroHTTPD
import CNGHTTP2
import ChimeCore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The server's TLS context (OpenSSL's libssl): certificate, key and ALPN (`h2`, `http/1.1`).
final class TLSContext: @unchecked Sendable {
    /// `SSL_CTX` is safe to share between threads once set up; it is only read afterwards.
    let context: OpaquePointer

    /// - Throws: ``ServerError`` when the PEM text is not a certificate and its matching key.
    init(_ tls: HTTPServer.Configuration.TLS) throws {
        guard let context = chime_tls_server_context(tls.certificatePEM, tls.keyPEM) else {
            throw ServerError(
                .startFailed, "check that --tls-key and --tls-cert are a matching PEM key and certificate")
        }
        self.context = context
        // libssl writes to its sockets with write(2), which raises SIGPIPE when a client has gone;
        // the server takes EPIPE as an answer instead (libmicrohttpd and Chime's own sends use
        // MSG_NOSIGNAL). Process-wide: a server process serving TLS ignores SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
    }

    deinit { SSL_CTX_free(context) }

    /// The pin of the first certificate in `certificatePEM`: `sha256//` and the base64 SHA-256 of
    /// its public key, as curl's `--pinnedpubkey` takes it. `chime serve` writes it to server.json,
    /// so the CLI of the same data directory trusts exactly the key its service serves.
    ///
    /// ```swift
    /// TLSContext.publicKeyPin(certificatePEM: pem)   // "sha256//x3Lm…="
    /// ```
    static func publicKeyPin(certificatePEM: String) -> String? {
        var hash = [UInt8](repeating: 0, count: 32)
        guard chime_tls_public_key_sha256(certificatePEM, &hash) == 1 else { return nil }
        return "sha256//" + Data(hash).base64EncodedString()
    }

    /// The first certificate in PEM text as Chime pins it, or nil when the text holds none.
    static func fingerprint(certificatePEM: String) -> CertificateFingerprint? {
        var certificate = [UInt8](repeating: 0, count: 32)
        var key = [UInt8](repeating: 0, count: 32)
        var notBefore: Int64 = 0
        var notAfter: Int64 = 0
        guard chime_tls_pem_certificate(certificatePEM, &certificate, &key, &notBefore, &notAfter) == 1 else {
            return nil
        }
        return CertificateFingerprint(
            sha256: certificate, publicKeySHA256: key, notBefore: Date(timeIntervalSince1970: TimeInterval(notBefore)),
            notAfter: Date(timeIntervalSince1970: TimeInterval(notAfter)))
    }

    /// A server-side TLS connection on `fd` (non-blocking), not yet handshaken; with
    /// `requestCertificate`, the client is asked for a certificate (not required; any is taken,
    /// and the handler checks it: ``HTTPRequest/clientCertificate``).
    func connection(_ fd: Int32, requestCertificate: Bool = false) -> OpaquePointer? {
        guard let ssl = SSL_new(context) else { return nil }
        if requestCertificate { chime_tls_request_client_certificate(ssl) }
        SSL_set_fd(ssl, fd)
        SSL_set_accept_state(ssl)
        return ssl
    }
}

/// A TLS connection's bytes through libssl, on a non-blocking socket.
final class TLSTransport: ByteTransport {
    let fd: Int32
    let ssl: OpaquePointer
    private(set) var waitsFor = Int16(POLLIN)
    private var isClosed = false

    init(fd: Int32, ssl: OpaquePointer) {
        self.fd = fd
        self.ssl = ssl
    }

    var hasBufferedInput: Bool { SSL_pending(ssl) > 0 }

    func receive(into buffer: UnsafeMutableRawPointer, count: Int) -> TransferResult {
        ERR_clear_error()
        let result = SSL_read(ssl, buffer, Int32(min(count, Int(Int32.max))))
        return result > 0 ? .moved(Int(result)) : outcome(result)
    }

    func send(from buffer: UnsafeRawPointer, count: Int) -> TransferResult {
        ERR_clear_error()
        let result = SSL_write(ssl, buffer, Int32(min(count, Int(Int32.max))))
        return result > 0 ? .moved(Int(result)) : outcome(result)
    }

    /// Continues the handshake: true when it is complete, nil when it failed.
    func handshake() -> Bool? {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 { return true }
        return outcome(result) == .wouldBlock ? false : nil
    }

    var selectedHTTP2: Bool { chime_tls_selected_h2(ssl) == 1 }

    /// The certificate the client presented in the handshake, or nil.
    var clientCertificate: CertificateFingerprint? {
        var certificate = [UInt8](repeating: 0, count: 32)
        var key = [UInt8](repeating: 0, count: 32)
        var notBefore: Int64 = 0
        var notAfter: Int64 = 0
        guard chime_tls_peer_certificate(ssl, &certificate, &key, &notBefore, &notAfter) == 1 else { return nil }
        return CertificateFingerprint(
            sha256: certificate, publicKeySHA256: key, notBefore: Date(timeIntervalSince1970: TimeInterval(notBefore)),
            notAfter: Date(timeIntervalSince1970: TimeInterval(notAfter)))
    }
    /// Whether ALPN chose a protocol at all.
    var selectedProtocol: Bool { chime_tls_selected_any(ssl) == 1 }
    /// The connection broke while peeking.
    private(set) var failed = false

    /// Whether the first decrypted bytes are HTTP/2's client preface (as far as they came): nil
    /// while too few came to tell, false on anything else (or when the connection broke: see ``failed``).
    func peekPreface() -> Bool? {
        let preface = Array(
            UnsafeRawBufferPointer(start: chime_h2_client_preface(), count: chime_h2_client_preface_length()))
        var bytes = [UInt8](repeating: 0, count: preface.count)
        ERR_clear_error()
        let count = Int(SSL_peek(ssl, &bytes, Int32(bytes.count)))
        guard count > 0 else {
            if outcome(Int32(count)) == .wouldBlock { return nil }
            failed = true
            return false
        }
        if bytes[0..<count] != preface[0..<count] { return false }
        return count >= 2 ? true : nil
    }

    private func outcome(_ result: Int32) -> TransferResult {
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ:
            waitsFor = Int16(POLLIN)
            return .wouldBlock
        case SSL_ERROR_WANT_WRITE:
            waitsFor = Int16(POLLOUT)
            return .wouldBlock
        case SSL_ERROR_ZERO_RETURN: return .ended
        default:
            ERR_clear_error()
            return .failed
        }
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        ERR_clear_error()
        _ = SSL_shutdown(ssl)  // a close notification if the socket takes it now; no waiting
        SSL_free(ssl)
        Glibc.close(fd)
    }
}

/// A connection whose protocol is not known yet, waiting on the listener's behalf: dropped
/// (oldest first) when too many wait, as libmicrohttpd sheds its slow connections.
protocol PendingConnection: LoopClient {
    var isWaiting: Bool { get }
    func drop()
}

/// A TLS handshake on the loop, within the head timeout; ALPN then picks HTTP/2 (served here) or
/// HTTP/1.1 (bridged to libmicrohttpd through a socket pair).
final class TLSHandshake: PendingConnection {
    let id: Int
    private let transport: TLSTransport
    private let peer: PeerAddress
    private let core: ServerCore
    private let loop: IOLoop
    private let deadline: ContinuousClock.Instant
    private var done = false
    private var handshaken = false

    init(id: Int, transport: TLSTransport, peer: PeerAddress, core: ServerCore, loop: IOLoop) {
        self.id = id
        self.transport = transport
        self.peer = peer
        self.core = core
        self.loop = loop
        self.deadline = .now + core.configuration.headerTimeout
    }

    var interests: [(fd: Int32, events: Int16)] { done ? [] : [(transport.fd, transport.waitsFor)] }
    var isWaiting: Bool { !done }

    func ready(fd: Int32, revents: Int16) { advance() }

    func tick(now: ContinuousClock.Instant) {
        if !done, now >= deadline { drop() }
    }

    func receive(_ message: LoopMessage) {}

    func shutDown() {
        guard !done else { return }
        done = true
        transport.close()
    }

    func drop() {
        guard !done else { return }
        shutDown()
        loop.remove(id)
    }

    /// Continues the handshake, then picks the protocol: ALPN's choice, or without ALPN the first
    /// decrypted bytes (HTTP/2's preface: prior knowledge over TLS, as APNs clients without ALPN
    /// speak; anything else is HTTP/1.1).
    func advance() {
        guard !done else { return }
        if !handshaken {
            switch transport.handshake() {
            case false?: return
            case nil:
                drop()
                return
            case true?:
                handshaken = true
            }
        }
        var http2 = transport.selectedHTTP2
        if !http2, !transport.selectedProtocol {
            switch transport.peekPreface() {
            case nil: return  // wait for more
            case let matches?:
                if matches == false, transport.failed {
                    drop()
                    return
                }
                http2 = matches
            }
        }
        done = true
        if http2 {
            let connection = HTTP2Connection(
                id: id, transport: transport, peer: peer, core: core, loop: loop,
                clientCertificate: transport.clientCertificate)
            loop.replace(id, with: connection)
            connection.ready(fd: transport.fd, revents: Int16(POLLIN))
        } else if let bridge = TLSBridge(id: id, tls: transport, peer: peer, core: core, loop: loop) {
            loop.replace(id, with: bridge)
            bridge.pump()
        } else {
            transport.close()
            loop.remove(id)
        }
    }
}

/// HTTP/1.1 over TLS: the decrypted bytes go to libmicrohttpd through one end of a socket pair,
/// its answers come back through the other, each way through a bounded buffer (a client that does
/// not read stops the reading from libmicrohttpd, which stops writing). libmicrohttpd sees an
/// ordinary connection with the client's address, and its slot policy shuts the pair down when a
/// connection must go, which ends the TLS connection.
final class TLSBridge: LoopClient {
    let id: Int
    private let tls: TLSTransport
    private let local: SocketTransport
    private let loop: IOLoop
    private static let capacity = 64 * 1024
    /// From the client to libmicrohttpd, and back.
    private var upward = Buffer()
    private var downward = Buffer()
    /// What the TLS side waits for to read, and to write.
    private var tlsReadWaits = Int16(POLLIN)
    private var tlsWriteWaits = Int16(POLLOUT)
    private var clientEnded = false
    private var serverEnded = false
    private var closed = false

    struct Buffer {
        var bytes: [UInt8] = []
        var offset = 0
        var isEmpty: Bool { offset >= bytes.count }
        var hasRoom: Bool { bytes.count - offset < TLSBridge.capacity }
        mutating func consumed(_ count: Int) {
            offset += count
            if offset >= bytes.count {
                bytes.removeAll(keepingCapacity: true)
                offset = 0
            }
        }
    }

    init?(id: Int, tls: TLSTransport, peer: PeerAddress, core: ServerCore, loop: IOLoop) {
        var pair: [Int32] = [-1, -1]
        guard
            socketpair(
                AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0,
                &pair) == 0
        else {
            return nil
        }
        self.id = id
        self.tls = tls
        self.local = SocketTransport(fd: pair[0])
        self.loop = loop
        core.handToMicroHTTPD(pair[1], peer: peer, clientCertificate: tls.clientCertificate)
    }

    var interests: [(fd: Int32, events: Int16)] {
        guard !closed else { return [] }
        var tlsEvents: Int16 = 0
        if upward.hasRoom && !clientEnded { tlsEvents |= tlsReadWaits }
        if !downward.isEmpty { tlsEvents |= tlsWriteWaits }
        var localEvents: Int16 = 0
        if downward.hasRoom && !serverEnded { localEvents |= Int16(POLLIN) }
        if !upward.isEmpty { localEvents |= Int16(POLLOUT) }
        return [(tls.fd, tlsEvents), (local.fd, localEvents)]
    }

    func ready(fd: Int32, revents: Int16) { pump() }

    func tick(now: ContinuousClock.Instant) {}

    func receive(_ message: LoopMessage) {}

    func shutDown() { close() }

    /// Moves what can be moved both ways until nothing moves.
    func pump() {
        var moved = true
        while moved, !closed {
            moved = false
            if upward.hasRoom, !clientEnded {
                moved = fill(&upward, from: tls, ended: &clientEnded, waits: &tlsReadWaits) || moved
            }
            if !upward.isEmpty {
                var ignored = Int16(POLLOUT)
                moved = drain(&upward, into: local, waits: &ignored) || moved
            }
            if downward.hasRoom, !serverEnded {
                var ignored = Int16(POLLIN)
                moved = fill(&downward, from: local, ended: &serverEnded, waits: &ignored) || moved
            }
            if !downward.isEmpty { moved = drain(&downward, into: tls, waits: &tlsWriteWaits) || moved }
        }
        // The client is gone: libmicrohttpd sees the end. libmicrohttpd closed: the rest goes out first.
        if clientEnded || (serverEnded && downward.isEmpty) { close() }
    }

    private func fill(_ buffer: inout Buffer, from source: ByteTransport, ended: inout Bool, waits: inout Int16) -> Bool
    {
        var chunk = [UInt8](repeating: 0, count: 16384)
        let result = chunk.withUnsafeMutableBytes { source.receive(into: $0.baseAddress!, count: $0.count) }
        switch result {
        case .moved(let count):
            buffer.bytes.append(contentsOf: chunk[0..<count])
            return true
        case .wouldBlock:
            waits = source.waitsFor
            return source.hasBufferedInput
        case .ended, .failed:
            ended = true
            return false
        }
    }

    private func drain(_ buffer: inout Buffer, into target: ByteTransport, waits: inout Int16) -> Bool {
        let result = buffer.bytes.withUnsafeBytes {
            target.send(from: $0.baseAddress! + buffer.offset, count: buffer.bytes.count - buffer.offset)
        }
        switch result {
        case .moved(let count):
            buffer.consumed(count)
            return true
        case .wouldBlock:
            waits = target.waitsFor
            return false
        case .ended, .failed:
            close()
            return false
        }
    }

    private func close() {
        guard !closed else { return }
        closed = true
        tls.close()
        local.close()
        loop.remove(id)
    }
}
