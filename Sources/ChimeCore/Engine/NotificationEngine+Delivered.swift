import Foundation
import Synchronization

extension NotificationEngine {
    // MARK: - Delivered

    /// The app's delivered notifications, newest first, optionally of one thread.
    public func delivered(app: String, thread: String? = nil) async throws -> [DeliveredNotification] {
        try await read { try $0.delivered(app: app, thread: thread) }
    }

    /// A page of the app's delivered notifications, newest first, after `cursor` (nil: from the
    /// newest), at most `limit`.
    public func delivered(app: String, thread: String?, after cursor: DeliveredCursor?, limit: Int) async throws
        -> [DeliveredNotification]
    {
        try await read { try $0.delivered(app: app, thread: thread, after: cursor, limit: limit) }
    }

    /// Removes delivered notifications (all of the app's, or of a thread, when `identifiers` is `nil`).
    @discardableResult
    public func removeDelivered(app: String, identifiers: [String]?, thread: String? = nil) async throws -> [String] {
        try await perform { try $0.removeDelivered(app: app, identifiers: identifiers, thread: thread) }
    }

    public func removeDelivered(
        app: String, identifiers: [String]?, completion: @escaping @Sendable (Result<[String], any Error>) -> Void
    ) {
        submit({ try $0.removeDelivered(app: app, identifiers: identifiers, thread: nil) }, completion: completion)
    }

    /// How many notifications are delivered (one app, or all).
    public func deliveredCount(app: String? = nil) async throws -> Int {
        try await read { try $0.deliveredCount(app: app) }
    }

    // MARK: - Badge

    /// Sets the app's badge; 0 clears it.
    ///
    /// - Throws: ``UNError`` `badgeInputInvalid` for a negative count.
    public func setBadge(_ count: Int, app: String) async throws {
        try await perform { try $0.setBadge(count, app: app) }
    }
}
