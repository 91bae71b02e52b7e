import Foundation

extension EngineCore {
    // MARK: Delivery

    /// Moves a request to the delivered list (replacing one with the same identifier), applies its
    /// badge, and records the event with the category and the presentation decided from the
    /// settings read here. Part of the caller's transaction.
    ///
    /// The badge, as on iOS: applied here unless the app is in front; then it waits for the app's
    /// `willPresent` answer (``Delivery/pendingBadge``; the hub applies it when the answer includes
    /// `.badge`). A badge-only request (no title, subtitle, body, sound or attachment) only sets the
    /// badge: it is not listed as delivered, nor shown (`nil`).
    func deliver(_ request: NotificationRequest, app: String, date: Date) throws -> DeliveredNotification? {
        try deliver(request, app: app, record: appRecord(app), date: date, encodedRequest: nil)
    }

    /// `deliver`, with the app's record as the caller already has it.
    /// - Parameters:
    ///   - encodedRequest: the request's store record, when the store gave it (firing).
    ///   - nextTriggerDate: a repeating request's next fire date, for the event (firing).
    func deliver(
        _ request: NotificationRequest, app: String, record: AppRecord, date: Date, encodedRequest: [UInt8]?,
        nextTriggerDate: Date? = nil
    ) throws -> DeliveredNotification? {
        let content = request.content
        var record = record
        var badge: Int?
        var pendingBadge: Int?
        if let wanted = content.badge, record.settings.badgeSetting == .enabled && record.badge != wanted {
            if content.isBadgeOnly || !isInFront(app) {
                record.badge = wanted
                try save(record)
                badge = wanted
            } else {
                pendingBadge = wanted
            }
        }
        if content.isBadgeOnly {
            if badge != nil { announce(.app(.updated, record: record), app: app) }
            return nil
        }
        var encodedRequest = encodedRequest
        var request = request
        if case .after? = request.autoDismiss {
            // Counted from this delivery: the notification keeps the date (its record is new).
            request = request.delivered(at: date)
            encodedRequest = nil
        }
        var notification = DeliveredNotification(request: request, date: date)
        notification.sequence = try store.putDelivered(notification, app: app, encodedRequest: encodedRequest)
        // A replaced notification's end of relevance goes with it.
        let key = ScheduleWindow.Key(app: app, identifier: request.identifier)
        if let dismissDate = notification.dismissDate {
            dismissals.set(key, date: dismissDate, sequence: notification.sequence)
        } else if dismissals.count > 0 {
            dismissals.remove(key)
        }
        // Most notifications neither escalate nor replace one that did: nothing asked of the store.
        if request.escalation != nil || escalations.count > 0 || !escalations.complete {
            try startEscalation(notification, app: app)
        }
        try keepDeliveredWithinQuota(app: app, bytes: encodedRequest?.count ?? 0)
        var delivery = Delivery(
            notification: notification, category: try category(content.categoryIdentifier, app: app),
            settings: record.settings, presentation: Presentation.background(for: content, settings: record.settings),
            badge: badge)
        delivery.pendingBadge = pendingBadge
        delivery.nextTriggerDate = nextTriggerDate
        try applySummary(&delivery, app: app, counting: true)
        try applyFocus(&delivery, app: app, counting: true)
        try log(.delivered(delivery), app: app, date: date)
        return notification
    }

    package func nextFireDate() throws -> Date? {
        // Other engines add and fire too: the store knows, the window does not.
        if let shared {
            return Self.sooner(Self.sooner(try shared.soonestFireDate(), focus.checkAt), summaries.checkAt)
        }
        return windowNextDate()
    }

    /// The windows' first date — the next fire date or end of relevance — each refilled first
    /// when it ran low (an embedded store's next date the scheduler has work).
    package func windowNextDate() -> Date? {
        if window.wantsRefill { refillWindow() }
        if dismissals.wantsRefill { refillDismissals() }
        if escalations.wantsRefill { refillEscalations() }
        return windowFirstDate
    }

    /// The soonest of the windows' first dates, as they are.
    package var windowFirstDate: Date? {
        let fire = window.first?.date
        // Most engines have no dismissal, escalation or focus: then the fire date, as before.
        guard dismissals.count > 0 || escalations.count > 0 || focus.checkAt != nil || summaries.checkAt != nil else {
            return fire
        }
        let looks = Self.sooner(focus.checkAt, summaries.checkAt)
        return Self.sooner(Self.sooner(Self.sooner(fire, dismissals.first?.date), escalations.first?.date), looks)
    }

    static func sooner(_ a: Date?, _ b: Date?) -> Date? {
        guard let a else { return b }
        guard let b else { return a }
        return min(a, b)
    }

