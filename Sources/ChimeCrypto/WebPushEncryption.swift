import ChimeCore

/// Message encryption for Web Push (RFC 8291) in the `aes128gcm` content coding (RFC 8188): one
/// record, from a fresh ephemeral key pair and salt (both injectable, for the RFC's example).
///
/// ```swift
/// let body = try WebPushEncryption.encrypt(Array(json.utf8), userAgentPublicKey: try P256PublicKey(rawRepresentation: p256dh),
///                                          authSecret: auth)
/// // POST body with Content-Encoding: aes128gcm
/// ```
public enum WebPushEncryption {
    /// The keys one message is encrypted with (RFC 8291 §3.4, RFC 8188 §2.2).
    public struct Keys: Sendable, Hashable {
        /// ECDH(application server private key, user agent public key): 32 bytes.
        public var sharedSecret: [UInt8]
        /// The input keying material for the content encryption: 32 bytes.
        public var inputKeyingMaterial: [UInt8]
        /// The content-encryption key: 16 bytes.
        public var contentEncryptionKey: [UInt8]
        /// The record nonce (for the first and only record): 12 bytes.
        public var nonce: [UInt8]
    }

    /// The header's fixed sizes: salt, record size, key id length, and the key id (the sender's point).
    static let saltLength = 16, authSecretLength = 16, headerLength = 16 + 4 + 1 + 65

    /// The keys of one message from the ECDH secret of the application server's and the user
    /// agent's keys (either side computes it), the subscription's auth secret and the salt.
    public static func keys(
        sharedSecret: [UInt8], userAgentPublicKey: P256PublicKey, applicationServerPublicKey: P256PublicKey,
        authSecret: [UInt8], salt: [UInt8]
    ) throws(ChimeError) -> Keys {
        guard authSecret.count == authSecretLength else {
            throw ChimeError(
                .invalidValue, field: "keys.auth",
                "keys.auth: a Web Push auth secret is 16 bytes, not \(authSecret.count)")
        }
        guard salt.count == saltLength else {
            throw ChimeError(.invalidValue, "a Web Push salt is 16 bytes, not \(salt.count)")
        }
        let keyInfo =
            Array("WebPush: info\0".utf8) + userAgentPublicKey.rawRepresentation
            + applicationServerPublicKey.rawRepresentation
        let ikm = try HKDF.sha256(key: sharedSecret, salt: authSecret, info: keyInfo, length: 32)
        let cek = try HKDF.sha256(key: ikm, salt: salt, info: Array("Content-Encoding: aes128gcm\0".utf8), length: 16)
        let nonce = try HKDF.sha256(key: ikm, salt: salt, info: Array("Content-Encoding: nonce\0".utf8), length: 12)
        return Keys(sharedSecret: sharedSecret, inputKeyingMaterial: ikm, contentEncryptionKey: cek, nonce: nonce)
    }

    /// A subscription's `keys.p256dh` as a key: 65 bytes, `04 || x || y`, a point on P-256 (OpenSSL
    /// checks it).
    ///
    /// ```swift
    /// let key = try WebPushEncryption.subscriberKey(subscription.p256dh)
    /// ```
    ///
    /// - Throws: ``ChimeError`` `invalidValue` with field `keys.p256dh`, its message saying what is
    ///   wrong (the length, the first byte, a point not on the curve).
    public static func subscriberKey(_ p256dh: [UInt8]) throws(ChimeError) -> P256PublicKey {
        do {
            return try P256PublicKey(rawRepresentation: p256dh)
        } catch {
            throw ChimeError(.invalidValue, field: "keys.p256dh", "keys.p256dh: \(error.message)")
        }
    }

    /// The `aes128gcm` body of a push message for a subscription's keys as registered: `p256dh`
    /// read by ``subscriberKey(_:)``, `auth` 16 bytes.
    ///
    /// ```swift
    /// let body = try WebPushEncryption.encrypt(Array(json.utf8), p256dh: subscription.p256dh, auth: subscription.auth)
    /// ```
    ///
    /// - Throws: ``ChimeError`` naming `keys.p256dh` or `keys.auth` for keys that cannot be used,
    ///   `tooLarge` when the plaintext does not fit one record.
    public static func encrypt(
        _ plaintext: [UInt8], p256dh: [UInt8], auth: [UInt8], padding: Int = 0,
        recordSize: Int = 4096
    ) throws(ChimeError) -> [UInt8] {
        try encrypt(
            plaintext, userAgentPublicKey: try subscriberKey(p256dh), authSecret: auth, padding: padding,
            recordSize: recordSize)
    }

