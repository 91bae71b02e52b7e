import Foundation

// Decoders for what the service answers — the encoders' outputs read back — used by a center that
// talks to `chime serve` over HTTP. They accept the fields the encoders write and ignore fields a
// later service may add, so a newer service does not break an older app.

extension JSONMapping {
    /// The object's members without `keys` (fields the strict request decoders do not take).
    static func dropping(_ keys: [String], from value: JSONValue) -> JSONValue {
        guard case .object(var object) = value else { return value }
        for key in keys { object[key] = nil }
        return .object(object)
    }

    /// The elements of the answer's array member `key`, each read by `decode` with its path
    /// (`[0].actions[1]`); none when the member is absent or null.
    static func answerArray<Element>(
        _ json: JSONValue, _ key: String, field: String, of what: String,
        _ decode: (JSONValue, String) throws(ChimeError) -> Element
    ) throws(ChimeError) -> [Element] {
        let name = JSONPath.member(field, key)
        guard let value = json[key], value != .null else { return [] }
        guard case .array(let items) = value else {
            throw ChimeError(.malformedInput, field: name, "\(name): expected an array of \(what)")
        }
        var elements: [Element] = []
        for (index, item) in items.enumerated() { elements.append(try decode(item, JSONPath.element(name, index))) }
        return elements
    }

    /// The identifiers a removal answers with (`{"removed": [...]}` of `DELETE …/requests` and
    /// `…/notifications`); none when the member is absent.
    ///
    /// ```swift
    /// let gone = try JSONMapping.removedIdentifiers(answer)   // ["later"]
    /// ```
    package static func removedIdentifiers(_ answer: JSONValue?) throws(ChimeError) -> [String] {
        try answerArray(answer ?? .null, JSONFieldName.removed, field: "", of: "identifiers") {
            item, path throws(ChimeError) in
            guard case .string(let identifier) = item else {
                throw ChimeError(
                    .malformedInput, field: path, "\(path): expected an identifier, found \(item.shortDescription)")
            }
            return identifier
        }
    }

    /// Only the members a strict decoder accepts (the service may add fields).
    static func keeping(_ keys: [String], from value: JSONValue) -> JSONValue {
        guard case .object(let object) = value else { return value }
        var kept = JSONObject()
        for key in keys { if let member = object[key] { kept[key] = member } }
        return .object(kept)
    }
}

extension NotificationSettings {
    /// Reads `GET /v1/apps/{app}/settings` (the encoder's output); unknown or missing names keep the
    /// defaults.
    public init(json: JSONValue) throws(ChimeError) {
        guard case .object(let object) = json else {
            throw ChimeError(
                .malformedInput, field: "settings", "settings: expected an object, found \(json.kindDescription)")
        }
        self.init()
        func setting(_ key: String) -> UNNotificationSetting? {
            guard case .string(let name)? = object[key] else { return nil }
            return UNNotificationSetting(jsonName: name)
        }
        if case .string(let name)? = object[JSONFieldName.authorizationStatus],
            let status = UNAuthorizationStatus(name: name)
        {
            authorizationStatus = status
        }
        for field in Self.switchFields {
            if let value = setting(field.name) { self[keyPath: field.keyPath] = value }
        }
        if case .string(let name)? = object[JSONFieldName.alertStyle], let style = UNAlertStyle(jsonName: name) {
            alertStyle = style
        }
        if case .string(let name)? = object[JSONFieldName.showPreviewsSetting],
            let previews = UNShowPreviewsSetting(jsonName: name)
        {
            showPreviewsSetting = previews
        }
        if case .bool(let flag)? = object[JSONFieldName.providesAppNotificationSettings] {
            providesAppNotificationSettings = flag
        }
    }
}

extension NotificationRequest {
    /// A request as the service lists it (content fields, `identifier`, `trigger`), where `trigger`
    /// may also be `{"type": "push"}`.
    static func answer(_ json: JSONValue, field: String) throws(ChimeError) -> NotificationRequest {
        typealias Field = JSONFieldName.Request
        // The request's own fields as a body gives them (not nested `content`, not what a listing adds).
        let known =
            ownFields.filter { $0 != Field.content && !listedFields.contains($0) } + JSONMapping.contentFields
        var value = JSONMapping.keeping(known, from: json)
        var push = false
        if case .object(let trigger)? = value[Field.trigger],
            trigger[JSONFieldName.Trigger.type] == .string(JSONFieldName.Trigger.Kind.push)
        {
            push = true
            value = JSONMapping.dropping([Field.trigger], from: value)
        }
        var request = try NotificationRequest(json: value, field: field)
        if push { request.trigger = .push }
        return request
    }
}

