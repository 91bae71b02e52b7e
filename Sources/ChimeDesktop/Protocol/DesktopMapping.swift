import ChimeCore
import Foundation

/// How an app appears on the desktop: its name and icon, when it has them.
///
/// ```swift
/// DesktopApp(displayName: "Alarm", icon: "alarm-clock", desktopEntry: "com.example.alarm")
/// ```
public struct DesktopApp: Sendable, Hashable {
    /// The name shown with its notifications (the notification's `app_name`).
    public var displayName: String
    /// A themed icon name or an absolute path (`app_icon`), or `nil` for none.
    public var icon: String?
    /// The app's desktop entry without `.desktop` (the `desktop-entry` hint), when it has one.
    public var desktopEntry: String?
    /// The app's own attachment store (`chime serve`: `<data>/attachments/<app>`): an image
    /// attachment or an absolute sound path is handed to the notification server only from inside
    /// it, so an app cannot have the desktop open any file the service's user can read. `nil`: the
    /// app shows its own notifications in its own process, and any file of its is its own.
    public var attachmentDirectory: String?

    public init(
        displayName: String, icon: String? = nil, desktopEntry: String? = nil, attachmentDirectory: String? = nil
    ) {
        self.displayName = displayName
        self.icon = icon
        self.desktopEntry = desktopEntry
        self.attachmentDirectory = attachmentDirectory
    }
}

/// A delivery as a pop-up: the `Notify` call, and what each action key means when the server
/// reports it back.
struct DesktopPopUp: Sendable, Hashable {
    var request: NotifyRequest
    /// Action keys sent → the category's action (the `default` key is the body click and is not here).
    var actions: [String: NotificationAction]
    /// The text-input action offered as KDE's inline reply (`inline-reply`), if any.
    var inlineReply: NotificationAction?
    /// Text-input actions left out because the user would have no way to type (no inline reply
    /// and no reply prompt).
    var leftOut: [NotificationAction]
}

/// The mapping rules from a delivery to a freedesktop notification. Pure: the same delivery,
/// server and app always give the same call.
enum DesktopMapping {
    static let defaultKey = "default"
    static let inlineReplyKey = "inline-reply"

    /// - Parameters:
    ///   - canPrompt: whether a text-input action can be answered without inline reply (a reply
    ///     prompt is there); without it such actions are left out rather than answered empty.
    static func popUp(
        for delivery: Delivery, app: DesktopApp, server: ServerProfile, replacesID: UInt32,
        canPrompt: Bool
    ) -> DesktopPopUp {
        let content = delivery.notification.request.content
        let category = delivery.category
        let hidden = delivery.settings.showPreviewsSetting == .never
        let options = category?.options ?? []

        // Texts: title and subtitle make the summary; the body is escaped where the server reads markup.
        let title = hidden && !options.contains(.hiddenPreviewsShowTitle) ? "" : content.title
        let subtitle = hidden && !options.contains(.hiddenPreviewsShowSubtitle) ? "" : content.subtitle
        var summary = [title, subtitle].filter { !$0.isEmpty }.joined(separator: " — ")
        if summary.isEmpty { summary = app.displayName }
        var body = hidden ? hiddenPlaceholder(category?.hiddenPreviewsBodyPlaceholder ?? "") : content.body
        if server.has("body-markup") { body = escapeMarkup(body) }

        // Actions: the body click first, then the category's actions in order.
        var actions: [String] = []
        var keys: [String: NotificationAction] = [:]
        var inline: NotificationAction?
        var leftOut: [NotificationAction] = []
        if server.has("actions") {
            actions += [defaultKey, "Open"]
            for (index, action) in (category?.actions ?? []).enumerated() {
                if action.textInput != nil {
                    if inline == nil && server.has("inline-reply") {
                        inline = action
                        actions += [inlineReplyKey, action.title]
                        continue
                    }
                    if !canPrompt {
                        leftOut.append(action)
                        continue
                    }
                }
                var key = action.identifier
                if key.isEmpty || key == defaultKey || key == inlineReplyKey || keys[key] != nil {
                    key = "chime-action-\(index)"
                }
                keys[key] = action
                actions += [key, label(for: action)]
            }
        }

        // An escalating notification alerted again (Delivery.alert 2 and on) comes back critical.
        let level: UInt8 =
            delivery.alert > 1 && delivery.presentation.contains(.banner)
            ? 2 : urgency(content.interruptionLevel, presentation: delivery.presentation)
        var hints: [String: HintValue] = ["urgency": .byte(level)]
        if delivery.presentation.contains(.sound), let sound = content.sound {
            if let name = sound.name, name.hasPrefix("/"), mayHand(name, app: app) {
                hints["sound-file"] = .string(name)
            } else if let name = sound.name, name.hasPrefix("/") {
                // A file outside the app's store: the theme's sound of that name, never the file.
                hints["sound-name"] = .string(soundName((name as NSString).lastPathComponent))
            } else {
                hints["sound-name"] = .string(sound.name.map(soundName) ?? "message-new-instant")
            }
        } else {
            hints["suppress-sound"] = .bool(true)
        }
        if let inline, let input = inline.textInput {
            if !input.placeholder.isEmpty { hints["x-kde-reply-placeholder-text"] = .string(input.placeholder) }
            if !input.buttonTitle.isEmpty { hints["x-kde-reply-submit-button-text"] = .string(input.buttonTitle) }
        }
        if let entry = app.desktopEntry { hints["desktop-entry"] = .string(entry) }
        if !hidden, let image = content.attachments.first(where: isImage), image.url.isFileURL,
            mayHand(image.url.path, app: app)
        {
            hints["image-path"] = .string(image.url.absoluteString)
        }

        let request = NotifyRequest(
            appName: app.displayName, replacesID: replacesID, appIcon: app.icon ?? "", summary: summary,
            body: body, actions: actions, hints: hints, expireTimeout: -1)
        return DesktopPopUp(request: request, actions: keys, inlineReply: inline, leftOut: leftOut)
    }

