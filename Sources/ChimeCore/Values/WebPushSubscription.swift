import Foundation

/// A browser or phone that receives Web Push for the web center: the push service's endpoint and
/// the subscriber's keys (RFC 8291), what the owner named it, which apps it gets, and how sending
/// to it went last.
///
/// Registered from the browser's `PushSubscription.toJSON()` (``WebPushRegistration/decode(_:endpoints:)``),
/// kept in the store, listed by `GET /v1/web-push/subscriptions` and `chime devices`.
///
/// ```swift
/// let registration = try WebPushRegistration.decode(try JSONValue.parse(body), endpoints: .publicServicesOnly)
/// let stored = try await engine.registerWebPushSubscription(registration, userAgent: "Firefox", date: .now)
/// print(stored.id, stored.endpoint)
/// ```
public struct WebPushSubscription: Sendable, Hashable {
    /// Chime's id for it (random, URL-safe; stays the same when the browser registers the same
    /// endpoint again).
    public var id: String
    /// The push service URL the browser was given (RFC 8030 §5); pushes are POSTed to it.
    public var endpoint: String
    /// The subscriber's P-256 public key, uncompressed (65 bytes): `keys.p256dh`.
    public var p256dh: [UInt8]
    /// The subscriber's authentication secret (16 bytes): `keys.auth`.
    public var auth: [UInt8]
    /// The apps whose notifications it gets; `nil`: every app.
    public var apps: [String]?
    /// What the owner calls it ("Anna's phone"); empty when unnamed.
    public var name: String
    /// The browser's `User-Agent` when it registered.
    public var userAgent: String
    /// When it was first registered.
    public var created: Date
    /// When the push service last accepted a push for it.
    public var lastSuccess: Date?
    /// When a push for it last failed, and why.
    public var lastFailure: Date?
    public var lastFailureReason: String?
    /// When the browser said the subscription expires (`expirationTime`), if it did.
    public var expires: Date?

    public init(
        id: String, endpoint: String, p256dh: [UInt8], auth: [UInt8], apps: [String]? = nil, name: String = "",
        userAgent: String = "",
        created: Date, lastSuccess: Date? = nil, lastFailure: Date? = nil, lastFailureReason: String? = nil,
        expires: Date? = nil
    ) {
        self.id = id
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = auth
        self.apps = apps
        self.name = name
        self.userAgent = userAgent
        self.created = created
        self.lastSuccess = lastSuccess
        self.lastFailure = lastFailure
        self.lastFailureReason = lastFailureReason
        self.expires = expires
    }

    /// Whether a notification of `app` goes to this subscriber.
    public func receives(app: String) -> Bool { apps.map { $0.contains { $0.isLiterally(app) } } ?? true }

    /// The longest name and user agent kept.
    public static let maximumNameLength = 200, maximumUserAgentLength = 512

