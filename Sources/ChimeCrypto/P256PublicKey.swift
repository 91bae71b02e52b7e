import CLibCrypto
import ChimeCore

/// A P-256 public key: verifies ES256 signatures, and is the peer of an ECDH agreement.
///
/// ```swift
/// let key = try P256PublicKey(pemRepresentation: pem)          // "-----BEGIN PUBLIC KEY-----…"
/// let point = key.rawRepresentation                           // 65 bytes, 04 || x || y
/// let valid = key.isValidSignature(signature, for: Array("header.claims".utf8))
/// ```
public struct P256PublicKey: Sendable, Hashable {
    let key: EVPKey
    /// The uncompressed point, kept for equality and export.
    public let rawRepresentation: [UInt8]

    init(_ key: EVPKey) {
        self.key = key
        self.rawRepresentation = key.publicPoint
    }

    /// A key from its uncompressed point (`04 || x || y`, 65 bytes: Web Push's `p256dh`, a VAPID key).
    ///
    /// - Throws: ``ChimeError`` `invalidValue` when it is not 65 bytes starting with 4, or not on the curve.
    public init(rawRepresentation point: [UInt8]) throws(ChimeError) {
        guard point.count == 65, point[0] == 4 else {
            throw ChimeError(
                .invalidValue,
                "a P-256 public key is 65 bytes starting with 04 (uncompressed), not \(point.count) bytes")
        }
        let key = try EVPKey.fromData(point: point, "the P-256 public key could not be read")
        self.init(key)
    }

    /// A key from SubjectPublicKeyInfo PEM (`-----BEGIN PUBLIC KEY-----`).
    public init(pemRepresentation pem: String) throws(ChimeError) {
        self.init(
            try EVPKey.read(pem, "the public key is not PEM SubjectPublicKeyInfo") {
                PEM_read_bio_PUBKEY($0, nil, { _, _, _, _ in 0 }, nil)
            })
    }

    /// A key from SubjectPublicKeyInfo DER.
    public init(derRepresentation der: [UInt8]) throws(ChimeError) {
        guard der.count < 4096 else {
            throw ChimeError(.tooLarge, "a P-256 public key's DER is about 91 bytes, not \(der.count)")
        }
        let pointer = OpenSSL.readDER(der, read: { d2i_PUBKEY(nil, $0, $1) }, free: EVP_PKEY_free)
        guard let pointer else {
            throw OpenSSL.failure("the public key is not DER SubjectPublicKeyInfo", code: .malformedInput)
        }
        let key = EVPKey(pointer)
        guard key.isP256 else {
            throw ChimeError(.invalidValue, "the public key is not a P-256 (prime256v1) elliptic-curve key")
        }
        self.init(key)
    }

    /// SubjectPublicKeyInfo PEM (`-----BEGIN PUBLIC KEY-----`).
    public var pemRepresentation: String {
        // Writing a valid key into memory fails only when memory runs out.
        guard
            let text = try? EVPKey.written(
                "the public key could not be written", { PEM_write_bio_PUBKEY($0, key.pointer) })
        else {
            fatalError("OpenSSL could not write a P-256 public key as PEM")
        }
        return text
    }

    /// SubjectPublicKeyInfo DER.
    public var derRepresentation: [UInt8] {
        let length = i2d_PUBKEY(key.pointer, nil)
        precondition(length > 0, "OpenSSL could not write a P-256 public key as DER")
        var der = [UInt8](repeating: 0, count: Int(length))
        der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = i2d_PUBKEY(key.pointer, &cursor)
        }
        return der
    }

    /// Whether `signature` (raw `r || s`, 64 bytes, as JWS writes it) is this key's ECDSA P-256 /
    /// SHA-256 signature of `message`. Anything else — wrong length, a DER signature, another
    /// key's — is false.
    public func isValidSignature(_ signature: [UInt8], for message: some Collection<UInt8>) -> Bool {
        guard let der = try? ECDSASignature.der(fromRaw: signature) else { return false }
        return isValidSignature(der: der, for: message)
    }

    /// Whether `der` (an ASN.1 ECDSA-Sig-Value) is this key's signature of `message`.
    public func isValidSignature(der: [UInt8], for message: some Collection<UInt8>) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer {
            EVP_MD_CTX_free(context)
            OpenSSL.clearErrors()
        }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key.pointer) == 1 else { return false }
        let message = Array(message)
        return der.withUnsafeBufferPointer { signature in
            message.withUnsafeBufferPointer { message in
                EVP_DigestVerify(context, signature.baseAddress, signature.count, message.baseAddress, message.count)
                    == 1
            }
        }
    }

    public static func == (lhs: P256PublicKey, rhs: P256PublicKey) -> Bool {
        lhs.rawRepresentation == rhs.rawRepresentation
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawRepresentation) }
}
