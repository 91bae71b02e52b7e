import Foundation

/// A notification's sound: the default sound or a named file, optionally critical.
public struct NotificationSound: Sendable, Hashable {
    /// The sound file's name, or `nil` for the system's default sound.
    public var name: String?
    /// Whether this is a critical alert sound (plays even when the device is muted).
    public var isCritical: Bool
    /// The volume of a critical sound, 0...1, or `nil` for the default volume.
    public var volume: Float?

    public init(name: String? = nil, isCritical: Bool = false, volume: Float? = nil) {
        self.name = name
        self.isCritical = isCritical
        self.volume = volume
    }

    /// The default sound.
    public static let `default` = NotificationSound()
}

/// A file attached to a notification (an image, sound or video), with how its thumbnail is shown.
public struct NotificationAttachment: Sendable, Hashable {
    /// A part of an image in unit coordinates: 0…1 from the top left, across and down.
    public struct ClippingRect: Sendable, Hashable {
        public var x: Double
        public var y: Double
        public var width: Double
        public var height: Double
        public init(x: Double, y: Double, width: Double, height: Double) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }
    }

    public var identifier: String
    public var url: URL
    /// The uniform type identifier, from the file's extension or the app's type hint (`public.png`, …).
    public var type: String
    /// Whether surfaces show the attachment without a thumbnail.
    public var thumbnailHidden: Bool
    /// The part of the image the thumbnail shows; `nil` for all of it.
    public var thumbnailClippingRect: ClippingRect?
    /// Which frame the thumbnail shows: for a video, seconds from its start; for an animated image,
    /// the frame number (as Apple's `…ThumbnailTimeKey`).
    public var thumbnailTime: Double?

    public init(
        identifier: String, url: URL, type: String, thumbnailHidden: Bool = false,
        thumbnailClippingRect: ClippingRect? = nil, thumbnailTime: Double? = nil
    ) {
        self.identifier = identifier
        self.url = url
        self.type = type
        self.thumbnailHidden = thumbnailHidden
        self.thumbnailClippingRect = thumbnailClippingRect
        self.thumbnailTime = thumbnailTime
    }

    /// Whether any thumbnail option differs from the default.
    public var hasThumbnailOptions: Bool { thumbnailHidden || thumbnailClippingRect != nil || thumbnailTime != nil }
}

/// What a notification says: its texts, sound, badge, user info and grouping.
public struct NotificationContent: Sendable, Hashable {
    public var title: String = ""
    public var subtitle: String = ""
    public var body: String = ""
    /// The app badge to set when delivered: `nil` leaves the badge alone, 0 clears it.
    public var badge: Int?
    public var sound: NotificationSound?
    public var launchImageName: String = ""
    public var userInfo: [String: PropertyListValue] = [:]
    public var attachments: [NotificationAttachment] = []
    public var categoryIdentifier: String = ""
    public var threadIdentifier: String = ""
    public var targetContentIdentifier: String?
    public var summaryArgument: String = ""
    public var summaryArgumentCount: Int = 0
    public var interruptionLevel: UNNotificationInterruptionLevel = .active
    public var relevanceScore: Double = 0
    public var filterCriteria: String?

    public init(title: String = "", subtitle: String = "", body: String = "") {
        self.title = title
        self.subtitle = subtitle
        self.body = body
    }

    /// Only a badge: no title, subtitle, body, sound or attachment. Such a notification sets the
    /// app's badge and is neither listed as delivered nor shown, as on iOS.
    public var isBadgeOnly: Bool {
        badge != nil && title.isEmpty && subtitle.isEmpty && body.isEmpty && sound == nil && attachments.isEmpty
    }
}

/// A button (or a reply field) offered with the notifications of a category.
public struct NotificationAction: Sendable, Hashable {
    /// The icon shown next to the action's title.
    public enum Icon: Sendable, Hashable {
        case template(String)
        case system(String)
    }

    /// The reply field of a text-input action.
    public struct TextInput: Sendable, Hashable {
        public var buttonTitle: String
        public var placeholder: String
        public init(buttonTitle: String, placeholder: String) {
            self.buttonTitle = buttonTitle
            self.placeholder = placeholder
        }
    }

    public var identifier: String
    public var title: String
    public var options: UNNotificationActionOptions
    public var icon: Icon?
    /// Set for a text-input action.
    public var textInput: TextInput?

    public init(
        identifier: String, title: String, options: UNNotificationActionOptions = [],
        icon: Icon? = nil, textInput: TextInput? = nil
    ) {
        self.identifier = identifier
        self.title = title
        self.options = options
        self.icon = icon
        self.textInput = textInput
    }
}

/// A kind of notification and the actions it offers.
public struct NotificationCategory: Sendable, Hashable {
    public var identifier: String
    public var actions: [NotificationAction]
    public var intentIdentifiers: [String]
    public var options: UNNotificationCategoryOptions
    /// Shown instead of the body when previews are hidden; empty for the system's default text.
    public var hiddenPreviewsBodyPlaceholder: String
    /// The summary of a collapsed group, with `%u` (the count) and `%@` (the summary argument).
    public var categorySummaryFormat: String

    public init(
        identifier: String, actions: [NotificationAction] = [], intentIdentifiers: [String] = [],
        options: UNNotificationCategoryOptions = [], hiddenPreviewsBodyPlaceholder: String = "",
        categorySummaryFormat: String = ""
    ) {
        self.identifier = identifier
        self.actions = actions
        self.intentIdentifiers = intentIdentifiers
        self.options = options
        self.hiddenPreviewsBodyPlaceholder = hiddenPreviewsBodyPlaceholder
        self.categorySummaryFormat = categorySummaryFormat
    }

    /// The action with this identifier, if the category has one.
    public func action(_ identifier: String) -> NotificationAction? {
        actions.first { $0.identifier.isLiterally(identifier) }
    }
}
