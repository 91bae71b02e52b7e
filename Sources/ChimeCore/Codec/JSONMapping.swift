import Foundation

// Decoders: JSON (Apple's field names) → Chime's values. See ``JSONMapping`` for the rules shared by
// all of them (strict fields, null, numbers, dates, user info).

extension JSONMapping {
    /// The content fields of a request, in output order (``JSONFieldName/Content``).
    public static let contentFields = JSONFieldName.Content.all

    // MARK: user info

    /// `userInfo` from a JSON object (see ``JSONMapping`` for the mapping of `$data` and `$date`).
    public static func userInfo(_ value: JSONValue, field: String = JSONFieldName.Content.userInfo) throws(ChimeError)
        -> [String:
        PropertyListValue]
    {
        guard case .object(let object) = value else {
            throw ChimeError(
                .invalidUserInfo, field: field,
                "\(field): expected an object (any JSON object), found \(value.shortDescription)")
        }
        var out: [String: PropertyListValue] = [:]
        out.reserveCapacity(object.count)
        for (key, member) in object { out[key] = try propertyList(member, field: JSONPath.member(field, key)) }
        return out
    }

    /// One property-list value from JSON; `null` is rejected with its path.
    public static func propertyList(_ value: JSONValue, field: String, depth: Int = 0) throws(ChimeError)
        -> PropertyListValue
    {
        switch value {
        case .null:
            throw ChimeError(
                .invalidUserInfo, field: field,
                "\(field) is null, which is not a property-list value; omit the key, or use a string, number, boolean, array or object"
            )
        case .bool(let b): return .bool(b)
        case .integer(let i): return .integer(i)
        case .number(let d): return .double(d)
        case .string(let s): return .string(s)
        case .array(let elements):
            var out: [PropertyListValue] = []
            out.reserveCapacity(elements.count)
            for (i, element) in elements.enumerated() {
                out.append(try propertyList(element, field: JSONPath.element(field, i), depth: depth + 1))
            }
            return .array(out)
        case .object(let object):
            if object.count == 1, let (key, inner) = object.first {
                if key == "$data" {
                    guard case .string(let s) = inner, let data = Data(base64Encoded: s) else {
                        throw ChimeError(
                            .invalidUserInfo, field: JSONPath.member(field, "$data"),
                            "\(JSONPath.member(field, "$data")): expected a base64 string (an object {\"$data\": …} holds bytes), found \(inner.shortDescription)"
                        )
                    }
                    return .data(data)
                }
                if key == "$date" {
                    return .date(try date(inner, field: JSONPath.member(field, "$date"), code: .invalidUserInfo))
                }
            }
            var out: [String: PropertyListValue] = [:]
            out.reserveCapacity(object.count)
            for (key, member) in object {
                out[key] = try propertyList(member, field: JSONPath.member(field, key), depth: depth + 1)
            }
            return .dictionary(out)
        }
    }

    // MARK: bulk

    /// One request (an object) or several (an array of objects). Errors in an array name the index:
    /// `[3].identifier`. Identifiers repeated within one array are rejected.
    public static func requests(_ value: JSONValue) throws(ChimeError) -> [NotificationRequest] {
        guard case .array(let elements) = value else { return [try NotificationRequest(json: value)] }
        var out: [NotificationRequest] = []
        out.reserveCapacity(elements.count)
        var seen: Set<LiteralKey> = []
        for (i, element) in elements.enumerated() {
            let request = try NotificationRequest(json: element, field: "[\(i)]")
            if !seen.insert(LiteralKey(request.identifier)).inserted {
                throw ChimeError(
                    .invalidIdentifier, field: "[\(i)].identifier",
                    "[\(i)].identifier \"\(JSONParser.clip(request.identifier))\" appears earlier in the same array; each request in one call needs its own identifier"
                )
            }
            out.append(request)
        }
        return out
    }

    /// A set of categories: an array of category objects, identifiers unique.
    public static func categories(_ value: JSONValue) throws(ChimeError) -> [NotificationCategory] {
        guard case .array(let elements) = value else {
            throw ChimeError(
                .invalidCategory, field: nil,
                "the body: expected an array of categories, found \(value.shortDescription)")
        }
        var out: [NotificationCategory] = []
        var seen: Set<LiteralKey> = []
        for (i, element) in elements.enumerated() {
            let category = try NotificationCategory(json: element, field: "[\(i)]")
            if !seen.insert(LiteralKey(category.identifier)).inserted {
                throw ChimeError(
                    .invalidCategory, field: "[\(i)].identifier",
                    "[\(i)].identifier: category \"\(JSONParser.clip(category.identifier))\" is listed twice; each category identifier may appear once"
                )
            }
            out.append(category)
        }
        return out
    }
}

