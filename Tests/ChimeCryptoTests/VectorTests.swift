import ChimeCore
import ChimeCrypto
import TestThreads
import Testing

/// Published test vectors, each value as the document gives it.
@Suite("ChimeCrypto: published test vectors", .testThreads)
struct VectorTests {
    static func hex(_ text: String) throws -> [UInt8] {
        try #require([UInt8](hexadecimal: text.filter { !$0.isWhitespace }))
    }
    static func b64(_ text: String) throws -> [UInt8] { try Base64URL.decode(text) }

    // RFC 7515 appendix A.3: the ES256 example. ECDSA signatures are randomized, so the example's
    // signature is verified, and one of ours over the same input is verified too.
    static let a3Input =
        "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
    static let a3Signature = "DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
    static let a3X = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"
    static let a3Y = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"
    static let a3D = "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"

    @Test("RFC 7515 A.3: the example's ES256 signature verifies with the example's key, and a changed one does not")
    func rfc7515() throws {
        let key = try P256PublicKey(rawRepresentation: [4] + (try Self.b64(Self.a3X)) + (try Self.b64(Self.a3Y)))
        let token = try JSONWebToken(parsing: Self.a3Input + "." + Self.a3Signature)
        #expect(token.isSignatureValid(for: key))
        #expect(token.string("iss") == "joe")
        #expect(token.seconds("exp") == 1_300_819_380)
        #expect(token.claims["http://example.com/is_root"] == .bool(true))

        var changed = try Self.b64(Self.a3Signature)
        changed[10] ^= 1
        #expect(!key.isValidSignature(changed, for: Array(Self.a3Input.utf8)))
        #expect(!key.isValidSignature(try Self.b64(Self.a3Signature), for: Array((Self.a3Input + "x").utf8)))

        // The example's private key signs what its public key verifies.
        let privateKey = try P256PrivateKey(rawRepresentation: try Self.b64(Self.a3D), publicKey: key.rawRepresentation)
        #expect(privateKey.publicKey == key)
        let ours = try privateKey.signature(for: Array(Self.a3Input.utf8))
        #expect(ours.count == 64)
        #expect(key.isValidSignature(ours, for: Array(Self.a3Input.utf8)))
    }

    @Test("RFC 5869 test case 1: HKDF-SHA256 gives the published OKM")
    func rfc5869() throws {
        let okm = try HKDF.sha256(
            key: [UInt8](repeating: 0x0b, count: 22), salt: try Self.hex("000102030405060708090a0b0c"),
            info: try Self.hex("f0f1f2f3f4f5f6f7f8f9"), length: 42)
        #expect(
            okm.hexadecimal == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    }

    struct GCMCase: Sendable, CustomTestStringConvertible {
        var name: String, key: String, nonce: String, plaintext: String, aad: String, ciphertext: String, tag: String
        var testDescription: String { name }
    }

    // McGrew and Viega, "The Galois/Counter Mode of Operation (GCM)", appendix B, test cases 2-4.
    static let gcmCases = [
        GCMCase(
            name: "GCM test case 2", key: "00000000000000000000000000000000", nonce: "000000000000000000000000",
            plaintext: "00000000000000000000000000000000", aad: "",
            ciphertext: "0388dace60b6a392f328c2b971b2fe78", tag: "ab6e47d42cec13bdf53a67b21257bddf"),
        GCMCase(
            name: "GCM test case 3", key: "feffe9928665731c6d6a8f9467308308", nonce: "cafebabefacedbaddecaf888",
            plaintext:
                "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
            aad: "",
            ciphertext:
                "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985",
            tag: "4d5c2af327cd64a62cf35abd2ba6fab4"),
        GCMCase(
            name: "GCM test case 4", key: "feffe9928665731c6d6a8f9467308308", nonce: "cafebabefacedbaddecaf888",
            plaintext:
                "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
            aad: "feedfacedeadbeeffeedfacedeadbeefabaddad2",
            ciphertext:
                "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
            tag: "5bc94fbc3221a5db94fae95ae7121a47"),
    ]

