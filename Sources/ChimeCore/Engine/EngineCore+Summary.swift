import Foundation

/// The engine's scheduled summaries (``ScheduledSummary``), as it holds them between transactions.
struct SummaryState {
    /// Each app's summary, by app.
    var apps: [String: ScheduledSummary] = [:]
    /// When the engine next looks at them — the soonest summary time, or at once after they were
    /// loaded — to deliver what is due. `nil`: no app is in a summary.
    var checkAt: Date?
    /// While a summary is delivered (it is not held).
    var summarizing = false
}

/// Scheduled summaries in the engine, built as focus modes are (EngineCore+Focus.swift): the apps'
/// settings in the key/value table as one device record (`device.summary.apps`, so a shared store's
/// other engines reload them), each app's held notifications under `summary.held.APP` (counted in
/// the delivery's transaction, taken by the summary's), and the next summary time one of the
/// scheduler's dates: no polling.
extension EngineCore {
    static let summaryKey = "device.summary.apps"

    /// Reads the apps' summaries (device state); the engine looks at them at once, so a summary
    /// that came due while it was down is delivered at its first firing.
    func loadSummaries() {
        guard case .success(let text) = Result(catching: { try store.value(forKey: Self.summaryKey) }) else { return }
        summaries.apps = ScheduledSummary.stored(text)
        summaries.checkAt = summaries.apps.isEmpty ? nil : .distantPast
    }

    private func saveSummaries() throws {
        try store.setValue(
            summaries.apps.isEmpty ? nil : ScheduledSummary.stored(summaries.apps), forKey: Self.summaryKey)
    }

    /// Holds a delivery of an app in a scheduled summary: a passive or active one loses its banner
    /// and sound (it stays in the list, with its badge), says so (``FocusDecision`` with reason
    /// `scheduledSummary`) and, when `counting`, is kept for the summary in this transaction.
    /// Time-sensitive and critical ones are delivered as usual (as a focus lets them through).
    func applySummary(_ delivery: inout Delivery, app: String, counting: Bool) throws {
        guard !summaries.apps.isEmpty, !summaries.summarizing, let summary = summaries.apps[app] else { return }
        let content = delivery.notification.request.content
        guard FocusDecision.Reason.breakingThrough(content, settings: delivery.settings) == nil else { return }
        delivery.focus = FocusDecision(
            focus: FocusDecision.scheduledSummaryName, quiet: true, reason: .scheduledSummary)
        delivery.presentation.subtract([.banner, .sound])
        guard counting else { return }
        let now = clock.now
        let key = SummaryHeld.key(app)
        let fresh = SummaryHeld().serialized
        // A shared store locks the row first, so counts and the summary's take never cross.
        let text = shared != nil ? try store.insertValue(fresh, forKey: key) : try store.value(forKey: key)
        var held = SummaryHeld(stored: text ?? fresh)
        if held.due == nil { held.due = summary.next(after: now) }
        held.add(
            SummaryHeld.Item(
                identifier: delivery.notification.request.identifier, title: content.title, body: content.body,
                relevanceScore: content.relevanceScore, date: delivery.notification.date,
                summaryArgument: content.summaryArgument, summaryArgumentCount: content.summaryArgumentCount,
                category: content.categoryIdentifier))
        try store.setValue(held.serialized, forKey: key)
    }

    /// At a summary time (or at once after loading): each app whose summary is due gets it, in this
    /// transaction, once — its held record is taken from the store (a shared store's other engines
    /// find it gone) — and the next look is set. Part of each firing.
    func summariesDue(now: Date) throws {
        guard let checkAt = summaries.checkAt, now >= checkAt else { return }
        summaries.checkAt = nil
        for app in summaries.apps.keys.sorted() {
            guard let text = try store.value(forKey: SummaryHeld.key(app)), let due = SummaryHeld(stored: text).due,
                due <= now,
                let taken = try store.takeValue(forKey: SummaryHeld.key(app))
            else { continue }
            try deliverSummary(SummaryHeld(stored: taken), app: app, now: now)
        }
        summaries.checkAt = summaries.apps.values.compactMap { $0.next(after: now) }.min()
    }