// MARK: - Request and content

extension NotificationRequest {
    /// The fields of a request beside the content fields, with what a listed request adds
    /// (``listedFields``: accepted and ignored, so a listed request can be added again).
    static let ownFields = {
        typealias Field = JSONFieldName.Request
        return [
            Field.identifier, Field.content, Field.trigger, Field.expiresIn, Field.expirationDate, Field.dismissIn,
            Field.dismissAt, Field.escalateEvery, Field.escalateFor, Field.nextTriggerDate, Field.nextTriggerDates,
        ]
    }()

    /// What a listed request adds to the request's own fields.
    static let listedFields = [JSONFieldName.Request.nextTriggerDate, JSONFieldName.Request.nextTriggerDates]
    /// The fields of a request with its content at the top level: made once, not on every add.
    static let flatFields = ownFields + JSONMapping.contentFields

    /// Decodes a request: `identifier`, the content fields at the top level (or nested under
    /// `"content"`, not both), `trigger` (absent or `null`: deliver at once), and when it expires
    /// (Chime's addition): `expiresIn` (seconds after the add) or `expirationDate` (an ISO 8601
    /// date), not both; and when the delivered notification stops being relevant and is removed
    /// (Chime's addition): `dismissIn` (seconds after each delivery) or `dismissAt` (a date), not both;
    /// and whether it is alerted again until answered (Chime's addition): `escalateEvery` and
    /// `escalateFor`, both seconds, together.
    ///
    /// ```swift
    /// let request = try NotificationRequest(json: .parse(#"{"identifier": "a", "title": "Hi", "trigger": {"type": "timeInterval", "timeInterval": 10}}"#))
    /// ```
    /// - Parameter field: the path of this object in a larger document (`[3]` in a bulk array).
    public init(json: JSONValue, field: String = "") throws(ChimeError) {
        let reader = try JSONObjectReader(json, path: field, what: "a notification request")
        typealias Field = JSONFieldName.Request
        let identifier = try reader.identifier(what: "request")
        let content: NotificationContent
        if let nested = reader.value(Field.content) {
            if let stray = reader.object.keys.first(where: { JSONMapping.contentFields.contains($0) }) {
                throw ChimeError(
                    .invalidValue, field: reader.field(stray),
                    "\(reader.field(stray)) is given both at the top level and with \"content\"; put the content fields in one place (the top level is canonical)"
                )
            }
            try reader.finish(accepted: Self.ownFields, what: "a request")
            content = try NotificationContent(json: nested, field: reader.field(Field.content))
        } else {
            try reader.finish(accepted: Self.flatFields, what: "a request")
            content = try NotificationContent(reader: reader)
        }
        var trigger: NotificationTrigger?
        if let value = reader.value(Field.trigger) {
            trigger = try NotificationTrigger(json: value, field: reader.field(Field.trigger))
        }
        self.init(
            identifier: identifier, content: content, trigger: trigger, expiration: try Self.expiration(reader),
            autoDismiss: try Self.autoDismiss(reader), escalation: try Self.escalation(reader))
    }

    /// `escalateEvery` and `escalateFor` (seconds; `null` is the same as absent), both or neither.
    /// The service's limits are the engine's to check (its configuration).
    static func escalation(_ reader: JSONObjectReader) throws(ChimeError) -> NotificationEscalation? {
        typealias Field = JSONFieldName.Request
        let every = reader.value(Field.escalateEvery).flatMap { $0 == .null ? nil : $0 }
        let window = reader.value(Field.escalateFor).flatMap { $0 == .null ? nil : $0 }
        switch (every, window) {
        case (nil, nil):
            return nil
        case (_?, nil), (nil, _?):
            let missing = every == nil ? Field.escalateEvery : Field.escalateFor
            throw ChimeError(
                .invalidValue, field: reader.field(missing),
                "\(reader.field(missing)) is missing; an escalation takes both escalateEvery (seconds between alerts) and escalateFor (seconds after the delivery when it stops)"
            )
        case (_?, _?):
            let interval = try reader.requiredDouble(Field.escalateEvery, hint: " of seconds between alerts")
            let duration = try reader.requiredDouble(Field.escalateFor, hint: " of seconds after the delivery")
            return NotificationEscalation(every: interval, for: duration)
        }
    }

