import Foundation
import Synchronization

extension NotificationEngine {
    // MARK: - Firing

    /// The next date a timed request fires: from memory (the window as of the last commit), or
    /// with a shared store from the store (other engines add and fire too).
    public func nextFireDate() async throws -> Date? {
        if !isStoreShared { return nextDate.withLock { $0 } }
        return try await perform { try $0.nextFireDate() }
    }

    /// Delivers every timed request due at `now` (in order of due date), in transactions of at most
    /// ``Configuration/fireBatch``.
    ///
    /// - Returns: the notifications delivered.
    @discardableResult
    public func fireDue(now: Date) async throws -> [DeliveredNotification] {
        var all: [DeliveredNotification] = []
        try await fireDue(now: now) { all += $0 }
        return all
    }

    /// `fireDue(now:)`, handing each transaction's deliveries to `collect` (the scheduler passes
    /// nothing, so a burst builds no list).
    /// - Returns: how many due requests were taken (with a shared store: claimed).
    @discardableResult
    func fireDue(now: Date, collect: ((_ delivered: [DeliveredNotification]) -> Void)?) async throws -> Int {
        let wanted = collect != nil
        var claimed = 0
        while true {
            let (delivered, more, taken) = try await perform { core in
                let delivered = try core.fireDue(now: now, limit: core.configuration.fireBatch, listing: wanted)
                return (wanted ? delivered.map(\.notification) : [], core.moreDue, core.claimed)
            }
            collect?(delivered)
            claimed += taken
            if !more { return claimed }
        }
    }

    /// Delivers a remote notification at once (the push endpoint and the simulator's `push`). A
    /// delivered notification with the same identifier is replaced (APNs' collapse id).
    ///
    /// - Parameter expiration: APNs' `apns-expiration` (``APNsRequestHeaders/Expiration``): how
    ///   long the push may be held for a device that is away. The engine delivers it now whatever
    ///   it says — APNs too tries a push at least once — and the notification keeps it as its
    ///   request's ``NotificationRequest/expiration`` (`0`, "now or never", is the arrival), for
    ///   surfaces that hand it on to a device: Web Push's `TTL`.
    @discardableResult
    public func deliverPush(
        _ content: NotificationContent, identifier: String, silent: Bool, app: String,
        date: Date? = nil, expiration: NotificationDeadline? = nil
    ) async throws -> DeliveredNotification? {
        try Validation.validateIdentifier(identifier, field: "identifier")
        try Validation.validate(content)
        if let expiration { try Validation.validate(expiration, field: "expiration") }
        return try await perform {
            try $0.deliverPush(
                content, identifier: identifier, silent: silent, app: app, date: date, expiration: expiration)
        }
    }

    // MARK: - Device state

    /// Tells the engine where the device is; location triggers whose region was entered or left fire.
    @discardableResult
    public func updateLocation(_ coordinate: Coordinate) async throws -> [DeliveredNotification] {
        guard coordinate.isValid else {
            throw ChimeError(
                .invalidValue, field: "latitude",
                "(\(coordinate.latitude), \(coordinate.longitude)) is not a position; latitude -90 to 90, longitude -180 to 180"
            )
        }
        return try await perform { try $0.updateLocation(coordinate) }
    }

    /// The last known location.
    public func location() async throws -> Coordinate? {
        try await perform { $0.location }
    }

    /// Changes the device's time zone: calendar triggers without a zone of their own move with it.
    public func setTimeZone(_ timeZone: TimeZone) async throws {
        try await perform { core in
            try core.setTimeZone(timeZone)
            self.deviceZone.withLock { $0 = core.timeZone }
        }
    }

    /// The device's time zone.
    public func timeZone() async throws -> TimeZone {
        if !isStoreShared { return deviceZone.withLock { $0 } }
        return try await perform { $0.timeZone }
    }
}
