import ChimeCore
import Foundation
import Synchronization

/// What a notification says. Immutable; make changes on a ``UNMutableNotificationContent``:
///
/// ```swift
/// let changed = request.content.mutableCopy() as! UNMutableNotificationContent
/// changed.body = "Snooze 5 Seconds"
/// ```
///
/// `@unchecked Sendable`: all state sits behind a lock, so reading and (in the mutable subclass)
/// writing from any thread is safe.
open class UNNotificationContent: NSObject, NSCopying, NSMutableCopying, @unchecked Sendable {
    struct State {
        var value: NotificationContent
        /// `userInfo` as the app set it, kept until it is converted at `add` (where a value that is
        /// not a property-list type becomes an error naming its key).
        var rawUserInfo: [AnyHashable: Any]?
        var attachments: [UNNotificationAttachment]
        var sound: UNNotificationSound?
    }

    /// Guards `state`, which holds the app's values that are not Sendable by type (`userInfo`'s
    /// `Any`), so it cannot live inside the `Mutex`.
    private let lock = Mutex(())
    private var state: State

    public override init() {
        state = State(value: NotificationContent(), rawUserInfo: nil, attachments: [], sound: nil)
        super.init()
    }

    init(value: NotificationContent) {
        state = State(
            value: value, rawUserInfo: nil,
            attachments: value.attachments.map(UNNotificationAttachment.init(value:)),
            sound: value.sound.map(UNNotificationSound.init(value:)))
        super.init()
    }

    init(copying other: UNNotificationContent) {
        state = other.read { $0 }
        super.init()
    }

    func read<T>(_ body: (State) -> T) -> T { lock.withLock { _ in body(state) } }
    func write(_ body: (inout State) -> Void) { lock.withLock { _ in body(&state) } }

    /// The content as the engine's value; converts `userInfo`.
    ///
    /// - Throws: ``ChimeError`` `invalidUserInfo` naming the first key that is not a property-list value.
    func coreValue() throws -> NotificationContent {
        let (value, raw, attachments, sound) = read { ($0.value, $0.rawUserInfo, $0.attachments, $0.sound) }
        var result = value
        if let raw { result.userInfo = try [String: PropertyListValue](userInfo: raw, field: "content.userInfo") }
        result.attachments = attachments.map(\.value)
        result.sound = sound?.value
        return result
    }

    public var title: String { read { $0.value.title } }
    public var subtitle: String { read { $0.value.subtitle } }
    public var body: String { read { $0.value.body } }
    /// The app badge to set; `nil` leaves it, 0 clears it.
    public var badge: NSNumber? { read { $0.value.badge.map { NSNumber(value: $0) } } }
    public var sound: UNNotificationSound? { read { $0.sound } }
    public var launchImageName: String { read { $0.value.launchImageName } }
    /// Property-list values, as iOS hands them: numbers and booleans as `NSNumber` (so
    /// `userInfo["id"] as? UInt`, `as? Double` and `as? Bool` of 0 or 1 work as on iOS),
    /// `String`, `Data`, `Date`, and arrays and dictionaries of these. Until the content is added,
    /// the dictionary the app set, as it set it.
    public var userInfo: [AnyHashable: Any] { read { $0.rawUserInfo ?? $0.value.userInfo.appleUserInfo } }
    public var attachments: [UNNotificationAttachment] { read { $0.attachments } }
    public var categoryIdentifier: String { read { $0.value.categoryIdentifier } }
    public var threadIdentifier: String { read { $0.value.threadIdentifier } }
    public var targetContentIdentifier: String? { read { $0.value.targetContentIdentifier } }
    public var summaryArgument: String { read { $0.value.summaryArgument } }
    public var summaryArgumentCount: Int { read { $0.value.summaryArgumentCount } }
    public var interruptionLevel: UNNotificationInterruptionLevel { read { $0.value.interruptionLevel } }
    public var relevanceScore: Double { read { $0.value.relevanceScore } }
    public var filterCriteria: String? { read { $0.value.filterCriteria } }