    /// Delivers one notification listing what was held (identifier `chime.summary`, replacing the
    /// app's previous one), presented as usual; an app that is gone or may no longer notify gets none.
    private func deliverSummary(_ held: SummaryHeld, app: String, now: Date) throws {
        guard held.count > 0, let record = try store.app(app), record.settings.authorizationStatus.allowsDelivery else {
            return
        }
        summaries.summarizing = true
        defer { summaries.summarizing = false }
        var formats: [String: String] = [:]
        for identifier in Set(held.kept.map(\.category)) where !identifier.isEmpty {
            if let format = try category(identifier, app: app)?.categorySummaryFormat, !format.isEmpty {
                formats[identifier] = format
            }
        }
        var content = NotificationContent(title: "Scheduled Summary", body: held.text(formats: formats))
        content.threadIdentifier = "chime.summary"
        content.userInfo = [
            "chime.summary": .array(held.kept.map { .string($0.identifier) }),
            "chime.held": .integer(Int64(held.count)),
            "chime.items": .integer(Int64(held.items)),
        ]
        _ = try deliver(NotificationRequest(identifier: "chime.summary", content: content), app: app, date: now)
    }

    // MARK: Operations

    /// Every app's summary, by app, with its next time and what it holds.
    func summaryStatuses() throws -> [ScheduledSummaryStatus] {
        let now = clock.now
        return try summaries.apps.keys.sorted().map { app in
            let held = try store.value(forKey: SummaryHeld.key(app)).map { SummaryHeld(stored: $0) } ?? SummaryHeld()
            let summary = summaries.apps[app]!
            return ScheduledSummaryStatus(
                app: app, summary: summary, nextDelivery: held.due ?? summary.next(after: now), held: held.count)
        }
    }

    /// Puts an app in a scheduled summary or changes its times (what is held stays, due at the
    /// first new time). The app's `scheduledDeliverySetting` becomes `.enabled`.
    func setScheduledSummary(_ summary: ScheduledSummary, app: String) throws -> ScheduledSummaryStatus {
        try Validation.validateBundleIdentifier(app, field: "app")
        if summaries.apps[app] == nil, summaries.apps.count >= ScheduledSummary.maximumApps {
            throw ChimeError(
                .tooLarge, field: "app",
                "\(summaries.apps.count) apps are in a scheduled summary, the most the service keeps; remove one before adding \(app)"
            )
        }
        summaries.apps[app] = summary
        try saveSummaries()
        if let text = try store.value(forKey: SummaryHeld.key(app)) {
            var held = SummaryHeld(stored: text)
            held.due = summary.next(after: clock.now)
            try store.setValue(held.serialized, forKey: SummaryHeld.key(app))
        }
        try markScheduledDelivery(app: app)
        try summariesChanged()
        guard let status = try summaryStatuses().first(where: { $0.app == app }) else { throw Self.noSummary(app) }
        return status
    }

    /// Takes an app out of its scheduled summary; what it held is delivered now. `false`: it was in none.
    func removeScheduledSummary(app: String) throws -> Bool {
        guard summaries.apps.removeValue(forKey: app) != nil else { return false }
        try saveSummaries()
        if let text = try store.takeValue(forKey: SummaryHeld.key(app)) {
            try deliverSummary(SummaryHeld(stored: text), app: app, now: clock.now)
        }
        try markScheduledDelivery(app: app)
        try summariesChanged()
        return true
    }

    /// Sets the app's `scheduledDeliverySetting` (when it has a record and may notify) to say
    /// whether it is in a summary.
    private func markScheduledDelivery(app: String) throws {
        guard try store.app(app) != nil else { return }
        let current = try appRecord(app).settings
        var wanted = current
        applyScheduledDelivery(&wanted, app: app)
        if wanted != current { _ = try updateSettings(app: app) { $0 = wanted } }
    }

    /// What `scheduledDeliverySetting` says for `app`: `.enabled` while in a summary and allowed to
    /// notify, `.disabled` otherwise (for an app that answered authorization).
    func applyScheduledDelivery(_ settings: inout NotificationSettings, app: String) {
        guard settings.authorizationStatus != .notDetermined else { return }
        settings.scheduledDeliverySetting =
            summaries.apps[app] != nil && settings.authorizationStatus.allowsDelivery ? .enabled : .disabled
    }

    private func summariesChanged() throws {
        summaries.checkAt = summaries.apps.isEmpty ? nil : clock.now
        try summariesDue(now: clock.now)
    }

    static func noSummary(_ app: String) -> ChimeError {
        ChimeError(
            .notFound, field: "app",
            "\(app.prefix(200)) is in no scheduled summary; chime summary set \(app.prefix(200)) --at 08:00 puts it in one"
        )
    }
}

extension FocusDecision {
    /// The name a delivery held by a scheduled summary gives as its focus (iOS's name for the feature).
    public static let scheduledSummaryName = "Scheduled Summary"
}
