import CLibCrypto
import ChimeCore

/// SHA-256 through OpenSSL's `EVP_Digest`.
///
/// ```swift
/// let hash = Digest.sha256(Array("abc".utf8))   // 32 bytes
/// ```
public enum Digest {
    /// The SHA-256 hash of `bytes` (32 bytes).
    public static func sha256(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var hash = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let bytes = Array(bytes)
        let done = bytes.withUnsafeBytes { EVP_Digest($0.baseAddress, $0.count, &hash, &length, EVP_sha256(), nil) }
        // SHA-256 of bytes in memory cannot fail short of OpenSSL having no SHA-256 at all.
        precondition(done == 1 && length == 32, "OpenSSL could not compute SHA-256")
        return hash
    }

    /// The SHA-256 hash of `bytes` as 64 lowercase hexadecimal characters (how the service keeps
    /// token hashes, and its assets' ETags).
    ///
    /// ```swift
    /// Digest.sha256Hex(Array("abc".utf8))   // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    /// ```
    public static func sha256Hex(_ bytes: some Collection<UInt8>) -> String {
        sha256(bytes).hexadecimal
    }
}

/// Random bytes from OpenSSL's generator (`RAND_bytes`, seeded from the system's entropy).
///
/// ```swift
/// let salt = SecureRandom.bytes(16)
/// ```
public enum SecureRandom {
    /// `count` random bytes. Stops the program if the system gives no entropy: nothing made
    /// from predictable bytes (a key, a salt) may go out.
    public static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0 && count < Int(Int32.max), "a random byte count of \(count)")
        var bytes = [UInt8](repeating: 0, count: count)
        guard count > 0 else { return bytes }
        let done = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        precondition(done == 1, "OpenSSL's random generator failed: \(OpenSSL.failure("RAND_bytes").message)")
        return bytes
    }
}