extension PendingRequest {
    /// An item of `GET /v1/apps/{app}/requests`.
    public init(json: JSONValue, field: String = "") throws(ChimeError) {
        let request = try NotificationRequest.answer(json, field: field)
        var next: Date?
        let name = JSONFieldName.Request.nextTriggerDate
        if let value = json[name], value != .null {
            next = try JSONMapping.date(value, field: JSONPath.member(field, name), code: .malformedInput)
        }
        self.init(request: request, nextFireDate: next, anchor: next ?? Date(timeIntervalSince1970: 0))
    }
}

extension DeliveredNotification {
    /// An item of `GET /v1/apps/{app}/notifications`, or an event's `notification`.
    public init(json: JSONValue, field: String = "") throws(ChimeError) {
        let request = try NotificationRequest.answer(json, field: field)
        let name = JSONPath.member(field, JSONFieldName.Request.date)
        guard let dateValue = json[JSONFieldName.Request.date] else {
            throw ChimeError(.malformedInput, field: name, "\(name) is missing")
        }
        self.init(request: request, date: try JSONMapping.date(dateValue, field: name, code: .malformedInput))
    }
}

extension PendingRequest {
    /// The upcoming fire dates an item of `GET /v1/apps/{app}/requests?next=N` carries
    /// (``json(upcoming:timeZone:)``: `nextTriggerDates`); none when not asked for.
    ///
    /// ```swift
    /// for date in try PendingRequest.upcomingDates(json: item, field: "[0]").dropFirst() { print("then", date) }
    /// ```
    public static func upcomingDates(json: JSONValue, field: String = "") throws(ChimeError) -> [Date] {
        try JSONMapping.answerArray(json, JSONFieldName.Request.nextTriggerDates, field: field, of: "dates") {
            item, path throws(ChimeError) in try JSONMapping.date(item, field: path, code: .malformedInput)
        }
    }
}

extension DeliveredNotification {
    /// The actions an item of `GET /v1/apps/{app}/notifications` carries: its category's
    /// (``json(category:presentation:)``: `actions`); none when it has no category.
    ///
    /// ```swift
    /// let buttons = try DeliveredNotification.actions(json: item, field: "[0]").map(\.title)
    /// ```
    public static func actions(json: JSONValue, field: String = "") throws(ChimeError) -> [NotificationAction] {
        try JSONMapping.answerArray(json, JSONFieldName.Request.actions, field: field, of: "actions") {
            item, path throws(ChimeError) in
            try NotificationAction(json: JSONMapping.keeping(NotificationAction.fields, from: item), field: path)
        }
    }
}

extension NotificationResponse {
    /// An item of `GET /v1/apps/{app}/responses`, or an event's `response`.
    public init(json: JSONValue, field: String = "") throws(ChimeError) {
        typealias Field = JSONFieldName.Response
        let path = { (key: String) in JSONPath.member(field, key) }
        guard case .integer(let id)? = json[Field.id] else {
            throw ChimeError(
                .malformedInput, field: path(Field.id), "\(path(Field.id)): expected the response's integer id")
        }
        guard let notification = json[Field.notification] else {
            throw ChimeError(.malformedInput, field: path(Field.notification), "\(path(Field.notification)) is missing")
        }
        guard case .string(let action)? = json[Field.actionIdentifier] else {
            throw ChimeError(
                .malformedInput, field: path(Field.actionIdentifier),
                "\(path(Field.actionIdentifier)): expected a string")
        }
        var text: String?
        if case .string(let value)? = json[Field.userText] { text = value }
        guard let dateValue = json[Field.date] else {
            throw ChimeError(.malformedInput, field: path(Field.date), "\(path(Field.date)) is missing")
        }
        self.init(
            id: id, notification: try DeliveredNotification(json: notification, field: path(Field.notification)),
            actionIdentifier: action,
            userText: text, date: try JSONMapping.date(dateValue, field: path(Field.date), code: .malformedInput))
    }
}

