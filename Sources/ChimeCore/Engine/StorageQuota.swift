import Foundation

/// How much one app may keep in the store, so that one app cannot fill the disk for every other
/// (`chime serve --app-max-pending`, `--app-max-delivered`, `--app-max-bytes`). Each bound is
/// `nil` for none; the engine an app embeds has none by default.
///
/// - Pending requests and stored bytes (the records of its pending requests and delivered
///   notifications) are checked when requests are added: an add that would go past either is
///   refused whole with ``ChimeError`` `quotaExceeded` naming the app and the bound (HTTP 507), and
///   nothing of it is stored. Replacing a pending request by its identifier does not count twice.
/// - Delivered notifications are kept to their bound by removing the app's oldest ones (with a
///   `removed` event, as if the app had removed them), as a device's notification list drops old
///   notifications: a scheduled delivery is never refused.
///
/// ```swift
/// var configuration = NotificationEngine.Configuration()
/// configuration.quota = StorageQuota(pending: 100_000, delivered: 1_000, bytes: 256 << 20)
/// ```
///
/// With a store that several engines share, each engine counts what it added itself and asks the
/// store again after every sixteenth of a bound (and before it refuses anything), so the apps'
/// totals can pass a bound by at most that much per engine.
public struct StorageQuota: Sendable, Hashable {
    /// The most pending requests one app may have.
    public var pending: Int?
    /// The most delivered notifications one app keeps; older ones are removed past it.
    public var delivered: Int?
    /// The most bytes of stored records (pending requests and delivered notifications) one app may have.
    public var bytes: Int?

    public init(pending: Int? = nil, delivered: Int? = nil, bytes: Int? = nil) {
        self.pending = pending
        self.delivered = delivered
        self.bytes = bytes
    }

    /// No bounds.
    public static let unlimited = StorageQuota()

    /// What `chime serve` applies to each app unless told otherwise: 1,000,000 pending requests,
    /// 10,000 delivered notifications and 1 GiB of records.
    public static let serviceDefault = StorageQuota(pending: 1_000_000, delivered: 10_000, bytes: 1 << 30)

    /// Whether any bound is set.
    public var limitsAnything: Bool { pending != nil || delivered != nil || bytes != nil }
}

/// What one app keeps in the store, as a store counts it.
public struct StorageUsage: Sendable, Hashable {
    /// Pending requests.
    public var pending: Int
    /// Delivered notifications.
    public var delivered: Int
    /// Bytes of the records of both.
    public var bytes: Int

    public init(pending: Int = 0, delivered: Int = 0, bytes: Int = 0) {
        self.pending = pending
        self.delivered = delivered
        self.bytes = bytes
    }
}
