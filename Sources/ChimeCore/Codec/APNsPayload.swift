import Foundation

/// Why an APNs-format payload was refused, with Apple's provider-API `reason` and HTTP status.
///
/// Apple documents only two reasons about the payload itself, and Chime uses only those:
/// - `PayloadTooLarge` (413): more than `maxSize` bytes (4096 for ordinary pushes).
/// - `PayloadEmpty` (400): an empty body, and — as the closest documented reason, since Apple has no
///   "bad payload" reason — anything else that leaves no usable payload: malformed JSON, a top
///   level that is not an object, a missing or non-object `aps`, or a known `aps` key of the wrong
///   type or out of range. `message` says exactly what is wrong and `field` names the key
///   (`aps.badge`, `aps.alert.loc-args[1]`), so a client that only branches on Apple's reasons keeps
///   working and a person reading the answer knows what to fix.
public struct APNsPayloadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Apple's reason string: `PayloadEmpty` or `PayloadTooLarge`.
    public var reason: String
    /// The HTTP status Apple answers with for the reason: 400 or 413.
    public var status: Int
    /// What is wrong, for a person.
    public var message: String
    /// The payload key at fault, as a path (`aps.sound.volume`), if any.
    public var field: String?

    public init(reason: String, status: Int, message: String, field: String? = nil) {
        self.reason = reason
        self.status = status
        self.message = message
        self.field = field
    }

    public static let payloadEmpty = "PayloadEmpty"
    public static let payloadTooLarge = "PayloadTooLarge"

    static func bad(_ message: String, field: String?) -> APNsPayloadError {
        APNsPayloadError(reason: payloadEmpty, status: 400, message: message, field: field)
    }

    public var description: String { "\(reason) (\(status)): \(message)" }
}

/// A remote notification in Apple's payload format, mapped to content as iOS does.
///
/// ```swift
/// let payload = try APNsPayload.decode(Array(#"{"aps": {"alert": "Hello", "badge": 1}}"#.utf8))
/// payload.content.body   // "Hello"
/// ```
///
/// The mapping:
/// - `aps.alert`: a string is the body; a dictionary gives `title`, `subtitle`, `body`,
///   `launch-image`, and the localised forms `title-loc-key`/`title-loc-args`,
///   `subtitle-loc-key`/`subtitle-loc-args`, `loc-key`/`loc-args`. A `*-loc-key` wins over the plain
///   text, as on iOS. There are no localisation tables on Linux, so the key itself is used as the
///   format string, as iOS does when a key is missing from `Localizable.strings`: `%@` takes the next
///   argument, `%1$@` a numbered one, `%%` is a percent sign. A key without placeholders shows as
///   it is.
/// - `badge`, `sound` (a file name, `"default"`, or `{"critical": 1, "name": …, "volume": 0.5}`),
///   `thread-id`, `category`, `target-content-id`, `interruption-level` (`passive`, `active`,
///   `time-sensitive`, `critical`), `relevance-score` (0…1), `filter-criteria`, `summary-arg`,
///   `summary-arg-count` map to the content fields of the same meaning.
/// - `content-available: 1` makes a silent push (``isContentAvailable``), `mutable-content: 1` sets
///   ``isMutableContent``; booleans are accepted too.
/// - Other keys inside `aps` and inside `alert` are ignored, as APNs and iOS ignore keys they do
///   not know (live-activity keys, `action-loc-key`, …).
/// - Every top-level key except `aps` (and the iOS Simulator's `"Simulator Target Bundle"`, which is
///   kept in ``simulatorTargetBundle``) goes into `userInfo`. JSON `null` values there are dropped
///   (at any depth), since property lists cannot hold them and backends often send them; the
///   rest of the push still arrives. Unlike the HTTP API, `{"$data": …}` is not interpreted here:
///   a push carries plain JSON.
public struct APNsPayload: Sendable, Hashable {
    public var content: NotificationContent
    /// `content-available: 1`: a silent push, handed to the app and never shown.
    public var isContentAvailable: Bool
    /// `mutable-content: 1`: a notification service extension may modify it.
    public var isMutableContent: Bool
    /// The top-level `"Simulator Target Bundle"` of an iOS Simulator `.apns` file, if present.
    public var simulatorTargetBundle: String?

