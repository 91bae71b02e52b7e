import CMicroHTTPD
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What a non-blocking read or write did.
enum TransferResult: Equatable {
    /// This many bytes were moved (at least one).
    case moved(Int)
    /// Nothing now: wait for the socket to be ready (reading or writing, as ``ByteTransport/waitsFor`` says).
    case wouldBlock
    /// The peer ended the connection (reading), cleanly.
    case ended
    /// The connection broke.
    case failed
}

/// A connection's bytes, plain or through TLS, on a non-blocking socket the I/O loop polls.
protocol ByteTransport: AnyObject {
    /// The socket.
    var fd: Int32 { get }
    /// The poll events the last `wouldBlock` waits for (TLS may need to write to read).
    var waitsFor: Int16 { get }
    /// Bytes buffered inside the transport that a poll would not report (TLS records already read).
    var hasBufferedInput: Bool { get }
    func receive(into buffer: UnsafeMutableRawPointer, count: Int) -> TransferResult
    func send(from buffer: UnsafeRawPointer, count: Int) -> TransferResult
    /// Closes the socket (after a TLS close notification, if any).
    func close()
}

/// A plain TCP or Unix socket.
final class SocketTransport: ByteTransport {
    let fd: Int32
    private(set) var waitsFor = Int16(POLLIN)
    var hasBufferedInput: Bool { false }

    init(fd: Int32) { self.fd = fd }

    func receive(into buffer: UnsafeMutableRawPointer, count: Int) -> TransferResult {
        let result = recv(fd, buffer, count, 0)
        if result > 0 { return .moved(result) }
        if result == 0 { return .ended }
        if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
            waitsFor = Int16(POLLIN)
            return .wouldBlock
        }
        return .failed
    }

    func send(from buffer: UnsafeRawPointer, count: Int) -> TransferResult {
        let result = Glibc.send(fd, buffer, count, Int32(MSG_NOSIGNAL))
        if result > 0 { return .moved(result) }
        if result < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
            waitsFor = Int16(POLLOUT)
            return .wouldBlock
        }
        return .failed
    }

    func close() { Glibc.close(fd) }
}

/// A client's socket address as `accept(2)` gave it.
struct PeerAddress: @unchecked Sendable {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)

    /// `127.0.0.1:51234` or `unix`, as the access log writes it.
    var description: String {
        withPointer { ServerCore.describe($0) }
    }

    /// The address without its port: the unit of the per-address share.
    var key: String {
        withPointer { ConnectionGuard.addressKey($0) }
    }

    func withPointer<T>(_ body: (UnsafePointer<sockaddr>) -> T) -> T {
        withUnsafePointer(to: storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
    }
}
