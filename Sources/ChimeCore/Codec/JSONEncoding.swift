import Foundation

// Encoders: Chime's values → JSON with Apple's field names. Output is canonical: content fields at
// the top level of a request, every content field present (absent optionals as `null`), dates as
// UTC ISO 8601 with milliseconds, enum values and options by Apple's names. Decoding the output
// gives back the same value.

extension JSONMapping {
    /// `userInfo` as a JSON object, keys sorted for stable output.
    public static func json(userInfo: [String: PropertyListValue]) -> JSONValue {
        var object = JSONObject()
        for key in userInfo.keys.sorted() {
            if let value = userInfo[key] { object[key] = value.json }
        }
        return .object(object)
    }

    /// A date as a JSON string (``formatDate(_:)``).
    public static func json(_ date: Date) -> JSONValue { .string(formatDate(date)) }
}

extension PropertyListValue {
    /// The value as JSON: `Data` as `{"$data": "<base64>"}`, `Date` as `{"$date": "<ISO 8601>"}`.
    /// A non-finite double (which JSON cannot hold) becomes `null`.
    public var json: JSONValue {
        switch self {
        case .string(let s): .string(s)
        case .integer(let i): .integer(i)
        case .double(let d): d.isFinite ? .number(d) : .null
        case .bool(let b): .bool(b)
        case .data(let d): .object(["$data": .string(d.base64EncodedString())])
        case .date(let d): .object(["$date": JSONMapping.json(d)])
        case .array(let a): .array(a.map(\.json))
        case .dictionary(let d): JSONMapping.json(userInfo: d)
        }
    }
}

extension NotificationSound {
    /// `"default"`, the file name, or `{"name", "critical", "volume"}` for a critical sound.
    public var json: JSONValue {
        typealias Field = JSONFieldName.Sound
        if !isCritical && volume == nil { return .string(name ?? "default") }
        var object: JSONObject = [Field.name: .string(name ?? "default"), Field.critical: .bool(isCritical)]
        if let volume { object[Field.volume] = .number(Double(volume)) }
        return .object(object)
    }
}

extension NotificationAttachment {
    public var json: JSONValue {
        typealias Field = JSONFieldName.Attachment
        var object: JSONObject = [
            Field.identifier: .string(identifier), Field.url: .string(url.absoluteString), Field.type: .string(type),
        ]
        if thumbnailHidden { object[Field.thumbnailHidden] = .bool(true) }
        if let rect = thumbnailClippingRect {
            object[Field.thumbnailClippingRect] = [
                Field.x: .number(rect.x), Field.y: .number(rect.y), Field.width: .number(rect.width),
                Field.height: .number(rect.height),
            ]
        }
        if let time = thumbnailTime { object[Field.thumbnailTime] = .number(time) }
        return .object(object)
    }
}

extension NotificationContent {
    /// The content fields as members, in ``JSONMapping/contentFields`` order.
    func appendJSON(to object: inout JSONObject) {
        typealias Field = JSONFieldName.Content
        object[Field.title] = .string(title)
        object[Field.subtitle] = .string(subtitle)
        object[Field.body] = .string(body)
        object[Field.badge] = badge.map { .integer(Int64($0)) } ?? .null
        object[Field.sound] = sound?.json ?? .null
        object[Field.launchImageName] = .string(launchImageName)
        object[Field.userInfo] = JSONMapping.json(userInfo: userInfo)
        object[Field.attachments] = .array(attachments.map(\.json))
        object[Field.categoryIdentifier] = .string(categoryIdentifier)
        object[Field.threadIdentifier] = .string(threadIdentifier)
        object[Field.targetContentIdentifier] = targetContentIdentifier.map(JSONValue.string) ?? .null
        object[Field.summaryArgument] = .string(summaryArgument)
        object[Field.summaryArgumentCount] = .integer(Int64(summaryArgumentCount))
        object[Field.interruptionLevel] = .string(interruptionLevel.name)
        object[Field.relevanceScore] = .number(relevanceScore.isFinite ? relevanceScore : 0)
        object[Field.filterCriteria] = filterCriteria.map(JSONValue.string) ?? .null
    }

    /// The content as an object of content fields.
    public var json: JSONValue {
        var object = JSONObject()
        appendJSON(to: &object)
        return .object(object)
    }
}

