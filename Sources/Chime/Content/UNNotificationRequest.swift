import ChimeCore
import Foundation

/// A notification to schedule.
///
/// ```swift
/// let request = UNNotificationRequest(identifier: "Alarm", content: content,
///                                     trigger: UNTimeIntervalNotificationTrigger(timeInterval: 10, repeats: false))
/// try await UNUserNotificationCenter.current().add(request)
/// ```
open class UNNotificationRequest: NSObject, NSCopying, @unchecked Sendable {
    // `@unchecked Sendable`: immutable after init (the content is copied, and content is thread-safe).
    public let identifier: String
    public let content: UNNotificationContent
    public let trigger: UNNotificationTrigger?
    /// When the request expires — a Chime addition; Apple's requests do not expire. Due after it,
    /// the notification is not delivered: the request is removed instead (a repeating one ends), and
    /// the engine announces an `expired` event (`NotificationSimulator.expired` lists them).
    /// `.after(seconds)` counts from the add; a request read back from the center
    /// (`pendingNotificationRequests()`) has the date it made, `.at(date)`. `nil`: it never expires.
    ///
    /// ```swift
    /// let ride = UNNotificationRequest(identifier: "ride", content: content,
    ///                                  trigger: UNTimeIntervalNotificationTrigger(timeInterval: 300, repeats: false),
    ///                                  expiration: .after(600))   // not delivered after 10 minutes
    /// ```
    public let expiration: NotificationDeadline?
    /// When the delivered notification stops being relevant and is removed — a Chime addition;
    /// on Apple's platforms only the app (`removeDeliveredNotifications(withIdentifiers:)`) or the
    /// user removes one. Then it leaves `deliveredNotifications()` and every surface (the web
    /// center, a desktop pop-up, a Web Push device, event streams' `removed` event with reason
    /// `autoDismiss`); the app's delegate is not called (it is not the user's dismissal).
    /// `.after(seconds)` counts from each delivery, so every occurrence of a repeating request gets
    /// its own; a delivered notification read back (`UNNotification.request`) has the date it made,
    /// `.at(date)`. A notification that would be delivered at or after its end of relevance (its
    /// service was down at its fire date) is not delivered: it expires (see ``expiration``).
    ///
    /// Named `autoDismiss`, not "dismissal", so it is never taken for the user's dismiss action
    /// (`UNNotificationDismissActionIdentifier`); the JSON fields are `dismissIn` / `dismissAt`.
    ///
    /// ```swift
    /// let bus = UNNotificationRequest(identifier: "bus", content: content,
    ///                                 trigger: UNTimeIntervalNotificationTrigger(timeInterval: 300, repeats: false),
    ///                                 autoDismiss: .after(600))   // shown at +5 min, gone at +15 min
    /// ```
    public let autoDismiss: NotificationDeadline?
    /// Repeat until acknowledged — a Chime addition; Apple's notifications alert once (a critical
    /// alert included). The delivered notification is alerted again — sound and banner, a desktop
    /// pop-up shown again with urgency critical, a Web Push sent again — every `interval` seconds
    /// until the user answers it (an action, opening it, dismissing it) or it is removed, or its
    /// window (`duration` seconds after the delivery) ends. In front, the delegate's `willPresent`
    /// is asked again for each alert; the answer reaches `didReceive` as usual.
    /// `UNUserNotificationCenter.receipt(for:)` says how often it was alerted and whether, when and
    /// where it was answered. The service's limits apply (by default every 10 seconds or more, for
    /// at most 24 hours).
    ///
    /// ```swift
    /// let alarm = UNNotificationRequest(identifier: "wake", content: content, trigger: nil,
    ///                                   escalation: NotificationEscalation(every: 60, for: 1800))
    /// ```
    public let escalation: NotificationEscalation?

    public init(identifier: String, content: UNNotificationContent, trigger: UNNotificationTrigger?) {
        self.identifier = identifier
        self.content = content.copy() as! UNNotificationContent
        self.trigger = trigger
        self.expiration = nil
        self.autoDismiss = nil
        self.escalation = nil
    }

    /// A request that expires, or whose notification is removed when it stops being relevant, or
    /// both (Chime's additions): see ``expiration`` and ``autoDismiss``.
    public init(
        identifier: String, content: UNNotificationContent, trigger: UNNotificationTrigger?,
        expiration: NotificationDeadline?,
        autoDismiss: NotificationDeadline? = nil, escalation: NotificationEscalation? = nil
    ) {
        self.identifier = identifier
        self.content = content.copy() as! UNNotificationContent
        self.trigger = trigger
        self.expiration = expiration
        self.autoDismiss = autoDismiss
        self.escalation = escalation
    }

    /// A request whose delivered notification is alerted again until answered (Chime's addition):
    /// see ``escalation``.
    public convenience init(
        identifier: String, content: UNNotificationContent, trigger: UNNotificationTrigger?,
        escalation: NotificationEscalation?
    ) {
        self.init(
            identifier: identifier, content: content, trigger: trigger, expiration: nil, autoDismiss: nil,
            escalation: escalation)
    }

