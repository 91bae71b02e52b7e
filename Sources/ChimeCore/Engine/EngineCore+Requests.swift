import Foundation

extension EngineCore {
    // MARK: Requests

    package func add(_ requests: [NotificationRequest], app: String) throws -> [Date?] {
        try add(PreparedAdd(requests, now: clock.now, timeZone: timeZone), app: app)
    }

    package func add(_ prepared: PreparedAdd, app: String) throws -> [Date?] {
        try add(prepared, app: app, announcing: true).firsts
    }

    /// The most a `.scheduled` event carries of the requests it announces, in their store encoding
    /// (of at most 100): a larger add names them or not, and its consumers read the pending list.
    /// An event's frame stays well under a stream's queue (1 MiB) with the requests in JSON.
    static let scheduledEventBytes = 64 * 1024

    /// `add`, announcing the scheduled requests (`.scheduled`) only when `announcing`; a streamed
    /// add announces once for all its slices.
    /// - Returns: the fire dates, and how many requests were scheduled (not delivered at once).
    package func add(_ prepared: PreparedAdd, app: String, announcing: Bool) throws -> (firsts: [Date?], scheduled: Int)
    {
        let record = try appRecord(app)
        guard record.settings.authorizationStatus.allowsDelivery else {
            throw UNError(
                .notificationsNotAllowed,
                "notifications are not allowed for \(app) (authorization: \(record.settings.authorizationStatus.name)); request authorization first"
            )
        }
        let requests = prepared.requests
        let now = prepared.now
        // Every fire date is known before anything is written, so a bad request fails alone. They
        // were computed on the caller's thread; a time zone change since then means again, here.
        let computed =
            prepared.timeZone == timeZone.identifier
            ? prepared.firsts
            : requests.map { PreparedAdd.first(of: $0.trigger, now: now, timeZone: timeZone) }
        // A calendar trigger that matches no future date is accepted and never fires, as on iOS
        // (it still replaces a pending request of its identifier), unless the configuration refuses it.
        var neverFires: Set<Int> = []
        let firsts: [Date?] = try computed.enumerated().map { index, first in
            if case .failure(let error) = first, !configuration.refusesPastCalendarTriggers,
                FireDates.matchesNoFutureDate(error)
            {
                neverFires.insert(index)
                return nil
            }
            return try first.get()
        }
        var records: [PendingRequest] = []
        records.reserveCapacity(requests.count)
        var encoded: [[UInt8]] = []
        encoded.reserveCapacity(requests.count)
        var immediate: [NotificationRequest] = []
        var dropped: [String] = []
        // The `.scheduled` event names at most 100 requests (none for more), gathered here for
        // the usual small add rather than copied out of the records after; it carries the records.
        let listsScheduled = announcing && requests.count <= 100
        var scheduled: [String] = []
        // By index, so that each request is copied once, into its record (see PreparedAdd.init).
        for index in requests.indices {
            if neverFires.contains(index) {
                dropped.append(requests[index].identifier)
                window.remove(ScheduleWindow.Key(app: app, identifier: requests[index].identifier))
                continue
            }
            guard requests[index].trigger != nil else {
                immediate.append(requests[index])
                window.remove(ScheduleWindow.Key(app: app, identifier: requests[index].identifier))
                continue
            }
            records.append(PendingRequest(request: requests[index], nextFireDate: firsts[index], anchor: now))
            if case .location(let region, _)? = requests[index].trigger {
                records[records.count - 1].inside = location.map(region.contains)
            }
            encoded.append(prepared.encoded[index])
            if listsScheduled { scheduled.append(requests[index].identifier) }
        }
        if !records.isEmpty {
            let bytes = encoded.reduce(0) { $0 + $1.count }
            try admit(records, bytes: bytes, app: app)
            try store.putPending(records, encodedRequests: encoded, app: app)
            if announcing {
                let listed = records.count <= 100
                announce(
                    .scheduled(
                        identifiers: !listed ? [] : listsScheduled ? scheduled : records.map(\.request.identifier),
                        requests: listed && bytes <= Self.scheduledEventBytes ? records : []), app: app)
            }
        }
        for index in records.indices {
            let key = ScheduleWindow.Key(app: app, identifier: records[index].request.identifier)
            window.set(key, date: records[index].nextFireDate, sequence: records[index].sequence)
        }
        if !dropped.isEmpty {
            countRemoved(app: app, pending: try store.removePending(app: app, identifiers: dropped).count)
        }
        if !immediate.isEmpty {
            countRemoved(
                app: app, pending: try store.removePending(app: app, identifiers: immediate.map(\.identifier)).count)
            for request in immediate {
                if request.isStale(deliveredAt: now, now: now) {
                    try expire(request, app: app, due: now, now: now)
                } else {
                    _ = try deliver(request, app: app, date: now) as DeliveredNotification?
                }
            }
        }
        return (firsts, records.count)
    }

