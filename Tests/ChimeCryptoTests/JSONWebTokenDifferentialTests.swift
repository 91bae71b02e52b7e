import ChimeCore
import ChimeCrypto
import CryptoInterop
import Foundation
import TestThreads
import Testing

/// Chime's JWT reading and verification held to PyJWT's (Tests/Support/CryptoInterop/interop.py
/// `verify-jwts`): generated and mutated ES256 tokens — headers and claims of every shape, signed
/// with the key PyJWT verifies with, then characters changed, dropped, added, segments swapped,
/// padding, other spellings of base64url — must be accepted by both or refused by both, and an
/// accepted token must read as the same header and claims.
///
/// Where Chime is stricter than PyJWT by design, a refusal by Chime alone is allowed and counted
/// (printed): base64url in any but its one spelling (PyJWT pads and drops characters outside the
/// alphabet), JSON that RFC 8259 does not allow or that names a member twice (PyJWT's `json` takes
/// NaN, Infinity, lone surrogates, the last of two equal names), nesting past 16 levels, and `crit`
/// (PyJWT knows `b64`). Chime accepting a token PyJWT refuses is always a failure.
///
/// Runs 600 cases in the suite; `CHIME_DIFFERENTIAL_CASES=N CHIME_DIFFERENTIAL_SEED=S` makes more
/// (scripts/fuzz-differential.sh).
@Suite("JWTs against PyJWT, on generated and mutated tokens", .testThreads)
struct JSONWebTokenDifferentialTests {
    static let environment = ProcessInfo.processInfo.environment
    static let count = Int(environment["CHIME_DIFFERENTIAL_CASES"] ?? "") ?? 600
    static let seed = UInt64(environment["CHIME_DIFFERENTIAL_SEED"] ?? "") ?? 0x4A57_2026

    /// The same tokens for the same seed.
    struct Generator {
        var random: SplitMix64
        mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
        mutating func chance(_ percent: Int) -> Bool { int(1...100) <= percent }
        mutating func pick<T>(_ values: [T]) -> T { values[int(0...values.count - 1)] }
    }

    static let headers = [
        #"{"alg":"ES256","kid":"KEY1234567"}"#, #"{"alg":"ES256"}"#, #"{"alg":"ES256","typ":"JWT"}"#,
        #"{"kid":"K","alg":"ES256"}"#,
        #"{"alg":"none"}"#, #"{"alg":"HS256"}"#, #"{"alg":"es256"}"#, #"{"alg":"ES384"}"#, #"{"alg":null}"#,
        #"{"alg":["ES256"]}"#, "{}",
        #"{"alg":"ES256","crit":["exp"]}"#, #"{"alg":"ES256","crit":["b64"],"b64":true}"#, #"{"alg":"ES256","kid":5}"#,
        #"{"alg":"ES256","kid":null}"#, #"{"alg":"ES256","alg":"ES256"}"#, #"{"alg":"none","alg":"ES256"}"#,
        #"{"alg":"ES256","alg":"none"}"#,
        #"{"alg":"ES\u0032\u00356"}"#, #"{"alg":"ES256","x":NaN}"#, #"{"alg":"ES256","x":"\ud800"}"#,
        #"{"alg":"ES256","x":1e999}"#,
        #"["ES256"]"#, #""ES256""#, "null", #"{"alg":"ES256"} "#, #" {"alg":"ES256"}"#, #"{"alg":"ES256"}x"#,
        "{\"alg\":\"ES256\"}\n",
        "\u{FEFF}{\"alg\":\"ES256\"}", #"{"alg":"ES256","x":01}"#,
        #"{"alg":"ES256","x":[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]}"#,
        #"{"alg":"ES256","b64":false}"#, #"{'alg':'ES256'}"#, #"{"alg":"ES256",}"#,
    ]
    static let claims = [
        #"{"iss":"TEAM123456","iat":1800000000}"#, "{}", #"{"iss":"T","iat":1.5}"#, #"{"iat":"1800000000"}"#,
        #"{"exp":1}"#,
        #"{"sub":"mailto:a@example.com","aud":"https://push.example.net","exp":1800003600}"#, #"["iss"]"#, "7",
        #""claims""#,
        #"{"iss":"T","iss":"U"}"#, #"{"x":NaN}"#, #"{"x":"\udc00"}"#, #"{"x":"é\u00e9"}"#, #"{"x":-0}"#,
        #"{"x":12345678901234567890}"#,
        #"{"x":[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]}"#, "", "{\"x\":\"\u{7F}\"}", #"{"nbf":9999999999}"#,
    ]

