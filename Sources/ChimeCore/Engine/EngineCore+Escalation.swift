import Foundation

extension EngineCore {
    // MARK: Escalation

    /// Ends the escalations of these notifications, removed unanswered at `removedAt`: their
    /// receipts say so and the scheduler no longer wakes for them. Without a shared store, the
    /// window says which may have one (most engines' is empty: nothing is asked of the store).
    func endEscalations(app: String, identifiers: [String], removedAt: Date) throws {
        guard shared != nil || escalations.count > 0 || !escalations.complete else { return }
        for identifier in identifiers {
            let key = ScheduleWindow.Key(app: app, identifier: identifier)
            guard shared != nil || escalations.mayHold(key) else { continue }
            escalations.remove(key)
            guard var receipt = try store.receipt(app: app, identifier: identifier), receipt.isEscalating else {
                continue
            }
            receipt.nextAlertAt = nil
            receipt.removedAt = removedAt
            try store.putReceipt(receipt)
        }
    }

    /// Starts the escalation of a notification just delivered (its receipt, the first step in the
    /// window), or, for a notification without one, ends the escalation of the one it replaced.
    func startEscalation(_ notification: DeliveredNotification, app: String) throws {
        let identifier = notification.request.identifier
        guard let escalation = notification.request.escalation else {
            // A replacement without one: only when the window says there may be one to end (a
            // shared store's is found by its next step instead).
            if shared == nil, escalations.mayHold(.init(app: app, identifier: identifier)) {
                try endEscalations(app: app, identifiers: [identifier], removedAt: notification.date)
            }
            return
        }
        let next = escalation.nextDate(after: notification.date, deliveredAt: notification.date)
        try store.putReceipt(
            EscalationReceipt(
                app: app, identifier: identifier, sequence: notification.sequence,
                deliveredAt: notification.date, escalation: escalation, nextAlertAt: next))
        escalations.set(.init(app: app, identifier: identifier), date: next, sequence: notification.sequence)
    }

    /// The user answered an escalating notification: its receipt records when, how and where, in
    /// the answer's transaction (also after its window ended), and the escalation stops.
    func acknowledge(app: String, identifier: String, action: String, surface: String?, now: Date) throws {
        escalations.remove(.init(app: app, identifier: identifier))
        guard var receipt = try store.receipt(app: app, identifier: identifier),
            receipt.acknowledgedAt == nil, receipt.removedAt == nil
        else { return }
        receipt.nextAlertAt = nil
        receipt.acknowledgedAt = now
        receipt.actionIdentifier = action
        receipt.surface = surface
        try store.putReceipt(receipt)
    }

    /// Takes the escalation steps due by `now`, at most `limit`: each notification still delivered
    /// and unanswered is alerted again — a `realerted` event, which every surface presents again —
    /// and its next step set; at the end of its window the receipt says it expired. Part of the
    /// firing transaction, so each step is taken once (a shared store claims it), and a step
    /// missed while the service was down is alerted once at the first firing after it starts.
    /// - Returns: how many were due (a full `limit`: there may be more).
    func escalateDue(now: Date, limit: Int) throws -> Int {
        // Without a shared store, the window says whether anything is due.
        if shared == nil, escalations.nothingDue(by: now) { return 0 }
        let due = try store.dueEscalations(before: now, limit: limit)
        for var receipt in due {
            let key = ScheduleWindow.Key(app: receipt.app, identifier: receipt.identifier)
            escalations.remove(key)
            if now >= receipt.endsAt {
                receipt.nextAlertAt = nil
                receipt.expired = true
                try store.putReceipt(receipt)
                continue
            }
            // Replaced or removed meanwhile (a shared store's other engine, or a replacement
            // without an escalation): it ends here.
            guard let notification = try store.delivered(app: receipt.app, identifier: receipt.identifier),
                notification.sequence == receipt.sequence
            else {
                receipt.nextAlertAt = nil
                receipt.removedAt = now
                try store.putReceipt(receipt)
                continue
            }
            try settingAside(app: receipt.app, identifier: receipt.identifier) {
                receipt.alerts += 1
                receipt.lastAlertedAt = now
                let next = receipt.escalation.nextDate(after: now, deliveredAt: receipt.deliveredAt)
                receipt.nextAlertAt = next
                try store.putReceipt(receipt)
                escalations.set(key, date: next, sequence: receipt.sequence)
                let record = try appRecord(receipt.app)
                let content = notification.request.content
                var delivery = Delivery(
                    notification: notification, category: try category(content.categoryIdentifier, app: receipt.app),
                    settings: record.settings,
                    presentation: Presentation.background(for: content, settings: record.settings))
                delivery.alert = receipt.alerts
                try applySummary(&delivery, app: receipt.app, counting: false)
                try applyFocus(&delivery, app: receipt.app, counting: false)
                try log(.realerted(delivery), app: receipt.app, date: now)
            }
        }
        // Whatever else the window holds as due is gone from the store (ended meanwhile).
        if due.count < limit { escalations.dropDue(by: now) }
        if escalations.wantsRefill { refillEscalations() }
        return due.count
    }

    /// Removes the delivered notifications whose end of relevance has come by `now`, at most
    /// `limit`, through the path every removal takes (a `removed` event, here with reason
    /// ``RemovalReason/autoDismiss``, which every surface follows); part of the firing
    /// transaction, so each is removed once, and one due while the service was down goes at the
    /// first firing after it starts.
    /// - Returns: how many were due (a full `limit`: there may be more).
    func dismissDue(now: Date, limit: Int) throws -> Int {
        // Without a shared store, the window says whether anything is due (and nothing is asked
        // of the store when nothing is).
        if shared == nil, dismissals.nothingDue(by: now) { return 0 }
        let due = try store.dueDismissals(before: now, limit: limit)
        var byApp: [(app: String, identifiers: [String])] = []
        var index: [LiteralKey: Int] = [:]
        for (app, identifier) in due {
            dismissals.remove(.init(app: app, identifier: identifier))
            if let at = index[LiteralKey(app)] {
                byApp[at].identifiers.append(identifier)
            } else {
                index[LiteralKey(app)] = byApp.count
                byApp.append((app, [identifier]))
            }
        }
        for (app, identifiers) in byApp {
            let removed = try store.removeDelivered(app: app, identifiers: identifiers)
            guard !removed.isEmpty else { continue }
            try endEscalations(app: app, identifiers: removed, removedAt: now)
            countRemoved(app: app, delivered: removed.count)
            try log(.removed(identifiers: removed, scope: .delivered, reason: .autoDismiss), app: app, date: now)
        }
        // Whatever else the window holds as due is gone from the store (removed meanwhile).
        if due.count < limit { dismissals.dropDue(by: now) }
        if dismissals.wantsRefill { refillDismissals() }
        return due.count
    }
}