extension NotificationTrigger {
    /// `{"type": …, …}` as accepted by ``init(json:field:)``; `{"type": "push"}` for pushes.
    public var json: JSONValue {
        typealias Field = JSONFieldName.Trigger
        return switch self {
        case .timeInterval(let interval, let repeats):
            [
                Field.type: .string(kindName), Field.timeInterval: .number(interval),
                Field.repeats: .bool(repeats),
            ]
        case .calendar(let components, let repeats):
            Self.calendarJSON(JSONMapping.json(components), repeats: repeats)
        case .location(let region, let repeats):
            Self.locationJSON(region.json, repeats: repeats)
        case .recurrence(let schedule):
            schedule.json
        case .push:
            [Field.type: .string(kindName)]
        }
    }

    /// A calendar trigger's object around date components given as JSON (`{"hour": 8, …}`), for a
    /// client that writes the components itself and leaves checking them to the decoder.
    package static func calendarJSON(_ components: JSONValue, repeats: Bool) -> JSONValue {
        typealias Field = JSONFieldName.Trigger
        return [
            Field.type: .string(Field.Kind.calendar), Field.dateComponents: components, Field.repeats: .bool(repeats),
        ]
    }

    /// A location trigger's object around a region given as JSON (``CircularRegion/json``'s fields).
    package static func locationJSON(_ region: JSONValue, repeats: Bool) -> JSONValue {
        typealias Field = JSONFieldName.Trigger
        return [Field.type: .string(Field.Kind.location), Field.region: region, Field.repeats: .bool(repeats)]
    }
}

extension JSONMapping {
    /// Date components as `{"hour": 8, "minute": 30, "timeZone": "Europe/Berlin"}` (only those set).
    public static func json(_ components: DateComponents) -> JSONValue {
        var object = JSONObject()
        for (name, keyPath, _) in Validation.dateComponentRanges {
            if let value = components[keyPath: keyPath], value != NSDateComponentUndefined {
                object[name] = .integer(Int64(value))
            }
        }
        if let zone = components.timeZone { object[JSONFieldName.Trigger.timeZone] = .string(zone.identifier) }
        return .object(object)
    }
}

extension CircularRegion {
    public var json: JSONValue {
        typealias Field = JSONFieldName.Region
        return [
            Field.identifier: .string(identifier), Field.latitude: .number(center.latitude),
            Field.longitude: .number(center.longitude), Field.radius: .number(radius),
            Field.notifyOnEntry: .bool(notifyOnEntry), Field.notifyOnExit: .bool(notifyOnExit),
        ]
    }
}

extension Coordinate {
    public var json: JSONValue {
        [JSONFieldName.Region.latitude: .number(latitude), JSONFieldName.Region.longitude: .number(longitude)]
    }
}

extension NotificationRequest {
    /// `{"identifier", …content fields, "trigger"}` (`trigger` is `null` for "at once").
    public var json: JSONValue { .object(jsonObject()) }

    func jsonObject() -> JSONObject {
        var object: JSONObject = [JSONFieldName.Request.identifier: .string(identifier)]
        content.appendJSON(to: &object)
        object[JSONFieldName.Request.trigger] = trigger?.json ?? .null
        appendExpiration(to: &object)
        return object
    }

    /// `expirationDate` (or `expiresIn` for a request not yet added), when it has an expiration;
    /// `dismissIn` (a request: seconds after each delivery) or `dismissAt` (a delivered
    /// notification), when it has an auto-dismissal; `escalateEvery` and `escalateFor` when it
    /// escalates.
    func appendExpiration(to object: inout JSONObject) {
        typealias Field = JSONFieldName.Request
        switch expiration {
        case nil: break
        case .at(let date)?: object[Field.expirationDate] = JSONMapping.json(date)
        case .after(let seconds)?: object[Field.expiresIn] = .number(seconds)
        }
        switch autoDismiss {
        case nil: break
        case .at(let date)?: object[Field.dismissAt] = JSONMapping.json(date)
        case .after(let seconds)?: object[Field.dismissIn] = .number(seconds)
        }
        if let escalation {
            object[Field.escalateEvery] = .number(escalation.interval)
            object[Field.escalateFor] = .number(escalation.duration)
        }
    }
}

