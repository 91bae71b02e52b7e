import Foundation

// The answer to every add (`201` with the requests as added) written straight into bytes: the
// same bytes as `pending.json.serializedBytes()`, without building the `JSONValue` tree first
// (that tree and its serialization were 8% of an HTTP add's server CPU). Members are written in
// the order the tree has them; the less common nested values (critical sounds, attachments,
// calendar, location and recurrence triggers) are written through their tree.

extension PendingRequest {
    /// ``json`` serialized compactly, appended to `out`: byte for byte what
    /// `json.serializedBytes()` gives.
    ///
    /// ```swift
    /// var body: [UInt8] = []
    /// pending.appendJSON(to: &body)   // {"identifier":"a","title":…,"nextTriggerDate":…}
    /// ```
    public func appendJSON(to out: inout [UInt8]) {
        var object = CompactObject(taking: &out)
        request.appendMembers(to: &object)
        object.key(JSONFieldName.Request.nextTriggerDate)
        if let nextFireDate {
            JSONWriter.writeString(JSONMapping.formatDate(nextFireDate), into: &object.out)
        } else {
            object.out.append(contentsOf: "null".utf8)
        }
        out = object.finish()
    }
}

/// An object being written: `{` at the start, a `,` before every member but the first.
struct CompactObject {
    var out: [UInt8]
    private var empty = true

    /// Takes the bytes written so far from `out` (leaving it empty, so they are not copied) and
    /// writes the `{`; ``finish()`` gives them back.
    init(taking out: inout [UInt8]) {
        self.out = []
        swap(&self.out, &out)
        self.out.append(UInt8(ascii: "{"))
    }

    /// Writes the member's key (and the comma before it); its value is written next.
    mutating func key(_ key: String) {
        if !empty { out.append(UInt8(ascii: ",")) }
        empty = false
        JSONWriter.writeString(key, into: &out)
        out.append(UInt8(ascii: ":"))
    }

    mutating func string(_ key: String, _ value: String) {
        self.key(key)
        JSONWriter.writeString(value, into: &out)
    }

    mutating func optionalString(_ key: String, _ value: String?) {
        self.key(key)
        if let value { JSONWriter.writeString(value, into: &out) } else { out.append(contentsOf: "null".utf8) }
    }

    mutating func number(_ key: String, _ value: Double) {
        self.key(key)
        JSONWriter.writeNumber(value, into: &out)
    }

    mutating func integer(_ key: String, _ value: Int64) {
        self.key(key)
        out.append(contentsOf: String(value).utf8)
    }

    mutating func value(_ key: String, _ value: JSONValue) {
        self.key(key)
        JSONWriter(pretty: false).write(value, into: &out, indent: 0)
    }

    /// The bytes with the closing `}` (`{}` when no member was written).
    consuming func finish() -> [UInt8] {
        out.append(UInt8(ascii: "}"))
        return out
    }
}

extension NotificationRequest {
    /// The members of ``jsonObject()``, in its order.
    func appendMembers(to object: inout CompactObject) {
        typealias Field = JSONFieldName.Request
        object.string(Field.identifier, identifier)
        content.appendMembers(to: &object)
        object.key(Field.trigger)
        switch trigger {
        case nil:
            object.out.append(contentsOf: "null".utf8)
        case .timeInterval(let interval, let repeats)?:
            var members = CompactObject(taking: &object.out)
            members.string(JSONFieldName.Trigger.type, JSONFieldName.Trigger.Kind.timeInterval)
            members.number(JSONFieldName.Trigger.timeInterval, interval)
            members.key(JSONFieldName.Trigger.repeats)
            members.out.append(contentsOf: (repeats ? "true" : "false").utf8)
            object.out = members.finish()
        case let trigger?:
            JSONWriter(pretty: false).write(trigger.json, into: &object.out, indent: 0)
        }
        switch expiration {
        case nil: break
        case .at(let date)?: object.string(Field.expirationDate, JSONMapping.formatDate(date))
        case .after(let seconds)?: object.number(Field.expiresIn, seconds)
        }
        switch autoDismiss {
        case nil: break
        case .at(let date)?: object.string(Field.dismissAt, JSONMapping.formatDate(date))
        case .after(let seconds)?: object.number(Field.dismissIn, seconds)
        }
        if let escalation {
            object.number(Field.escalateEvery, escalation.interval)
            object.number(Field.escalateFor, escalation.duration)
        }
    }
}

extension NotificationContent {
    /// The members of ``appendJSON(to:)``, in its order.
    func appendMembers(to object: inout CompactObject) {
        typealias Field = JSONFieldName.Content
        object.string(Field.title, title)
        object.string(Field.subtitle, subtitle)
        object.string(Field.body, body)
        if let badge { object.integer(Field.badge, Int64(badge)) } else { object.value(Field.badge, .null) }
        if let sound, !sound.isCritical, sound.volume == nil {
            object.string(Field.sound, sound.name ?? "default")
        } else {
            object.value(Field.sound, sound?.json ?? .null)
        }
        object.string(Field.launchImageName, launchImageName)
        object.key(Field.userInfo)
        PropertyListValue.appendJSON(userInfo, to: &object.out)
        if attachments.isEmpty {
            object.key(Field.attachments)
            object.out.append(contentsOf: "[]".utf8)
        } else {
            object.value(Field.attachments, .array(attachments.map(\.json)))
        }
        object.string(Field.categoryIdentifier, categoryIdentifier)
        object.string(Field.threadIdentifier, threadIdentifier)
        object.optionalString(Field.targetContentIdentifier, targetContentIdentifier)
        object.string(Field.summaryArgument, summaryArgument)
        object.integer(Field.summaryArgumentCount, Int64(summaryArgumentCount))
        object.string(Field.interruptionLevel, interruptionLevel.name)
        object.number(Field.relevanceScore, relevanceScore.isFinite ? relevanceScore : 0)
        object.optionalString(Field.filterCriteria, filterCriteria)
    }
}

extension PropertyListValue {
    /// ``JSONMapping/json(userInfo:)`` serialized: keys sorted.
    static func appendJSON(_ dictionary: [String: PropertyListValue], to out: inout [UInt8]) {
        var object = CompactObject(taking: &out)
        for key in dictionary.keys.sorted() {
            guard let value = dictionary[key] else { continue }
            object.key(key)
            value.appendJSON(to: &object.out)
        }
        out = object.finish()
    }

    /// ``json`` serialized.
    func appendJSON(to out: inout [UInt8]) {
        switch self {
        case .string(let s): JSONWriter.writeString(s, into: &out)
        case .integer(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d): JSONWriter.writeNumber(d, into: &out)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .data(let d):
            out.append(contentsOf: #"{"$data":"#.utf8)
            JSONWriter.writeString(d.base64EncodedString(), into: &out)
            out.append(UInt8(ascii: "}"))
        case .date(let d):
            out.append(contentsOf: #"{"$date":"#.utf8)
            JSONWriter.writeString(JSONMapping.formatDate(d), into: &out)
            out.append(UInt8(ascii: "}"))
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                element.appendJSON(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .dictionary(let d): Self.appendJSON(d, to: &out)
        }
    }
}
