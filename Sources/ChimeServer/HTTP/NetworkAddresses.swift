import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The machine's addresses on its networks, for links a phone on the same network can open when
/// the service listens on every interface (`--listen 0.0.0.0:7878`).
public enum NetworkAddresses {
    /// The IPv4 addresses of the interfaces that are up, loopback and link-local ones left out,
    /// in the order the system lists them.
    public static func lan() -> [String] {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0, let first else { return [] }
        defer { freeifaddrs(first) }
        var addresses: [String] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            let flags = Int32(entry.pointee.ifa_flags)
            guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0,
                let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET)
            else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            let ok = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet -> Bool in
                var raw = inet.pointee.sin_addr
                return inet_ntop(AF_INET, &raw, &text, socklen_t(INET_ADDRSTRLEN)) != nil
            }
            guard ok else { continue }
            let dotted = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if dotted.hasPrefix("169.254.") || addresses.contains(dotted) { continue }
            addresses.append(dotted)
        }
        return addresses
    }

    /// `url` with a host that listens everywhere (`0.0.0.0`) replaced by the first LAN address, so
    /// other devices can open it; other URLs as they are.
    public static func reachable(_ url: String) -> String {
        guard let parsed = URLComponents(string: url), parsed.host == "0.0.0.0", let address = lan().first else {
            return url
        }
        var reachable = parsed
        reachable.host = address
        return reachable.string ?? url
    }
}