    /// `expiresIn` or `expirationDate` (`null` is the same as absent).
    static func expiration(_ reader: JSONObjectReader) throws(ChimeError) -> NotificationDeadline? {
        try deadline(
            reader, seconds: JSONFieldName.Request.expiresIn, date: JSONFieldName.Request.expirationDate,
            after: "the add")
    }

    /// `dismissIn` or `dismissAt` (`null` is the same as absent): when the delivered notification
    /// stops being relevant.
    static func autoDismiss(_ reader: JSONObjectReader) throws(ChimeError) -> NotificationDeadline? {
        let field = reader.field(JSONFieldName.Request.dismissIn)
        let deadline = try deadline(
            reader, seconds: JSONFieldName.Request.dismissIn, date: JSONFieldName.Request.dismissAt,
            after: "each delivery")
        if case .after(0)? = deadline {
            throw ChimeError(
                .invalidValue, field: field,
                "\(field) is 0: the notification would be gone as it came; give more than 0 seconds after each delivery, or dismissAt"
            )
        }
        return deadline
    }

    /// A deadline given as the field `seconds` (after `after`) or the field `date`, not both.
    private static func deadline(
        _ reader: JSONObjectReader, seconds secondsField: String, date dateField: String,
        after: String
    ) throws(ChimeError) -> NotificationDeadline? {
        let seconds = reader.value(secondsField).flatMap { $0 == .null ? nil : $0 }
        let date = reader.value(dateField).flatMap { $0 == .null ? nil : $0 }
        switch (seconds, date) {
        case (nil, nil):
            return nil
        case (_?, _?):
            throw ChimeError(
                .invalidValue, field: reader.field(secondsField),
                "\(reader.field(secondsField)) and \(reader.field(dateField)) are both given; give one: seconds after \(after), or a date"
            )
        case (_?, nil):
            let value = try reader.requiredDouble(secondsField, hint: " of seconds after \(after)")
            let deadline = NotificationDeadline.after(value)
            try Validation.validate(deadline, field: reader.field(secondsField))
            return deadline
        case (nil, let value?):
            return .at(try JSONMapping.date(value, field: reader.field(dateField)))
        }
    }
}

extension NotificationContent {
    /// Decodes content from an object of content fields (`title`, `body`, `sound`, …).
    public init(json: JSONValue, field: String = JSONFieldName.Request.content) throws(ChimeError) {
        let reader = try JSONObjectReader(json, path: field, what: "notification content")
        try reader.finish(accepted: JSONMapping.contentFields, what: "notification content")
        try self.init(reader: reader)
    }

    init(reader r: JSONObjectReader) throws(ChimeError) {
        typealias Field = JSONFieldName.Content
        self.init()
        title = try r.string(Field.title) ?? ""
        subtitle = try r.string(Field.subtitle) ?? ""
        body = try r.string(Field.body) ?? ""
        // The JSON types here; the ranges (badge, summaryArgumentCount, relevanceScore, volume) are Validation's.
        if let value = r.value(Field.badge) {
            badge = try JSONObjectReader.int(value, field: r.field(Field.badge), code: .invalidValue)
            try Validation.validateBadge(badge, field: r.field(Field.badge))
        }
        if let value = r.value(Field.sound) { sound = try NotificationSound(json: value, field: r.field(Field.sound)) }
        launchImageName = try r.string(Field.launchImageName) ?? ""
        if let value = r.value(Field.userInfo) {
            userInfo = try JSONMapping.userInfo(value, field: r.field(Field.userInfo))
        }
        if let elements = try r.array(Field.attachments, of: "attachments") {
            for (i, element) in elements.enumerated() {
                attachments.append(
                    try NotificationAttachment(json: element, field: JSONPath.element(r.field(Field.attachments), i)))
            }
        }
        categoryIdentifier = try r.string(Field.categoryIdentifier) ?? ""
        threadIdentifier = try r.string(Field.threadIdentifier) ?? ""
        targetContentIdentifier = try r.string(Field.targetContentIdentifier)
        summaryArgument = try r.string(Field.summaryArgument) ?? ""
        summaryArgumentCount = try r.int(Field.summaryArgumentCount) ?? 0
        try Validation.validateSummaryArgumentCount(summaryArgumentCount, field: r.field(Field.summaryArgumentCount))
        if let value = r.value(Field.interruptionLevel) {
            let accepted = "passive, active, timeSensitive, critical"
            guard case .string(let name) = value else {
                throw r.typeError(Field.interruptionLevel, expected: "one of \(accepted)", found: value)
            }
            guard let level = UNNotificationInterruptionLevel(name: name) else {
                let field = r.field(Field.interruptionLevel)
                throw ChimeError(
                    .invalidValue, field: field,
                    "\(field): \"\(JSONParser.clip(name))\" is not an interruption level; accepted: \(accepted)")
            }
            interruptionLevel = level
        }
        if let score = try r.double(Field.relevanceScore) {
            try Validation.validateRelevanceScore(score, field: r.field(Field.relevanceScore))
            relevanceScore = score
        }
        filterCriteria = try r.string(Field.filterCriteria)
    }
}

