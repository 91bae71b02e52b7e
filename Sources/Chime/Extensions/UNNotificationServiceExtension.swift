import ChimeCore
import Foundation

/// Changes a remote notification's content before it is shown: decrypts it, downloads an image to
/// attach, rewrites the title. The notification must carry `mutable-content: 1` and an alert.
///
/// ```swift
/// final class NotificationService: UNNotificationServiceExtension {
///     var contentHandler: ((UNNotificationContent) -> Void)?
///     var bestAttemptContent: UNMutableNotificationContent?
///
///     override func didReceive(_ request: UNNotificationRequest,
///                              withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
///         self.contentHandler = contentHandler
///         bestAttemptContent = request.content.mutableCopy() as? UNMutableNotificationContent
///         guard let bestAttemptContent else { return contentHandler(request.content) }
///         bestAttemptContent.title = "\(bestAttemptContent.title) [decrypted]"
///         contentHandler(bestAttemptContent)
///     }
///
///     override func serviceExtensionTimeWillExpire() {
///         if let contentHandler, let bestAttemptContent { contentHandler(bestAttemptContent) }
///     }
/// }
///
/// UNUserNotificationCenter.current().notificationServiceExtension = NotificationService.self
/// ```
///
/// On iOS the extension is its own target, named in its `Info.plist` (`NSExtensionPrincipalClass`);
/// in Chime the app registers the class with its center (``UNUserNotificationCenter/notificationServiceExtension``).
/// For each such push Chime makes a new instance and calls ``didReceive(_:withContentHandler:)``
/// on a queue of the extension's own. The extension has ``UNUserNotificationCenter/serviceExtensionTimeLimit``
/// (30 s, as on iOS; virtual time under the simulator) to call the content handler, from any
/// thread; then ``serviceExtensionTimeWillExpire()`` is called, and what the handler was given
/// before that returns — the best attempt — is shown, else the original content. The first call of
/// the handler counts; later calls are ignored.
///
/// Not `Sendable`, as Apple's is not: Chime calls an instance's methods on one queue.
open class UNNotificationServiceExtension: NSObject {
    /// Chime makes each instance with this initialiser, as iOS does.
    public required override init() {
        super.init()
    }

    /// A notification arrived: call `contentHandler` with the content to show, once. The default
    /// shows the content unchanged.
    open func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        contentHandler(request.content)
    }

    /// The time is nearly up: call the content handler now with the best attempt, or the original
    /// content is shown.
    open func serviceExtensionTimeWillExpire() {}
}
