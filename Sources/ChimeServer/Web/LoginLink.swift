import ChimeCore
import Foundation

/// A one-time sign-in link as `POST /v1/session/links` answers it: the code, the path that signs in
/// with it (`/#login=CODE`, to put after the address the center is open at), when it expires, and,
/// when the link was asked for with that address, the whole link and its QR code. The service
/// writes it with ``json``; `chime open` reads the answer with ``init(json:)``. Field names:
/// ``JSONFieldName/LoginLink``.
///
/// ```swift
/// let link = try LoginLink(json: try await client.send(.createLoginLink).json ?? .null)
/// print("https://chime.example.org" + link.path, "until", link.expires)
/// ```
public struct LoginLink: Sendable, Hashable {
    public var code: String
    /// `/#login=CODE`.
    public var path: String
    public var expires: Date
    /// The whole link and its QR code (SVG), when asked for with the center's address.
    public var url: String?
    public var qrSVG: String?

    /// The link for `code`; with `base` (the center's address, without a trailing `/`), the whole
    /// link and its QR code too.
    public init(code: String, expires: Date, base: String? = nil) throws {
        self.code = code
        self.path = "/#login=\(code)"
        self.expires = expires
        if let base {
            url = base + path
            qrSVG = try QRCode(base + path).svg()
        }
    }

    /// `{"code", "path", "expires"}`, and `url` and `qrSVG` when made with a base.
    public var json: JSONValue {
        typealias Field = JSONFieldName.LoginLink
        var object: JSONObject = [
            Field.code: .string(code), Field.path: .string(path), Field.expires: JSONMapping.json(expires),
        ]
        if let url { object[Field.url] = .string(url) }
        if let qrSVG { object[Field.qrSVG] = .string(qrSVG) }
        return .object(object)
    }

    /// The service's answer (``json``); members a later service adds are ignored.
    ///
    /// - Throws: ``ChimeError`` `malformedInput` naming the member that is missing or not of its kind.
    public init(json: JSONValue) throws(ChimeError) {
        typealias Field = JSONFieldName.LoginLink
        let reader = try JSONObjectReader(json, path: "", what: "a sign-in link", code: .malformedInput)
        code = try reader.requiredString(Field.code, code: .malformedInput)
        path = try reader.requiredString(Field.path, code: .malformedInput)
        expires = try reader.requiredAnswerDate(Field.expires)
        url = try reader.string(Field.url, code: .malformedInput)
        qrSVG = try reader.string(Field.qrSVG, code: .malformedInput)
    }
}
