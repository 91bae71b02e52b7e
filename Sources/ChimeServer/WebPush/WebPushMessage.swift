import ChimeCore
import ChimeCrypto
import Foundation

/// What one push carries, before encryption: the notification as the service worker shows it (or
/// the identifiers to close), and the RFC 8030 headers that go with it.
///
/// The plaintext is JSON, at most ``maximumPlaintext`` bytes, so the encrypted body (RFC 8291: a
/// 86-byte header, the record's delimiter and its 16-byte tag) stays within the 4,096 bytes every
/// push service takes. A long body is trimmed (`truncated: true`); the worker then reads the whole
/// notification from the service when it is shown or clicked.
///
/// ```json
/// {"v": 1, "kind": "show", "app": "com.example.alarm", "id": "Alarm", "title": "Alarm", "subtitle": "",
///  "body": "Wake up", "badge": 1, "level": "active", "category": "alarm", "dismiss": true, "truncated": false,
///  "actions": [{"id": "snooze", "title": "Snooze 5 Sec", "options": []},
///              {"id": "comment", "title": "Add Comment", "options": [], "input": {"button": "Send", "placeholder": "…"}}]}
/// {"v": 1, "kind": "close", "app": "com.example.alarm", "ids": ["Alarm"]}
/// ```
struct WebPushMessage: Sendable, Hashable {
    /// The plaintext limit: 4,096 − 86 (salt, record size, key) − 1 (delimiter) − 16 (tag).
    static let maximumPlaintext = 4096 - 86 - 1 - 16

    /// The JSON the worker reads.
    var payload: JSONValue
    /// `TTL`: seconds the push service keeps it for a device that is away.
    var ttl: Int
    /// `Urgency`: very-low, low, normal or high.
    var urgency: String
    /// `Topic`: a later push with the same topic replaces this one while it waits at the service.
    var topic: String?
    /// When it was made: past `ttl` it is not sent any more.
    var created: Date

    /// A delivered notification, as iOS would show it.
    static func show(_ delivery: Delivery, app: String, now: Date) -> WebPushMessage {
        typealias Field = JSONFieldName.PushMessage
        let notification = delivery.notification
        let content = notification.request.content
        var object: JSONObject = [
            Field.version: 1, Field.kind: .string(Field.show), Field.app: .string(app),
            Field.id: .string(notification.request.identifier),
        ]
        // The content's texts and the delivery date under their names in the delivered list; the
        // rest is the worker's own format (above).
        object[JSONFieldName.Content.title] = .string(content.title)
        object[JSONFieldName.Content.subtitle] = .string(content.subtitle)
        object[JSONFieldName.Content.body] = .string(content.body)
        // The badge the app asked for: applied, or waiting for its `willPresent` answer on the service.
        object[Field.badge] = (delivery.badge ?? delivery.pendingBadge).map { .integer(Int64($0)) } ?? .null
        object[Field.level] = .string(levelName(content.interruptionLevel))
        object[Field.thread] = .string(content.threadIdentifier)
        object[JSONFieldName.Request.date] = JSONMapping.json(notification.date)
        object[Field.sound] = .bool(delivery.presentation.contains(.sound) && content.sound != nil)
        object[Field.banner] = .bool(delivery.presentation.contains(.banner))
        if let category = delivery.category {
            object[Field.category] = .string(category.identifier)
            object[Field.dismiss] = .bool(category.options.contains(.customDismissAction))
            object[Field.actions] = .array(
                category.actions.map { action in
                    var entry: JSONObject = [
                        Field.id: .string(action.identifier),
                        JSONFieldName.Action.title: .string(String(action.title.prefix(100))),
                    ]
                    entry[JSONFieldName.Action.options] = JSONMapping.json(
                        action.options, table: UNNotificationActionOptions.names)
                    if let input = action.textInput {
                        entry[Field.input] = [
                            Field.button: .string(String(input.buttonTitle.prefix(60))),
                            Field.placeholder: .string(String(input.placeholder.prefix(100))),
                        ]
                    }
                    return .object(entry)
                })
        } else {
            object[Field.category] = .string(content.categoryIdentifier)
            object[Field.dismiss] = false
            object[Field.actions] = .array([])
        }
        if notification.request.escalation != nil {
            // Closing it on the device is an answer that stops the escalation.
            object[Field.dismiss] = true
            if delivery.alert > 1 { object[Field.alert] = .integer(Int64(delivery.alert)) }
        }
        object[Field.truncated] = false
        let payload = fit(object)
        let urgency =
            switch content.interruptionLevel {
            case _ where delivery.alert > 1: "high"
            case .passive: "low"
            case .active: "normal"
            case .timeSensitive, .critical: "high"
            }
        return WebPushMessage(
            payload: payload, ttl: showTTL(notification, now: now), urgency: urgency,
            topic: topic(app: app, identifier: notification.request.identifier), created: now)
    }

