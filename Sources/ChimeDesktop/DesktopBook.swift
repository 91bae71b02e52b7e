import ChimeCore
import Foundation

/// An answer the user gave on the desktop, on its way to the engine.
///
/// ```swift
/// DesktopAnswer(app: "com.example.alarm", notification: "Alarm", action: "snooze")
/// ```
public struct DesktopAnswer: Sendable, Hashable {
    public var app: String
    /// The notification's identifier.
    public var notification: String
    /// The action identifier: a category action, `UNNotificationDefaultActionIdentifier` (the body
    /// click) or `UNNotificationDismissActionIdentifier` (closed by the user).
    public var action: String
    /// The typed text, for a text-input action.
    public var userText: String?
    /// The XDG activation token the server sent with the action (`ActivationToken`), for the app
    /// the answer starts (`XDG_ACTIVATION_TOKEN`).
    public var activationToken: String?

    public init(
        app: String, notification: String, action: String, userText: String? = nil, activationToken: String? = nil
    ) {
        self.app = app
        self.notification = notification
        self.action = action
        self.userText = userText
        self.activationToken = activationToken
    }
}

/// What the desktop shows, by server id, and what the server's signals mean. A pure state
/// machine: it is told what happened and answers what to do; the surface does the calls.
struct DesktopBook {
    struct Key: Hashable, Sendable {
        var app: String
        var identifier: String
    }

    struct Entry: Sendable {
        var key: Key
        var actions: [String: NotificationAction]
        var inlineReply: NotificationAction?
        /// The pop-up's summary, to say what a reply prompt is about.
        var summary: String
        /// The user answered with an action: a later close is part of that, not a dismissal.
        var answered = false
        var activationToken: String?
    }

    /// What a signal asks for.
    enum Outcome: Sendable, Equatable {
        /// Hand this answer to the engine.
        case respond(DesktopAnswer)
        /// The user chose a text-input action on a server without inline reply: ask for the text.
        case askForText(DesktopAnswer, NotificationAction, summary: String)
    }

    private(set) var entries: [UInt32: Entry] = [:]
    private var ids: [Key: UInt32] = [:]

    /// The server id to replace for a new delivery with this key (0: a new pop-up).
    func replacesID(for key: Key) -> UInt32 { ids[key] ?? 0 }

    func id(for key: Key) -> UInt32? { ids[key] }

    /// The server shows `popUp` for `key` as `id` (a replacement keeps its id).
    mutating func shown(_ key: Key, id: UInt32, popUp: DesktopPopUp) {
        if let old = ids[key], old != id { entries[old] = nil }
        ids[key] = id
        entries[id] = Entry(
            key: key, actions: popUp.actions, inlineReply: popUp.inlineReply, summary: popUp.request.summary)
    }

    /// The notification was removed or answered elsewhere: the server id to close, if shown.
    mutating func withdrawn(_ key: Key) -> UInt32? {
        guard let id = ids.removeValue(forKey: key) else { return nil }
        entries[id] = nil
        return id
    }

    /// A reply prompt ended without a text: the notification can be answered again.
    mutating func reopen(_ key: Key) {
        guard let id = ids[key] else { return }
        entries[id]?.answered = false
    }

    /// The server is gone (or was replaced): what it showed is gone with it.
    mutating func forgetAll() {
        entries.removeAll()
        ids.removeAll()
    }

    var count: Int { entries.count }

    /// Reads one signal from the server.
    mutating func received(_ signal: ServerSignal) -> Outcome? {
        switch signal {
        case .activationToken(let id, let token):
            entries[id]?.activationToken = token
            return nil

        case .actionInvoked(let id, let key):
            guard var entry = entries[id], !entry.answered else { return nil }
            entry.answered = true
            entries[id] = entry
            var answer = DesktopAnswer(
                app: entry.key.app, notification: entry.key.identifier, action: UNNotificationDefaultActionIdentifier,
                activationToken: entry.activationToken)
            if key == DesktopMapping.defaultKey { return .respond(answer) }
            let action = key == DesktopMapping.inlineReplyKey ? entry.inlineReply : entry.actions[key]
            guard let action else {
                entries[id]?.answered = false
                return nil
            }
            answer.action = action.identifier
            return action.textInput != nil ? .askForText(answer, action, summary: entry.summary) : .respond(answer)

        case .replied(let id, let text):
            guard var entry = entries[id], let action = entry.inlineReply, !entry.answered else { return nil }
            // An empty reply is no reply: the user sent nothing, so the app hears nothing.
            guard !text.isEmpty else { return nil }
            entry.answered = true
            entries[id] = entry
            return .respond(
                DesktopAnswer(
                    app: entry.key.app, notification: entry.key.identifier, action: action.identifier,
                    userText: text, activationToken: entry.activationToken))

        case .closed(let id, let reason):
            // 1: the pop-up expired. The notification stays delivered, and in the server's history
            // where it keeps one, so its id still replaces it and still closes it when removed.
            guard reason != 1, let entry = entries.removeValue(forKey: id) else { return nil }
            if ids[entry.key] == id { ids[entry.key] = nil }
            // 2: dismissed by the user. 3 (closed on request) and 4 leave the notification delivered.
            guard reason == 2, !entry.answered else { return nil }
            return .respond(
                DesktopAnswer(
                    app: entry.key.app, notification: entry.key.identifier,
                    action: UNNotificationDismissActionIdentifier))
        }
    }
}
