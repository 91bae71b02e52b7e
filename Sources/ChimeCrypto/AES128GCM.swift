import CLibCrypto
import ChimeCore

/// AES-128-GCM (a 16-byte key, a 12-byte nonce, a 16-byte tag), through OpenSSL's `EVP_aes_128_gcm`.
/// A sealed message is the ciphertext followed by the tag, as Web Push and JWE carry it.
///
/// ```swift
/// let sealed = try AES128GCM.seal(Array("hello".utf8), key: key, nonce: nonce)   // 5 + 16 bytes
/// let opened = try AES128GCM.open(sealed, key: key, nonce: nonce)                // "hello"
/// ```
public enum AES128GCM {
    public static let keyLength = 16
    public static let nonceLength = 12
    public static let tagLength = 16

    /// Encrypts `plaintext` and authenticates it with `additionalData`: ciphertext || tag.
    public static func seal(
        _ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], authenticating additionalData: [UInt8] = []
    ) throws(ChimeError) -> [UInt8] {
        let context = try start(key: key, nonce: nonce, encrypt: true, additionalData: additionalData)
        defer { EVP_CIPHER_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: plaintext.count + tagLength)
        let done = output.withUnsafeMutableBufferPointer { output in
            var written: Int32 = 0
            var final: Int32 = 0
            guard
                plaintext.isEmpty
                    || plaintext.withUnsafeBufferPointer({
                        EVP_EncryptUpdate(context, output.baseAddress, &written, $0.baseAddress, Int32($0.count)) == 1
                    })
            else { return false }
            return EVP_EncryptFinal_ex(context, output.baseAddress! + Int(written), &final) == 1
                && Int(written + final) == plaintext.count
                && chime_crypto_gcm_get_tag(context, Int32(tagLength), output.baseAddress! + plaintext.count) == 1
        }
        guard done else { throw OpenSSL.failure("AES-128-GCM encryption failed") }
        return output
    }

    /// Decrypts `sealed` (ciphertext || tag) and checks its tag.
    ///
    /// - Throws: ``ChimeError`` `notPermitted` when the tag does not match (wrong key, nonce or
    ///   additional data, or changed bytes); `malformedInput` when it is shorter than a tag.
    public static func open(
        _ sealed: [UInt8], key: [UInt8], nonce: [UInt8], authenticating additionalData: [UInt8] = []
    ) throws(ChimeError) -> [UInt8] {
        guard sealed.count >= tagLength else {
            throw ChimeError(
                .malformedInput, "an AES-128-GCM message is at least its 16-byte tag, not \(sealed.count) bytes")
        }
        let context = try start(key: key, nonce: nonce, encrypt: false, additionalData: additionalData)
        defer { EVP_CIPHER_CTX_free(context) }
        let length = sealed.count - tagLength
        var output = [UInt8](repeating: 0, count: length + tagLength)
        var tag = Array(sealed[length...])
        let decrypted = output.withUnsafeMutableBufferPointer { output in
            var written: Int32 = 0
            guard
                length == 0
                    || sealed.withUnsafeBufferPointer({
                        EVP_DecryptUpdate(context, output.baseAddress, &written, $0.baseAddress, Int32(length)) == 1
                    })
            else { return false }
            return Int(written) == length && chime_crypto_gcm_set_tag(context, Int32(tagLength), &tag) == 1
        }
        guard decrypted else { throw OpenSSL.failure("AES-128-GCM decryption failed") }
        var final: Int32 = 0
        let authentic = output.withUnsafeMutableBufferPointer {
            EVP_DecryptFinal_ex(context, $0.baseAddress! + length, &final) == 1
        }
        guard authentic else {
            OpenSSL.clearErrors()
            throw ChimeError(
                .notPermitted, "the AES-128-GCM tag does not match: wrong key or nonce, or the message was changed")
        }
        return Array(output.prefix(length))
    }

    private static func start(key: [UInt8], nonce: [UInt8], encrypt: Bool, additionalData: [UInt8]) throws(ChimeError)
        -> OpaquePointer
    {
        guard key.count == keyLength else {
            throw ChimeError(.invalidValue, "an AES-128 key is 16 bytes, not \(key.count)")
        }
        guard nonce.count == nonceLength else {
            throw ChimeError(.invalidValue, "an AES-128-GCM nonce is 12 bytes here, not \(nonce.count)")
        }
        guard additionalData.count < Int32.max else { throw ChimeError(.tooLarge, "the additional data is too large") }
        guard let context = EVP_CIPHER_CTX_new() else { throw OpenSSL.failure("no cipher context") }
        let started =
            encrypt
            ? EVP_EncryptInit_ex2(context, EVP_aes_128_gcm(), key, nonce, nil) == 1
            : EVP_DecryptInit_ex2(context, EVP_aes_128_gcm(), key, nonce, nil) == 1
        var written: Int32 = 0
        let authenticated =
            additionalData.isEmpty
            || additionalData.withUnsafeBufferPointer {
                encrypt
                    ? EVP_EncryptUpdate(context, nil, &written, $0.baseAddress, Int32($0.count)) == 1
                    : EVP_DecryptUpdate(context, nil, &written, $0.baseAddress, Int32($0.count)) == 1
            }
        guard started, authenticated else {
            EVP_CIPHER_CTX_free(context)
            throw OpenSSL.failure("AES-128-GCM could not start")
        }
        return context
    }
}
