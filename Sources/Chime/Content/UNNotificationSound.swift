import ChimeCore
import Foundation

/// The name of a sound file.
public struct UNNotificationSoundName: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
}

/// The sound played when a notification is shown.
///
/// ```swift
/// content.sound = .default
/// content.sound = UNNotificationSound(named: UNNotificationSoundName("ping.caf"))
/// content.sound = .criticalSoundNamed(UNNotificationSoundName("siren.caf"), withAudioVolume: 0.8)
/// ```
public final class UNNotificationSound: NSObject, NSCopying, Sendable {
    let value: NotificationSound

    init(value: NotificationSound) { self.value = value }

    /// The default sound.
    public class var `default`: UNNotificationSound { UNNotificationSound(value: .default) }
    /// The default sound for critical alerts.
    public class var defaultCritical: UNNotificationSound {
        UNNotificationSound(value: NotificationSound(isCritical: true))
    }
    /// The default ringtone (played as the default sound on Linux).
    public class var defaultRingtone: UNNotificationSound {
        UNNotificationSound(value: NotificationSound(name: "ringtone"))
    }

    /// A sound file by name.
    public convenience init(named name: UNNotificationSoundName) {
        self.init(value: NotificationSound(name: name.rawValue))
    }

    /// A critical-alert sound file by name.
    public class func criticalSoundNamed(_ name: UNNotificationSoundName) -> UNNotificationSound {
        UNNotificationSound(value: NotificationSound(name: name.rawValue, isCritical: true))
    }

    /// A critical-alert sound file by name at a volume from 0 to 1.
    public class func criticalSoundNamed(_ name: UNNotificationSoundName, withAudioVolume volume: Float)
        -> UNNotificationSound
    {
        UNNotificationSound(value: NotificationSound(name: name.rawValue, isCritical: true, volume: volume))
    }

    /// A ringtone sound file by name (played as a named sound on Linux).
    public class func ringtoneSoundNamed(_ name: UNNotificationSoundName) -> UNNotificationSound {
        UNNotificationSound(value: NotificationSound(name: name.rawValue))
    }

    /// The default critical sound at a volume from 0 to 1.
    public class func defaultCriticalSound(withAudioVolume volume: Float) -> UNNotificationSound {
        UNNotificationSound(value: NotificationSound(isCritical: true, volume: volume))
    }

    /// Lets code written for the first UserNotifications release, `UNNotificationSound.default()`,
    /// compile unchanged: the call returns the sound itself. (A Chime addition.)
    public func callAsFunction() -> UNNotificationSound { self }

    /// Immutable: the copy is the sound itself.
    public func copy(with zone: NSZone? = nil) -> Any { self }

    public override func isEqual(_ object: Any?) -> Bool { (object as? UNNotificationSound)?.value == value }
    public override var hash: Int { value.hashValue }
    public override var description: String {
        "<UNNotificationSound \(value.name ?? "default")\(value.isCritical ? " critical" : "")>"
    }
}

/// The key of an attachment option: a uniform type identifier (`"public.jpeg"`) for a file whose
/// name does not say its type.
public let UNNotificationAttachmentOptionsTypeHintKey = "UNNotificationAttachmentOptionsTypeHintKey"
/// The key of an attachment option: `true` to show the attachment without a thumbnail.
public let UNNotificationAttachmentOptionsThumbnailHiddenKey = "UNNotificationAttachmentOptionsThumbnailHiddenKey"
/// The key of an attachment option: the part of the image the thumbnail shows, in unit coordinates,
/// as a `CGRect` or its `dictionaryRepresentation`.
public let UNNotificationAttachmentOptionsThumbnailClippingRectKey =
    "UNNotificationAttachmentOptionsThumbnailClippingRectKey"
/// The key of an attachment option: which frame the thumbnail shows — for a video, seconds from
/// its start (a number, or a `CMTime` dictionary with `value` and `timescale`); for an animated
/// image, the frame number.
public let UNNotificationAttachmentOptionsThumbnailTimeKey = "UNNotificationAttachmentOptionsThumbnailTimeKey"

