// Apple's identifiers of the responses that are not an action of the category.

/// The identifier of the response when the user opens a notification (taps its body).
public let UNNotificationDefaultActionIdentifier = "com.apple.UNNotificationDefaultActionIdentifier"

/// The identifier of the response when the user dismisses a notification of a category with
/// `.customDismissAction`.
public let UNNotificationDismissActionIdentifier = "com.apple.UNNotificationDismissActionIdentifier"