    /// Delivers what is due at `now`: each occurrence once, dated when it was due. A repeating
    /// request moves on to its first occurrence after `now` (missed ones coalesce).
    /// - Parameter listing: whether to return what was delivered (the scheduler does not ask, so a
    ///   burst builds no list).
    ///
    /// All or nothing: a request that cannot be delivered (its app is not a valid identifier, its
    /// record cannot be read, its delivery fails for a reason of its own) throws
    /// ``UndeliverableRequest``, which rolls the whole transaction back; the engine then runs it
    /// again with that request in ``toQuarantine``, which this moves aside first.
    package func fireDue(now: Date, limit: Int, listing: Bool = true) throws -> [(
        app: String, notification: DeliveredNotification
    )] {
        try quarantineQueued(now: now)
        try focusDue(now: now)
        try summariesDue(now: now)
        let dismissed = try dismissDue(now: now, limit: limit)
        let escalated = try escalateDue(now: now, limit: limit)
        let due = try store.dueEncoded(before: now, limit: limit)
        var delivered: [(app: String, notification: DeliveredNotification)] = []
        if listing { delivered.reserveCapacity(due.count) }
        var finished: [String: [String]] = [:]
        for (app, pending, encoded) in due {
            let request = pending.request
            let dueDate = pending.nextFireDate ?? now
            let key = ScheduleWindow.Key(app: app, identifier: request.identifier)
            try settingAside(app: app, identifier: request.identifier) {
                if request.isStale(deliveredAt: dueDate, now: now) {
                    try expire(request, app: app, due: dueDate, now: now)
                    finished[app, default: []].append(request.identifier)
                    window.remove(key)
                    return
                }
                let record = try appRecord(app)
                // A repeating request stays pending, moved to its next date; its delivery says which.
                var next: Date?
                if let trigger = request.trigger, trigger.repeats {
                    next = FireDates.next(
                        for: trigger, due: dueDate, anchor: pending.anchor, now: now, timeZone: timeZone)
                }
                if record.settings.authorizationStatus.allowsDelivery,
                    let notification = try deliver(
                        request, app: app, record: record, date: dueDate, encodedRequest: encoded,
                        nextTriggerDate: next),
                    listing
                {
                    delivered.append((app, notification))
                }
                if let next {
                    var moved = pending
                    moved.nextFireDate = next
                    if case .calendar? = request.trigger { moved.anchor = dueDate }
                    // The request is unchanged: its record is the pending row's, when the store gave it.
                    if let encoded {
                        try store.putPending([moved], encodedRequests: [encoded], app: app)
                    } else {
                        try store.putPending(moved, app: app)
                    }
                    window.set(key, date: next, sequence: moved.sequence)
                } else {
                    finished[app, default: []].append(request.identifier)
                    window.remove(key)
                }
            }
        }
        for (app, identifiers) in finished {
            countRemoved(app: app, pending: try store.removePending(app: app, identifiers: identifiers).count)
        }
        moreDue = due.count == limit || dismissed == limit || escalated == limit
        claimed = due.count + dismissed + escalated
        if window.needsRefill { refillWindow() }
        return delivered
    }

    /// Moves ``toQuarantine`` aside: out of the pending list and the window, each with a
    /// `quarantined` event (logged under the app as stored).
    package func quarantineQueued(now: Date) throws {
        guard !toQuarantine.isEmpty else { return }
        for row in toQuarantine {
            window.remove(ScheduleWindow.Key(app: row.app, identifier: row.identifier))
            guard
                let entry = try store.quarantinePending(
                    app: row.app, identifier: row.identifier, reason: row.reason, date: now)
            else {
                continue
            }
            countRemoved(app: row.app, pending: 1)
            try log(.quarantined(entry), app: row.app, date: now)
        }
        quarantinedInTransaction = true
    }

    /// Records that `request`, due at `due`, expired undelivered: an `expired` event, logged with
    /// the caller's removal of the request (part of its transaction, so it happens once).
    func expire(_ request: NotificationRequest, app: String, due: Date, now: Date) throws {
        try log(.expired(ExpiredRequest(request: request, dueDate: due)), app: app, date: now)
    }

    /// - Parameter expiration: APNs' `apns-expiration` as a deadline; the push is delivered now
    ///   whatever it says (there is no device to wait for), and keeps it (resolved from `date`).
    package func deliverPush(
        _ content: NotificationContent, identifier: String, silent: Bool, app: String, date: Date?,
        expiration: NotificationDeadline? = nil
    ) throws -> DeliveredNotification? {
        let record = try appRecord(app)
        guard record.settings.authorizationStatus.allowsDelivery || silent else {
            throw UNError(
                .notificationsNotAllowed, "notifications are not allowed for \(app); the push was not delivered")
        }
        let when = date ?? clock.now
        let request = NotificationRequest(
            identifier: identifier, content: content, trigger: .push,
            expiration: expiration?.resolved(from: when))
        if silent {
            let notification = DeliveredNotification(request: request, date: when)
            try log(.silentPush(notification), app: app, date: when)
            return nil
        }
        return try deliver(request, app: app, date: when)
    }
}