extension EscalationReceipt {
    /// `{"app", "identifier", "acknowledged", "acknowledgedAt", "actionIdentifier", "surface",
    /// "alerts", "deliveredAt", "lastAlertedAt", "nextAlertAt", "endsAt", "expired", "removedAt",
    /// "escalateEvery", "escalateFor"}`: dates absent (null) when they have none.
    public var json: JSONValue {
        typealias Field = JSONFieldName.Receipt
        return [
            Field.app: .string(app), Field.identifier: .string(identifier), Field.acknowledged: .bool(acknowledged),
            Field.acknowledgedAt: acknowledgedAt.map(JSONMapping.json) ?? .null,
            Field.actionIdentifier: actionIdentifier.map(JSONValue.string) ?? .null,
            Field.surface: surface.map(JSONValue.string) ?? .null, Field.alerts: .integer(Int64(alerts)),
            Field.deliveredAt: JSONMapping.json(deliveredAt), Field.lastAlertedAt: JSONMapping.json(lastAlertedAt),
            Field.nextAlertAt: nextAlertAt.map(JSONMapping.json) ?? .null, Field.endsAt: JSONMapping.json(endsAt),
            Field.expired: .bool(expired),
            Field.removedAt: removedAt.map(JSONMapping.json) ?? .null,
            Field.escalateEvery: .number(escalation.interval), Field.escalateFor: .number(escalation.duration),
        ]
    }
}

extension PendingRequest {
    /// The request with `nextTriggerDate` (`null` for location triggers).
    public var json: JSONValue {
        var object = request.jsonObject()
        object[JSONFieldName.Request.nextTriggerDate] = nextFireDate.map(JSONMapping.json) ?? .null
        return .object(object)
    }

    /// ``json`` with `nextTriggerDates`: the next `count` fire dates
    /// (``FireDates/upcoming(_:count:timeZone:)``, in the device's `timeZone`).
    public func json(upcoming count: Int, timeZone: TimeZone) -> JSONValue {
        guard case .object(var object) = json else { return json }
        object[JSONFieldName.Request.nextTriggerDates] = .array(
            FireDates.upcoming(self, count: count, timeZone: timeZone).map(JSONMapping.json))
        return .object(object)
    }
}

extension NotificationAction {
    public var json: JSONValue {
        typealias Field = JSONFieldName.Action
        var object: JSONObject = [
            Field.identifier: .string(identifier), Field.title: .string(title),
            Field.options: JSONMapping.json(options, table: Self.optionNames),
        ]
        switch icon {
        case .system(let name): object[Field.icon] = [Field.systemImageName: .string(name)]
        case .template(let name): object[Field.icon] = [Field.templateImageName: .string(name)]
        case nil: break
        }
        if let textInput {
            object[Field.textInputButtonTitle] = .string(textInput.buttonTitle)
            object[Field.textInputPlaceholder] = .string(textInput.placeholder)
        }
        return .object(object)
    }

    static let optionNames = UNNotificationActionOptions.names
}

extension NotificationCategory {
    public var json: JSONValue {
        typealias Field = JSONFieldName.Category
        return [
            Field.identifier: .string(identifier), Field.actions: .array(actions.map(\.json)),
            Field.intentIdentifiers: .array(intentIdentifiers.map(JSONValue.string)),
            Field.options: JSONMapping.json(options, table: UNNotificationCategoryOptions.names),
            Field.hiddenPreviewsBodyPlaceholder: .string(hiddenPreviewsBodyPlaceholder),
            Field.categorySummaryFormat: .string(categorySummaryFormat),
        ]
    }
}

extension DeliveredNotification {
    /// `{"identifier", "date", …content fields, "trigger"}`, plus `"actions"` when the notification's
    /// category is given (what a surface needs to draw the buttons).
    public func json(category: NotificationCategory? = nil, presentation: UNNotificationPresentationOptions? = nil)
        -> JSONValue
    {
        typealias Field = JSONFieldName.Request
        var object: JSONObject = [Field.identifier: .string(request.identifier), Field.date: JSONMapping.json(date)]
        request.content.appendJSON(to: &object)
        object[Field.trigger] = request.trigger?.json ?? .null
        request.appendExpiration(to: &object)
        if let category { object[Field.actions] = .array(category.actions.map(\.json)) }
        if let presentation { object[Field.presentation] = presentation.json }
        return .object(object)
    }

    public var json: JSONValue { json(category: nil) }
}

extension NotificationResponse {
    /// `{"id", "notification": {…}, "actionIdentifier", "userText", "date"}`.
    public var json: JSONValue {
        typealias Field = JSONFieldName.Response
        return [
            Field.id: .integer(id), Field.notification: notification.json,
            Field.actionIdentifier: .string(actionIdentifier),
            Field.userText: userText.map(JSONValue.string) ?? .null, Field.date: JSONMapping.json(date),
        ]
    }
}