    /// Throws unless `name` can name a device: at most ``maximumNameLength`` characters, no control characters.
    public static func validateName(_ name: String, field: String) throws(ChimeError) {
        guard name.count <= maximumNameLength,
            !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw ChimeError(
                .invalidValue, field: field,
                "\(field): expected at most \(maximumNameLength) characters without control characters")
        }
    }

    /// A new random id: 16 bytes, base64url, never starting with `-` (so `chime devices remove ID`
    /// does not read it as an option; one id in 64 did).
    public static func makeID() -> String {
        var generator = SystemRandomNumberGenerator()
        while true {
            let id = Base64URL.encode((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
            if !id.hasPrefix("-") { return id }
        }
    }
}

/// What a browser registers: `PushSubscription.toJSON()` (`endpoint`, `expirationTime`,
/// `keys.p256dh`, `keys.auth`), with the device's `name` and the `apps` it wants, all checked.
///
/// The body of `POST /v1/web-push/subscriptions`:
///
/// ```json
/// {"endpoint": "https://fcm.googleapis.com/fcm/send/…", "expirationTime": null,
///  "keys": {"p256dh": "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM",
///           "auth": "tBHItJI5svbpez7KI4CCXg"},
///  "name": "Phone", "apps": ["com.example.alarm"]}
/// ```
public struct WebPushRegistration: Sendable, Hashable {
    public var endpoint: String
    public var p256dh: [UInt8]
    public var auth: [UInt8]
    /// `nil`: not given (a new subscription gets every app; a registered one keeps its choice).
    public var apps: [String]??
    public var name: String?
    public var expires: Date?

    public init(
        endpoint: String, p256dh: [UInt8], auth: [UInt8], apps: [String]?? = nil, name: String? = nil,
        expires: Date? = nil
    ) {
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = auth
        self.apps = apps
        self.name = name
        self.expires = expires
    }

    /// Reads and checks a registration: every error names its field (`endpoint`, `keys.p256dh`,
    /// `keys.auth`, `apps[1]`, …) and says what is accepted. The endpoint must be one `endpoints`
    /// allows; `p256dh` must be a point on P-256 as far as its form goes (65 bytes starting with 4:
    /// the key itself is checked when the first push is encrypted), `auth` 16 bytes.
    ///
    /// This is the parser a fuzz target for subscriptions should call.
    public static func decode(_ value: JSONValue, endpoints: WebPushEndpoints) throws(ChimeError) -> WebPushRegistration
    {
        typealias Field = JSONFieldName.Device
        let reader = try JSONObjectReader(value, path: "", what: "a push subscription (PushSubscription.toJSON())")
        try reader.finish(accepted: Field.registration, what: "a push subscription")
        let endpoint = try reader.requiredString(
            Field.endpoint, hint: " (the push service URL of PushSubscription.toJSON())")
        try endpoints.check(endpoint, field: Field.endpoint)
        guard let keysValue = reader.value(Field.keys) else {
            throw ChimeError(
                .invalidValue, field: Field.keys,
                "\(Field.keys) is missing; expected {\"\(Field.p256dh)\": …, \"\(Field.auth)\": …} as in PushSubscription.toJSON()"
            )
        }
        let keys = try JSONObjectReader(keysValue, path: Field.keys, what: "the subscription's keys")
        try keys.finish(accepted: Field.keyFields, what: "the subscription's keys")
        let p256dh = try Self.base64URL(keys, Field.p256dh, length: 65, what: "an uncompressed P-256 public key")
        guard p256dh.first == 4 else {
            let field = keys.field(Field.p256dh)
            throw ChimeError(
                .invalidValue, field: field,
                "\(field): expected an uncompressed P-256 point (its first byte 0x04), found first byte \(p256dh[0])")
        }
        let auth = try Self.base64URL(keys, Field.auth, length: 16, what: "the authentication secret")
        var expires: Date?
        if let milliseconds = try reader.double(Field.expirationTime) {
            guard milliseconds.isFinite, JSONMapping.formattableMilliseconds.contains(milliseconds) else {
                throw ChimeError(
                    .invalidValue, field: Field.expirationTime,
                    "\(Field.expirationTime): expected milliseconds since 1970 or null, found \(milliseconds)")
            }
            expires = Date(timeIntervalSince1970: milliseconds / 1000)
        }
        let name = try reader.string(Field.name)
        if let name { try WebPushSubscription.validateName(name, field: Field.name) }
        var apps: [String]??
        if reader.object[Field.apps] != nil {
            apps = .some(try decodeApps(reader.value(Field.apps), field: Field.apps))
        }
        return WebPushRegistration(
            endpoint: endpoint, p256dh: p256dh, auth: auth, apps: apps, name: name, expires: expires)
    }

    /// `apps`: an array of bundle identifiers, or `null` for every app.
    public static func decodeApps(_ value: JSONValue?, field: String) throws(ChimeError) -> [String]? {
        guard let value, value != .null else { return nil }
        guard case .array(let elements) = value else {
            throw ChimeError(
                .invalidValue, field: field,
                "\(field): expected an array of bundle identifiers, or null for every app; found \(value.shortDescription)"
            )
        }
        guard elements.count <= 1000 else {
            throw ChimeError(.invalidValue, field: field, "\(field): at most 1000 apps")
        }
        var apps: [String] = []
        for (index, element) in elements.enumerated() {
            let name = JSONPath.element(field, index)
            guard case .string(let app) = element else {
                throw ChimeError(
                    .invalidValue, field: name,
                    "\(name): expected a bundle identifier, found \(element.shortDescription)")
            }
            try Validation.validateBundleIdentifier(app, field: name)
            if !apps.contains(app) { apps.append(app) }
        }
        return apps
    }

    private static func base64URL(_ keys: JSONObjectReader, _ key: String, length: Int, what: String) throws(ChimeError)
        -> [UInt8]
    {
        let field = keys.field(key)
        let text = try keys.requiredString(key, hint: " (base64url, \(what) of \(length) bytes)")
        guard text.utf8.count <= 200 else {
            throw ChimeError(.invalidValue, field: field, "\(field): too long for \(what) of \(length) bytes")
        }
        let bytes: [UInt8]
        // Some browsers pad their base64url with '='; the bytes are the same.
        var unpadded = Substring(text)
        while unpadded.hasSuffix("=") { unpadded = unpadded.dropLast() }
        do { bytes = try Base64URL.decode(unpadded, what: field) } catch {
            throw ChimeError(.invalidValue, field: field, error.message + "; expected \(what) of \(length) bytes")
        }
        guard bytes.count == length else {
            throw ChimeError(
                .invalidValue, field: field, "\(field): expected \(what) of \(length) bytes, found \(bytes.count) bytes"
            )
        }
        return bytes
    }
}

extension WebPushSubscription {
    /// The subscription as the API lists it: everything but the keys.
    ///
    /// `{"id", "name", "endpoint", "pushService", "apps" (null: every app), "userAgent", "created",
    /// "lastSuccess", "lastFailure", "lastFailureReason", "expires"}` (``JSONFieldName/Device``).
    public var json: JSONValue {
        typealias Field = JSONFieldName.Device
        var object: JSONObject = [Field.id: .string(id), Field.name: .string(name), Field.endpoint: .string(endpoint)]
        object[Field.pushService] = pushService.map(JSONValue.string) ?? .null
        object[Field.apps] = apps.map { .array($0.map(JSONValue.string)) } ?? .null
        object[Field.userAgent] = .string(userAgent)
        object[Field.created] = JSONMapping.json(created)
        object[Field.lastSuccess] = lastSuccess.map(JSONMapping.json) ?? .null
        object[Field.lastFailure] = lastFailure.map(JSONMapping.json) ?? .null
        object[Field.lastFailureReason] = lastFailureReason.map(JSONValue.string) ?? .null
        object[Field.expires] = expires.map(JSONMapping.json) ?? .null
        return .object(object)
    }

    /// The push service the endpoint belongs to, as `scheme://host[:port]` (`nil`: an endpoint
    /// that cannot be parsed).
    public var pushService: String? {
        WebPushEndpoints.parse(endpoint).map { "\($0.scheme)://\($0.host)" + ($0.port.map { ":\($0)" } ?? "") }
    }

    /// A subscription as the API lists it (``json``); the listing carries no keys, so ``p256dh`` and
    /// ``auth`` are empty. What `chime devices` reads the service's answers with.
    ///
    /// ```swift
    /// let device = try WebPushSubscription(json: item, field: "[0]")
    /// print(device.id, device.pushService ?? "?", device.apps ?? ["every app"])
    /// ```
    ///
    /// - Throws: ``ChimeError`` `malformedInput` naming the member that is missing or not of its kind.
    public init(json: JSONValue, field: String = "") throws(ChimeError) {
        typealias Field = JSONFieldName.Device
        let reader = try JSONObjectReader(json, path: field, what: "a web push subscription", code: .malformedInput)
        self.init(
            id: try reader.requiredString(Field.id, code: .malformedInput),
            endpoint: try reader.requiredString(Field.endpoint, code: .malformedInput), p256dh: [], auth: [],
            apps: try reader.strings(Field.apps, code: .malformedInput),
            name: try reader.string(Field.name, code: .malformedInput) ?? "",
            userAgent: try reader.string(Field.userAgent, code: .malformedInput) ?? "",
            created: try reader.requiredAnswerDate(Field.created),
            lastSuccess: try reader.answerDate(Field.lastSuccess),
            lastFailure: try reader.answerDate(Field.lastFailure),
            lastFailureReason: try reader.string(Field.lastFailureReason, code: .malformedInput),
            expires: try reader.answerDate(Field.expires))
    }

    /// The record a store keeps (JSON text: the listed fields and the keys, base64url).
    public var storedRecord: String {
        typealias Field = JSONFieldName.Device
        guard case .object(var object) = json else { return "" }
        object[Field.pushService] = nil
        object[Field.p256dh] = .string(Base64URL.encode(p256dh))
        object[Field.auth] = .string(Base64URL.encode(auth))
        // Dates to the microsecond, as the store gave them.
        for (key, date) in [
            (Field.created, created), (Field.lastSuccess, lastSuccess), (Field.lastFailure, lastFailure),
            (Field.expires, expires),
        ] {
            object[key] = date.map { .number($0.timeIntervalSince1970) } ?? .null
        }
        return JSONValue.object(object).serialized()
    }

    /// Reads a record written by ``storedRecord``.
    ///
    /// - Throws: ``ChimeError`` `storeFailure` when it is not one.
    public init(storedRecord text: String) throws(ChimeError) {
        func damaged(_ what: String) -> ChimeError {
            ChimeError(.storeFailure, "a stored web push subscription is damaged: \(what)")
        }
        let value: JSONValue
        do { value = try JSONValue.parse(text) } catch { throw damaged(error.message) }
        func string(_ key: String) throws(ChimeError) -> String {
            guard case .string(let text)? = value[key] else { throw damaged("no \(key)") }
            return text
        }
        func date(_ key: String) -> Date? {
            switch value[key] {
            case .number(let seconds)?: Date(timeIntervalSince1970: seconds)
            case .integer(let seconds)?: Date(timeIntervalSince1970: TimeInterval(seconds))
            default: nil
            }
        }
        func bytes(_ key: String) throws(ChimeError) -> [UInt8] {
            do { return try Base64URL.decode(try string(key), what: key) } catch { throw damaged(error.message) }
        }
        typealias Field = JSONFieldName.Device
        guard let created = date(Field.created) else { throw damaged("no created date") }
        var apps: [String]?
        if case .array(let list)? = value[Field.apps] {
            apps = list.compactMap { if case .string(let app) = $0 { app } else { nil } }
        }
        var reason: String?
        if case .string(let text)? = value[Field.lastFailureReason] { reason = text }
        self.init(
            id: try string(Field.id), endpoint: try string(Field.endpoint), p256dh: try bytes(Field.p256dh),
            auth: try bytes(Field.auth), apps: apps,
            name: try string(Field.name), userAgent: try string(Field.userAgent), created: created,
            lastSuccess: date(Field.lastSuccess),
            lastFailure: date(Field.lastFailure), lastFailureReason: reason, expires: date(Field.expires))
    }
}