    /// passive 0 (low), active 1 (normal), time-sensitive and critical 2 (critical). A notification
    /// presented without a banner (to the list only) is low: servers then keep it out of the way.
    static func urgency(_ level: UNNotificationInterruptionLevel, presentation: UNNotificationPresentationOptions)
        -> UInt8
    {
        guard presentation.contains(.banner) else { return 0 }
        switch level {
        case .passive: return 0
        case .active: return 1
        case .timeSensitive, .critical: return 2
        }
    }

    /// A destructive action is marked in its label, the one part of an action every server shows.
    static func label(for action: NotificationAction) -> String {
        action.options.contains(.destructive) ? "⚠ " + action.title : action.title
    }

    /// `<`, `>` and `&` as entities, so app text is never read as markup.
    static func escapeMarkup(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "&": out += "&amp;"
            default: out.append(character)
            }
        }
        return out
    }

    /// The category's placeholder for a hidden preview (`%u` is the count, here one), or Apple's
    /// generic "Notification".
    static func hiddenPlaceholder(_ format: String) -> String {
        guard !format.isEmpty else { return "Notification" }
        return format.replacingOccurrences(of: "%u", with: "1").replacingOccurrences(of: "%@", with: "")
    }

    /// A named sound file (`bell.caf`) as a sound-theme name (`bell`).
    static func soundName(_ file: String) -> String {
        let base = (file as NSString).deletingPathExtension
        return base.isEmpty ? file : base
    }

    /// Whether the file at `path` may be handed to the server for `app`: anywhere without an
    /// attachment directory, else only inside it once symbolic links are resolved (a link in the
    /// store to a file outside it is outside).
    static func mayHand(_ path: String, app: DesktopApp) -> Bool {
        guard let root = app.attachmentDirectory else { return true }
        let file = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        let base = URL(fileURLWithPath: root).standardizedFileURL.resolvingSymlinksInPath().path
        return file.hasPrefix(base.hasSuffix("/") ? base : base + "/")
    }

    static func isImage(_ attachment: NotificationAttachment) -> Bool {
        ["public.png", "public.jpeg", "com.compuserve.gif", "public.heic", "org.webmproject.webp", "public.image"]
            .contains(attachment.type)
            || ["png", "jpg", "jpeg", "gif", "webp", "svg"].contains(attachment.url.pathExtension.lowercased())
    }
}