    package func removePending(app: String, identifiers: [String]?) throws -> [String] {
        let removed: [String]
        if let identifiers {
            removed = try store.removePending(app: app, identifiers: identifiers)
        } else {
            removed = try store.removeAllPending(app: app)
        }
        for identifier in removed { window.remove(.init(app: app, identifier: identifier)) }
        if !removed.isEmpty {
            countRemoved(app: app, pending: removed.count)
            try log(.removed(identifiers: removed, scope: .pending), app: app)
        }
        return removed
    }

    package func removeDelivered(app: String, identifiers: [String]?, thread: String?) throws -> [String] {
        let removed: [String]
        if let identifiers {
            removed = try store.removeDelivered(app: app, identifiers: identifiers)
        } else {
            removed = try store.removeAllDelivered(app: app, thread: thread)
        }
        if !removed.isEmpty {
            try forgetDelivered(app: app, identifiers: removed)
            countRemoved(app: app, delivered: removed.count)
            try log(.removed(identifiers: removed, scope: .delivered), app: app)
        }
        return removed
    }

    /// Delivered notifications gone from the list: out of the dismissal window too (when it holds
    /// any: most engines' is empty), and their escalations end.
    func forgetDelivered(app: String, identifiers: [String]) throws {
        if dismissals.count > 0 {
            for identifier in identifiers { dismissals.remove(.init(app: app, identifier: identifier)) }
        }
        try endEscalations(app: app, identifiers: identifiers, removedAt: clock.now)
    }
}

/// An add as far as it gets on the caller's thread: the requests checked, their first fire dates
/// in the device's zone as last known (or the error that says why not), and their store encoding.
package struct PreparedAdd: Sendable {
    let requests: [NotificationRequest]
    let now: Date
    /// The zone `firsts` were computed in.
    let timeZone: String
    let firsts: [Result<Date?, ChimeError>]
    /// Each request as `RecordCodec` bytes (empty for requests without a trigger, never stored).
    let encoded: [[UInt8]]

    init(_ requests: [NotificationRequest], now: Date, timeZone: TimeZone) {
        // An expiration given as a duration counts from the add: kept as the date it makes. Only
        // then is the list copied; most requests have none and are kept as they came. The loops
        // go by index: iterating the array (`map`, `contains(where:)`, `for-in`) copies each
        // request out of it and destroys the copy, a retain and a release of each of its strings.
        var expires = false
        for index in requests.indices where requests[index].expiresAfterAdd {
            expires = true
            break
        }
        let requests = expires ? requests.map { $0.added(at: now) } : requests
        self.requests = requests
        self.now = now
        self.timeZone = timeZone.identifier
        var firsts: [Result<Date?, ChimeError>] = []
        firsts.reserveCapacity(requests.count)
        var encoded: [[UInt8]] = []
        encoded.reserveCapacity(requests.count)
        for index in requests.indices {
            firsts.append(Self.first(of: requests[index].trigger, now: now, timeZone: timeZone))
            encoded.append(requests[index].trigger == nil ? [] : RecordCodec.encode(requests[index]))
        }
        self.firsts = firsts
        self.encoded = encoded
    }

    /// The first fire date of a request with `trigger`, or the error that says why it has none.
    static func first(of trigger: NotificationTrigger?, now: Date, timeZone: TimeZone) -> Result<Date?, ChimeError> {
        Result { () throws(ChimeError) -> Date? in
            do { return try FireDates.first(for: trigger, now: now, timeZone: timeZone) } catch let error as ChimeError
            {
                throw error
            } catch {
                throw ChimeError(.invalidTrigger, field: "trigger", "\(error)")
            }
        }
    }
}
