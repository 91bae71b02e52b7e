import Foundation

/// A pending request the scheduler could not deliver, set aside so that everything else fires: its
/// app is not a valid bundle identifier (a store written before identifiers were checked), its
/// stored record cannot be read, or delivering it failed for a reason of its own. It no longer
/// fires; the owner sees it (`GET /v1/quarantine`, `chime quarantine`) and removes it.
///
/// ```swift
/// for entry in try await engine.quarantined() {
///     print(entry.app, entry.identifier, "—", entry.reason)
///     try await engine.removeQuarantined(entry.id)
/// }
/// ```
public struct QuarantinedRequest: Sendable, Hashable {
    /// The entry's number in the quarantine (only grows).
    public var id: Int64
    /// The app the request was stored under, exactly as stored (it may not be a valid identifier).
    public var app: String
    /// The request's identifier, as stored.
    public var identifier: String
    /// Why it could not be delivered.
    public var reason: String
    /// When it was set aside.
    public var date: Date
    /// The request, when its stored record could still be read.
    public var request: NotificationRequest?

    public init(
        id: Int64 = 0, app: String, identifier: String, reason: String, date: Date, request: NotificationRequest?
    ) {
        self.id = id
        self.app = app
        self.identifier = identifier
        self.reason = reason
        self.date = date
        self.request = request
    }
}

/// Thrown inside a firing transaction for a due request that cannot be delivered (by a store for a
/// record it cannot read, by the engine for a request whose delivery failed). The engine rolls the
/// transaction back — nothing of it stays — moves the request to the quarantine, and fires the rest.
package struct UndeliverableRequest: Error, Sendable {
    package var app: String
    package var identifier: String
    package var reason: String

    package init(app: String, identifier: String, reason: String) {
        self.app = app
        self.identifier = identifier
        self.reason = reason
    }
}