extension NotificationSound {
    /// Decodes `"default"`, a file name (`"ping.caf"`), or `{"name": "ping.caf", "critical": true, "volume": 0.5}`
    /// (no `name`: the default sound).
    public init(json: JSONValue, field: String = JSONFieldName.Content.sound) throws(ChimeError) {
        switch json {
        case .string(let name):
            guard !name.isEmpty else {
                throw ChimeError(
                    .invalidValue, field: field,
                    "\(field) is an empty string; accepted: \"default\", a sound file name such as \"ping.caf\", or {\"name\": …, \"critical\": true, \"volume\": 0.5}"
                )
            }
            self.init(name: name == "default" ? nil : name)
        case .object:
            typealias Field = JSONFieldName.Sound
            let r = try JSONObjectReader(json, path: field, what: "a sound")
            try r.finish(accepted: Field.all, what: "a sound")
            let name = try r.string(Field.name)
            var volume: Float?
            if let v = try r.double(Field.volume) {
                try Validation.validateVolume(v, field: r.field(Field.volume))
                volume = Float(v)
            }
            self.init(
                name: name == "default" || name == "" ? nil : name, isCritical: try r.bool(Field.critical) ?? false,
                volume: volume)
        default:
            throw ChimeError(
                .invalidValue, field: field,
                "\(field): expected \"default\", a sound file name, or an object {\"name\", \"critical\", \"volume\"}, found \(json.shortDescription)"
            )
        }
    }
}

extension NotificationAttachment {
    /// Decodes `{"identifier": "photo", "url": "file:///…/photo.png", "type": "public.png"}` (`type`
    /// optional), with the thumbnail options `thumbnailHidden` (a boolean), `thumbnailClippingRect`
    /// (`{"x", "y", "width", "height"}` in unit coordinates) and `thumbnailTime` (seconds). The file
    /// itself is checked by the engine, not here.
    public init(json: JSONValue, field: String) throws(ChimeError) {
        typealias Field = JSONFieldName.Attachment
        let r = try JSONObjectReader(json, path: field, what: "an attachment")
        try r.finish(accepted: Field.all, what: "an attachment")
        let identifier = try r.string(Field.identifier) ?? ""
        let text = try r.requiredString(Field.url, hint: " (a file URL or an absolute path)")
        let url: URL
        if text.hasPrefix("/") {
            url = URL(fileURLWithPath: text)
        } else if let parsed = URL(string: text), parsed.scheme != nil {
            url = parsed
        } else {
            throw ChimeError(
                .invalidValue, field: r.field(Field.url),
                "\(r.field(Field.url)): \"\(JSONParser.clip(text))\" is not a URL; accepted: a file URL (file:///path/photo.png) or an absolute path"
            )
        }
        self.init(identifier: identifier, url: url, type: try r.string(Field.type) ?? "")
        thumbnailHidden = try r.bool(Field.thumbnailHidden) ?? false
        if let rect = r.value(Field.thumbnailClippingRect) {
            let box = try JSONObjectReader(
                rect, path: r.field(Field.thumbnailClippingRect), what: "a clipping rectangle")
            try box.finish(accepted: Field.rectangle, what: "a clipping rectangle")
            thumbnailClippingRect = ClippingRect(
                x: try box.requiredDouble(Field.x), y: try box.requiredDouble(Field.y),
                width: try box.requiredDouble(Field.width), height: try box.requiredDouble(Field.height))
        }
        thumbnailTime = try r.double(Field.thumbnailTime)
        try Validation.validateThumbnail(self, field: field)
    }
}