    /// A request whose delivered notification is removed when it stops being relevant (Chime's
    /// addition): see ``autoDismiss``.
    public convenience init(
        identifier: String, content: UNNotificationContent, trigger: UNNotificationTrigger?,
        autoDismiss: NotificationDeadline?
    ) {
        self.init(identifier: identifier, content: content, trigger: trigger, expiration: nil, autoDismiss: autoDismiss)
    }

    package init(value: NotificationRequest, scheduledDate: Date? = nil) {
        identifier = value.identifier
        content = UNNotificationContent(value: value.content)
        trigger = UNNotificationTrigger.make(value.trigger, scheduledDate: scheduledDate)
        expiration = value.expiration
        autoDismiss = value.autoDismiss
        escalation = value.escalation
    }

    func coreValue() throws -> NotificationRequest {
        NotificationRequest(
            identifier: identifier, content: try content.coreValue(), trigger: trigger?.value, expiration: expiration,
            autoDismiss: autoDismiss, escalation: escalation)
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNNotificationRequest else { return false }
        return identifier == other.identifier && content.isEqual(other.content)
            && trigger?.value == other.trigger?.value
            && expiration == other.expiration && autoDismiss == other.autoDismiss && escalation == other.escalation
    }
    open override var hash: Int { identifier.hashValue }
    open override var description: String {
        "<UNNotificationRequest identifier: \"\(identifier)\", content: \(content), trigger: \(trigger.map { "\($0)" } ?? "nil")>"
    }
}

/// A delivered notification.
open class UNNotification: NSObject, NSCopying, @unchecked Sendable {
    // `@unchecked Sendable`: immutable.
    public let date: Date
    public let request: UNNotificationRequest
    let value: DeliveredNotification

    package init(value: DeliveredNotification) {
        self.value = value
        self.date = value.date
        self.request = UNNotificationRequest(value: value.request)
    }

    /// Immutable: the copy is the notification itself.
    open func copy(with zone: NSZone? = nil) -> Any { self }
    open override func isEqual(_ object: Any?) -> Bool { (object as? UNNotification)?.value == value }
    open override var hash: Int { value.request.identifier.hashValue }
    open override var description: String { "<UNNotification date: \(date), request: \(request)>" }
}

/// The user's answer to a notification.
open class UNNotificationResponse: NSObject, NSCopying, @unchecked Sendable {
    // `@unchecked Sendable`: immutable.
    public let notification: UNNotification
    public let actionIdentifier: String
    let value: NotificationResponse

    init(value: NotificationResponse) {
        self.value = value
        self.notification = UNNotification(value: value.notification)
        self.actionIdentifier = value.actionIdentifier
    }

    /// Immutable: the copy is the response itself.
    open func copy(with zone: NSZone? = nil) -> Any { self }

    static func make(_ value: NotificationResponse) -> UNNotificationResponse {
        value.userText == nil ? UNNotificationResponse(value: value) : UNTextInputNotificationResponse(value: value)
    }

    open override var description: String {
        "<\(Swift.type(of: self)) actionIdentifier: \"\(actionIdentifier)\", notification: \(notification.request.identifier)>"
    }
}

/// The answer to a text-input action, with the typed text.
open class UNTextInputNotificationResponse: UNNotificationResponse, @unchecked Sendable {
    public var userText: String { value.userText ?? "" }
}

/// The app's notification settings.
open class UNNotificationSettings: NSObject, NSCopying, @unchecked Sendable {
    // `@unchecked Sendable`: immutable.
    let value: NotificationSettings
    init(value: NotificationSettings) { self.value = value }

    /// Immutable: the copy is the settings object itself.
    open func copy(with zone: NSZone? = nil) -> Any { self }

    public var authorizationStatus: UNAuthorizationStatus { value.authorizationStatus }
    public var soundSetting: UNNotificationSetting { value.soundSetting }
    public var badgeSetting: UNNotificationSetting { value.badgeSetting }
    public var alertSetting: UNNotificationSetting { value.alertSetting }
    public var notificationCenterSetting: UNNotificationSetting { value.notificationCenterSetting }
    public var lockScreenSetting: UNNotificationSetting { value.lockScreenSetting }
    public var carPlaySetting: UNNotificationSetting { value.carPlaySetting }
    public var alertStyle: UNAlertStyle { value.alertStyle }
    public var showPreviewsSetting: UNShowPreviewsSetting { value.showPreviewsSetting }
    public var criticalAlertSetting: UNNotificationSetting { value.criticalAlertSetting }
    public var providesAppNotificationSettings: Bool { value.providesAppNotificationSettings }
    public var announcementSetting: UNNotificationSetting { value.announcementSetting }
    public var timeSensitiveSetting: UNNotificationSetting { value.timeSensitiveSetting }
    public var scheduledDeliverySetting: UNNotificationSetting { value.scheduledDeliverySetting }
    public var directMessagesSetting: UNNotificationSetting { value.directMessagesSetting }
}