    public init(
        content: NotificationContent, isContentAvailable: Bool = false, isMutableContent: Bool = false,
        simulatorTargetBundle: String? = nil
    ) {
        self.content = content
        self.isContentAvailable = isContentAvailable
        self.isMutableContent = isMutableContent
        self.simulatorTargetBundle = simulatorTargetBundle
    }

    /// Apple's limit for an ordinary push payload, in bytes.
    public static let defaultMaxSize = 4096

    /// Decodes a payload of at most `maxSize` bytes.
    public static func decode<Bytes: Collection<UInt8>>(_ bytes: Bytes, maxSize: Int = defaultMaxSize)
        throws(APNsPayloadError) -> APNsPayload
    {
        let count = bytes.count
        if count > maxSize {
            throw APNsPayloadError(
                reason: APNsPayloadError.payloadTooLarge, status: 413,
                message: "the payload is \(count) bytes; the limit is \(maxSize) bytes")
        }
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            throw APNsPayloadError.bad(
                "the payload is empty; send a JSON object such as {\"aps\": {\"alert\": \"Hello\"}}", field: nil)
        }
        let json: JSONValue
        do { json = try JSONValue.parse(bytes) } catch {
            throw APNsPayloadError.bad("the payload is not valid JSON: \(error.message)", field: nil)
        }
        return try decode(json: json)
    }

    /// Decodes a payload from `Data` (see ``decode(_:maxSize:)-(Bytes,_)``).
    public static func decode(_ data: Data, maxSize: Int = defaultMaxSize) throws(APNsPayloadError) -> APNsPayload {
        try decode(Array(data), maxSize: maxSize)
    }

    /// Decodes an already-parsed payload (no size check).
    public static func decode(json: JSONValue) throws(APNsPayloadError) -> APNsPayload {
        guard case .object(let root) = json else {
            throw APNsPayloadError.bad(
                "the payload must be a JSON object with an \"aps\" dictionary, found \(json.shortDescription)",
                field: nil)
        }
        guard let apsValue = root["aps"] else {
            throw APNsPayloadError.bad(
                "the payload has no \"aps\" dictionary; put the alert, badge and sound in {\"aps\": {…}}", field: "aps")
        }
        guard case .object(let aps) = apsValue else {
            throw APNsPayloadError.bad("aps: expected a dictionary, found \(apsValue.shortDescription)", field: "aps")
        }
        let reader = APSReader(object: aps, path: "aps")
        var content = NotificationContent()
        var payload = APNsPayload(content: content)

        if let alert = aps["alert"] {
            switch alert {
            case .null: break
            case .string(let body): content.body = body
            case .object(let dictionary):
                let a = APSReader(object: dictionary, path: "aps.alert")
                content.title = try a.localized(text: "title", key: "title-loc-key", args: "title-loc-args") ?? ""
                content.subtitle =
                    try a.localized(text: "subtitle", key: "subtitle-loc-key", args: "subtitle-loc-args") ?? ""
                content.body = try a.localized(text: "body", key: "loc-key", args: "loc-args") ?? ""
                content.launchImageName = try a.string("launch-image") ?? ""
                if let s = try a.string("summary-arg") { content.summaryArgument = s }
                if let n = try a.integer("summary-arg-count") {
                    try Self.checked {
                        try Validation.validateSummaryArgumentCount(n, field: a.field("summary-arg-count"))
                    }
                    content.summaryArgumentCount = n
                }
            default:
                throw APNsPayloadError.bad(
                    "aps.alert: expected a string or a dictionary, found \(alert.shortDescription)", field: "aps.alert")
            }
        }
        // The types here; the ranges (badge, counts, score, volume) are Validation's, in Apple's key names.
        content.badge = try reader.integer("badge")
        try Self.checked { try Validation.validateBadge(content.badge, field: reader.field("badge")) }
        if let sound = reader.object["sound"] { content.sound = try Self.sound(sound) }
        content.threadIdentifier = try reader.string("thread-id") ?? ""
        content.categoryIdentifier = try reader.string("category") ?? ""
        content.targetContentIdentifier = try reader.string("target-content-id")
        if let s = try reader.string("summary-arg") { content.summaryArgument = s }
        if let n = try reader.integer("summary-arg-count") {
            try Self.checked {
                try Validation.validateSummaryArgumentCount(n, field: reader.field("summary-arg-count"))
            }
            content.summaryArgumentCount = n
        }
        if let name = try reader.string("interruption-level") {
            guard let level = UNNotificationInterruptionLevel(name: name) else {
                throw APNsPayloadError.bad(
                    "aps.interruption-level: \"\(JSONParser.clip(name))\" is not an interruption level; accepted: passive, active, time-sensitive, critical",
                    field: "aps.interruption-level")
            }
            content.interruptionLevel = level
        }
        if let score = try reader.number("relevance-score") {
            try Self.checked { try Validation.validateRelevanceScore(score, field: reader.field("relevance-score")) }
            content.relevanceScore = score
        }
        content.filterCriteria = try reader.string("filter-criteria")
        payload.isContentAvailable = try reader.flag("content-available")
        payload.isMutableContent = try reader.flag("mutable-content")

        for (key, value) in root where key != "aps" {
            if key == "Simulator Target Bundle" {
                guard case .string(let bundle) = value else {
                    throw APNsPayloadError.bad(
                        "\"Simulator Target Bundle\": expected a bundle identifier string, found \(value.shortDescription)",
                        field: "Simulator Target Bundle")
                }
                payload.simulatorTargetBundle = bundle
                continue
            }
            if let converted = Self.propertyList(value) { content.userInfo[key] = converted }
        }
        payload.content = content
        return payload
    }

    /// A Validation rule's refusal in the provider API's terms: `PayloadEmpty` (400), with the
    /// rule's message and field.
    static func checked(_ rule: () throws -> Void) throws(APNsPayloadError) {
        do {
            try rule()
        } catch let error as ChimeError {
            throw APNsPayloadError.bad(error.message, field: error.field)
        } catch {
            throw APNsPayloadError.bad("\(error)", field: nil)
        }
    }

    static func sound(_ value: JSONValue) throws(APNsPayloadError) -> NotificationSound? {
        switch value {
        case .null: return nil
        case .string(let name):
            return name == "default" || name.isEmpty ? .default : NotificationSound(name: name)
        case .object(let dictionary):
            let r = APSReader(object: dictionary, path: "aps.sound")
            let name = try r.string("name")
            let critical = try r.flag("critical")
            var volume: Float?
            if let v = try r.number("volume") {
                try Self.checked { try Validation.validateVolume(v, field: r.field("volume")) }
                volume = Float(v)
            }
            return NotificationSound(
                name: name == "default" || name == "" ? nil : name, isCritical: critical, volume: volume)
        default:
            throw APNsPayloadError.bad(
                "aps.sound: expected a sound file name or a dictionary {\"critical\": 1, \"name\": …, \"volume\": …}, found \(value.shortDescription)",
                field: "aps.sound")
        }
    }

    /// Plain JSON → property list, dropping nulls; `nil` for a null.
    static func propertyList(_ value: JSONValue) -> PropertyListValue? {
        switch value {
        case .null: return nil
        case .bool(let b): return .bool(b)
        case .integer(let i): return .integer(i)
        case .number(let d): return .double(d)
        case .string(let s): return .string(s)
        case .array(let elements): return .array(elements.compactMap(propertyList))
        case .object(let object):
            var out: [String: PropertyListValue] = [:]
            for (key, member) in object { if let v = propertyList(member) { out[key] = v } }
            return .dictionary(out)
        }
    }

    /// Substitutes `%@` (in order), `%n$@` (numbered from 1) and `%%` in a localisation key.
    /// Placeholders without an argument and other `%` sequences are left as they are.
    public static func format(_ key: String, arguments: [String]) -> String {
        let scalars = Array(key.unicodeScalars)
        var out = String.UnicodeScalarView()
        var next = 0
        var i = 0
        while i < scalars.count {
            let c = scalars[i]
            guard c == "%", i + 1 < scalars.count else {
                out.append(c)
                i += 1
                continue
            }
            let d = scalars[i + 1]
            if d == "%" {
                out.append("%")
                i += 2
                continue
            }
            if d == "@" {
                if next < arguments.count {
                    out.append(contentsOf: arguments[next].unicodeScalars)
                    next += 1
                } else {
                    out.append(contentsOf: "%@".unicodeScalars)
                }
                i += 2
                continue
            }
            // %n$@
            var j = i + 1
            var number = 0
            while j < scalars.count, (48...57).contains(scalars[j].value), number < 1000 {
                number = number * 10 + Int(scalars[j].value - 48)
                j += 1
            }
            if j > i + 1, j + 1 < scalars.count, scalars[j] == "$", scalars[j + 1] == "@", number >= 1,
                number <= arguments.count
            {
                out.append(contentsOf: arguments[number - 1].unicodeScalars)
                i = j + 2
                continue
            }
            out.append(c)
            i += 1
        }
        return String(out)
    }
}

