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
public final class UNNotificationSound: NSObject, Sendable {
    let value: NotificationSound

    init(value: NotificationSound) { self.value = value }

    /// The default sound.
    public class var `default`: UNNotificationSound { UNNotificationSound(value: .default) }
    /// The default sound for critical alerts.
    public class var defaultCritical: UNNotificationSound { UNNotificationSound(value: NotificationSound(isCritical: true)) }
    /// The default ringtone (played as the default sound on Linux).
    public class var defaultRingtone: UNNotificationSound { UNNotificationSound(value: NotificationSound(name: "ringtone")) }

    /// A sound file by name.
    public convenience init(named name: UNNotificationSoundName) {
        self.init(value: NotificationSound(name: name.rawValue))
    }

    /// A critical-alert sound file by name.
    public class func criticalSoundNamed(_ name: UNNotificationSoundName) -> UNNotificationSound {
        UNNotificationSound(value: NotificationSound(name: name.rawValue, isCritical: true))
    }

    /// A critical-alert sound file by name at a volume from 0 to 1.
    public class func criticalSoundNamed(_ name: UNNotificationSoundName, withAudioVolume volume: Float) -> UNNotificationSound {
        UNNotificationSound(value: NotificationSound(name: name.rawValue, isCritical: true, volume: volume))
    }

    /// The default critical sound at a volume from 0 to 1.
    public class func defaultCriticalSound(withAudioVolume volume: Float) -> UNNotificationSound {
        UNNotificationSound(value: NotificationSound(isCritical: true, volume: volume))
    }

    /// Lets code written for the first UserNotifications release, `UNNotificationSound.default()`,
    /// compile unchanged: the call returns the sound itself. (A Chime addition.)
    public func callAsFunction() -> UNNotificationSound { self }

    public override func isEqual(_ object: Any?) -> Bool { (object as? UNNotificationSound)?.value == value }
    public override var hash: Int { value.hashValue }
    public override var description: String {
        "<UNNotificationSound \(value.name ?? "default")\(value.isCritical ? " critical" : "")>"
    }
}

/// A file shown with a notification. Chime checks the file when the attachment is made and keeps
/// its location (Apple moves the file into its own store; see docs/differences-from-apple.md).
public final class UNNotificationAttachment: NSObject, Sendable {
    let value: NotificationAttachment
    public var identifier: String { value.identifier }
    public var url: URL { value.url }
    /// The file's uniform type identifier (`public.png`, `public.mp3`, …).
    public var type: String { value.type }

    init(value: NotificationAttachment) { self.value = value }

    /// Makes an attachment from a local file.
    ///
    /// - Throws: ``UNError`` `attachmentInvalidURL` (not a readable file URL),
    ///   `attachmentUnrecognizedType` (an unknown extension), `attachmentInvalidFileSize` (too large
    ///   for its kind, by Apple's limits: images 10 MB, audio 5 MB, video 50 MB).
    public convenience init(identifier: String, url: URL, options: [AnyHashable: Any]? = nil) throws {
        guard url.isFileURL, FileManager.default.isReadableFile(atPath: url.path) else {
            throw UNError(.attachmentInvalidURL, "attachment '\(identifier)': \(url) is not a readable local file")
        }
        let ext = url.pathExtension.lowercased()
        guard let (type, limit) = Self.types[ext] else {
            throw UNError(.attachmentUnrecognizedType,
                          "attachment '\(identifier)': files ending in '.\(ext)' are not supported; accepted: \(Self.types.keys.sorted().joined(separator: ", "))")
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
        guard size > 0, size <= limit else {
            throw UNError(.attachmentInvalidFileSize, "attachment '\(identifier)' is \(size) bytes; files of this kind may be 1 to \(limit) bytes")
        }
        self.init(value: NotificationAttachment(identifier: identifier.isEmpty ? UUID().uuidString : identifier, url: url, type: type))
    }

    private static let types: [String: (String, Int)] = [
        "png": ("public.png", 10_000_000), "jpg": ("public.jpeg", 10_000_000), "jpeg": ("public.jpeg", 10_000_000),
        "gif": ("com.compuserve.gif", 10_000_000), "heic": ("public.heic", 10_000_000), "webp": ("org.webmproject.webp", 10_000_000),
        "aiff": ("public.aiff-audio", 5_000_000), "aif": ("public.aiff-audio", 5_000_000), "wav": ("com.microsoft.waveform-audio", 5_000_000),
        "mp3": ("public.mp3", 5_000_000), "m4a": ("com.apple.m4a-audio", 5_000_000), "caf": ("com.apple.coreaudio-format", 5_000_000),
        "ogg": ("org.xiph.ogg", 5_000_000), "mp4": ("public.mpeg-4", 50_000_000), "mpeg": ("public.mpeg", 50_000_000),
        "mov": ("com.apple.quicktime-movie", 50_000_000), "avi": ("public.avi", 50_000_000),
    ]
}