    /// The `aes128gcm` body of a push message: salt (16) || record size (4, big-endian) || 65 ||
    /// the ephemeral public key (65) || one encrypted record (the plaintext, the last-record
    /// delimiter 0x02, `padding` zero bytes, and the 16-byte tag).
    ///
    /// - Parameters:
    ///   - userAgentPublicKey: the subscription's `p256dh`.
    ///   - authSecret: the subscription's `auth` (16 bytes).
    ///   - recordSize: the record size written in the header: greater than the record (RFC 8291
    ///     §4: the plaintext, the delimiter, the padding and the 16-byte tag).
    ///   - ephemeralKey, salt: fresh for every message; given only to reproduce a published example.
    /// - Throws: ``ChimeError`` `tooLarge` when the plaintext and padding do not fit one record
    ///   smaller than `recordSize`.
    public static func encrypt(
        _ plaintext: [UInt8], userAgentPublicKey: P256PublicKey, authSecret: [UInt8], padding: Int = 0,
        recordSize: Int = 4096, ephemeralKey: P256PrivateKey = P256PrivateKey(),
        salt: [UInt8] = SecureRandom.bytes(16)
    ) throws(ChimeError) -> [UInt8] {
        guard padding >= 0, (18...Int(UInt32.max)).contains(recordSize) else {
            throw ChimeError(.invalidValue, "a record size of \(recordSize) with \(padding) bytes of padding")
        }
        // RFC 8291 §4: the record size is greater than the record (so a full-size record is never
        // taken for one that has another after it).
        guard plaintext.count + 1 + padding + AES128GCM.tagLength < recordSize else {
            throw ChimeError(
                .tooLarge,
                "\(plaintext.count) bytes with \(padding) of padding do not fit one \(recordSize)-byte record (at most \(recordSize - 18 - padding))"
            )
        }
        let keys = try keys(
            sharedSecret: try ephemeralKey.sharedSecret(with: userAgentPublicKey),
            userAgentPublicKey: userAgentPublicKey,
            applicationServerPublicKey: ephemeralKey.publicKey, authSecret: authSecret, salt: salt)
        let record = plaintext + [2] + [UInt8](repeating: 0, count: padding)
        let size = UInt32(recordSize)
        var body =
            salt + [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF), 65]
        body += ephemeralKey.publicKey.rawRepresentation
        body += try AES128GCM.seal(record, key: keys.contentEncryptionKey, nonce: keys.nonce)
        return body
    }

    /// The plaintext of a one-record `aes128gcm` push message, as the user agent decrypts it with
    /// its private key and auth secret.
    ///
    /// - Throws: ``ChimeError`` `malformedInput` for a body that is not one such record (or whose
    ///   padding is not zeros after a 0x02 delimiter), `notPermitted` when it does not decrypt.
    public static func decrypt(_ body: [UInt8], userAgentPrivateKey: P256PrivateKey, authSecret: [UInt8])
        throws(ChimeError) -> [UInt8]
    {
        guard body.count >= headerLength + 1 + AES128GCM.tagLength, body[20] == 65 else {
            throw ChimeError(.malformedInput, "not an aes128gcm message with a P-256 key id (\(body.count) bytes)")
        }
        let recordSize = body[16..<20].reduce(0) { $0 << 8 | Int($1) }
        guard body.count - headerLength <= recordSize else {
            throw ChimeError(.malformedInput, "the message holds more than one \(recordSize)-byte record")
        }
        let sender = try P256PublicKey(rawRepresentation: Array(body[21..<headerLength]))
        let keys = try keys(
            sharedSecret: try userAgentPrivateKey.sharedSecret(with: sender),
            userAgentPublicKey: userAgentPrivateKey.publicKey,
            applicationServerPublicKey: sender, authSecret: authSecret, salt: Array(body[0..<16]))
        var record = try AES128GCM.open(Array(body[headerLength...]), key: keys.contentEncryptionKey, nonce: keys.nonce)
        while record.last == 0 { record.removeLast() }
        guard record.last == 2 else {
            throw ChimeError(.malformedInput, "the record does not end with the last-record delimiter 0x02")
        }
        record.removeLast()
        return record
    }
}
