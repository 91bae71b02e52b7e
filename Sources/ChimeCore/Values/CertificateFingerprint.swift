import Foundation

/// An X.509 certificate as Chime pins it: the SHA-256 of its DER encoding and of its public key
/// (its DER SubjectPublicKeyInfo), and its validity dates. What an app's registered APNs provider
/// certificate is kept as (``AppRecord/apnsCertificate``: never the certificate's private key), and
/// what the service reads from the certificate a TLS client presents.
///
/// A presented certificate is the registered one when either hash is equal: the same certificate,
/// or one renewed with the same key. No chain is asked for, so a self-signed provider certificate
/// works.
///
/// ```swift
/// if let registered = record.apnsCertificate, registered.matches(presented), presented.isValid(at: now) { … }
/// ```
public struct CertificateFingerprint: Sendable, Hashable {
    /// SHA-256 of the certificate's DER encoding (what `openssl x509 -fingerprint -sha256` prints).
    public var sha256: [UInt8]
    /// SHA-256 of its public key, DER SubjectPublicKeyInfo (curl's `--pinnedpubkey sha256//…`).
    public var publicKeySHA256: [UInt8]
    /// The certificate's notBefore and notAfter.
    public var notBefore: Date
    public var notAfter: Date

    public init(sha256: [UInt8], publicKeySHA256: [UInt8], notBefore: Date, notAfter: Date) {
        self.sha256 = sha256
        self.publicKeySHA256 = publicKeySHA256
        self.notBefore = notBefore
        self.notAfter = notAfter
    }

    /// Whether `presented` is this certificate, or another with the same public key.
    public func matches(_ presented: CertificateFingerprint) -> Bool {
        presented.sha256 == sha256 || presented.publicKeySHA256 == publicKeySHA256
    }

    /// Whether `date` lies within notBefore…notAfter.
    public func isValid(at date: Date) -> Bool { notBefore <= date && date <= notAfter }

    /// The certificate's SHA-256 in lower-case hexadecimal.
    public var sha256Hex: String { sha256.hexadecimal }

    /// `{"sha256", "publicKeySha256", "notBefore", "notAfter"}`: hashes in hexadecimal, dates in ISO 8601.
    public var json: JSONValue {
        typealias Field = JSONFieldName.Certificate
        return [
            Field.sha256: .string(sha256Hex),
            Field.publicKeySha256: .string(publicKeySHA256.hexadecimal),
            Field.notBefore: JSONMapping.json(notBefore), Field.notAfter: JSONMapping.json(notAfter),
        ]
    }
}
