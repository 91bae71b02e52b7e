import ChimeCore
import ChimeCrypto
import Foundation
import FuzzSupport

// Fuzz target: ES256 JSON Web Tokens (ChimeCrypto's JSONWebToken: APNs provider tokens, VAPID) and
// the APNs provider-token check (ProviderTokens, compiled from the server's own
// Sources/ChimeServer/API/ProviderTokens.swift through a symlink: it needs only ChimeCore and
// ChimeCrypto). Structure-aware: the first byte chooses how the rest becomes a token —
// - even: the rest is the token's text, as a provider sends it;
// - odd: the rest is NUL-separated parts, header JSON, claims JSON and signature bytes, which the
//   target encodes as base64url segments itself (so the fuzzer mutates JSON, not base64); with bit 1
//   set the segments are signed with the target's key (the first APNs key registered below), and a
//   fourth part, if any, then changes one byte of the finished token (its first byte the place, its
//   second the new byte).
// Bits 2-3 choose the push's topic (the key's app, the other team's app, or none). Checks:
// - a refusal is a ChimeError of `tooLarge`, `malformedInput` or `invalidValue` whose field names the
//   part at fault (`token…`), and only a token that a model of the format (three segments of
//   base64url in its one spelling, a JSON object with alg ES256, no crit, a kid only as a string and no b64 but true, a JSON
//   object, 64 bytes,
//   at most 4096 bytes) refuses is refused; the model's tokens are all accepted;
// - an accepted token's header and claims, printed again and re-encoded with its signature, read
//   back equal; its signing input is its first two segments;
// - a signature verifies only over what was signed: when the target signed, it verifies exactly when
//   the signing input is unchanged (and the signature is one of the key's);
// - ProviderTokens accepts a token only when it parses, names a registered key (kid) of its team
//   (iss), verifies with that key, has an iat from an hour ago to 5 minutes ahead and the topic is
//   the team's; each refusal is one of Apple's reasons with its status; every token meeting those
//   conditions is accepted, and again when sent a second time.

