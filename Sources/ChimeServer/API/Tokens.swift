import ChimeCore
import ChimeCrypto
import Foundation

/// Access tokens: 32 random bytes as hex, stored only as their SHA-256.
enum Tokens {
    /// A new token: 64 hexadecimal characters from OpenSSL's generator (seeded by the system).
    static func make() -> String { SecureRandom.bytes(32).hexadecimal }

    /// The stored form of a token.
    static func hash(_ token: String) -> String { Digest.sha256Hex(Array(token.utf8)) }

    /// Compares two hashes in time independent of where they differ.
    static func equal(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in x.indices { difference |= x[i] ^ y[i] }
        return difference == 0
    }
}
