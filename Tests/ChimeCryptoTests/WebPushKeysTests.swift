import ChimeCore
import ChimeCrypto
import TestThreads
import Testing

/// A subscriber's keys as the Web Push sender gives them to the encryptor
/// (`WebPushEncryption.encrypt(_:p256dh:auth:)`), with fuzz-web-push-keys' findings (Fuzz/README.md).
@Suite("ChimeCrypto: a subscriber's keys", .testThreads)
struct WebPushKeysTests {
    static let prime: [UInt8] =
        [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 1] + Array(repeating: 0, count: 12) + Array(repeating: 0xFF, count: 12)

    @Test(
        "a p256dh that is not a point on P-256 is refused naming keys.p256dh",
        arguments: [
            [4] + Array(repeating: 0, count: 64),  // the form of a point, (0, 0) not on the curve
            [4] + prime + Array(repeating: 0, count: 32),  // x = p, outside the field
            [2] + Array(repeating: 7, count: 32),  // compressed
            Array(repeating: 4, count: 64),  // 64 bytes
        ] as [[UInt8]])
    func notAPoint(p256dh: [UInt8]) {
        #expect {
            _ = try WebPushEncryption.encrypt(Array("hi".utf8), p256dh: p256dh, auth: Array(repeating: 1, count: 16))
        } throws: { error in
            guard let error = error as? ChimeError else { return false }
            return error.code == .invalidValue && error.field == "keys.p256dh"
                && error.message.hasPrefix("keys.p256dh: ")
        }
    }

    @Test("an auth secret that is not 16 bytes is refused naming keys.auth")
    func authSecret() {
        let subscriber = P256PrivateKey()
        #expect {
            _ = try WebPushEncryption.encrypt(
                Array("hi".utf8), p256dh: subscriber.publicKey.rawRepresentation, auth: Array(repeating: 1, count: 15))
        } throws: { error in
            (error as? ChimeError)?.field == "keys.auth"
        }
    }

    /// fuzz-web-push-keys on its seed `record-exactly-full`: a record exactly the record size long
    /// was written (RFC 8291 §4 wants the record size greater than the record); now tooLarge.
    @Test("the record size is greater than the record (RFC 8291 §4): 46 bytes fit a 64-byte record size, 47 do not")
    func recordSize() throws {
        let subscriber = P256PrivateKey()
        let auth = SecureRandom.bytes(16)
        let fits = Array(repeating: UInt8(ascii: "A"), count: 46)
        let body = try WebPushEncryption.encrypt(
            fits, p256dh: subscriber.publicKey.rawRepresentation, auth: auth, recordSize: 64)
        #expect(body.count - 86 == 63)
        #expect(try WebPushEncryption.decrypt(body, userAgentPrivateKey: subscriber, authSecret: auth) == fits)
        #expect {
            _ = try WebPushEncryption.encrypt(
                fits + [0x41], p256dh: subscriber.publicKey.rawRepresentation, auth: auth, recordSize: 64)
        } throws: { error in
            (error as? ChimeError)?.code == .tooLarge && "\(error)".contains("at most 46")
        }
    }
}