    /// Apple's way to make a communication notification (a message or call, with the sender's avatar)
    /// from an intent. Linux has no Intents framework, so there is no provider to take content
    /// from: this throws ``UNError`` `contentProvidingObjectNotAllowed` (code 1500), as iOS does for
    /// a provider it does not accept. Send the sender's name in `title`/`subtitle` instead.
    open func updating(from provider: any UNNotificationContentProviding) throws -> UNNotificationContent {
        throw UNError(
            .contentProvidingObjectNotAllowed,
            "updating(from:) takes its content from an intent (INSendMessageIntent, INStartCallIntent); Linux has no Intents framework, so \(Swift.type(of: provider)) cannot provide content"
        )
    }

    open func copy(with zone: NSZone? = nil) -> Any { UNNotificationContent(copying: self) }
    open func mutableCopy(with zone: NSZone? = nil) -> Any { UNMutableNotificationContent(copying: self) }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNNotificationContent else { return false }
        return (try? coreValue()) == (try? other.coreValue())
    }

    open override var hash: Int { read { $0.value.title.hashValue ^ $0.value.body.hashValue } }

    open override var description: String {
        read {
            "<\(Swift.type(of: self)) title: \"\($0.value.title)\", subtitle: \"\($0.value.subtitle)\", body: \"\($0.value.body)\", categoryIdentifier: \"\($0.value.categoryIdentifier)\", threadIdentifier: \"\($0.value.threadIdentifier)\">"
        }
    }
}

/// Something that can provide a notification's content for ``UNNotificationContent/updating(from:)``:
/// on Apple's platforms an intent (`INSendMessageIntent`) or `UNNotificationAttributedMessageContext`.
/// Linux has neither; see docs/differences-from-apple.md.
public protocol UNNotificationContentProviding: AnyObject {}

/// Content to fill in before adding a request.
///
/// ```swift
/// let content = UNMutableNotificationContent()
/// content.title = "Stay hydrated"
/// content.body = "It's time for a glass of water"
/// content.sound = .default
/// content.categoryIdentifier = "drinkingReminderCategory"
/// ```
open class UNMutableNotificationContent: UNNotificationContent, @unchecked Sendable {
    public override init() { super.init() }
    override init(copying other: UNNotificationContent) { super.init(copying: other) }

    public override var title: String {
        get { super.title }
        set { write { $0.value.title = newValue } }
    }
    public override var subtitle: String {
        get { super.subtitle }
        set { write { $0.value.subtitle = newValue } }
    }
    public override var body: String {
        get { super.body }
        set { write { $0.value.body = newValue } }
    }
    public override var badge: NSNumber? {
        get { super.badge }
        set { write { $0.value.badge = newValue?.intValue } }
    }
    public override var sound: UNNotificationSound? {
        get { super.sound }
        set { write { $0.sound = newValue } }
    }
    public override var launchImageName: String {
        get { super.launchImageName }
        set { write { $0.value.launchImageName = newValue } }
    }
    public override var userInfo: [AnyHashable: Any] {
        get { super.userInfo }
        set { write { $0.rawUserInfo = newValue } }
    }
    public override var attachments: [UNNotificationAttachment] {
        get { super.attachments }
        set { write { $0.attachments = newValue } }
    }
    public override var categoryIdentifier: String {
        get { super.categoryIdentifier }
        set { write { $0.value.categoryIdentifier = newValue } }
    }
    public override var threadIdentifier: String {
        get { super.threadIdentifier }
        set { write { $0.value.threadIdentifier = newValue } }
    }
    public override var targetContentIdentifier: String? {
        get { super.targetContentIdentifier }
        set { write { $0.value.targetContentIdentifier = newValue } }
    }
    public override var summaryArgument: String {
        get { super.summaryArgument }
        set { write { $0.value.summaryArgument = newValue } }
    }
    public override var summaryArgumentCount: Int {
        get { super.summaryArgumentCount }
        set { write { $0.value.summaryArgumentCount = newValue } }
    }
    public override var interruptionLevel: UNNotificationInterruptionLevel {
        get { super.interruptionLevel }
        set { write { $0.value.interruptionLevel = newValue } }
    }
    public override var relevanceScore: Double {
        get { super.relevanceScore }
        set { write { $0.value.relevanceScore = newValue } }
    }
    public override var filterCriteria: String? {
        get { super.filterCriteria }
        set { write { $0.value.filterCriteria = newValue } }
    }
}