    /// A token: usually signed, then often changed in one place.
    static func token(_ g: inout Generator, key: P256PrivateKey) throws -> String {
        let header = g.pick(headers)
        let claims = g.pick(claims)
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        var signature =
            g.chance(90) ? try key.signature(for: Array(input.utf8)) : SecureRandom.bytes(g.pick([64, 63, 0, 70]))
        if g.chance(3) { signature = try key.derSignature(for: Array(input.utf8)) }
        var token = Array((input + "." + Base64URL.encode(signature)).utf8)
        guard g.chance(70) else { return String(decoding: token, as: UTF8.self) }
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        let at = g.int(0...max(0, token.count - 1))
        switch g.int(0...9) {
        case 0: token[at] = g.pick(alphabet)  // one character changed
        case 1: token.remove(at: at)  // one dropped
        case 2: token.insert(g.pick(alphabet + Array("=.+/ \n%*".utf8)), at: at)  // one added
        case 3: token += Array(g.pick(["=", "==", ".", "\n", " ", "A"]).utf8)  // something after
        case 4:  // the signature in another spelling: last character's unused bits
            if let last = token.last, let index = alphabet.firstIndex(of: last) {
                token[token.count - 1] = alphabet[index ^ g.int(1...3)]
            }
        case 5: token = Array(token.prefix(at))  // cut short
        case 6:  // a segment in standard base64, or padded
            let text = String(decoding: token, as: UTF8.self).split(separator: ".", omittingEmptySubsequences: false)
                .map(String.init)
            let which = g.int(0...max(0, text.count - 1))
            var parts = text
            parts[which] =
                g.chance(50)
                ? parts[which].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
                : parts[which] + String(repeating: "=", count: (4 - parts[which].count % 4) % 4)
            token = Array(parts.joined(separator: ".").utf8)
        case 7:  // segments swapped or repeated
            let parts = String(decoding: token, as: UTF8.self).split(separator: ".", omittingEmptySubsequences: false)
                .map(String.init)
            token = Array(
                g.pick([
                    parts.reversed(), parts + [parts.last ?? ""], Array(parts.prefix(2)),
                    [parts[0], parts[0]] + parts.dropFirst(1),
                ])
                .joined(separator: ".").utf8)
        case 8: token[at] ^= 0x20  // case flipped
        default: break  // unchanged
        }
        return String(decoding: token, as: UTF8.self)
    }

    /// Chime's answer: nil when accepted and verified, else the refusal.
    static func chime(_ token: String, _ key: P256PublicKey) -> (token: JSONWebToken?, error: ChimeError?) {
        do {
            let parsed = try JSONWebToken(parsing: token)
            try parsed.verify(with: key)
            return (parsed, nil)
        } catch {
            return (nil, error)
        }
    }

    /// A refusal by Chime alone that is Chime being stricter on purpose (see the suite's comment).
    static func stricter(_ token: String, _ error: ChimeError) -> String? {
        let message = error.message
        if message.contains("not base64url") { return "base64url spelling" }
        if error.field == "token.header.crit" { return "crit" }
        if message.contains("is not JSON") {
            if message.contains("twice") || message.contains("duplicate") { return "a member named twice" }
            if message.contains("deep") || message.contains("nest") { return "nesting past 16" }
            return "JSON that RFC 8259 does not allow"
        }
        return nil
    }

    @Test("generated and mutated tokens: accepted by both or refused by both, and read the same")
    func againstPyJWT() async throws {
        let key = P256PrivateKey()
        var generator = Generator(random: SplitMix64(seed: Self.seed))
        var tokens: [String] = []
        for _ in 0..<Self.count { tokens.append(try Self.token(&generator, key: key)) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-jwt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("tokens.json")
        try Data(JSONValue.array(tokens.map { .string($0) }).serialized().utf8).write(to: file)
        let answer = try await Interop.run("verify-jwts", key.publicKey.pemRepresentation, file.path)
        guard case .array(let theirs)? = answer["results"] else {
            Issue.record("no results: \(answer)")
            return
        }
        try #require(theirs.count == tokens.count)

        var bothAccepted = 0
        var bothRefused = 0
        var allowed: [String: Int] = [:]
        var failures: [String] = []
        for (token, their) in zip(tokens, theirs) {
            let ours = Self.chime(token, key.publicKey)
            let pyjwtAccepted = their["ok"] == .bool(true)
            switch (ours.token, pyjwtAccepted) {
            case (let parsed?, true):
                bothAccepted += 1
                // The same header and claims (PyJWT's printed by Python's json, read back here).
                func object(_ name: String) -> JSONObject? {
                    guard let text = their[name]?.text, case .object(let object)? = try? JSONValue.parse(text) else {
                        return nil
                    }
                    return object
                }
                let header = object("header")
                let claims = object("claims")
                if header != parsed.header || claims != parsed.claims {
                    failures.append(
                        "read differently: \(token)\n  Chime \(parsed.header) \(parsed.claims)\n  PyJWT \(their)")
                }
            case (nil, false):
                bothRefused += 1
            case (_?, false):
                failures.append("Chime accepted, PyJWT refused (\(their["error"]?.text ?? "")): \(token)")
            case (nil, true):
                if let error = ours.error, let reason = Self.stricter(token, error) {
                    allowed[reason, default: 0] += 1
                } else {
                    failures.append("PyJWT accepted, Chime refused (\(ours.error?.message ?? "")): \(token)")
                }
            }
        }
        print(
            "jwt differential (seed \(Self.seed)): \(tokens.count) tokens, \(bothAccepted) accepted by both, \(bothRefused) refused by both; "
                + "refused by Chime alone, by design: \(allowed.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))"
        )
        // About 5% are accepted by both (1,032 of 20,000 from one seed); fewer than 2% would mean the generator broke.
        #expect(bothAccepted > tokens.count / 50, "too few accepted tokens to compare: \(bothAccepted)")
        #expect(failures.isEmpty, "\(failures.count) differences:\n\(failures.prefix(12).joined(separator: "\n"))")
    }
}
