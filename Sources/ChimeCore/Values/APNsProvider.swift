/// How APNs providers authenticate for an app with provider tokens (ES256 JWTs, as with Apple):
/// the team the app belongs to and, when registered on this app, a team key's public half. The
/// private key (the `.p8` file) is never kept.
///
/// A token signed with any key registered for team `T` (on this app or another app of team `T`)
/// may push to every app whose ``AppRecord/apnsProvider`` names team `T`.
///
/// ```swift
/// var record = try await engine.app("com.example.alarm")
/// record.apnsProvider = APNsProvider(teamID: "TEAM123456", key: .init(id: "KEY1234567", publicKey: point))
/// ```
public struct APNsProvider: Sendable, Hashable {
    /// A key's id (the JWT header's `kid`) and its public point (uncompressed P-256, 65 bytes).
    public struct Key: Sendable, Hashable {
        public var id: String
        public var publicKey: [UInt8]

        public init(id: String, publicKey: [UInt8]) {
            self.id = id
            self.publicKey = publicKey
        }
    }

    /// The team id (the JWT's `iss`).
    public var teamID: String
    /// The team key registered on this app, if any.
    public var key: Key?

    public init(teamID: String, key: Key? = nil) {
        self.teamID = teamID
        self.key = key
    }

    /// Whether `text` can be a team or key id: 1 to 64 ASCII letters and digits (Apple's are 10).
    public static func isIdentifier(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy {
                (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
            }
    }
}