// MARK: - Triggers

extension NotificationTrigger {
    static let acceptedTypes = "timeInterval, calendar, location, recurrence, or omit the trigger to deliver at once"

    /// Decodes `{"type": "timeInterval" | "calendar" | "location" | "recurrence", …}` (a recurrence
    /// trigger: `rrule`, `start` as a wall time, `timeZone`, optional `exceptionDates`; no
    /// `repeats`, its rule says how it ends). `push` triggers only come
    /// from pushes and are rejected here. Parameters the Swift initialisers would trap on (an
    /// interval under 60 seconds that repeats, a radius of 0) are errors naming the field.
    public init(json: JSONValue, field: String = JSONFieldName.Request.trigger) throws(ChimeError) {
        typealias Field = JSONFieldName.Trigger
        typealias Kind = JSONFieldName.Trigger.Kind
        let r = try JSONObjectReader(json, path: field, what: "a trigger", code: .invalidTrigger)
        let typeField = r.field(Field.type)
        guard let typeValue = r.value(Field.type) else {
            throw ChimeError(
                .invalidTrigger, field: typeField, "\(typeField) is missing; accepted: \(Self.acceptedTypes)")
        }
        guard case .string(let type) = typeValue else {
            throw r.typeError(
                Field.type, expected: "a trigger type (\(Self.acceptedTypes))", found: typeValue, code: .invalidTrigger)
        }
        if type == Kind.recurrence {
            self = .recurrence(try RecurrenceSchedule(reader: r))
            return
        }
        let repeats = try r.bool(Field.repeats, code: .invalidTrigger) ?? false
        switch type {
        case Kind.timeInterval:
            try r.finish(accepted: Field.timeIntervalFields, what: "a timeInterval trigger")
            let interval = try r.requiredDouble(
                Field.timeInterval, code: .invalidTrigger, hint: " of seconds greater than 0")
            self = .timeInterval(interval, repeats: repeats)
            // The rules (greater than 0, at least 60 when repeating) are Validation's alone.
            try Validation.validate(self, field: field)
        case Kind.calendar:
            try r.finish(accepted: Field.calendarFields, what: "a calendar trigger")
            let componentsField = r.field(Field.dateComponents)
            guard let value = r.value(Field.dateComponents) else {
                throw ChimeError(
                    .invalidTrigger, field: componentsField,
                    "\(componentsField) is missing; give the components to match, such as {\"hour\": 8, \"minute\": 30}"
                )
            }
            self = .calendar(try JSONMapping.dateComponents(value, field: componentsField), repeats: repeats)
        case Kind.location:
            try r.finish(accepted: Field.locationFields, what: "a location trigger")
            let regionField = r.field(Field.region)
            guard let value = r.value(Field.region) else {
                throw ChimeError(
                    .invalidTrigger, field: regionField,
                    "\(regionField) is missing; give {\"identifier\", \"latitude\", \"longitude\", \"radius\"}")
            }
            self = .location(try CircularRegion(json: value, field: regionField), repeats: repeats)
        case Kind.push:
            throw ChimeError(
                .invalidTrigger, field: typeField,
                "\(typeField): \"push\" triggers come only from pushes (POST /3/device/…); accepted: \(Self.acceptedTypes)"
            )
        default:
            var message = "\(typeField): \"\(JSONParser.clip(type))\" is not a trigger type"
            if let suggestion = JSONMapping.closest(to: type, in: Kind.given) {
                message += " (did you mean \"\(suggestion)\"?)"
            }
            throw ChimeError(.invalidTrigger, field: typeField, message + "; accepted: \(Self.acceptedTypes)")
        }
    }
}

