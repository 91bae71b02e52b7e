import ChimeCore

/// A JSON Web Token signed with ES256 (a compact JWS: `header.claims.signature`, RFC 7515/7519):
/// APNs provider tokens and VAPID.
///
/// Parsing checks the form and the algorithm; ``verify(with:)`` checks the signature, after the
/// caller has chosen the key (often by the header's `kid`). Only `alg: ES256` is accepted — an
/// unsigned token (`none`), HMAC or RSA algorithms, a `crit` header, a `kid` that is not a string, a `b64` other than `true`
/// (RFC 7797's unencoded payload), malformed segments, bad
/// base64url and tokens over ``maximumLength`` are refused with a ``ChimeError`` naming what: its
/// field is the part at fault (`token`, `token.header`, `token.header.alg`, `token.header.crit`, `token.header.kid`, `token.header.b64`,
/// `token.claims`, `token.signature`).
///
/// ```swift
/// let token = try JSONWebToken.sign(claims: ["iss": "TEAMID", "iat": .integer(now)], header: ["kid": "KEYID"], with: key)
/// let parsed = try JSONWebToken(parsing: token)
/// try parsed.verify(with: key.publicKey)
/// print(parsed.keyID ?? "", parsed.claims["iss"] ?? .null)
/// ```
public struct JSONWebToken: Sendable, Hashable {
    /// The longest token accepted: far over any provider token (about 200 bytes) or VAPID JWT.
    public static let maximumLength = 4096

    /// The protected header (`alg` is `ES256`).
    public let header: JSONObject
    /// The claims.
    public let claims: JSONObject
    /// The bytes the signature covers: the first two segments as sent, with their `.`.
    public let signingInput: [UInt8]
    /// The signature, raw `r || s` (64 bytes).
    public let signature: [UInt8]

    /// The header's `kid`, when it is a string.
    public var keyID: String? { if case .string(let id)? = header["kid"] { id } else { nil } }

    /// A string claim (`iss`, `sub`, `aud`), when it is one.
    public func string(_ claim: String) -> String? { if case .string(let text)? = claims[claim] { text } else { nil } }

    /// A NumericDate claim (`iat`, `exp`) in whole seconds, when it is a number.
    public func seconds(_ claim: String) -> Int64? {
        switch claims[claim] {
        case .integer(let value)?: value
        case .number(let value)? where value.isFinite && abs(value) < 1e15: Int64(value.rounded(.down))
        default: nil
        }
    }

    /// Reads a compact token, checking its form and that its algorithm is ES256. The signature is
    /// not checked yet: see ``verify(with:)``.
    ///
    /// - Throws: ``ChimeError`` `tooLarge` over `maximumLength` bytes; `malformedInput` for a token
    ///   that is not three base64url segments of a JSON object, a JSON object and 64 bytes;
    ///   `invalidValue` for an algorithm other than ES256, a `crit` header, a `kid` that is not a
    ///   string or a `b64` other than `true`.
    public init(parsing token: some StringProtocol, maximumLength: Int = JSONWebToken.maximumLength) throws(ChimeError)
    {
        let bytes = Array(token.utf8)
        guard bytes.count <= maximumLength else {
            throw ChimeError(
                .tooLarge, field: "token", "the token is \(bytes.count) bytes; at most \(maximumLength) are accepted")
        }
        let segments = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard segments.count == 3 else {
            throw ChimeError(
                .malformedInput, field: "token",
                "a JWT is three base64url segments joined by '.' (header.claims.signature); this has \(segments.count)")
        }
        for (segment, name) in zip(segments, ["header", "claims", "signature"]) where segment.isEmpty {
            throw ChimeError(.malformedInput, field: "token.\(name)", "the token's \(name) segment is empty")
        }
        let header = try Self.object(segments[0], "header")
        switch header["alg"] {
        case .string("ES256")?: break
        case .string(let other)? where other.lowercased() == "none":
            throw ChimeError(
                .invalidValue, field: "token.header.alg", "the token is unsigned (alg \(other)); only ES256 is accepted"
            )
        case .string(let other)?:
            throw ChimeError(
                .invalidValue, field: "token.header.alg",
                "the token's alg is \(other.prefix(20)); only ES256 is accepted")
        case let other?:
            throw ChimeError(
                .invalidValue, field: "token.header.alg",
                "the token's alg is \(other.kindDescription), not the string ES256")
        case nil:
            throw ChimeError(
                .invalidValue, field: "token.header.alg", "the token's header has no alg; only ES256 is accepted")
        }
        if header["crit"] != nil {
            throw ChimeError(
                .invalidValue, field: "token.header.crit",
                "the token's header has crit (extensions that must be understood); none are supported")
        }
        switch header["kid"] {
        case nil, .string?: break
        case let other?:
            throw ChimeError(
                .invalidValue, field: "token.header.kid",
                "the token's kid is \(other.kindDescription); a key id is a string (RFC 7515)")
        }
        // RFC 7797's unencoded payload: the claims would not be the base64url segment read below.
        if let b64 = header["b64"], b64 != .bool(true) {
            throw ChimeError(
                .invalidValue, field: "token.header.b64",
                "the token's header has b64: \(b64 == .bool(false) ? "false" : b64.kindDescription) (RFC 7797's unencoded payload), which a JWT does not use; leave b64 out"
            )
        }
        self.header = header
        self.claims = try Self.object(segments[1], "claims")
        self.signature = try Self.decode(segments[2], "signature")
        guard signature.count == 64 else {
            throw ChimeError(
                .malformedInput, field: "token.signature",
                "an ES256 signature is 64 bytes (r || s), the token's is \(signature.count)")
        }
        self.signingInput = Array(bytes[..<segments[1].endIndex])
    }