/// Typed reads of `aps` keys; a wrong type is `PayloadEmpty` naming the key.
struct APSReader {
    let object: JSONObject
    let path: String

    func field(_ key: String) -> String { "\(path).\(key)" }

    func value(_ key: String) -> JSONValue? {
        guard let value = object[key] else { return nil }
        if case .null = value { return nil }
        return value
    }

    func wrong(_ key: String, _ expected: String, _ found: JSONValue) -> APNsPayloadError {
        .bad("\(field(key)): expected \(expected), found \(found.shortDescription)", field: field(key))
    }

    func string(_ key: String) throws(APNsPayloadError) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let s) = value else { throw wrong(key, "a string", value) }
        return s
    }

    func number(_ key: String) throws(APNsPayloadError) -> Double? {
        guard let value = value(key) else { return nil }
        switch value {
        case .integer(let i): return Double(i)
        case .number(let d): return d
        default: throw wrong(key, "a number", value)
        }
    }

    func integer(_ key: String) throws(APNsPayloadError) -> Int? {
        guard let value = value(key) else { return nil }
        let result: Int?
        switch value {
        case .integer(let i): result = Int(exactly: i)
        case .number(let d): result = d.rounded() == d ? Int(exactly: d) : nil
        default: result = nil
        }
        guard let result else { throw wrong(key, "an integer", value) }
        return result
    }

    /// `1`/`0` (Apple's form) or `true`/`false`.
    func flag(_ key: String) throws(APNsPayloadError) -> Bool {
        guard let value = value(key) else { return false }
        switch value {
        case .integer(let i): return i != 0
        case .number(let d): return d != 0
        case .bool(let b): return b
        default: throw wrong(key, "1 or 0", value)
        }
    }

    /// The plain text or, when given, the localisation key formatted with its arguments.
    func localized(text: String, key: String, args: String) throws(APNsPayloadError) -> String? {
        let plain = try string(text)
        guard let locKey = try string(key) else { return plain }
        var arguments: [String] = []
        if let value = value(args) {
            guard case .array(let elements) = value else { throw wrong(args, "an array of strings", value) }
            for (i, element) in elements.enumerated() {
                switch element {
                case .string(let s): arguments.append(s)
                case .integer(let n): arguments.append(String(n))
                case .number(let d): arguments.append(String(d))
                default:
                    let at = "\(field(args))[\(i)]"
                    throw APNsPayloadError.bad("\(at): expected a string, found \(element.shortDescription)", field: at)
                }
            }
        }
        return APNsPayload.format(locKey, arguments: arguments)
    }
}