/// A file shown with a notification. Chime checks the file when the attachment is made and keeps
/// its location (Apple moves the file into its own store; see docs/differences-from-apple.md).
///
/// ```swift
/// let attachment = try UNNotificationAttachment(identifier: "photo", url: downloadedFile, options: [
///     UNNotificationAttachmentOptionsTypeHintKey: "public.jpeg",          // the file has no extension
///     UNNotificationAttachmentOptionsThumbnailClippingRectKey: CGRect(x: 0, y: 0, width: 1, height: 0.5).dictionaryRepresentation,
/// ])
/// content.attachments = [attachment]
/// ```
public final class UNNotificationAttachment: NSObject, NSCopying, Sendable {
    let value: NotificationAttachment
    public var identifier: String { value.identifier }
    public var url: URL { value.url }
    /// The file's uniform type identifier (`public.png`, `public.mp3`, …).
    public var type: String { value.type }
    /// Whether the attachment is shown without a thumbnail (the `…ThumbnailHiddenKey` option). (A
    /// Chime addition: Apple keeps the options to itself.)
    public var thumbnailHidden: Bool { value.thumbnailHidden }
    /// The part of the image the thumbnail shows, in unit coordinates (the `…ThumbnailClippingRectKey`
    /// option); `nil` for the whole image. (A Chime addition.)
    public var thumbnailClippingRect: CGRect? {
        value.thumbnailClippingRect.map { CGRect(x: $0.x, y: $0.y, width: $0.width, height: $0.height) }
    }
    /// Which frame the thumbnail shows (the `…ThumbnailTimeKey` option): seconds into a video, or
    /// the frame number of an animated image. (A Chime addition.)
    public var thumbnailTime: TimeInterval? { value.thumbnailTime }

    init(value: NotificationAttachment) { self.value = value }

    /// Immutable: the copy is the attachment itself.
    public func copy(with zone: NSZone? = nil) -> Any { self }