let now = Date(timeIntervalSince1970: 1_800_000_000)
let key: P256PrivateKey = {
    do {
        return try P256PrivateKey(
            pemRepresentation: """
                -----BEGIN PRIVATE KEY-----
                MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg29lZGQmNfuek0Pjn
                yP3msKiuTVGRjJu3fenmu0A3OsahRANCAASuqTU0zIUIFToM6sUAgN4IMkjEhGLM
                Ut7Cp6UAFXRwHsKtsATd4u9trjD7sl5+W2Uojxg8Hz0SY34B2HosEDqG
                -----END PRIVATE KEY-----
                """)
    } catch { fatalError("the target's key: \(error)") }
}()
let otherKey = P256PrivateKey()
/// Team TEAM123456 with key KEY1234567 (the target's key), team OTHERTEAM1 with key KEY7654321.
let apps: [AppRecord] = [
    ("com.example.team", "TEAM123456", "KEY1234567", key), ("com.example.other", "OTHERTEAM1", "KEY7654321", otherKey),
].map {
    var app = AppRecord(bundleIdentifier: $0.0, created: now, deviceToken: "00")
    app.apnsProvider = APNsProvider(teamID: $0.1, key: .init(id: $0.2, publicKey: $0.3.publicKey.rawRepresentation))
    return app
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJWT(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = fuzzBytes(start, count)
    guard let mode = bytes.first else { return 0 }
    let rest = bytes.dropFirst()
    var token: [UInt8]
    var signed: (input: [UInt8], signature: [UInt8])?
    if mode & 1 == 0 {
        token = Array(rest)
    } else {
        let parts = rest.split(separator: 0, maxSplits: 3, omittingEmptySubsequences: false).map(Array.init)
        let input = Array((Base64URL.encode(parts[0]) + "." + Base64URL.encode(parts.count > 1 ? parts[1] : [])).utf8)
        var signature = parts.count > 2 ? parts[2] : []
        if mode & 2 != 0 {
            do { signature = try key.signature(for: input) } catch { fatalError("signing failed: \(error)") }
            signed = (input, signature)
        }
        token = input + Array(("." + Base64URL.encode(signature)).utf8)
        if parts.count > 3, parts[3].count >= 2, !token.isEmpty {
            token[Int(parts[3][0]) % token.count] = parts[3][1]
        }
    }
    let text = String(decoding: token, as: UTF8.self)
    let parsed = checkParsing(text, signed: signed)
    let topic: AppRecord? =
        switch (mode >> 2) & 3 {
        case 0, 1: apps[0]
        case 2: apps[1]
        default: nil
        }
    checkProviderToken(text, parsed: parsed, topic: topic)
    return 0
}

/// What a token must be, written apart from JSONWebToken: nil when it is one, else why not.
func modelRefusal(_ text: String) -> String? {
    let bytes = Array(text.utf8)
    guard bytes.count <= JSONWebToken.maximumLength else { return "too long" }
    let segments = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map {
        String(decoding: $0, as: UTF8.self)
    }
    guard segments.count == 3, segments.allSatisfy({ !$0.isEmpty }) else { return "not three segments" }
    guard let header = try? Base64URL.decode(segments[0]), let claims = try? Base64URL.decode(segments[1]),
        let signature = try? Base64URL.decode(segments[2])
    else { return "not base64url" }
    guard case .object(let fields)? = try? JSONValue.parse(header, maxDepth: 16) else { return "header not an object" }
    guard case .object? = try? JSONValue.parse(claims, maxDepth: 16) else { return "claims not an object" }
    guard fields["alg"] == .string("ES256") else { return "alg" }
    guard fields["crit"] == nil else { return "crit" }
    switch fields["kid"] {
    case nil, .string?: break
    default: return "kid"
    }
    guard fields["b64"] == nil || fields["b64"] == .bool(true) else { return "b64" }
    guard signature.count == 64 else { return "signature length" }
    return nil
}

func checkParsing(_ text: String, signed: (input: [UInt8], signature: [UInt8])?) -> JSONWebToken? {
    let model = modelRefusal(text)
    let token: JSONWebToken
    do {
        token = try JSONWebToken(parsing: text)
    } catch {
        require(
            [.tooLarge, .malformedInput, .invalidValue].contains(error.code),
            "a refusal with code \(error.code): \(error)")
        require(
            error.field?.hasPrefix("token") == true && !error.message.isEmpty, "a refusal without its field: \(error)")
        require(model != nil, "a token the model accepts was refused: \(error) — \(text.debugDescription)")
        return nil
    }
    require(model == nil, "a token the model refuses (\(model ?? "")) was accepted: \(text.debugDescription)")
    require(
        token.header["alg"] == .string("ES256") && token.header["crit"] == nil && token.signature.count == 64,
        "accepted with header \(token.header), \(token.signature.count)-byte signature")
    let firstTwo = text.utf8.split(separator: UInt8(ascii: "."), maxSplits: 2, omittingEmptySubsequences: false).prefix(
        2)
    require(
        token.signingInput == Array(firstTwo[0]) + [UInt8(ascii: ".")] + Array(firstTwo[1]),
        "the signing input is not the first two segments")
    // Printed again and re-encoded, with the same signature: the same token.
    let again =
        Base64URL.encode(JSONValue.object(token.header).serializedBytes()) + "."
        + Base64URL.encode(JSONValue.object(token.claims).serializedBytes())
        + "." + Base64URL.encode(token.signature)
    do {
        let reread = try JSONWebToken(parsing: again)
        require(
            reread.header == token.header && reread.claims == token.claims && reread.signature == token.signature,
            "re-encoded, the token reads differently")
    } catch {
        fatalError("re-encoded, the token is refused: \(error)")
    }
    let valid = token.isSignatureValid(for: key.publicKey)
    if valid { require((try? token.verify(with: key.publicKey)) != nil, "isSignatureValid and verify disagree") }
    if let signed {
        if token.signingInput == signed.input && token.signature == signed.signature {
            require(valid, "the key's own signature does not verify")
        } else if token.signingInput != signed.input {
            require(!valid, "a signature verifies over a signing input it was not made for")
        }
    }
    do {
        try token.verify(with: otherKey.publicKey)
        fatalError("a token verifies with a key that never signed anything")
    } catch {
        require(error.code == .notPermitted && error.field == "token.signature", "verify refused with \(error)")
    }
    return token
}

/// The model's reading of an `iat` sent as a string (kalyke-apns does): 1 to 12 ASCII digits, as
/// a number; anything else is no `iat`.
func digitsIssuedAt(_ token: JSONWebToken) -> Int64? {
    guard let text = token.string("iat"), !text.isEmpty, text.unicodeScalars.count <= 12,
        text.unicodeScalars.allSatisfy({ $0.value >= 48 && $0.value <= 57 })
    else { return nil }
    return Int64(text)
}

func checkProviderToken(_ text: String, parsed: JSONWebToken?, topic: AppRecord?) {
    // The conditions, apart from ProviderTokens: nil when the token must be accepted.
    var expected: String? = "InvalidProviderToken"
    if let parsed, let kid = parsed.keyID, let iss = parsed.string("iss"),
        let iat = parsed.seconds("iat") ?? digitsIssuedAt(parsed),
        let app = apps.first(where: { $0.apnsProvider?.key?.id == kid }), let provider = app.apnsProvider,
        provider.teamID == iss, let publicKey = try? P256PublicKey(rawRepresentation: provider.key!.publicKey),
        parsed.isSignatureValid(for: publicKey)
    {
        let age = now.timeIntervalSince1970 - TimeInterval(iat)
        if age > 3600 {
            expected = "ExpiredProviderToken"
        } else if age < -300 {
            expected = "InvalidProviderToken"
        } else if let topic,
            topic.apnsProvider?.teamID != iss
        {
            expected = "TopicDisallowed"
        } else {
            expected = nil
        }
    }
    let tokens = ProviderTokens()
    for attempt in 1...(expected == nil ? 2 : 1) {
        let outcome = blocking { () async -> ProviderTokens.Refusal? in
            do {
                try await tokens.check(
                    text, topic: topic, now: now,
                    providers: { id in apps.compactMap(\.apnsProvider).filter { $0.key?.id == id } })
                return nil
            } catch let refusal as ProviderTokens.Refusal {
                return refusal
            } catch {
                fatalError("ProviderTokens threw \(type(of: error)): \(error)")
            }
        }
        if let outcome {
            let statuses = [
                "InvalidProviderToken": 403, "ExpiredProviderToken": 403, "TopicDisallowed": 400,
                "TooManyProviderTokenUpdates": 429,
            ]
            require(statuses[outcome.reason] == outcome.status && !outcome.message.isEmpty, "refused with \(outcome)")
            require(
                outcome.reason == expected,
                "attempt \(attempt): refused as \(outcome.reason), expected \(expected ?? "acceptance"): \(outcome.message)"
            )
        } else {
            require(
                expected == nil, "attempt \(attempt): accepted, expected \(expected ?? ""): \(text.debugDescription)")
        }
    }
}
