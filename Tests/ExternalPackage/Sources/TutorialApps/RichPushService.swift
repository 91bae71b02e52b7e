import Chime

/// Where a rich-push extension gets its media: an app has a URLSession download here; tests give
/// a local file, or one that never arrives.
public protocol MediaSource {
    func fetch(_ address: String, completion: @escaping (URL?) -> Void)
}

/// Files already on disk, handed over from a background queue as a download would be.
public struct LocalMedia: MediaSource {
    let files: [String: URL]
    public init(files: [String: URL]) { self.files = files }
    public func fetch(_ address: String, completion: @escaping (URL?) -> Void) {
        let file = files[address]
        DispatchQueue.global().async { completion(file) }
    }
}

/// A download that never finishes.
public struct StalledMedia: MediaSource {
    public init() {}
    public func fetch(_ address: String, completion: @escaping (URL?) -> Void) {}
}

/// A notification service extension as rich-push apps write it: it decodes the title, attaches the
/// image named in the payload (`"media-url"`) with a type hint (downloads have no extension), and
/// hands over its best attempt when its time runs out.
open class RichPushService: UNNotificationServiceExtension {
    var contentHandler: ((UNNotificationContent) -> Void)?
    var bestAttemptContent: UNMutableNotificationContent?

    /// Where media comes from; set by the app (the extension has no other way to be configured).
    open var media: MediaSource { StalledMedia() }

    open override func didReceive(
        _ request: UNNotificationRequest,
        withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        self.contentHandler = contentHandler
        bestAttemptContent = (request.content.mutableCopy() as? UNMutableNotificationContent)
        guard let bestAttemptContent = bestAttemptContent else { return contentHandler(request.content) }
        bestAttemptContent.title = bestAttemptContent.title.replacingOccurrences(of: "[encrypted] ", with: "")
        bestAttemptContent.threadIdentifier = (bestAttemptContent.userInfo["conversation"] as? String) ?? ""
        guard let address = bestAttemptContent.userInfo["media-url"] as? String else {
            return contentHandler(bestAttemptContent)
        }
        media.fetch(address) { file in
            if let file = file,
                let attachment = try? UNNotificationAttachment(
                    identifier: "media", url: file,
                    options: [
                        UNNotificationAttachmentOptionsTypeHintKey: "public.jpeg",
                        UNNotificationAttachmentOptionsThumbnailClippingRectKey: CGRect(
                            x: 0, y: 0, width: 1, height: 0.5
                        ).dictionaryRepresentation,
                    ])
            {
                bestAttemptContent.attachments = [attachment]
            }
            contentHandler(bestAttemptContent)
        }
    }

    open override func serviceExtensionTimeWillExpire() {
        if let contentHandler = contentHandler, let bestAttemptContent = bestAttemptContent {
            bestAttemptContent.subtitle = "Image not loaded"
            contentHandler(bestAttemptContent)
        }
    }
}

/// The extension as registered by an app whose media is at hand.
public final class LocalRichPushService: RichPushService {
    /// The files the (test) app serves, by address.
    private static var files: [String: URL] = [:]
    private static let lock = NSLock()
    public override var media: MediaSource {
        LocalMedia(files: LocalRichPushService.lock.withLock { LocalRichPushService.files })
    }
    public static func serve(_ address: String, from file: URL) { lock.withLock { files[address] = file } }
}

/// The extension of an app whose media server does not answer.
public final class StalledRichPushService: RichPushService {}

/// An extension that answers twice: the first answer counts.
public final class EagerService: UNNotificationServiceExtension {
    public override func didReceive(
        _ request: UNNotificationRequest,
        withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        let first = request.content.mutableCopy() as! UNMutableNotificationContent
        first.body = "first answer"
        contentHandler(first)
        let second = request.content.mutableCopy() as! UNMutableNotificationContent
        second.body = "second answer"
        contentHandler(second)
    }
}

/// An extension that forgets to answer at all, even when its time runs out.
public final class ForgetfulService: UNNotificationServiceExtension {
    public override func didReceive(
        _ request: UNNotificationRequest,
        withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {}
}
