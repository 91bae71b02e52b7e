import ChimeCore
import ChimeCrypto
import TestThreads
import Testing

@Suite("JSONWebToken: ES256 only, and every malformed token refused with what is wrong", .testThreads)
struct JSONWebTokenTests {
    static let key = P256PrivateKey()

    static func segment(_ text: String) -> String { Base64URL.encode(Array(text.utf8)) }

    @Test("a signed token parses and verifies with its key only")
    func roundTrip() throws {
        let token = try JSONWebToken.sign(
            claims: ["iss": .string("T"), "iat": .integer(5)], header: ["kid": .string("K"), "alg": .string("none")],
            with: Self.key)
        let parsed = try JSONWebToken(parsing: token)
        #expect(parsed.header["alg"] == .string("ES256"))  // a caller's alg never replaces ES256
        #expect(parsed.keyID == "K")
        try parsed.verify(with: Self.key.publicKey)
        let error = #expect(throws: ChimeError.self) { try parsed.verify(with: P256PrivateKey().publicKey) }
        #expect(error?.code == .notPermitted)
    }

    struct Bad: Sendable, CustomTestStringConvertible {
        var name: String
        var token: String
        var code: ChimeError.Code
        var message: String
        var testDescription: String { name }
    }

    static let signature = Base64URL.encode([UInt8](repeating: 1, count: 64))
    static let claims = segment(#"{"iss":"T"}"#)

    static let bad: [Bad] = [
        Bad(
            name: "alg none", token: segment(#"{"alg":"none"}"#) + "." + claims + "." + signature, code: .invalidValue,
            message: "unsigned"),
        Bad(
            name: "alg none, no signature", token: segment(#"{"alg":"none"}"#) + "." + claims + ".",
            code: .malformedInput, message: "signature segment is empty"),
        Bad(
            name: "alg HS256", token: segment(#"{"alg":"HS256"}"#) + "." + claims + "." + signature,
            code: .invalidValue, message: "HS256"),
        Bad(
            name: "alg RS256", token: segment(#"{"alg":"RS256"}"#) + "." + claims + "." + signature,
            code: .invalidValue, message: "only ES256"),
        Bad(
            name: "alg es256 (case)", token: segment(#"{"alg":"es256"}"#) + "." + claims + "." + signature,
            code: .invalidValue, message: "es256"),
        Bad(
            name: "no alg", token: segment(#"{"kid":"K"}"#) + "." + claims + "." + signature, code: .invalidValue,
            message: "no alg"),
        Bad(
            name: "alg a number", token: segment(#"{"alg":256}"#) + "." + claims + "." + signature, code: .invalidValue,
            message: "an integer"),
        Bad(
            name: "crit", token: segment(#"{"alg":"ES256","crit":["exp"]}"#) + "." + claims + "." + signature,
            code: .invalidValue, message: "crit"),
        // Found by JSONWebTokenDifferentialTests: PyJWT reads such a payload as it stands (RFC 7797), Chime read it as base64url.
        Bad(
            name: "b64 false", token: segment(#"{"alg":"ES256","b64":false}"#) + "." + claims + "." + signature,
            code: .invalidValue, message: "RFC 7797"),
        Bad(
            name: "b64 a string", token: segment(#"{"alg":"ES256","b64":"false"}"#) + "." + claims + "." + signature,
            code: .invalidValue, message: "b64: a string"),
        Bad(
            name: "kid a number", token: segment(#"{"alg":"ES256","kid":5}"#) + "." + claims + "." + signature,
            code: .invalidValue, message: "kid is an integer"),
        Bad(
            name: "two segments", token: segment(#"{"alg":"ES256"}"#) + "." + claims, code: .malformedInput,
            message: "this has 2"),
        Bad(name: "five segments (a JWE)", token: "a.b.c.d.e", code: .malformedInput, message: "this has 5"),
        Bad(name: "empty", token: "", code: .malformedInput, message: "this has 1"),
        Bad(
            name: "padding", token: segment(#"{"alg":"ES256"}"#) + "=." + claims + "." + signature,
            code: .malformedInput, message: "'='"),
        Bad(
            name: "standard base64",
            token: segment(#"{"alg":"ES256"}"#) + "." + claims + "."
                + signature.replacingOccurrences(of: "_", with: "/") + "+",
            code: .malformedInput, message: "not base64url"),
        Bad(
            name: "header not JSON", token: segment("alg=ES256") + "." + claims + "." + signature,
            code: .malformedInput, message: "header is not JSON"),
        Bad(
            name: "header an array", token: segment(#"["ES256"]"#) + "." + claims + "." + signature,
            code: .malformedInput, message: "an array"),
        Bad(
            name: "claims a string", token: segment(#"{"alg":"ES256"}"#) + "." + segment(#""T""#) + "." + signature,
            code: .malformedInput,
            message: "claims is a string"),
        Bad(
            name: "short signature",
            token: segment(#"{"alg":"ES256"}"#) + "." + claims + "."
                + Base64URL.encode([UInt8](repeating: 1, count: 63)),
            code: .malformedInput, message: "is 63"),
        Bad(
            name: "DER signature",
            token: segment(#"{"alg":"ES256"}"#) + "." + claims + "."
                + Base64URL.encode([0x30, 0x44] + [UInt8](repeating: 1, count: 68)),
            code: .malformedInput, message: "is 70"),
        Bad(
            name: "over 4 KiB",
            token: segment(#"{"alg":"ES256"}"#) + "." + segment(String(repeating: " ", count: 4_000) + "{}") + "."
                + signature,
            code: .tooLarge, message: "at most 4096"),
    ]

    @Test("refused", arguments: bad)
    func refused(_ bad: Bad) {
        let error = #expect(throws: ChimeError.self) { try JSONWebToken(parsing: bad.token) }
        #expect(error?.code == bad.code)
        #expect(error?.message.contains(bad.message) == true, "\(error?.message ?? "")")
    }

    @Test("a changed header, claim or signature no longer verifies")
    func tampered() throws {
        let token = try JSONWebToken.sign(
            claims: ["iss": .string("TEAM")], header: ["kid": .string("K")], with: Self.key)
        let parts = token.split(separator: ".").map(String.init)
        let forged = [
            Self.segment(#"{"alg":"ES256","kid":"OTHER"}"#) + "." + parts[1] + "." + parts[2],
            parts[0] + "." + Self.segment(#"{"iss":"EVIL"}"#) + "." + parts[2],
        ]
        for text in forged {
            #expect(!(try JSONWebToken(parsing: text)).isSignatureValid(for: Self.key.publicKey))
        }
        var signature = try Base64URL.decode(parts[2])
        signature[63] ^= 1
        #expect(
            !(try JSONWebToken(parsing: parts[0] + "." + parts[1] + "." + Base64URL.encode(signature)))
                .isSignatureValid(for: Self.key.publicKey))
    }
}

@Suite("ChimeCrypto: keys, signatures, base64url", .testThreads)
struct KeyTests {
    @Test("a key pair round-trips through PKCS#8 PEM, SubjectPublicKeyInfo PEM and DER, and the raw point")
    func keyFormats() throws {
        let key = P256PrivateKey()
        let pem = key.pemRepresentation
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        let back = try P256PrivateKey(pemRepresentation: pem)
        #expect(back.publicKey == key.publicKey)
        let message = Array("message".utf8)
        #expect(key.publicKey.isValidSignature(try back.signature(for: message), for: message))

        let publicPEM = key.publicKey.pemRepresentation
        #expect(publicPEM.hasPrefix("-----BEGIN PUBLIC KEY-----\n"))
        #expect(try P256PublicKey(pemRepresentation: publicPEM) == key.publicKey)
        #expect(key.publicKey.derRepresentation.count == 91)
        #expect(try P256PublicKey(derRepresentation: key.publicKey.derRepresentation) == key.publicKey)
        #expect(key.publicKey.rawRepresentation.count == 65)
        #expect(try P256PublicKey(rawRepresentation: key.publicKey.rawRepresentation) == key.publicKey)
        #expect(P256PrivateKey().publicKey != key.publicKey)
    }

    @Test("keys that are not P-256 points or PEM are refused with what they are not")
    func badKeys() throws {
        var point = P256PrivateKey().publicKey.rawRepresentation
        point[64] ^= 1  // off the curve
        #expect(throws: ChimeError.self) { try P256PublicKey(rawRepresentation: point) }
        #expect(throws: ChimeError.self) { try P256PublicKey(rawRepresentation: Array(point.prefix(33))) }
        let error = #expect(throws: ChimeError.self) {
            try P256PrivateKey(pemRepresentation: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
        }
        #expect(error?.code == .malformedInput)
        #expect(throws: ChimeError.self) { try P256PublicKey(pemRepresentation: "not a key") }
        #expect(throws: ChimeError.self) {
            try P256PublicKey(derRepresentation: P256PrivateKey().publicKey.derRepresentation + [0])
        }
        // A public key where a private one is asked for.
        #expect(throws: ChimeError.self) {
            try P256PrivateKey(pemRepresentation: P256PrivateKey().publicKey.pemRepresentation)
        }
    }

    @Test("ECDSA signatures convert between r || s and DER, strictly")
    func signatureForms() throws {
        let key = P256PrivateKey()
        let message = Array("m".utf8)
        let der = try key.derSignature(for: message)
        #expect(key.publicKey.isValidSignature(der: der, for: message))
        let raw = try ECDSASignature.raw(fromDER: der)
        #expect(raw.count == 64)
        #expect(try ECDSASignature.der(fromRaw: raw) == der)
        #expect(key.publicKey.isValidSignature(raw, for: message))
        #expect(throws: ChimeError.self) { try ECDSASignature.raw(fromDER: der + [0]) }
        #expect(throws: ChimeError.self) { try ECDSASignature.der(fromRaw: Array(raw.prefix(63))) }
        #expect(!key.publicKey.isValidSignature(der, for: message))  // DER where r || s is expected
    }

    @Test("base64url: no padding, one spelling, named errors")
    func base64url() throws {
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
        #expect(try Base64URL.decode("-_8") == [0xfb, 0xff])
        #expect(Base64URL.encode([UInt8]()) == "")
        for length in 0..<40 {
            let bytes = SecureRandom.bytes(length)
            #expect(try Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
        for text in ["-_8=", "+/8", "a", "-_9", "ab cd", "é"] {
            let error = #expect(throws: ChimeError.self, "\(text)") { try Base64URL.decode(text, what: "the field") }
            #expect(error?.message.hasPrefix("the field") == true)
        }
    }

    @Test("ECDH agrees on one secret from either side; random bytes differ")
    func agreement() throws {
        let a = P256PrivateKey()
        let b = P256PrivateKey()
        #expect(try a.sharedSecret(with: b.publicKey) == b.sharedSecret(with: a.publicKey))
        #expect(SecureRandom.bytes(32) != SecureRandom.bytes(32))
    }

    @Test("Web Push: a message round-trips with padding, and one that does not fit a record is refused")
    func webPush() throws {
        let receiver = P256PrivateKey()
        let auth = SecureRandom.bytes(16)
        let body = try WebPushEncryption.encrypt(
            Array("hi".utf8), userAgentPublicKey: receiver.publicKey, authSecret: auth, padding: 30)
        #expect(
            try WebPushEncryption.decrypt(body, userAgentPrivateKey: receiver, authSecret: auth) == Array("hi".utf8))
        #expect(throws: ChimeError.self) {
            try WebPushEncryption.decrypt(body, userAgentPrivateKey: P256PrivateKey(), authSecret: auth)
        }
        let error = #expect(throws: ChimeError.self) {
            try WebPushEncryption.encrypt(
                [UInt8](repeating: 0, count: 4080), userAgentPublicKey: receiver.publicKey, authSecret: auth)
        }
        #expect(error?.code == .tooLarge)
        #expect(throws: ChimeError.self) {
            try WebPushEncryption.encrypt([], userAgentPublicKey: receiver.publicKey, authSecret: [1])
        }
    }
}
