import ChimeCore
import ChimeCrypto
import CryptoInterop
import Foundation
import TestThreads
import Testing

@Suite("ChimeCrypto against Python's cryptography, PyJWT and http_ece", .testThreads)
struct InteropTests {
    @Test("a JWT Chime signs verifies in PyJWT, with its header and claims")
    func chimeSignsPyJWTVerifies() async throws {
        let key = P256PrivateKey()
        let token = try JSONWebToken.sign(
            claims: ["iss": .string("TEAM123456"), "iat": .integer(1_700_000_000)],
            header: ["kid": .string("KEY1234567")], with: key)
        let answer = try await Interop.run("verify-jwt", key.publicKey.pemRepresentation, token)
        #expect(answer["claims"]?["iss"] == .string("TEAM123456"))
        #expect(answer["claims"]?["iat"] == .integer(1_700_000_000))
        #expect(answer["header"]?["kid"] == .string("KEY1234567"))
        #expect(answer["header"]?["alg"] == .string("ES256"))
        // PyJWT refuses the same token under another key: its check is a real one.
        await #expect(throws: Interop.InteropFailure.self) {
            try await Interop.run("verify-jwt", P256PrivateKey().publicKey.pemRepresentation, token)
        }
    }

    @Test("a .p8 key made by cryptography loads in Chime, and a JWT PyJWT signs with it verifies in Chime")
    func pyJWTSignsChimeVerifies() async throws {
        let made = try await Interop.run("make-key")
        let pem = try #require(made["pem"]?.text)
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let key = try P256PrivateKey(pemRepresentation: pem)
        #expect(Base64URL.encode(key.publicKey.rawRepresentation) == made["point"]?.text)

        let signed = try await Interop.run("sign-jwt", pem, "ABCDEFGHIJ", "TEAMTEAM12", "1700000123")
        let token = try JSONWebToken(parsing: try #require(signed["token"]?.text))
        try token.verify(with: key.publicKey)
        #expect(token.keyID == "ABCDEFGHIJ")
        #expect(token.string("iss") == "TEAMTEAM12")
        #expect(token.seconds("iat") == 1_700_000_123)
        #expect(!token.isSignatureValid(for: P256PrivateKey().publicKey))

        // The key Chime exports as PKCS#8 is the same key (cryptography reads it back in the sign step).
        let again = try await Interop.run("sign-jwt", key.pemRepresentation, "ABCDEFGHIJ", "TEAMTEAM12", "1")
        try JSONWebToken(parsing: try #require(again["token"]?.text)).verify(with: key.publicKey)
    }

    @Test("a Web Push message Chime encrypts decrypts with http_ece", arguments: [0, 1, 100, 3_000])
    func webPushDecryptsInHTTPECE(length: Int) async throws {
        let subscription = try await Interop.run("make-subscription")
        let p256dh = try Base64URL.decode(try #require(subscription["p256dh"]?.text))
        let auth = try Base64URL.decode(try #require(subscription["auth"]?.text))
        let plaintext = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        let body = try WebPushEncryption.encrypt(
            plaintext, userAgentPublicKey: try P256PublicKey(rawRepresentation: p256dh), authSecret: auth)
        #expect(body.count == 86 + length + 17)
        let answer = try await Interop.run(
            "decrypt-web-push", try #require(subscription["private"]?.text), Base64URL.encode(auth),
            Base64URL.encode(body))
        #expect(try Base64URL.decode(try #require(answer["plaintext"]?.text)) == plaintext)
    }
}
