import Foundation

extension EngineCore {
    // MARK: Device state

    package func updateLocation(_ coordinate: Coordinate) throws -> [DeliveredNotification] {
        location = coordinate
        try store.setValue("\(coordinate.latitude),\(coordinate.longitude)", forKey: "device.location")
        let now = clock.now
        try quarantineQueued(now: now)
        var delivered: [DeliveredNotification] = []
        for (app, pending) in try store.locationPending() {
            guard case .location(let region, let repeats) = pending.request.trigger else { continue }
            let inside = region.contains(coordinate)
            let wasInside = pending.inside ?? false
            let fires = (inside && !wasInside && region.notifyOnEntry) || (!inside && wasInside && region.notifyOnExit)
            try settingAside(app: app, identifier: pending.request.identifier) {
                if fires, pending.request.isStale(deliveredAt: now, now: now) {
                    try expire(pending.request, app: app, due: now, now: now)
                    countRemoved(
                        app: app,
                        pending: try store.removePending(app: app, identifiers: [pending.request.identifier]).count)
                    return
                }
                if fires, try appRecord(app).settings.authorizationStatus.allowsDelivery {
                    if let notification = try deliver(pending.request, app: app, date: now) {
                        delivered.append(notification)
                    }
                    if !repeats {
                        countRemoved(
                            app: app,
                            pending: try store.removePending(app: app, identifiers: [pending.request.identifier]).count)
                        return
                    }
                }
                if pending.inside != inside {
                    var moved = pending
                    moved.inside = inside
                    try store.putPending(moved, app: app)
                }
            }
        }
        return delivered
    }

    /// Runs `body` for one stored request; an error that is the request's own (not the store's)
    /// becomes ``UndeliverableRequest``, so the engine sets the request aside and runs the
    /// operation again without it, as the scheduler does.
    func settingAside(app: String, identifier: String, _ body: () throws -> Void) throws {
        do { try body() } catch let error where NotificationEngine.isOperationError(error) {
            throw UndeliverableRequest(app: app, identifier: identifier, reason: ChimeError.message(of: error))
        }
    }

    package func setTimeZone(_ zone: TimeZone) throws {
        guard zone.identifier != timeZone.identifier else { return }
        timeZone = zone
        try store.setValue(zone.identifier, forKey: "device.timeZone")
        let now = clock.now
        try quarantineQueued(now: now)
        for (app, pending) in try store.floatingPending() {
            guard case .calendar(let components, _) = pending.request.trigger else { continue }
            var moved = pending
            moved.nextFireDate = FireDates.nextCalendarDate(matching: components, after: now, timeZone: zone)
            try store.putPending(moved, app: app)
            window.set(
                .init(app: app, identifier: pending.request.identifier), date: moved.nextFireDate,
                sequence: moved.sequence)
        }
    }
}
