import Foundation

// The tolerant decoders of an app's record as the service answers it (``AppRecord/json``), of what
// the record carries (``APNsProvider/json``, ``CertificateFingerprint/json``) and of the device
// token's state (``AppRecord/deviceTokenJSON``): what `chime apps`, `chime status` and
// `chime device-token` read the service's answers with. Field names: ``JSONFieldName/App``,
// ``JSONFieldName/Provider``, ``JSONFieldName/Certificate``. Members a later service adds are ignored.

extension JSONObjectReader {
    /// The member as a date (ISO 8601, as the encoders write it); `nil` when absent or null.
    package func answerDate(_ key: String) throws(ChimeError) -> Date? {
        guard let value = value(key) else { return nil }
        return try JSONMapping.date(value, field: field(key), code: .malformedInput)
    }

    /// The member as a date that must be there.
    package func requiredAnswerDate(_ key: String) throws(ChimeError) -> Date {
        guard let date = try answerDate(key) else {
            throw ChimeError(.malformedInput, field: field(key), "\(field(key)) is missing; expected a date")
        }
        return date
    }
}

extension JSONMapping {
    /// Option names as the service sends them; names this version does not know are ignored
    /// (`nil`: not an array).
    static func answerOptions<Options: OptionSet>(_ json: JSONValue?, table: [(String, Options)]) -> Options?
    where Options.Element == Options {
        guard case .array(let items)? = json else { return nil }
        var options: Options = []
        for case .string(let name) in items {
            if let option = table.first(where: { $0.0 == name })?.1 { options.insert(option) }
        }
        return options
    }
}

extension AppRecord {
    /// An app as the service answers it (``json``: an item of `GET /v1/apps`, `GET /v1/apps/{app}`,
    /// `PATCH /v1/apps/{app}`). The token's hash is never sent: it is `nil`.
    ///
    /// ```swift
    /// let app = try AppRecord(json: item, field: "[0]")
    /// print(app.bundleIdentifier, app.settings.authorizationStatus.name, app.launchCommand?.description ?? "-")
    /// ```
    ///
    /// - Throws: ``ChimeError`` `malformedInput` naming the member (`[0].created`) that is missing or
    ///   not of its kind.
    public init(json: JSONValue, field: String = "") throws(ChimeError) {
        typealias Field = JSONFieldName.App
        let reader = try JSONObjectReader(json, path: field, what: "an app", code: .malformedInput)
        self.init(
            bundleIdentifier: try reader.requiredString(Field.bundleIdentifier, code: .malformedInput),
            created: try reader.requiredAnswerDate(Field.created),
            deviceToken: try reader.requiredString(Field.deviceToken, code: .malformedInput))
        badge = try reader.int(Field.badge, code: .malformedInput) ?? 0
        promptPending = try reader.bool(Field.promptPending, code: .malformedInput) ?? false
        requestedOptions =
            JSONMapping.answerOptions(reader.value(Field.requestedOptions), table: UNAuthorizationOptions.names) ?? []
        if let value = reader.value(Field.settings) { settings = try NotificationSettings(json: value) }
        if let value = reader.value(Field.launch) {
            launchCommand = try LaunchCommand.decode(value, field: reader.field(Field.launch))
        }
        if let value = reader.value(Field.apns) {
            apnsProvider = try APNsProvider(json: value, field: reader.field(Field.apns))
        }
        deviceTokenUnregistered = try reader.answerDate(Field.deviceTokenUnregistered)
        if let value = reader.value(Field.apnsCertificate) {
            apnsCertificate = try CertificateFingerprint(json: value, field: reader.field(Field.apnsCertificate))
        }
    }

    /// Reads ``deviceTokenJSON`` (`GET /v1/apps/{app}/device-token` and its register and unregister
    /// answers): the token, and when the app unregistered it (`nil`: registered).
    ///
    /// ```swift
    /// let (token, unregistered) = try AppRecord.deviceToken(json: answer)
    /// ```
    public static func deviceToken(json: JSONValue) throws(ChimeError) -> (token: String, unregistered: Date?) {
        typealias Field = JSONFieldName.App
        let reader = try JSONObjectReader(json, path: "", what: "a device token", code: .malformedInput)
        return (
            try reader.requiredString(Field.deviceToken, code: .malformedInput),
            try reader.answerDate(Field.unregistered)
        )
    }
}

extension APNsProvider {
    /// An app's provider as the service lists it (``json``: the team, and the key's id and public
    /// point in base64url when the app has a key of its own).
    ///
    /// ```swift
    /// let provider = try APNsProvider(json: ["teamId": "TEAM123456"], field: "apns")
    /// ```
    public init(json: JSONValue, field: String = "") throws(ChimeError) {
        typealias Field = JSONFieldName.Provider
        let reader = try JSONObjectReader(json, path: field, what: "an APNs provider", code: .malformedInput)
        self.init(teamID: try reader.requiredString(Field.teamId, code: .malformedInput))
        guard let id = try reader.string(Field.keyId, code: .malformedInput) else { return }
        let point = try reader.requiredString(Field.publicKey, code: .malformedInput)
        do {
            key = Key(id: id, publicKey: try Base64URL.decode(point, what: reader.field(Field.publicKey)))
        } catch {
            throw ChimeError(.malformedInput, field: reader.field(Field.publicKey), error.message)
        }
    }
}

extension CertificateFingerprint {
    /// A pinned certificate as the service lists it (``json``: hashes in hexadecimal, dates in ISO 8601).
    ///
    /// ```swift
    /// let pinned = try CertificateFingerprint(json: app["apnsCertificate"]!, field: "apnsCertificate")
    /// print(pinned.sha256Hex, pinned.notAfter)
    /// ```
    public init(json: JSONValue, field: String = "") throws(ChimeError) {
        typealias Field = JSONFieldName.Certificate
        let reader = try JSONObjectReader(json, path: field, what: "a certificate", code: .malformedInput)
        func hash(_ key: String) throws(ChimeError) -> [UInt8] {
            let text = try reader.requiredString(key, code: .malformedInput)
            guard let bytes = [UInt8](hexadecimal: text), bytes.count == 32 else {
                throw ChimeError(
                    .malformedInput, field: reader.field(key),
                    "\(reader.field(key)): expected a SHA-256 in hexadecimal (64 digits), found \"\(text.prefix(80))\"")
            }
            return bytes
        }
        self.init(
            sha256: try hash(Field.sha256), publicKeySHA256: try hash(Field.publicKeySha256),
            notBefore: try reader.requiredAnswerDate(Field.notBefore),
            notAfter: try reader.requiredAnswerDate(Field.notAfter))
    }
}