extension UNNotificationSetting {
    var jsonName: String {
        switch self {
        case .notSupported: "notSupported"
        case .disabled: "disabled"
        case .enabled: "enabled"
        }
    }

    /// The setting named as in JSON: `notSupported`, `disabled`, `enabled`.
    public init?(jsonName: String) {
        guard let setting = Self.allCases.first(where: { $0.jsonName == jsonName }) else { return nil }
        self = setting
    }
}

extension UNAlertStyle {
    var jsonName: String {
        switch self {
        case .none: "none"
        case .banner: "banner"
        case .alert: "alert"
        }
    }

    /// The style named as in JSON: `none`, `banner`, `alert`.
    public init?(jsonName: String) {
        guard let style = Self.allCases.first(where: { $0.jsonName == jsonName }) else { return nil }
        self = style
    }
}

extension UNShowPreviewsSetting {
    var jsonName: String {
        switch self {
        case .always: "always"
        case .whenAuthenticated: "whenAuthenticated"
        case .never: "never"
        }
    }

    /// The setting named as in JSON: `always`, `whenAuthenticated`, `never`.
    public init?(jsonName: String) {
        guard let setting = Self.allCases.first(where: { $0.jsonName == jsonName }) else { return nil }
        self = setting
    }
}

extension NotificationSettings {
    /// Apple's field names, enum values by name: `{"authorizationStatus": "authorized", "alertSetting": "enabled", …}`
    /// (the names are ``JSONFieldName``'s and ``switchFields``').
    public var json: JSONValue {
        var object: JSONObject = [JSONFieldName.authorizationStatus: .string(authorizationStatus.name)]
        func put(_ keyPath: WritableKeyPath<NotificationSettings, UNNotificationSetting>) {
            object[Self.fieldName(of: keyPath)] = .string(self[keyPath: keyPath].jsonName)
        }
        put(\.soundSetting)
        put(\.badgeSetting)
        put(\.alertSetting)
        put(\.notificationCenterSetting)
        put(\.lockScreenSetting)
        put(\.carPlaySetting)
        object[JSONFieldName.alertStyle] = .string(alertStyle.jsonName)
        object[JSONFieldName.showPreviewsSetting] = .string(showPreviewsSetting.jsonName)
        put(\.criticalAlertSetting)
        object[JSONFieldName.providesAppNotificationSettings] = .bool(providesAppNotificationSettings)
        put(\.announcementSetting)
        put(\.timeSensitiveSetting)
        put(\.scheduledDeliverySetting)
        put(\.directMessagesSetting)
        return .object(object)
    }
}

extension AppRecord {
    /// The app as listed by `GET /v1/apps`: never the token hash.
    public var json: JSONValue {
        typealias Field = JSONFieldName.App
        return [
            Field.bundleIdentifier: .string(bundleIdentifier), Field.created: JSONMapping.json(created),
            Field.deviceToken: .string(deviceToken), Field.badge: .integer(Int64(badge)),
            Field.promptPending: .bool(promptPending),
            Field.requestedOptions: JSONMapping.json(requestedOptions, table: UNAuthorizationOptions.names),
            Field.settings: settings.json,
            Field.launch: launchCommand.map { .array($0.arguments.map(JSONValue.string)) } ?? .null,
            Field.apns: apnsProvider?.json ?? .null,
            Field.deviceTokenUnregistered: deviceTokenUnregistered.map { JSONMapping.json($0) } ?? .null,
            Field.apnsCertificate: apnsCertificate?.json ?? .null,
        ]
    }

    /// `{"deviceToken", "registered", "unregistered"}`: the app's device token, whether pushes to
    /// it are taken, and when the app unregistered it (null while registered).
    public var deviceTokenJSON: JSONValue {
        typealias Field = JSONFieldName.App
        return [
            Field.deviceToken: .string(deviceToken), Field.registered: .bool(deviceTokenUnregistered == nil),
            Field.unregistered: deviceTokenUnregistered.map { JSONMapping.json($0) } ?? .null,
        ]
    }
}

extension APNsProvider {
    /// `{"teamId", "keyId", "publicKey"}`: the key's public point in base64url (null without a key).
    public var json: JSONValue {
        typealias Field = JSONFieldName.Provider
        return [
            Field.teamId: .string(teamID), Field.keyId: key.map { .string($0.id) } ?? .null,
            Field.publicKey: key.map { .string(Base64URL.encode($0.publicKey)) } ?? .null,
        ]
    }
}