    /// How long the push service may keep a notification for a device that is away: a week, or
    /// less when the notification expires or stops being relevant sooner (its request's
    /// expiration, APNs' `apns-expiration` for a push; its end of relevance, `autoDismiss`): the
    /// seconds left until the sooner, 0 — now or never, RFC 8030's TTL 0 — when it is already due.
    static func showTTL(_ notification: DeliveredNotification, now: Date) -> Int {
        let expiration = notification.request.expiration?.date(from: notification.date)
        guard let end = [expiration, notification.dismissDate].compactMap({ $0 }).min() else { return showTTL }
        let left = end.timeIntervalSince(now)
        guard left.isFinite, left > 0 else { return 0 }
        return Int(min(Double(showTTL), left.rounded(.down)))
    }

    /// Notifications removed on the service: the worker closes them. One identifier carries its
    /// topic, so a close replaces a show still waiting at the push service.
    static func close(_ identifiers: [String], app: String, now: Date) -> [WebPushMessage] {
        var messages: [WebPushMessage] = []
        var batch: [String] = []
        func flush() {
            guard !batch.isEmpty else { return }
            typealias Field = JSONFieldName.PushMessage
            let payload: JSONValue = [
                Field.version: 1, Field.kind: .string(Field.close), Field.app: .string(app),
                Field.ids: .array(batch.map(JSONValue.string)),
            ]
            messages.append(
                WebPushMessage(
                    payload: payload, ttl: closeTTL, urgency: "low",
                    topic: batch.count == 1 ? topic(app: app, identifier: batch[0]) : nil, created: now))
            batch = []
        }
        var size = 80 + app.utf8.count
        for identifier in identifiers {
            let cost = JSONValue.string(identifier).serializedBytes().count + 1
            if size + cost > maximumPlaintext {
                flush()
                size = 80 + app.utf8.count
            }
            if cost + 80 + app.utf8.count > maximumPlaintext { continue }  // an identifier too long for any push
            batch.append(identifier)
            size += cost
        }
        flush()
        return messages
    }

    /// Kept for a device that is away: a week for a notification (less when it expires sooner, see
    /// ``showTTL(_:now:)``), a day for a close.
    static let showTTL = 7 * 86_400, closeTTL = 86_400

    /// The body trimmed (then the subtitle and title, then the actions' titles) until the JSON
    /// fits ``maximumPlaintext``; `truncated` says so.
    static func fit(_ object: JSONObject) -> JSONValue {
        var object = object
        func size() -> Int { JSONValue.object(object).serializedBytes().count }
        guard size() > maximumPlaintext else { return .object(object) }
        typealias Field = JSONFieldName.PushMessage
        object[Field.truncated] = true
        typealias Content = JSONFieldName.Content
        for key in [Content.body, Content.subtitle, Content.title, Field.thread] {
            guard case .string(let text)? = object[key] else { continue }
            var characters = Array(text)
            // Halve the excess until it fits: at most a few dozen serializations.
            while size() > maximumPlaintext, !characters.isEmpty {
                let excess = size() - maximumPlaintext
                characters.removeLast(min(characters.count, max(1, excess / 2)))
                object[key] = .string(String(characters) + (characters.isEmpty ? "" : "…"))
            }
            if size() <= maximumPlaintext { return .object(object) }
        }
        object[Field.actions] = .array([])
        return .object(object)
    }

    /// A topic of 32 base64url characters (RFC 8030 §5.4) from the app and the identifier.
    static func topic(app: String, identifier: String) -> String {
        String(Base64URL.encode(Digest.sha256(Array((app + "\u{0}" + identifier).utf8))).prefix(32))
    }

    static func levelName(_ level: UNNotificationInterruptionLevel) -> String {
        switch level {
        case .passive: "passive"
        case .active: "active"
        case .timeSensitive: "timeSensitive"
        case .critical: "critical"
        }
    }

    // MARK: The queue's record

    /// The record queued in the store.
    var storedRecord: String {
        typealias Field = JSONFieldName.PushMessage.Queued
        var object: JSONObject = [
            Field.payload: payload, Field.ttl: .integer(Int64(ttl)), Field.urgency: .string(urgency),
        ]
        object[Field.topic] = topic.map(JSONValue.string) ?? .null
        object[Field.created] = .number(created.timeIntervalSince1970)
        return JSONValue.object(object).serialized()
    }

    init(payload: JSONValue, ttl: Int, urgency: String, topic: String?, created: Date) {
        self.payload = payload
        self.ttl = ttl
        self.urgency = urgency
        self.topic = topic
        self.created = created
    }

    /// Reads a queued record; `nil` when it is not one (a damaged row is dropped, not retried forever).
    init?(storedRecord text: String) {
        typealias Field = JSONFieldName.PushMessage.Queued
        guard let value = try? JSONValue.parse(text), let payload = value[Field.payload],
            case .integer(let ttl)? = value[Field.ttl],
            case .string(let urgency)? = value[Field.urgency]
        else { return nil }
        var topic: String?
        if case .string(let text)? = value[Field.topic] { topic = text }
        var created = Date(timeIntervalSince1970: 0)
        switch value[Field.created] {
        case .number(let seconds)?: created = Date(timeIntervalSince1970: seconds)
        case .integer(let seconds)?: created = Date(timeIntervalSince1970: TimeInterval(seconds))
        default: return nil
        }
        self.init(payload: payload, ttl: Int(ttl), urgency: urgency, topic: topic, created: created)
    }
}
