import Foundation

/// Where Chime sends Web Push: the guard against a subscription that points the service at a
/// machine of the owner's network (server-side request forgery).
///
/// By default only the public push services: Google's FCM (Chrome, Edge on Android, most Chromium
/// browsers), Mozilla's autopush (Firefox), Apple's web push (Safari, iOS home-screen web apps) and
/// Microsoft's WNS (Edge on Windows). Others — a self-hosted UnifiedPush distributor, a test
/// double — are listed by URL prefix (`chime serve --web-push-endpoints https://up.example.org/`).
/// A listed prefix may name a private, loopback or link-local address; a public service may not
/// resolve to one (the sender checks each address it connects to, see ``isPublic(_:)``).
///
/// ```swift
/// let endpoints = try WebPushEndpoints(listed: ["https://up.example.org/push/"])
/// try endpoints.check("https://fcm.googleapis.com/fcm/send/abc", field: "endpoint")   // a public service
/// try endpoints.check("https://up.example.org/push/xyz", field: "endpoint")           // listed
/// try endpoints.check("http://192.168.1.10/", field: "endpoint")                      // throws
/// ```
public struct WebPushEndpoints: Sendable, Hashable {
    /// The public push services, as `https://HOST/` prefixes; a leading `*.` takes any subdomain.
    public static let publicServices = [
        "https://fcm.googleapis.com/", "https://updates.push.services.mozilla.com/", "https://web.push.apple.com/",
        "https://*.notify.windows.com/",
    ]

    /// The prefixes listed besides the public services, each an absolute `http://` or `https://`
    /// URL ending in `/` or with a path.
    public let listed: [String]

    /// The longest endpoint accepted.
    public static let maximumLength = 2048

    /// - Throws: ``ChimeError`` `invalidValue` for a prefix that is not an `http(s)://HOST[:PORT]/…` URL.
    public init(listed: [String] = []) throws(ChimeError) {
        var prefixes: [String] = []
        for text in listed where !text.isEmpty {
            guard let parsed = Self.parse(text) else {
                throw ChimeError(
                    .invalidValue, field: "web-push-endpoints",
                    "--web-push-endpoints: '\(text.prefix(100))' is not a URL prefix; give http(s)://HOST[:PORT]/PATH, as https://up.example.org/"
                )
            }
            // An origin alone must not match a longer host name: https://a.example matches
            // https://a.example/… only.
            prefixes.append(parsed.path.isEmpty ? text + "/" : text)
        }
        self.listed = prefixes
    }

    /// The public services only (the default).
    public static let publicServicesOnly = WebPushEndpoints(prefixes: [])

    private init(prefixes: [String]) { listed = prefixes }

    /// How an endpoint is allowed.
    public enum Allowance: Sendable, Hashable {
        /// One of the public services: its addresses must be public ones.
        case publicService
        /// Under a listed prefix: any address.
        case listed(String)
    }

    /// Whether Chime sends to `endpoint`, and on which grounds; `nil` when it does not.
    public func allowance(_ endpoint: String) -> Allowance? {
        guard let parsed = Self.parse(endpoint), !parsed.path.isEmpty else { return nil }
        if let prefix = listed.first(where: { endpoint.hasPrefix($0) }) { return .listed(prefix) }
        guard parsed.scheme == "https", parsed.port == nil, !Self.isAddressLiteral(parsed.host) else { return nil }
        for service in Self.publicServices {
            let host = service.dropFirst("https://".count).dropLast()
            if host.hasPrefix("*.") {
                let suffix = host.dropFirst(1)
                if parsed.host.hasSuffix(suffix), parsed.host.count > suffix.count { return .publicService }
            } else if parsed.host == host {
                return .publicService
            }
        }
        return nil
    }

