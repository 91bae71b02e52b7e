import CLibCrypto
import ChimeCore

/// One OpenSSL key (`EVP_PKEY`), freed once, when the last reference to it goes.
///
/// `@unchecked Sendable` because the key is immutable after creation: nothing in ChimeCrypto sets
/// a parameter on it after `init`, and every operation (sign, verify, derive, export) runs in a
/// context of its own (`EVP_MD_CTX`, `EVP_PKEY_CTX`) that only reads the key, which OpenSSL allows
/// from several threads at once (its "Thread safety" notes: an `EVP_PKEY` may be shared between
/// threads as long as no thread modifies it; reference counts are atomic).
final class EVPKey: @unchecked Sendable {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { EVP_PKEY_free(pointer) }

    /// Takes a key OpenSSL made, or throws with what failed when it made none.
    static func take(_ pointer: OpaquePointer?, _ what: String) throws(ChimeError) -> EVPKey {
        guard let pointer else { throw OpenSSL.failure(what) }
        return EVPKey(pointer)
    }

    /// Whether this is an elliptic-curve key on P-256 (OpenSSL's name: prime256v1).
    var isP256: Bool {
        guard EVP_PKEY_get_base_id(pointer) == EVP_PKEY_EC else { return false }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(pointer, &name, name.count, &length) == 1 else { return false }
        return String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) == "prime256v1"
    }

    /// The P-256 curve's group name in OpenSSL's parameters.
    static var group: UnsafePointer<CChar> { OpenSSL.name("P-256") }

    /// A key from its public point and, for a key pair, its private scalar (`EVP_PKEY_fromdata`),
    /// checked to be on the curve (and, with a scalar, to be one pair).
    static func fromData(point: [UInt8], scalar: OpaquePointer? = nil, _ what: String) throws(ChimeError) -> EVPKey {
        guard let builder = OSSL_PARAM_BLD_new() else { throw OpenSSL.failure(what) }
        defer { OSSL_PARAM_BLD_free(builder) }
        // The builder keeps the point's address until it copies the bytes into the parameters.
        let parameters: UnsafeMutablePointer<OSSL_PARAM>? = point.withUnsafeBytes { buffer in
            guard OSSL_PARAM_BLD_push_utf8_string(builder, OpenSSL.name("group"), group, 0) == 1,
                OSSL_PARAM_BLD_push_octet_string(builder, OpenSSL.name("pub"), buffer.baseAddress, buffer.count) == 1,
                scalar.map({ OSSL_PARAM_BLD_push_BN(builder, OpenSSL.name("priv"), $0) == 1 }) ?? true
            else { return nil }
            return OSSL_PARAM_BLD_to_param(builder)
        }
        guard let parameters else { throw OpenSSL.failure(what) }
        defer { OSSL_PARAM_free(parameters) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw OpenSSL.failure(what) }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        let selection = scalar == nil ? chime_crypto_select_public_key() : chime_crypto_select_key_pair()
        guard EVP_PKEY_fromdata_init(context) == 1, EVP_PKEY_fromdata(context, &key, selection, parameters) == 1 else {
            throw OpenSSL.failure(what)
        }
        let made = try take(key, what)
        // fromdata takes the numbers as given; the checks refuse a point off the curve, and a
        // scalar that is not the point's.
        guard let check = EVP_PKEY_CTX_new_from_pkey(nil, made.pointer, nil) else { throw OpenSSL.failure(what) }
        defer { EVP_PKEY_CTX_free(check) }
        guard EVP_PKEY_public_check(check) == 1 else { throw OpenSSL.failure(what + ": the point is not on P-256") }
        if scalar != nil, EVP_PKEY_pairwise_check(check) != 1 {
            throw OpenSSL.failure(what + ": the private scalar and the public point are not one key pair")
        }
        return made
    }

    /// The public point, uncompressed (`04 || x || y`, 65 bytes).
    var publicPoint: [UInt8] {
        var point = [UInt8](repeating: 0, count: 65)
        var length = 0
        let done = EVP_PKEY_get_octet_string_param(pointer, OpenSSL.name("pub"), &point, point.count, &length)
        precondition(done == 1 && length == 65 && point[0] == 4, "a P-256 key without its public point")
        return point
    }

    /// What a memory BIO collected (PEM written into it).
    static func written(_ what: String, _ write: (OpaquePointer) -> Int32) throws(ChimeError) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw OpenSSL.failure(what) }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { throw OpenSSL.failure(what) }
        var data: UnsafeMutablePointer<CChar>?
        let length = chime_crypto_bio_contents(bio, &data)
        guard let data, length > 0 else { throw OpenSSL.failure(what) }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }

    /// Reads a key from PEM text through a read-only memory BIO.
    static func read(_ pem: String, _ what: String, _ read: (OpaquePointer) -> OpaquePointer?) throws(ChimeError)
        -> EVPKey
    {
        let bytes = Array(pem.utf8)
        guard bytes.count < 64 * 1024 else { throw ChimeError(.tooLarge, "\(what): the PEM text is over 64 KiB") }
        let key: OpaquePointer? = bytes.withUnsafeBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            return read(bio)
        }
        guard let key else { throw OpenSSL.failure(what, code: .malformedInput) }
        let made = EVPKey(key)
        guard made.isP256 else {
            throw ChimeError(.invalidValue, "\(what): the key is not a P-256 (prime256v1) elliptic-curve key")
        }
        return made
    }
}
