import CLibCrypto
import ChimeCore

/// HKDF with SHA-256 (RFC 5869), through OpenSSL's `EVP_KDF` "HKDF".
///
/// ```swift
/// let key = try HKDF.sha256(key: sharedSecret, salt: salt, info: Array("Content-Encoding: aes128gcm\0".utf8), length: 16)
/// ```
public enum HKDF {
    /// Extract-then-expand: `length` bytes (1 to 8,160) from the input key material `key`.
    /// An empty salt is HashLen zero bytes, as RFC 5869 says.
    public static func sha256(key: [UInt8], salt: [UInt8], info: [UInt8], length: Int) throws(ChimeError) -> [UInt8] {
        guard (1...255 * 32).contains(length) else {
            throw ChimeError(.invalidValue, "HKDF-SHA256 gives 1 to 8160 bytes, not \(length)")
        }
        guard let kdf = EVP_KDF_fetch(nil, "HKDF", nil) else { throw OpenSSL.failure("OpenSSL has no HKDF") }
        defer { EVP_KDF_free(kdf) }
        guard let context = EVP_KDF_CTX_new(kdf) else { throw OpenSSL.failure("no HKDF context") }
        defer { EVP_KDF_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: length)
        let done = key.withUnsafeBytes { key in
            salt.withUnsafeBytes { salt in
                info.withUnsafeBytes { info in
                    var parameters = [
                        OSSL_PARAM_construct_utf8_string(
                            OpenSSL.name("digest"), UnsafeMutablePointer(mutating: OpenSSL.name("SHA256")), 0),
                        OSSL_PARAM_construct_octet_string(
                            OpenSSL.name("key"), UnsafeMutableRawPointer(mutating: key.baseAddress), key.count),
                    ]
                    // An absent salt or info is the empty one; OpenSSL is not handed a null pointer.
                    if salt.count > 0 {
                        parameters.append(
                            OSSL_PARAM_construct_octet_string(
                                OpenSSL.name("salt"), UnsafeMutableRawPointer(mutating: salt.baseAddress), salt.count))
                    }
                    if info.count > 0 {
                        parameters.append(
                            OSSL_PARAM_construct_octet_string(
                                OpenSSL.name("info"), UnsafeMutableRawPointer(mutating: info.baseAddress), info.count))
                    }
                    parameters.append(OSSL_PARAM_construct_end())
                    return EVP_KDF_derive(context, &output, length, parameters) == 1
                }
            }
        }
        guard done else { throw OpenSSL.failure("HKDF-SHA256 failed") }
        return output
    }
}
