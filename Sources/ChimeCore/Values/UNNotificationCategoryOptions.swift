// Apple's option set, with Apple's names and raw values: a plain value, so it lives in the core and the
// `Chime` module re-exports it unchanged.

/// How the notifications of a category are handled.
public struct UNNotificationCategoryOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    public static let customDismissAction = UNNotificationCategoryOptions(rawValue: 1 << 0)
    public static let allowInCarPlay = UNNotificationCategoryOptions(rawValue: 1 << 1)
    public static let hiddenPreviewsShowTitle = UNNotificationCategoryOptions(rawValue: 1 << 2)
    public static let hiddenPreviewsShowSubtitle = UNNotificationCategoryOptions(rawValue: 1 << 3)
    @available(*, deprecated, message: "Announcement is always allowed on Apple's platforms")
    public static let allowAnnouncement = UNNotificationCategoryOptions(rawValue: 1 << 4)
}

// MARK: - Names used by JSON, the CLI and the docs

extension UNNotificationCategoryOptions {
    /// Apple's option names: `customDismissAction`, `allowInCarPlay`, ….
    public static let names: [(String, UNNotificationCategoryOptions)] = [
        ("customDismissAction", .customDismissAction), ("allowInCarPlay", .allowInCarPlay),
        ("hiddenPreviewsShowTitle", .hiddenPreviewsShowTitle),
        ("hiddenPreviewsShowSubtitle", .hiddenPreviewsShowSubtitle),
        ("allowAnnouncement", UNNotificationCategoryOptions(rawValue: 1 << 4)),
    ]
}
