import Foundation

// The bodies of the permission, settings and badge routes, strictly (``JSONObjectReader``: unknown
// members refused with a did-you-mean), and their answer, tolerantly. Field names: ``JSONFieldName``.

extension SettingsChange {
    /// Decodes `PATCH /v1/apps/{app}/settings`: `{"soundSetting": "disabled", "showPreviewsSetting": "never"}`.
    /// A switch takes `enabled` or `disabled` (`notSupported` is read, and refused by the engine
    /// naming the switch); previews take `always`, `whenAuthenticated` or `never`; `null` leaves a
    /// setting as it is.
    ///
    /// ```swift
    /// let change = try SettingsChange(json: ["soundSetting": "disabled"])
    /// ```
    public init(json: JSONValue) throws(ChimeError) {
        let names = Self.switchNames.map(\.name) + [JSONFieldName.showPreviewsSetting]
        let reader = try JSONObjectReader(json, what: "a change of settings", accepted: names)
        self.init()
        for entry in Self.switchNames {
            guard let text = try reader.string(entry.name) else { continue }
            guard let setting = UNNotificationSetting(jsonName: text) else {
                throw Self.refusal(reader, entry.name, text, accepted: ["enabled", "disabled"])
            }
            self[keyPath: entry.keyPath] = setting
        }
        if let text = try reader.string(JSONFieldName.showPreviewsSetting) {
            guard let previews = UNShowPreviewsSetting(jsonName: text) else {
                throw Self.refusal(
                    reader, JSONFieldName.showPreviewsSetting, text,
                    accepted: UNShowPreviewsSetting.allCases.map(\.jsonName))
            }
            showPreviews = previews
        }
    }

    private static func refusal(_ reader: JSONObjectReader, _ key: String, _ text: String, accepted: [String])
        -> ChimeError
    {
        var message = "\(reader.field(key)) is \"\(JSONParser.clip(text))\""
        if let suggestion = JSONMapping.closest(to: text, in: accepted) {
            message += " (did you mean \"\(suggestion)\"?)"
        }
        return ChimeError(
            .invalidValue, field: reader.field(key), message + "; accepted: \(accepted.joined(separator: ", "))")
    }
}

extension JSONMapping {
    /// Decodes `POST /v1/apps/{app}/authorization`: no body, or `{"options": ["alert", "sound"]}`
    /// (without `options`: alert, sound and badge).
    package static func authorizationOptions(_ body: JSONValue?) throws(ChimeError) -> UNAuthorizationOptions {
        let asked: UNAuthorizationOptions = [.alert, .sound, .badge]
        guard let body else { return asked }
        let reader = try JSONObjectReader(body, what: "a request for permission", accepted: [JSONFieldName.options])
        return try reader.options(JSONFieldName.options, table: UNAuthorizationOptions.names) ?? asked
    }

    /// Decodes `POST /v1/apps/{app}/authorization/answer`: `{"allow": true}`.
    package static func authorizationAllow(_ body: JSONValue) throws(ChimeError) -> Bool {
        let reader = try JSONObjectReader(body, what: "the user's answer", accepted: [JSONFieldName.allow])
        return try reader.requiredBool(JSONFieldName.allow)
    }

    /// Decodes `PUT /v1/apps/{app}/badge`: `{"badge": 3}`, an integer as every integer field takes
    /// it (`3.0` too). Whether the count is allowed (0 or more) is the engine's rule
    /// (``Validation/badgeRefusal(_:field:)``).
    package static func badgeCount(_ body: JSONValue) throws(ChimeError) -> Int {
        let reader = try JSONObjectReader(body, what: "a badge", accepted: [JSONFieldName.badge])
        return try reader.requiredInt(JSONFieldName.badge, hint: " (the count; 0 clears the badge)")
    }
}

/// The answer of `POST /v1/apps/{app}/authorization` and `…/authorization/answer`:
/// `{"granted": true, "status": "authorized", "settings": {…}}`.
///
/// ```swift
/// let answer = try AuthorizationAnswer(json: body)
/// print(answer.status.name)
/// ```
package struct AuthorizationAnswer: Sendable, Hashable {
    /// Whether notifications may be delivered.
    package var granted: Bool
    /// The app's settings after the call; their `authorizationStatus` is the answer's `status`.
    package var settings: NotificationSettings
    package var status: UNAuthorizationStatus { settings.authorizationStatus }

    package init(granted: Bool, settings: NotificationSettings) {
        self.granted = granted
        self.settings = settings
    }

    package var json: JSONValue {
        [
            JSONFieldName.granted: .bool(granted), JSONFieldName.status: .string(status.name),
            JSONFieldName.settings: settings.json,
        ]
    }

    /// Reads the answer as the service writes it; `status` wins over the settings' own field, and a
    /// newer service's extra fields are ignored.
    package init(json: JSONValue) throws(ChimeError) {
        guard case .object(let object) = json else {
            throw ChimeError(
                .malformedInput, "the answer to an authorization is not a JSON object, found \(json.kindDescription)")
        }
        if case .bool(let flag)? = object[JSONFieldName.granted] { granted = flag } else { granted = false }
        settings =
            try object[JSONFieldName.settings].map { value throws(ChimeError) in try NotificationSettings(json: value) }
            ?? NotificationSettings()
        if case .string(let name)? = object[JSONFieldName.status], let status = UNAuthorizationStatus(name: name) {
            settings.authorizationStatus = status
            if object[JSONFieldName.granted] == nil { granted = status.allowsDelivery }
        } else if object[JSONFieldName.settings] == nil {
            throw ChimeError(
                .malformedInput, field: JSONFieldName.status,
                "the answer to an authorization has no status; expected \(UNAuthorizationStatus.allCases.map(\.name).joined(separator: ", "))"
            )
        }
    }
}