extension EscalationReceipt {
    /// `GET /v1/apps/{app}/notifications/{identifier}/receipt`'s answer (``json``).
    public init(json: JSONValue, field: String = "") throws(ChimeError) {
        typealias Field = JSONFieldName.Receipt
        let path = { (key: String) in JSONPath.member(field, key) }
        func string(_ key: String) throws(ChimeError) -> String {
            guard case .string(let value)? = json[key] else {
                throw ChimeError(.malformedInput, field: path(key), "\(path(key)): expected a string")
            }
            return value
        }
        func number(_ key: String) throws(ChimeError) -> Double {
            switch json[key] {
            case .number(let value)?: return value
            case .integer(let value)?: return Double(value)
            default: throw ChimeError(.malformedInput, field: path(key), "\(path(key)): expected a number")
            }
        }
        func date(_ key: String) throws(ChimeError) -> Date? {
            guard let value = json[key], value != .null else { return nil }
            return try JSONMapping.date(value, field: path(key), code: .malformedInput)
        }
        func optionalString(_ key: String) -> String? { if case .string(let value)? = json[key] { value } else { nil } }
        guard let delivered = try date(Field.deliveredAt) else {
            throw ChimeError(.malformedInput, field: path(Field.deliveredAt), "\(path(Field.deliveredAt)) is missing")
        }
        self.init(
            app: try string(Field.app), identifier: try string(Field.identifier), sequence: 0, deliveredAt: delivered,
            escalation: NotificationEscalation(
                every: try number(Field.escalateEvery), for: try number(Field.escalateFor)),
            alerts: Int(try number(Field.alerts)), lastAlertedAt: try date(Field.lastAlertedAt),
            nextAlertAt: try date(Field.nextAlertAt),
            acknowledgedAt: try date(Field.acknowledgedAt), actionIdentifier: optionalString(Field.actionIdentifier),
            surface: optionalString(Field.surface), expired: json[Field.expired] == .bool(true),
            removedAt: try date(Field.removedAt))
    }
}

extension NotificationCategory {
    /// A category as the service sends it (fields a later service adds are ignored).
    static func answer(_ json: JSONValue, field: String) throws(ChimeError) -> NotificationCategory {
        var value = JSONMapping.keeping(fields, from: json)
        let actionsField = JSONFieldName.Category.actions
        if case .object(var object) = value, case .array(let actions)? = object[actionsField] {
            object[actionsField] = .array(actions.map { JSONMapping.keeping(NotificationAction.fields, from: $0) })
            value = .object(object)
        }
        return try NotificationCategory(json: value, field: field)
    }
}

extension UNNotificationPresentationOptions {
    /// Option names as the service sends them; names this version does not know are ignored.
    static func answer(_ json: JSONValue?) -> UNNotificationPresentationOptions? {
        JSONMapping.answerOptions(json, table: names)
    }
}