    /// Throws unless Chime sends to `endpoint`, saying what is accepted.
    public func check(_ endpoint: String, field: String) throws(ChimeError) {
        guard endpoint.utf8.count <= Self.maximumLength else {
            throw ChimeError(
                .invalidValue, field: field,
                "\(field): at most \(Self.maximumLength) bytes; this one has \(endpoint.utf8.count)")
        }
        guard let parsed = Self.parse(endpoint), !parsed.path.isEmpty else {
            throw ChimeError(
                .invalidValue, field: field,
                "\(field) '\(endpoint.prefix(100))' is not a push service URL; expected https://HOST/PATH as PushSubscription.endpoint gives it"
            )
        }
        guard allowance(endpoint) != nil else {
            let listed = listed.isEmpty ? "" : "; listed: " + listed.joined(separator: ", ")
            throw ChimeError(
                .invalidValue, field: field,
                "\(field): \(parsed.scheme)://\(parsed.host)\(parsed.port.map { ":\($0)" } ?? "") is not a push service Chime sends to; accepted: the public services (\(Self.publicServices.joined(separator: ", ")))\(listed) — list another with chime serve --web-push-endpoints PREFIX"
            )
        }
    }

    /// The parts of an `http(s)://HOST[:PORT]/PATH` URL, strictly: ASCII without spaces or
    /// controls, no user information, a host of letters, digits, `.`, `-` (or a bracketed IPv6
    /// address), lowercased. `nil` for anything else.
    public static func parse(_ text: String) -> (scheme: String, host: String, port: Int?, path: String)? {
        guard text.utf8.count <= maximumLength, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        let scheme: String
        if text.lowercased().hasPrefix("https://") {
            scheme = "https"
        } else if text.lowercased().hasPrefix("http://") {
            scheme = "http"
        } else {
            return nil
        }
        let rest = text.dropFirst(scheme.count + 3)
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let path = String(rest[authorityEnd...])
        guard !authority.isEmpty, !authority.contains("@"), !path.contains("#") else { return nil }
        var host = Substring(authority)
        var port: Int?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let number = Int(after.dropFirst()), (1...65535).contains(number) else {
                    return nil
                }
                port = number
            }
            guard host.dropFirst().dropLast().allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                return nil
            }
        } else {
            if let colon = authority.lastIndex(of: ":") {
                guard let number = Int(authority[authority.index(after: colon)...]), (1...65535).contains(number) else {
                    return nil
                }
                port = number
                host = authority[..<colon]
            }
            guard !host.isEmpty,
                host.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "." || $0 == "-" })
            else { return nil }
        }
        return (scheme, host.lowercased(), port, path)
    }

    /// Whether a host is written as an address (`10.0.0.1`, `[::1]`) rather than a name.
    static func isAddressLiteral(_ host: String) -> Bool {
        host.hasPrefix("[") || (!host.isEmpty && host.allSatisfy { $0.isNumber || $0 == "." })
    }

    /// Whether an address (4 or 16 bytes, network order) is a public unicast one: not loopback,
    /// private (RFC 1918, unique local), link-local, carrier-grade NAT, unspecified, multicast,
    /// documentation or reserved; IPv4-mapped IPv6 addresses are judged as their IPv4 address.
    public static func isPublic(_ address: [UInt8]) -> Bool {
        if address.count == 16 {
            if address[0..<10].allSatisfy({ $0 == 0 }) && address[10] == 0xFF && address[11] == 0xFF {
                return isPublic(Array(address[12...]))
            }
            if address[0..<15].allSatisfy({ $0 == 0 }) { return false }  // :: and ::1
            if address[0] & 0xFE == 0xFC { return false }  // fc00::/7 unique local
            if address[0] == 0xFE && address[1] & 0xC0 == 0x80 { return false }  // fe80::/10 link-local
            if address[0] == 0xFF { return false }  // multicast
            // 2001:db8::/32, documentation
            if address[0] == 0x20 && address[1] == 0x01 && address[2] == 0x0D && address[3] == 0xB8 { return false }
            if address[0] == 0x00 || address[0] == 0x01 { return false }  // ::/8 reserved, 100::/64 discard
            return true
        }
        guard address.count == 4 else { return false }
        let (a, b) = (address[0], address[1])
        switch a {
        case 0, 10, 127: return false
        case 100 where b & 0xC0 == 64: return false  // 100.64.0.0/10
        case 169 where b == 254: return false
        case 172 where b & 0xF0 == 16: return false
        case 192 where b == 168: return false
        case 192 where b == 0 && (address[2] == 0 || address[2] == 2): return false  // 192.0.0.0/24, 192.0.2.0/24
        case 198 where b & 0xFE == 18: return false  // 198.18.0.0/15
        case 198 where b == 51 && address[2] == 100, 203 where b == 0 && address[2] == 113: return false
        case 224...255: return false
        default: return true
        }
    }
}
