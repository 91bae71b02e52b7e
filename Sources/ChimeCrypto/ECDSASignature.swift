import CLibCrypto
import ChimeCore

/// The two spellings of an ECDSA P-256 signature: JWS's raw `r || s` (64 bytes) and ASN.1 DER
/// (what OpenSSL signs and verifies), converted by OpenSSL's `ECDSA_SIG`.
///
/// ```swift
/// let der = try ECDSASignature.der(fromRaw: jwsSignature)
/// let raw = try ECDSASignature.raw(fromDER: der)         // == jwsSignature
/// ```
public enum ECDSASignature {
    /// `r || s`, each 32 bytes big-endian, from a DER ECDSA-Sig-Value.
    ///
    /// - Throws: ``ChimeError`` `malformedInput` when `der` is not one strict DER value (trailing
    ///   bytes, another encoding of the same numbers), or a number does not fit 32 bytes.
    public static func raw(fromDER der: [UInt8]) throws(ChimeError) -> [UInt8] {
        guard der.count <= 80 else {
            throw ChimeError(.malformedInput, "a P-256 DER signature is at most 72 bytes, not \(der.count)")
        }
        let signature = OpenSSL.readDER(der, read: { d2i_ECDSA_SIG(nil, $0, $1) }, free: ECDSA_SIG_free)
        guard let signature else { throw OpenSSL.failure("the signature is not DER", code: .malformedInput) }
        defer { ECDSA_SIG_free(signature) }
        var r: OpaquePointer?
        var s: OpaquePointer?
        ECDSA_SIG_get0(signature, &r, &s)
        var raw = [UInt8](repeating: 0, count: 64)
        let fits = raw.withUnsafeMutableBufferPointer { buffer in
            BN_bn2binpad(r, buffer.baseAddress, 32) == 32 && BN_bn2binpad(s, buffer.baseAddress! + 32, 32) == 32
        }
        guard fits else { throw ChimeError(.malformedInput, "the signature's numbers do not fit 32 bytes each") }
        guard try Self.der(fromRaw: raw) == der else {
            throw ChimeError(.malformedInput, "the signature is not strict DER")
        }
        return raw
    }

    /// A DER ECDSA-Sig-Value from `r || s` (64 bytes).
    ///
    /// - Throws: ``ChimeError`` `malformedInput` when `raw` is not 64 bytes.
    public static func der(fromRaw raw: [UInt8]) throws(ChimeError) -> [UInt8] {
        guard raw.count == 64 else {
            throw ChimeError(.malformedInput, "an ES256 signature is 64 bytes (r || s), not \(raw.count)")
        }
        guard let signature = ECDSA_SIG_new() else { throw OpenSSL.failure("no signature value") }
        defer { ECDSA_SIG_free(signature) }
        let (r, s) = raw.withUnsafeBufferPointer {
            (
                $0.baseAddress.flatMap { BN_bin2bn($0, 32, nil) },
                $0.baseAddress.flatMap { BN_bin2bn($0 + 32, 32, nil) }
            )
        }
        guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {  // set0 takes both numbers
            BN_free(r)
            BN_free(s)
            throw OpenSSL.failure("the signature's numbers could not be set")
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { throw OpenSSL.failure("the signature could not be written as DER") }
        var der = [UInt8](repeating: 0, count: Int(length))
        der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = i2d_ECDSA_SIG(signature, &cursor)
        }
        return der
    }
}