extension EngineEvent {
    /// An event of the service's event stream (`data:` of `GET /v1/apps/{app}/events`). An event of
    /// a kind this version does not know is `nil`.
    public init?(json: JSONValue) throws(ChimeError) {
        typealias Field = JSONFieldName.Event
        guard case .string(let kindName)? = json[Field.kind], let kind = Kind(rawValue: kindName) else { return nil }
        guard case .string(let app)? = json[Field.app] else {
            throw ChimeError(.malformedInput, field: Field.app, "the event has no app")
        }
        var sequence: Int64 = 0
        if case .integer(let value)? = json[Field.sequence] { sequence = value }
        let date =
            try json[Field.date].map { value throws(ChimeError) in
                try JSONMapping.date(value, field: Field.date, code: .malformedInput)
            } ?? Date()
        func notification() throws(ChimeError) -> DeliveredNotification {
            guard let value = json[Field.notification] else {
                throw ChimeError(
                    .malformedInput, field: Field.notification, "a \(kind.rawValue) event without its notification")
            }
            return try DeliveredNotification(json: value, field: Field.notification)
        }
        var identifiers: [String] = []
        if case .array(let items)? = json[Field.identifiers] {
            identifiers = items.compactMap { if case .string(let text) = $0 { text } else { nil } }
        }
        let payload: Payload
        switch kind {
        case .delivered, .realerted:
            let delivered = try notification()
            let settings = try json[Field.settings].map { value throws(ChimeError) in
                try NotificationSettings(json: value)
            }
            var category: NotificationCategory?
            if let value = json[Field.category], value != .null {
                category = try NotificationCategory.answer(value, field: Field.category)
            }
            let presentation =
                UNNotificationPresentationOptions.answer(json[Field.presentation])
                ?? Presentation.background(for: delivered.request.content, settings: settings ?? .allowingEverything)
            var badge: Int?
            if case .integer(let value)? = json[Field.badge] { badge = Int(exactly: value) }
            var delivery = Delivery(
                notification: delivered, category: category, settings: settings ?? .allowingEverything,
                presentation: presentation, badge: badge)
            delivery.focus = FocusDecision(json: json[Field.focus])
            if let value = json[Field.nextTriggerDate], value != .null {
                delivery.nextTriggerDate = try JSONMapping.date(
                    value, field: Field.nextTriggerDate, code: .malformedInput)
            }
            if kind == .realerted {
                guard case .integer(let alert)? = json[Field.alert], let number = Int(exactly: alert), number >= 2
                else {
                    throw ChimeError(
                        .malformedInput, field: Field.alert, "a realerted event without its alert number (2 or more)")
                }
                delivery.alert = number
                payload = .realerted(delivery)
            } else {
                payload = .delivered(delivery)
            }
        case .response:
            guard let value = json[Field.response] else {
                throw ChimeError(.malformedInput, field: Field.response, "a response event without its response")
            }
            payload = .response(try NotificationResponse(json: value, field: Field.response))
        case .removed:
            payload = .removed(
                identifiers: identifiers, scope: json[Field.scope] == .string("pending") ? .pending : .delivered,
                reason: json[Field.reason] == .string(RemovalReason.autoDismiss.rawValue) ? .autoDismiss : .request)
        case .silentPush:
            payload = .silentPush(try notification())
        case .settings:
            payload = .settings(
                try json[Field.settings].map { value throws(ChimeError) in try NotificationSettings(json: value) }
                    ?? NotificationSettings())
        case .scheduled:
            var requests: [PendingRequest] = []
            if case .array(let items)? = json[Field.requests] {
                for (index, item) in items.enumerated() {
                    requests.append(try PendingRequest(json: item, field: "\(Field.requests)[\(index)]"))
                }
            }
            payload = .scheduled(identifiers: identifiers, requests: requests)
        case .categories:
            var categories: [NotificationCategory] = []
            if case .array(let items)? = json[Field.categories] {
                for (index, item) in items.enumerated() {
                    categories.append(try NotificationCategory.answer(item, field: "\(Field.categories)[\(index)]"))
                }
            }
            payload = .categories(categories)
        case .app:
            payload = .app(json[Field.change] == .string("removed") ? .removed : .updated)
        case .quarantined:
            guard let value = json[Field.quarantined] else {
                throw ChimeError(.malformedInput, field: Field.quarantined, "a quarantined event without its entry")
            }
            payload = .quarantined(try QuarantinedRequest.answer(value, field: Field.quarantined))
        case .expired:
            guard let value = json[Field.request] else {
                throw ChimeError(.malformedInput, field: Field.request, "an expired event without its request")
            }
            let due =
                try json[Field.dueDate].map { value throws(ChimeError) in
                    try JSONMapping.date(value, field: Field.dueDate, code: .malformedInput)
                } ?? date
            payload = .expired(
                ExpiredRequest(request: try NotificationRequest.answer(value, field: Field.request), dueDate: due))
        case .focus:
            var modes: [FocusStatus] = []
            if case .array(let items)? = json[Field.modes] {
                for item in items { modes.append(try FocusStatus(json: item)) }
            }
            payload = .focus(modes)
        }
        self.init(sequence: sequence, app: app, date: date, payload: payload)
    }
}

extension NotificationSettings {
    /// What an app that asked for alerts, sounds and badges and was allowed has: for events from a
    /// service too old to send the settings a delivery was decided with.
    static var allowingEverything: NotificationSettings {
        Presentation.settings(after: .grant, options: [.alert, .sound, .badge], previous: NotificationSettings())
    }
}

extension QuarantinedRequest {
    /// A quarantine entry as the service's JSON gives it (``json``).
    static func answer(_ json: JSONValue, field: String) throws(ChimeError) -> QuarantinedRequest {
        typealias Field = JSONFieldName.Quarantine
        let reader = try JSONObjectReader(json, path: field, what: "a quarantined request", code: .malformedInput)
        var request: NotificationRequest?
        if let value = reader.value(Field.request) {
            request = try NotificationRequest.answer(value, field: reader.field(Field.request))
        }
        return QuarantinedRequest(
            id: Int64(try reader.requiredInt(Field.id, code: .malformedInput)),
            app: try reader.requiredString(Field.app, code: .malformedInput),
            identifier: try reader.requiredString(Field.identifier, code: .malformedInput),
            reason: try reader.requiredString(Field.reason, code: .malformedInput),
            date: try reader.answerDate(Field.date) ?? Date(timeIntervalSince1970: 0), request: request)
    }
}
