import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The names a TCP listener answers to in `Host`, against DNS rebinding: a page on a name the
/// attacker controls, made to resolve to 127.0.0.1, reaches the service from the user's browser
/// with its own name in `Host`. Answered are an IP literal (no DNS, so nothing to rebind),
/// `localhost`, and the names given (the listen address's, `--public-url`'s); any other name is
/// refused 421, except on `/healthz`.
///
/// ```swift
/// let names = HostNames(["chime.example.org"])
/// names.allows("127.0.0.1:7878")          // true
/// names.allows("chime.example.org")       // true
/// names.allows("rebind.attacker.example") // false
/// ```
public struct HostNames: Sendable, Equatable {
    /// The names answered besides IP literals and `localhost`, lowercased.
    public let names: Set<String>

    public init(_ names: Set<String> = []) {
        self.names = Set(names.map { Self.name(of: $0) })
    }

    /// Whether a request with this `Host` is answered. A request without one (HTTP/1.0) is.
    public func allows(_ host: String?) -> Bool {
        guard let host else { return true }
        let name = Self.name(of: host)
        return name == "localhost" || Self.isAddress(name) || names.contains(name)
    }

    /// The host of a `Host` value: without its port, brackets or a final dot, lowercased.
    static func name(of host: String) -> String {
        var text = FieldText.trimmed(host).lowercased()
        if text.hasPrefix("[") {
            text = String(text.dropFirst().prefix { $0 != "]" })
        } else if let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon {
            text = String(text[..<colon])
        }
        while text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// Whether `name` is an IPv4 or IPv6 address literal.
    static func isAddress(_ name: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, name, &v4) == 1 || inet_pton(AF_INET6, name, &v6) == 1
    }
}
