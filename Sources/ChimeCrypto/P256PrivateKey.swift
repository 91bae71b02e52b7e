import CLibCrypto
import ChimeCore

/// A P-256 private key: signs ES256 (JWT, VAPID) and agrees on a secret with a peer (ECDH).
///
/// ```swift
/// let key = try P256PrivateKey(pemRepresentation: String(decoding: p8, as: UTF8.self))   // AuthKey_KEYID.p8
/// let signature = try key.signature(for: Array("header.claims".utf8))                    // raw r || s, 64 bytes
/// let pem = key.publicKey.pemRepresentation                                               // what Chime keeps
/// ```
public struct P256PrivateKey: Sendable {
    let key: EVPKey
    /// The key's public half.
    public let publicKey: P256PublicKey

    init(_ key: EVPKey) {
        self.key = key
        self.publicKey = P256PublicKey(key)
    }

    /// A new random key (OpenSSL's generator, seeded from the system).
    public init() {
        do { self.init(try Self.generate()) } catch { fatalError("OpenSSL could not make a P-256 key: \(error)") }
    }

    private static func generate() throws(ChimeError) -> EVPKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw OpenSSL.failure("no EC key generator")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, EVPKey.group) == 1,
            EVP_PKEY_generate(context, &key) == 1
        else {
            throw OpenSSL.failure("the P-256 key could not be made")
        }
        return try EVPKey.take(key, "the P-256 key could not be made")
    }

    /// A key from PEM: PKCS#8 (`-----BEGIN PRIVATE KEY-----`, as an APNs `.p8` file holds it) or
    /// SEC 1 (`-----BEGIN EC PRIVATE KEY-----`). An encrypted key is refused, never prompted for.
    ///
    /// - Throws: ``ChimeError`` `malformedInput` when it is not a PEM private key, `invalidValue`
    ///   when it is not on P-256.
    public init(pemRepresentation pem: String) throws(ChimeError) {
        self.init(
            try EVPKey.read(pem, "the private key is not a PEM (PKCS#8) key") {
                PEM_read_bio_PrivateKey($0, nil, { _, _, _, _ in 0 }, nil)
            })
    }

    /// A key from its scalar (32 bytes, big-endian: a JWK's `d`) and its public point (65 bytes).
    /// For published test vectors, which give both.
    public init(rawRepresentation scalar: [UInt8], publicKey point: [UInt8]) throws(ChimeError) {
        guard scalar.count == 32 else {
            throw ChimeError(.invalidValue, "a P-256 private scalar is 32 bytes, not \(scalar.count)")
        }
        guard point.count == 65, point[0] == 4 else {
            throw ChimeError(
                .invalidValue,
                "a P-256 public key is 65 bytes starting with 04 (uncompressed), not \(point.count) bytes")
        }
        guard let number = scalar.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, 32, nil) }) else {
            throw OpenSSL.failure("the private scalar could not be read")
        }
        defer { BN_clear_free(number) }
        let key = try EVPKey.fromData(point: point, scalar: number, "the P-256 private key could not be read")
        self.init(key)
    }

    /// PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), unencrypted: the `.p8` format.
    public var pemRepresentation: String {
        guard
            let text = try? EVPKey.written(
                "the private key could not be written",
                {
                    PEM_write_bio_PrivateKey($0, key.pointer, nil, nil, 0, nil, nil)
                })
        else {
            fatalError("OpenSSL could not write a P-256 private key as PEM")
        }
        return text
    }

    /// The ECDSA P-256 / SHA-256 signature of `message` as JWS writes it: raw `r || s`, 64 bytes.
    public func signature(for message: some Collection<UInt8>) throws(ChimeError) -> [UInt8] {
        try ECDSASignature.raw(fromDER: derSignature(for: message))
    }

    /// The ECDSA P-256 / SHA-256 signature of `message` as ASN.1 DER (what OpenSSL and X.509 use).
    public func derSignature(for message: some Collection<UInt8>) throws(ChimeError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw OpenSSL.failure("no digest context") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key.pointer) == 1 else {
            throw OpenSSL.failure("signing could not start")
        }
        let message = Array(message)
        var length = 0
        var signature = [UInt8](repeating: 0, count: 80)
        let signed = message.withUnsafeBufferPointer { message in
            EVP_DigestSign(context, nil, &length, message.baseAddress, message.count) == 1 && length <= signature.count
                && EVP_DigestSign(context, &signature, &length, message.baseAddress, message.count) == 1
        }
        guard signed else { throw OpenSSL.failure("the message could not be signed") }
        return Array(signature.prefix(length))
    }

    /// The ECDH shared secret with `peer` (the x coordinate of the shared point, 32 bytes).
    public func sharedSecret(with peer: P256PublicKey) throws(ChimeError) -> [UInt8] {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else {
            throw OpenSSL.failure("no key context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var length = 0
        guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer(context, peer.key.pointer) == 1,
            EVP_PKEY_derive(context, nil, &length) == 1, length == 32
        else {
            throw OpenSSL.failure("the ECDH agreement could not start")
        }
        var secret = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_derive(context, &secret, &length) == 1, length == 32 else {
            throw OpenSSL.failure("the ECDH agreement failed")
        }
        return secret
    }
}