    /// Makes an attachment from a local file.
    ///
    /// - Parameter options: `UNNotificationAttachmentOptionsTypeHintKey` (the type when the file's
    ///   name does not say it), `…ThumbnailHiddenKey`, `…ThumbnailClippingRectKey`,
    ///   `…ThumbnailTimeKey`; other keys are ignored.
    /// - Throws: ``UNError`` `attachmentInvalidURL` (not a readable file URL),
    ///   `attachmentUnrecognizedType` (an unknown extension without a type hint, or an unknown
    ///   hint), `attachmentInvalidFileSize` (empty, or too large for its kind, by Apple's limits:
    ///   images 10 MB, audio 5 MB, video 50 MB); ``ChimeError`` `invalidValue` naming the option key
    ///   for a thumbnail option of the wrong type or out of range.
    public convenience init(identifier: String, url: URL, options: [AnyHashable: Any]? = nil) throws {
        guard url.isFileURL, FileManager.default.isReadableFile(atPath: url.path) else {
            throw UNError(.attachmentInvalidURL, "attachment '\(identifier)': \(url) is not a readable local file")
        }
        let options = Self.stringKeyed(options ?? [:])
        let ext = url.pathExtension.lowercased()
        let type: String
        let limit: Int
        if let hint = options[UNNotificationAttachmentOptionsTypeHintKey] {
            guard let hint = hint as? String, let known = Self.limits[hint] else {
                throw UNError(
                    .attachmentUnrecognizedType,
                    "attachment '\(identifier)': the type hint \(hint) is not a supported type; accepted: \(Self.limits.keys.sorted().joined(separator: ", "))"
                )
            }
            (type, limit) = (hint, known)
        } else if let known = Self.types[ext] {
            (type, limit) = known
        } else {
            let name = ext.isEmpty ? "a file without an extension" : "files ending in '.\(ext)'"
            throw UNError(
                .attachmentUnrecognizedType,
                "attachment '\(identifier)': \(name) cannot be recognised; give the type with UNNotificationAttachmentOptionsTypeHintKey (such as \"public.jpeg\"), or use one of these extensions: \(Self.types.keys.sorted().joined(separator: ", "))"
            )
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
        guard size > 0, size <= limit else {
            throw UNError(
                .attachmentInvalidFileSize,
                "attachment '\(identifier)' is \(size) bytes; files of this kind may be 1 to \(limit) bytes")
        }
        var value = NotificationAttachment(
            identifier: identifier.isEmpty ? UUID().uuidString : identifier, url: url, type: type)
        try Self.readThumbnailOptions(options, into: &value)
        self.init(value: value)
    }

    /// The options with their keys as Swift strings. Apps often build them as `[NSObject: AnyObject]`
    /// (a helper many iOS tutorials share): its `NSString` keys are found by a `String` lookup on
    /// Darwin, where `NSString` hashes as `String`, but not on Linux, where
    /// `AnyHashable(NSString)` and `AnyHashable(String)` differ.
    private static func stringKeyed(_ options: [AnyHashable: Any]) -> [AnyHashable: Any] {
        var out: [AnyHashable: Any] = [:]
        for (key, value) in options { out[(key.base as? String).map(AnyHashable.init) ?? key] = value }
        return out
    }

    private static func readThumbnailOptions(_ options: [AnyHashable: Any], into value: inout NotificationAttachment)
        throws
    {
        let field = "options.\(UNNotificationAttachmentOptionsThumbnailHiddenKey)"
        if let hidden = options[UNNotificationAttachmentOptionsThumbnailHiddenKey] {
            guard let flag = hidden as? Bool ?? (hidden as? NSNumber)?.boolValue else {
                throw ChimeError(.invalidValue, field: field, "\(field) is \(hidden); give true or false")
            }
            value.thumbnailHidden = flag
        }
        if let rect = options[UNNotificationAttachmentOptionsThumbnailClippingRectKey] {
            let field = "options.\(UNNotificationAttachmentOptionsThumbnailClippingRectKey)"
            guard let found = rect as? CGRect ?? CGRect(dictionaryRepresentation: rect) else {
                throw ChimeError(
                    .invalidValue, field: field,
                    "\(field) is \(rect); give a CGRect or its dictionaryRepresentation (X, Y, Width, Height)")
            }
            value.thumbnailClippingRect = .init(
                x: Double(found.origin.x), y: Double(found.origin.y),
                width: Double(found.size.width), height: Double(found.size.height))
        }
        if let time = options[UNNotificationAttachmentOptionsThumbnailTimeKey] {
            let field = "options.\(UNNotificationAttachmentOptionsThumbnailTimeKey)"
            guard let seconds = Self.seconds(time) else {
                throw ChimeError(
                    .invalidValue, field: field,
                    "\(field) is \(time); give seconds as a number, or a CMTime dictionary with value and timescale")
            }
            value.thumbnailTime = seconds
        }
        try Validation.validateThumbnail(value, field: "options")
    }

    /// Seconds from a number or a `CMTime` dictionary (`value` / `timescale`).
    private static func seconds(_ value: Any) -> Double? {
        if let number = number(value) { return number }
        guard let dictionary = value as? [AnyHashable: Any] ?? (value as? NSDictionary as? [AnyHashable: Any]),
            let count = dictionary["value"].flatMap(number), let scale = dictionary["timescale"].flatMap(number),
            scale > 0
        else { return nil }
        return count / scale
    }

    static func number(_ value: Any) -> Double? {
        switch value {
        case let double as Double: double
        case let float as Float: Double(float)
        case let int as Int: Double(int)
        case let cgFloat as CGFloat: Double(cgFloat)
        case let number as NSNumber: number.doubleValue
        default: nil
        }
    }

    private static let types: [String: (String, Int)] = [
        "png": ("public.png", 10_000_000), "jpg": ("public.jpeg", 10_000_000), "jpeg": ("public.jpeg", 10_000_000),
        "gif": ("com.compuserve.gif", 10_000_000), "heic": ("public.heic", 10_000_000),
        "webp": ("org.webmproject.webp", 10_000_000),
        "aiff": ("public.aiff-audio", 5_000_000), "aif": ("public.aiff-audio", 5_000_000),
        "wav": ("com.microsoft.waveform-audio", 5_000_000),
        "mp3": ("public.mp3", 5_000_000), "m4a": ("com.apple.m4a-audio", 5_000_000),
        "caf": ("com.apple.coreaudio-format", 5_000_000),
        "ogg": ("org.xiph.ogg", 5_000_000), "mp4": ("public.mpeg-4", 50_000_000), "mpeg": ("public.mpeg", 50_000_000),
        "mov": ("com.apple.quicktime-movie", 50_000_000), "avi": ("public.avi", 50_000_000),
        "m2v": ("public.mpeg-2-video", 50_000_000),
    ]

    /// The size limit of each type a hint may name.
    private static let limits: [String: Int] = Dictionary(
        types.values.map { ($0.0, $0.1) } + [("public.mpeg-4-audio", 5_000_000)],
        uniquingKeysWith: { first, _ in first })
}

// CoreGraphics' dictionary form of a rectangle, which apps put in the clipping-rectangle option.
extension CGRect {
    /// The rectangle as CoreGraphics writes it into a dictionary: `X`, `Y`, `Width`, `Height`.
    public var dictionaryRepresentation: NSDictionary {
        ["X": Double(origin.x), "Y": Double(origin.y), "Width": Double(size.width), "Height": Double(size.height)]
            as NSDictionary
    }

    /// Reads a rectangle from its dictionary form (see ``dictionaryRepresentation``).
    public init?(dictionaryRepresentation dictionary: Any) {
        guard let values = dictionary as? [AnyHashable: Any] ?? (dictionary as? NSDictionary as? [AnyHashable: Any]),
            let x = values["X"].flatMap(UNNotificationAttachment.number),
            let y = values["Y"].flatMap(UNNotificationAttachment.number),
            let width = values["Width"].flatMap(UNNotificationAttachment.number),
            let height = values["Height"].flatMap(UNNotificationAttachment.number)
        else { return nil }
        self.init(x: x, y: y, width: width, height: height)
    }
}