extension JSONMapping {
    /// Date components for a calendar trigger: integers, an optional IANA `timeZone`; at least one
    /// component, each in range (Validation's rules).
    public static func dateComponents(_ value: JSONValue, field: String) throws(ChimeError) -> DateComponents {
        let r = try JSONObjectReader(value, path: field, what: "date components", code: .invalidTrigger)
        let timeZone = JSONFieldName.Trigger.timeZone
        try r.finish(accepted: Validation.dateComponentRanges.map(\.name) + [timeZone], what: "date components")
        var components = DateComponents()
        for (name, keyPath, _) in Validation.dateComponentRanges {
            if let v = try r.int(name, code: .invalidTrigger) { components[keyPath: keyPath] = v }
        }
        if let identifier = try r.string(timeZone, code: .invalidTrigger) {
            guard let zone = TimeZone(identifier: identifier) else {
                throw ChimeError(
                    .invalidTrigger, field: r.field(timeZone),
                    "\(r.field(timeZone)): \"\(JSONParser.clip(identifier))\" is not a known time zone; accepted: an IANA identifier such as \"Europe/Berlin\", \"America/New_York\" or \"UTC\", or omit it to follow the device's time zone"
                )
            }
            components.timeZone = zone
        }
        try Validation.validate(components, field: field)
        return components
    }
}

extension CircularRegion {
    /// Decodes `{"identifier", "latitude", "longitude", "radius", "notifyOnEntry", "notifyOnExit"}`
    /// (both notify flags default to `true`, as on Apple's platforms).
    public init(json: JSONValue, field: String = JSONFieldName.Trigger.region) throws(ChimeError) {
        typealias Field = JSONFieldName.Region
        let r = try JSONObjectReader(json, path: field, what: "a region", code: .invalidTrigger)
        try r.finish(accepted: Field.all, what: "a region")
        let identifier = try r.identifier(code: .invalidTrigger, what: "region")
        let center = try Coordinate(reader: r)
        let radius = try r.requiredDouble(Field.radius, code: .invalidTrigger, hint: " of metres greater than 0")
        let entry = try r.bool(Field.notifyOnEntry, code: .invalidTrigger) ?? true
        let exit = try r.bool(Field.notifyOnExit, code: .invalidTrigger) ?? true
        self.init(identifier: identifier, center: center, radius: radius, notifyOnEntry: entry, notifyOnExit: exit)
        // Coordinates in range, a positive radius, entry or exit: Validation's rules.
        try Validation.validate(self, field: field)
    }
}

extension Coordinate {
    /// Decodes `{"latitude": 52.52, "longitude": 13.40}` (degrees; −90…90 and −180…180).
    public init(json: JSONValue, field: String = "") throws(ChimeError) {
        let r = try JSONObjectReader(json, path: field, what: "a location")
        try r.finish(accepted: JSONFieldName.Region.coordinate, what: "a location")
        try self.init(reader: r, code: .invalidValue)
    }

    init(reader r: JSONObjectReader, code: ChimeError.Code = .invalidTrigger) throws(ChimeError) {
        let latitude = try r.requiredDouble(
            JSONFieldName.Region.latitude, code: code, hint: " of degrees from -90 to 90")
        let longitude = try r.requiredDouble(
            JSONFieldName.Region.longitude, code: code, hint: " of degrees from -180 to 180")
        self.init(latitude: latitude, longitude: longitude)
        try Validation.validate(self, field: r.path, code: code)
    }
}

// MARK: - Categories

extension NotificationCategory {
    static let fields = JSONFieldName.Category.all

    /// Decodes a category with its actions; options by Apple's names; an action identifier listed
    /// twice is an error.
    public init(json: JSONValue, field: String = "") throws(ChimeError) {
        typealias Field = JSONFieldName.Category
        let r = try JSONObjectReader(json, path: field, what: "a category", code: .invalidCategory)
        try r.finish(accepted: Self.fields, what: "a category")
        let identifier = try r.identifier(code: .invalidCategory, what: "category")
        var actions: [NotificationAction] = []
        var seen: Set<LiteralKey> = []
        for (i, element) in (try r.array(Field.actions, code: .invalidCategory, of: "actions") ?? []).enumerated() {
            let at = JSONPath.element(r.field(Field.actions), i)
            let action = try NotificationAction(json: element, field: at)
            if !seen.insert(LiteralKey(action.identifier)).inserted {
                let name = JSONPath.member(at, JSONFieldName.Action.identifier)
                throw ChimeError(
                    .invalidCategory, field: name,
                    "\(name): action \"\(JSONParser.clip(action.identifier))\" is listed twice in category \"\(JSONParser.clip(identifier))\"; each action identifier may appear once in a category"
                )
            }
            actions.append(action)
        }
        self.init(
            identifier: identifier, actions: actions,
            intentIdentifiers: try r.strings(Field.intentIdentifiers, code: .invalidCategory) ?? [],
            options: try r.options(Field.options, table: UNNotificationCategoryOptions.names, code: .invalidCategory)
                ?? [],
            hiddenPreviewsBodyPlaceholder: try r.string(Field.hiddenPreviewsBodyPlaceholder, code: .invalidCategory)
                ?? "",
            categorySummaryFormat: try r.string(Field.categorySummaryFormat, code: .invalidCategory) ?? "")
    }
}

