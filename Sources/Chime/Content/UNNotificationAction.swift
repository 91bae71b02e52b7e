import ChimeCore
import Foundation

/// An icon for an action.
public final class UNNotificationActionIcon: NSObject, NSCopying, Sendable {
    let value: NotificationAction.Icon
    init(value: NotificationAction.Icon) { self.value = value }
    /// An image from the app's bundle.
    public convenience init(templateImageName: String) { self.init(value: .template(templateImageName)) }
    /// A system symbol.
    public convenience init(systemImageName: String) { self.init(value: .system(systemImageName)) }
    /// Immutable: the copy is the icon itself.
    public func copy(with zone: NSZone? = nil) -> Any { self }
}

/// A button offered with a notification.
///
/// ```swift
/// let snooze = UNNotificationAction(identifier: "snooze", title: "Snooze 5 Sec", options: [])
/// ```
open class UNNotificationAction: NSObject, NSCopying, @unchecked Sendable {
    // `@unchecked Sendable`: immutable after init.
    let value: NotificationAction

    init(value: NotificationAction) { self.value = value }

    public convenience init(identifier: String, title: String, options: UNNotificationActionOptions = []) {
        self.init(value: NotificationAction(identifier: identifier, title: title, options: options))
    }

    public convenience init(
        identifier: String, title: String, options: UNNotificationActionOptions = [], icon: UNNotificationActionIcon?
    ) {
        self.init(value: NotificationAction(identifier: identifier, title: title, options: options, icon: icon?.value))
    }

    public var identifier: String { value.identifier }
    public var title: String { value.title }
    public var options: UNNotificationActionOptions { value.options }
    public var icon: UNNotificationActionIcon? { value.icon.map(UNNotificationActionIcon.init(value:)) }

    static func make(_ value: NotificationAction) -> UNNotificationAction {
        value.textInput == nil ? UNNotificationAction(value: value) : UNTextInputNotificationAction(value: value)
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }
    open override func isEqual(_ object: Any?) -> Bool { (object as? UNNotificationAction)?.value == value }
    open override var hash: Int { value.hashValue }
    open override var description: String {
        "<\(Swift.type(of: self)) identifier: \"\(identifier)\", title: \"\(title)\">"
    }
}

/// An action that opens a reply field.
///
/// ```swift
/// let comment = UNTextInputNotificationAction(identifier: "comment", title: "Add Comment", options: [],
///                                             textInputButtonTitle: "Add", textInputPlaceholder: "Add Comment Here")
/// ```
open class UNTextInputNotificationAction: UNNotificationAction, @unchecked Sendable {
    public convenience init(
        identifier: String, title: String, options: UNNotificationActionOptions = [],
        textInputButtonTitle: String, textInputPlaceholder: String
    ) {
        self.init(
            value: NotificationAction(
                identifier: identifier, title: title, options: options,
                textInput: .init(buttonTitle: textInputButtonTitle, placeholder: textInputPlaceholder)))
    }

    public convenience init(
        identifier: String, title: String, options: UNNotificationActionOptions = [],
        icon: UNNotificationActionIcon?, textInputButtonTitle: String, textInputPlaceholder: String
    ) {
        self.init(
            value: NotificationAction(
                identifier: identifier, title: title, options: options, icon: icon?.value,
                textInput: .init(buttonTitle: textInputButtonTitle, placeholder: textInputPlaceholder)))
    }

    /// The short form, as Apple's inherited initialiser: a reply field with the system's button and placeholder.
    public convenience init(identifier: String, title: String, options: UNNotificationActionOptions = []) {
        self.init(
            value: NotificationAction(
                identifier: identifier, title: title, options: options,
                textInput: .init(buttonTitle: "Send", placeholder: "")))
    }

    public var textInputButtonTitle: String { value.textInput?.buttonTitle ?? "" }
    public var textInputPlaceholder: String { value.textInput?.placeholder ?? "" }
}

/// A kind of notification and its actions.
///
/// ```swift
/// let category = UNNotificationCategory(identifier: "alarm.category", actions: [snooze, comment],
///                                       intentIdentifiers: [], options: [.customDismissAction])
/// UNUserNotificationCenter.current().setNotificationCategories([category])
/// ```
open class UNNotificationCategory: NSObject, NSCopying, @unchecked Sendable {
    // `@unchecked Sendable`: immutable after init.
    let value: NotificationCategory

    init(value: NotificationCategory) { self.value = value }

    public convenience init(
        identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
        options: UNNotificationCategoryOptions = []
    ) {
        self.init(
            value: NotificationCategory(
                identifier: identifier, actions: actions.map(\.value),
                intentIdentifiers: intentIdentifiers, options: options))
    }

    public convenience init(
        identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
        hiddenPreviewsBodyPlaceholder: String, options: UNNotificationCategoryOptions = []
    ) {
        self.init(
            value: NotificationCategory(
                identifier: identifier, actions: actions.map(\.value),
                intentIdentifiers: intentIdentifiers, options: options,
                hiddenPreviewsBodyPlaceholder: hiddenPreviewsBodyPlaceholder))
    }

    public convenience init(
        identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
        hiddenPreviewsBodyPlaceholder: String?, categorySummaryFormat: String?,
        options: UNNotificationCategoryOptions = []
    ) {
        self.init(
            value: NotificationCategory(
                identifier: identifier, actions: actions.map(\.value),
                intentIdentifiers: intentIdentifiers, options: options,
                hiddenPreviewsBodyPlaceholder: hiddenPreviewsBodyPlaceholder ?? "",
                categorySummaryFormat: categorySummaryFormat ?? ""))
    }

    public var identifier: String { value.identifier }
    public var actions: [UNNotificationAction] { value.actions.map(UNNotificationAction.make) }
    public var intentIdentifiers: [String] { value.intentIdentifiers }
    public var options: UNNotificationCategoryOptions { value.options }
    public var hiddenPreviewsBodyPlaceholder: String { value.hiddenPreviewsBodyPlaceholder }
    public var categorySummaryFormat: String { value.categorySummaryFormat }

    open func copy(with zone: NSZone? = nil) -> Any { self }
    open override func isEqual(_ object: Any?) -> Bool { (object as? UNNotificationCategory)?.value == value }
    open override var hash: Int { value.hashValue }
    open override var description: String {
        "<UNNotificationCategory identifier: \"\(identifier)\", actions: \(actions.map(\.identifier))>"
    }
}