    private static func object(_ segment: ArraySlice<UInt8>, _ name: String) throws(ChimeError) -> JSONObject {
        let decoded = try decode(segment, name)
        let value: JSONValue
        do {
            value = try JSONValue.parse(decoded, maxDepth: 16)
        } catch {
            throw ChimeError(
                .malformedInput, field: "token.\(name)", "the token's \(name) is not JSON: \(error.message)")
        }
        guard case .object(let object) = value else {
            throw ChimeError(
                .malformedInput, field: "token.\(name)",
                "the token's \(name) is \(value.kindDescription), not a JSON object")
        }
        return object
    }

    /// A segment's bytes; a refusal names the segment (`token.header`).
    private static func decode(_ segment: ArraySlice<UInt8>, _ name: String) throws(ChimeError) -> [UInt8] {
        do {
            return try Base64URL.decode(String(decoding: segment, as: UTF8.self), what: "the token's \(name)")
        } catch {
            throw ChimeError(error.code, field: "token.\(name)", error.message)
        }
    }

    /// Whether the signature is `key`'s.
    public func isSignatureValid(for key: P256PublicKey) -> Bool {
        key.isValidSignature(signature, for: signingInput)
    }

    /// Checks the signature with `key`.
    ///
    /// - Throws: ``ChimeError`` `notPermitted` when it is not `key`'s signature of the token.
    public func verify(with key: P256PublicKey) throws(ChimeError) {
        guard isSignatureValid(for: key) else {
            throw ChimeError(
                .notPermitted, field: "token.signature", "the token's signature does not verify with the registered key"
            )
        }
    }

    /// A signed compact token: the header is `{"alg":"ES256"}` with `header`'s members after it
    /// (a `kid`, a `typ`), the claims as given.
    ///
    /// - Throws: ``ChimeError`` `invalidValue` for a header with `crit` (``init(parsing:)`` would
    ///   refuse the token).
    public static func sign(claims: JSONObject, header: JSONObject = [:], with key: P256PrivateKey) throws(ChimeError)
        -> String
    {
        if header["crit"] != nil {
            throw ChimeError(
                .invalidValue, field: "header.crit",
                "a token with crit would be refused when read; no extensions are supported")
        }
        var protected: JSONObject = ["alg": .string("ES256")]
        for (name, value) in header where name != "alg" { protected[name] = value }
        let input =
            Base64URL.encode(JSONValue.object(protected).serializedBytes()) + "."
            + Base64URL.encode(JSONValue.object(claims).serializedBytes())
        return input + "." + Base64URL.encode(try key.signature(for: Array(input.utf8)))
    }
}
