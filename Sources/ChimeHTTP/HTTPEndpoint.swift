/// Where a `chime serve` listens: a TCP URL or a Unix socket.
///
/// ```swift
/// let tcp = try HTTPEndpoint("http://127.0.0.1:7878")
/// let socket = try HTTPEndpoint("unix:/run/chime/chime.sock")
/// print(socket)  // unix:/run/chime/chime.sock
/// ```
public enum HTTPEndpoint: Sendable, Equatable, CustomStringConvertible {
    /// `http://host:port` or `https://host:port`, optionally with a path prefix (no trailing `/`).
    case url(String)
    /// A Unix-domain stream socket; requests name the host `localhost`.
    case unixSocket(path: String)

    /// Parses `http(s)://HOST[:PORT][/PREFIX]` or `unix:/PATH`.
    ///
    /// - Throws: ``HTTPClientError`` with code `.badRequest` naming what is wrong with `text`.
    public init(_ text: String) throws(HTTPClientError) {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            guard path.hasPrefix("/"), !path.utf8.contains(0) else {
                throw HTTPClientError(
                    .badRequest, "the service address \(text) names no absolute socket path; give unix:/PATH")
            }
            self = .unixSocket(path: path)
            return
        }
        let lowered = text.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else {
            throw HTTPClientError(
                .badRequest, "the service address \(text) is neither http(s)://HOST:PORT nor unix:/PATH")
        }
        let rest = text.drop(while: { $0 != ":" }).dropFirst(3)
        guard let first = rest.first, first != "/", rest.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw HTTPClientError(
                .badRequest, "the service address \(text) has no host, or spaces or other characters a URL cannot hold")
        }
        var url = text
        while url.hasSuffix("/") { url.removeLast() }
        self = .url(url)
    }

    /// Whether the endpoint speaks TLS.
    public var isTLS: Bool {
        if case .url(let url) = self { return url.lowercased().hasPrefix("https://") }
        return false
    }

    /// `http://127.0.0.1:7878` or `unix:/path`.
    public var description: String {
        switch self {
        case .url(let url): url
        case .unixSocket(let path): "unix:" + path
        }
    }

    /// The URL curl is given for `path`; over a Unix socket the host is `localhost`.
    func url(for path: String) -> String {
        switch self {
        case .url(let base): base + path
        case .unixSocket: "http://localhost" + path
        }
    }
}