extension NotificationAction {
    static let fields = JSONFieldName.Action.all

    /// Decodes an action; with `textInputButtonTitle` or `textInputPlaceholder` it is a text-input
    /// action. `icon` is `{"systemImageName": …}` or `{"templateImageName": …}`.
    public init(json: JSONValue, field: String) throws(ChimeError) {
        typealias Field = JSONFieldName.Action
        let r = try JSONObjectReader(json, path: field, what: "an action", code: .invalidCategory)
        try r.finish(accepted: Self.fields, what: "an action")
        let identifier = try r.identifier(code: .invalidCategory, what: "action")
        if identifier == UNNotificationDefaultActionIdentifier || identifier == UNNotificationDismissActionIdentifier {
            throw ChimeError(
                .invalidCategory, field: r.field(Field.identifier),
                "\(r.field(Field.identifier)): \"\(identifier)\" is reserved for the system; choose another action identifier"
            )
        }
        let title = try r.requiredString(Field.title, code: .invalidCategory, hint: " shown on the button")
        let options =
            try r.options(Field.options, table: UNNotificationActionOptions.names, code: .invalidCategory) ?? []
        var icon: Icon?
        if let value = r.value(Field.icon) {
            let iconField = r.field(Field.icon)
            let ir = try JSONObjectReader(value, path: iconField, what: "an icon", code: .invalidCategory)
            try ir.finish(accepted: Field.iconFields, what: "an icon")
            if ir.object.count != 1 {
                throw ChimeError(
                    .invalidCategory, field: iconField,
                    "\(iconField): give exactly one of systemImageName or templateImageName")
            }
            if let name = try ir.string(Field.systemImageName, code: .invalidCategory) {
                icon = .system(name)
            } else if let name = try ir.string(Field.templateImageName, code: .invalidCategory) {
                icon = .template(name)
            }
        }
        var textInput: TextInput?
        let button = try r.string(Field.textInputButtonTitle, code: .invalidCategory)
        let placeholder = try r.string(Field.textInputPlaceholder, code: .invalidCategory)
        if button != nil || placeholder != nil {
            textInput = TextInput(buttonTitle: button ?? "", placeholder: placeholder ?? "")
        }
        self.init(identifier: identifier, title: title, options: options, icon: icon, textInput: textInput)
    }
}

extension UNNotificationPresentationOptions {
    /// Decodes an array of Apple's names: `["banner", "list", "sound", "badge"]` (`alert` too).
    public init(json: JSONValue, field: String = JSONFieldName.options) throws(ChimeError) {
        self = try JSONMapping.options(json, table: Self.names, field: field)
    }
}

extension UNAuthorizationOptions {
    /// Decodes an array of Apple's names: `["alert", "sound", "badge"]`.
    public init(json: JSONValue, field: String = JSONFieldName.options) throws(ChimeError) {
        self = try JSONMapping.options(json, table: Self.names, field: field)
    }
}

extension LaunchCommand {
    /// Decodes `launch`: a command line (split into words without a shell, see ``init(parsing:field:)``),
    /// an array of words, or `null` for none.
    ///
    /// ```swift
    /// let command = try LaunchCommand.decode(.string("organizer --handle"), field: "launch")
    /// ```
    public static func decode(_ value: JSONValue, field: String = JSONFieldName.App.launch) throws(ChimeError)
        -> LaunchCommand?
    {
        switch value {
        case .null: return nil
        case .string(let text): return try LaunchCommand(parsing: text, field: field)
        case .array(let items):
            var words: [String] = []
            for (index, item) in items.enumerated() {
                guard case .string(let word) = item else {
                    throw ChimeError(
                        .invalidValue, field: "\(field)[\(index)]",
                        "\(field)[\(index)]: expected a string, found \(item.kindDescription)")
                }
                words.append(word)
            }
            return try LaunchCommand(arguments: words, field: field)
        default:
            throw ChimeError(
                .invalidValue, field: field,
                "\(field): expected a command line, an array of words or null, found \(value.kindDescription)")
        }
    }
}