extension UNNotificationPresentationOptions {
    /// The options' names, as a JSON array (`["banner", "list", "sound"]`).
    public var json: JSONValue {
        .array(names(from: UNNotificationPresentationOptions.names).map(JSONValue.string))
    }
}

extension QuarantinedRequest {
    /// `{"id", "app", "identifier", "reason", "date", "request"}`; `request` is null when its stored
    /// record could not be read, else the request as a pending one is listed, with `nextTriggerDate`
    /// null: nothing in the quarantine fires.
    public var json: JSONValue {
        var listed = request?.json ?? .null
        if case .object(var fields) = listed {
            fields[JSONFieldName.Request.nextTriggerDate] = .null
            listed = .object(fields)
        }
        typealias Field = JSONFieldName.Quarantine
        return [
            Field.id: .integer(id), Field.app: .string(app), Field.identifier: .string(identifier),
            Field.reason: .string(reason), Field.date: JSONMapping.json(date), Field.request: listed,
        ]
    }
}

extension EngineEvent {
    /// `{"sequence", "app", "kind", "date"}` and what the kind carries: `notification`, `category`,
    /// `presentation`, `settings` and `badge` for a delivery, each once (the notification without
    /// the actions and presentation a delivered-list item has: they are the category's and the
    /// event's); `response`; `identifiers` and `scope`; `settings` and `listed` (whether they list
    /// the app's notifications); `identifiers` and `requests` (as the pending list has them, when
    /// carried) for `scheduled`; `categories`; `change` and `record` (the app's record, when known);
    /// `quarantined`; `request` (with its `expirationDate`) and
    /// `dueDate` for `expired`; for `realerted`, what a delivery carries and `alert` (2 and on); for
    /// both, `focus` when a focus was on (``FocusDecision/json``: held quietly, or let through and why);
    /// for `delivered`, `nextTriggerDate` when the request repeats and stays pending
    /// (``Delivery/nextTriggerDate``); for `focus`, `modes` (every focus mode as ``FocusStatus/json``;
    /// `app` is empty).
    public var json: JSONValue {
        typealias Field = JSONFieldName.Event
        var object: JSONObject = [
            Field.sequence: .integer(sequence), Field.app: .string(app), Field.kind: .string(kind.rawValue),
            Field.date: JSONMapping.json(date),
        ]
        switch payload {
        case .delivered(let delivery), .realerted(let delivery):
            object[Field.notification] = delivery.notification.json
            object[Field.category] = delivery.category?.json ?? .null
            object[Field.presentation] = delivery.presentation.json
            object[Field.settings] = delivery.settings.json
            if let badge = delivery.badge { object[Field.badge] = .integer(Int64(badge)) }
            if delivery.alert > 1 { object[Field.alert] = .integer(Int64(delivery.alert)) }
            if let focus = delivery.focus { object[Field.focus] = focus.json }
            if let next = delivery.nextTriggerDate { object[Field.nextTriggerDate] = JSONMapping.json(next) }
        case .response(let response):
            object[Field.response] = response.json
        case .removed(let identifiers, let scope, let reason):
            object[Field.identifiers] = .array(identifiers.map(JSONValue.string))
            object[Field.scope] = .string(scope.rawValue)
            if reason != .request { object[Field.reason] = .string(reason.rawValue) }
        case .silentPush(let notification):
            object[Field.notification] = notification.json
        case .settings(let settings):
            object[Field.settings] = settings.json
            object[Field.listed] = .bool(Presentation.listed(settings))
        case .scheduled(let identifiers, let requests):
            object[Field.identifiers] = .array(identifiers.map(JSONValue.string))
            if !requests.isEmpty { object[Field.requests] = .array(requests.map(\.json)) }
        case .categories(let categories):
            object[Field.categories] = .array(categories.map(\.json))
        case .app(let change, let record):
            object[Field.change] = .string(change.rawValue)
            if let record { object[Field.record] = record.json }
        case .quarantined(let entry):
            object[Field.quarantined] = entry.json
        case .expired(let expired):
            object[Field.request] = expired.request.json
            object[Field.dueDate] = JSONMapping.json(expired.dueDate)
        case .focus(let modes):
            object[Field.modes] = .array(modes.map(\.json))
        }
        return .object(object)
    }
}
