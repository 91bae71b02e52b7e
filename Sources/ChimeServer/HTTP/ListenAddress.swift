import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where the server listens: a TCP host and port, or a Unix socket path.
///
/// ```swift
/// let address = try ListenAddress(parsing: "127.0.0.1:7878")   // .tcp(host: "127.0.0.1", port: 7878)
/// let socket = try ListenAddress(parsing: "unix:/run/chime.sock")
/// ```
public enum ListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// An IPv4 address (or `localhost`) and a port; port 0 picks a free port.
    case tcp(host: String, port: UInt16)
    case unix(path: String)

    /// The default: `127.0.0.1:7878`.
    public static let `default` = ListenAddress.tcp(host: "127.0.0.1", port: 7878)

    /// Parses `HOST:PORT`, `:PORT`, `PORT`, or `unix:/path`.
    public init(parsing text: String) throws {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            guard path.hasPrefix("/"), path.utf8.count < 108 else {
                throw ServerError(
                    .invalidConfiguration,
                    "--listen \(text): give an absolute socket path shorter than 108 bytes, as unix:/run/chime.sock")
            }
            self = .unix(path: path)
            return
        }
        var host = "127.0.0.1"
        var portText = text
        if let colon = text.lastIndex(of: ":") {
            host = String(text[..<colon])
            portText = String(text[text.index(after: colon)...])
            if host.isEmpty { host = "127.0.0.1" }
        }
        guard let port = UInt16(portText) else {
            throw ServerError(
                .invalidConfiguration, "--listen \(text): expected HOST:PORT (127.0.0.1:7878), :PORT, or unix:/path")
        }
        if host == "localhost" { host = "127.0.0.1" }
        var probe = in_addr()
        guard inet_pton(AF_INET, host, &probe) == 1 else {
            throw ServerError(
                .invalidConfiguration,
                "--listen \(text): \(host) is not an IPv4 address; use 127.0.0.1, 0.0.0.0 or another IPv4 address")
        }
        self = .tcp(host: host, port: port)
    }

    public var description: String {
        switch self {
        case .tcp(let host, let port): "\(host):\(port)"
        case .unix(let path): "unix:\(path)"
        }
    }
}

/// A failure of the server or the service, with a message for the user.
public struct ServerError: Error, Sendable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A flag or file given to the service is unusable.
        public static let invalidConfiguration = Code(rawValue: "invalidConfiguration")
        /// The server could not start (address in use, TLS key rejected, …).
        public static let startFailed = Code(rawValue: "startFailed")
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

enum UnixSocket {
    /// Creates, binds and listens on a Unix socket, replacing a stale socket file. Mode 0600.
    static func listen(path: String, backlog: Int32 = 511) throws -> Int32 {
        var info = stat()
        if lstat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFSOCK else {
                throw ServerError(.startFailed, "\(path) exists and is not a socket; choose another path")
            }
            unlink(path)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            throw ServerError(.startFailed, "cannot create a Unix socket: \(String(cString: strerror(errno)))")
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let previous = umask(0o077)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        umask(previous)
        guard bound == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw ServerError(.startFailed, "cannot bind \(path): \(message)")
        }
        guard Glibc.listen(fd, backlog) == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw ServerError(.startFailed, "cannot listen on \(path): \(message)")
        }
        return fd
    }
}

enum TCPSocket {
    /// Creates, binds and listens on an IPv4 TCP socket (SO_REUSEADDR, non-blocking, close-on-exec).
    static func listen(host: String, port: UInt16, backlog: Int32 = 511) throws -> Int32 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw ServerError(.invalidConfiguration, "\(host) is not an IPv4 address")
        }
        let fd = socket(
            AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else {
            throw ServerError(.startFailed, "cannot create a TCP socket: \(String(cString: strerror(errno)))")
        }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, Glibc.listen(fd, backlog) == 0 else {
            close(fd)
            throw ServerError(.startFailed, "cannot serve on \(host):\(port): is the address in use or not available?")
        }
        return fd
    }

    /// The port a socket is bound to (0 for a Unix socket).
    static func boundPort(_ fd: Int32) -> UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let found = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard found == 0, address.sin_family == sa_family_t(AF_INET) else { return 0 }
        return UInt16(bigEndian: address.sin_port)
    }
}