    @Test("AES-128-GCM seals and opens the GCM specification's test cases", arguments: gcmCases)
    func gcm(_ vector: GCMCase) throws {
        let key = try Self.hex(vector.key)
        let nonce = try Self.hex(vector.nonce)
        let aad = try Self.hex(vector.aad)
        let sealed = try AES128GCM.seal(try Self.hex(vector.plaintext), key: key, nonce: nonce, authenticating: aad)
        #expect(sealed.hexadecimal == vector.ciphertext + vector.tag)
        #expect(try AES128GCM.open(sealed, key: key, nonce: nonce, authenticating: aad).hexadecimal == vector.plaintext)
        var changed = sealed
        changed[changed.count - 1] ^= 0x80
        let error = #expect(throws: ChimeError.self) {
            try AES128GCM.open(changed, key: key, nonce: nonce, authenticating: aad)
        }
        #expect(error?.code == .notPermitted)
        #expect(throws: ChimeError.self) {
            try AES128GCM.open(sealed, key: key, nonce: nonce, authenticating: aad + [0])
        }
    }

    // RFC 8291 appendix A: the Web Push encryption example.
    static let plaintext = "When I grow up, I want to be a watermelon"
    static let authSecret = "BTBZMqHH6r4Tts7J_aSIgg"
    static let uaPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
    static let uaPublic = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let asPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
    static let asPublic = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
    static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
    static let body =
        "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"

    @Test("RFC 8291 appendix A: the same ECDH secret, CEK, nonce and message from the example's keys and salt")
    func rfc8291() throws {
        let userAgent = try P256PublicKey(rawRepresentation: try Self.b64(Self.uaPublic))
        let server = try P256PrivateKey(
            rawRepresentation: try Self.b64(Self.asPrivate), publicKey: try Self.b64(Self.asPublic))
        let secret = try server.sharedSecret(with: userAgent)
        let keys = try WebPushEncryption.keys(
            sharedSecret: secret, userAgentPublicKey: userAgent, applicationServerPublicKey: server.publicKey,
            authSecret: try Self.b64(Self.authSecret), salt: try Self.b64(Self.salt))
        #expect(Base64URL.encode(keys.sharedSecret) == "kyrL1jIIOHEzg3sM2ZWRHDRB62YACZhhSlknJ672kSs")
        #expect(Base64URL.encode(keys.inputKeyingMaterial) == "S4lYMb_L0FxCeq0WhDx813KgSYqU26kOyzWUdsXYyrg")
        #expect(Base64URL.encode(keys.contentEncryptionKey) == "oIhVW04MRdy2XN9CiKLxTg")
        #expect(Base64URL.encode(keys.nonce) == "4h_95klXJ5E_qnoN")

        let body = try WebPushEncryption.encrypt(
            Array(Self.plaintext.utf8), userAgentPublicKey: userAgent,
            authSecret: try Self.b64(Self.authSecret), ephemeralKey: server, salt: try Self.b64(Self.salt))
        #expect(Base64URL.encode(body) == Self.body)

        // And the user agent's side reads it back.
        let receiver = try P256PrivateKey(
            rawRepresentation: try Self.b64(Self.uaPrivate), publicKey: try Self.b64(Self.uaPublic))
        #expect(try receiver.sharedSecret(with: server.publicKey) == secret)
        let opened = try WebPushEncryption.decrypt(
            try Self.b64(Self.body), userAgentPrivateKey: receiver, authSecret: try Self.b64(Self.authSecret))
        #expect(String(decoding: opened, as: UTF8.self) == Self.plaintext)
    }

    @Test("SHA-256 of the FIPS 180-2 examples")
    func sha256() {
        #expect(
            Digest.sha256(Array("abc".utf8)).hexadecimal
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            Digest.sha256([UInt8]()).hexadecimal == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            Digest.sha256Hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            Digest.sha256Hex(Array(repeating: UInt8(ascii: "a"), count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}
