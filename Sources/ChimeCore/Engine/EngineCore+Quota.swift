import Foundation

extension EngineCore {
    // MARK: Quota

    /// An app's usage as counted here: what the store said when last asked, plus what was added
    /// and minus what was removed since. A replacement by identifier counts as an addition, so the
    /// tally errs high, never low (with a shared store, other engines' additions are not seen: it
    /// is asked again after a sixteenth of a bound).
    struct UsageTally {
        var pending: Int
        var delivered: Int
        var bytes: Int
        /// When the store was asked.
        var asked: Date
        /// Requests and deliveries counted since the store was asked.
        var sinceAsked = 0

        /// Bytes of `count` records by the tally's average record.
        func bytes(of count: Int) -> Int {
            let records = pending + delivered
            return records > 0 ? bytes / records * count : 0
        }
    }

    /// The shortest time between two asks of the store for one app when its tally is at a bound:
    /// an app at its quota that keeps adding costs the writer one count of its rows per this.
    private static let recountInterval: TimeInterval = 2

    /// The app's usage as the store has it now.
    @discardableResult
    private func askStore(_ app: String) throws -> UsageTally {
        let counted = try store.usage(app: app)
        let tally = UsageTally(
            pending: counted.pending, delivered: counted.delivered, bytes: counted.bytes, asked: clock.now)
        usage[LiteralKey(app)] = tally
        return tally
    }

    /// Whether the store should be asked again, rather than the tally trusted, for a bound.
    func isStale(_ tally: UsageTally, bound: Int) -> Bool {
        guard shared != nil else { return false }
        return tally.sinceAsked >= max(1, bound / 16)
    }

    /// Counts removals the app's tally has not seen (when there is one).
    func countRemoved(app: String, pending: Int = 0, delivered: Int = 0) {
        guard pending + delivered > 0, var tally = usage[LiteralKey(app)] else { return }
        tally.bytes = max(0, tally.bytes - tally.bytes(of: pending + delivered))
        tally.pending = max(0, tally.pending - pending)
        tally.delivered = max(0, tally.delivered - delivered)
        usage[LiteralKey(app)] = tally
    }

    /// Checks that `records` (`bytes` of records) fit the app's pending and byte bounds, or
    /// throws `quotaExceeded`; counts them when they do.
    func admit(_ records: [PendingRequest], bytes: Int, app: String) throws {
        let quota = configuration.quota
        guard quota.pending != nil || quota.bytes != nil else { return }
        let key = LiteralKey(app)
        var tally = try usage[key] ?? askStore(app)
        func exceeds(_ tally: UsageTally, replacing: Int = 0, replacingBytes: Int = 0) -> Bool {
            if let bound = quota.pending, tally.pending - replacing + records.count > bound { return true }
            if let bound = quota.bytes, tally.bytes - replacingBytes + bytes > bound { return true }
            return false
        }
        if isStale(tally, bound: quota.pending ?? 16_384) { tally = try askStore(app) }
        if exceeds(tally) {
            if clock.now.timeIntervalSince(tally.asked) >= Self.recountInterval { tally = try askStore(app) }
            if exceeds(tally) {
                // At a bound, count exactly: requests replaced by identifier free their room.
                var replacing = 0
                var replacingBytes = 0
                for record in records {
                    if let existing = try store.pending(app: app, identifier: record.request.identifier) {
                        replacing += 1
                        replacingBytes += RecordCodec.encode(existing.request).count
                    }
                }
                if exceeds(tally, replacing: replacing, replacingBytes: replacingBytes) {
                    throw quotaExceeded(
                        tally, adding: records.count, bytes: bytes, replacing: replacing,
                        replacingBytes: replacingBytes, app: app)
                }
                tally.pending -= replacing
                tally.bytes -= replacingBytes
            }
        }
        tally.pending += records.count
        tally.bytes += bytes
        tally.sinceAsked += records.count
        usage[key] = tally
    }

    private func quotaExceeded(
        _ tally: UsageTally, adding count: Int, bytes: Int, replacing: Int, replacingBytes: Int,
        app: String
    ) -> ChimeError {
        let quota = configuration.quota
        let adding = count == 1 ? "1 request" : "\(count) requests"
        if let bound = quota.pending, tally.pending - replacing + count > bound {
            return ChimeError(
                .quotaExceeded, field: "app",
                """
                \(app) has \(tally.pending) pending requests and may have at most \(bound) (chime serve --app-max-pending); \
                \(adding) not added: remove pending requests, or ask the owner to raise the quota
                """)
        }
        return ChimeError(
            .quotaExceeded, field: "app",
            """
            \(app) keeps \(tally.bytes) bytes of pending and delivered notifications and may keep at most \(quota.bytes ?? 0) \
            (chime serve --app-max-bytes); \(adding) of \(bytes - replacingBytes) bytes not added: remove pending or \
            delivered notifications, or ask the owner to raise the quota
            """)
    }

    /// Past the app's delivered bound, removes its oldest delivered notifications down to nine
    /// tenths of it, with a `removed` event, so the next removal is a tenth of the bound away.
    func keepDeliveredWithinQuota(app: String, bytes: Int) throws {
        guard let bound = configuration.quota.delivered else { return }
        let key = LiteralKey(app)
        guard var tally = usage[key] else {
            // The store's count includes the one just delivered.
            try askStore(app)
            return try trimDelivered(app: app, bound: bound)
        }
        tally.delivered += 1
        tally.bytes += bytes
        tally.sinceAsked += 1
        usage[key] = tally
        if isStale(tally, bound: bound) { tally = try askStore(app) }
        if tally.delivered > bound { try trimDelivered(app: app, bound: bound) }
    }

    private func trimDelivered(app: String, bound: Int) throws {
        guard let tally = usage[LiteralKey(app)], tally.delivered > bound else { return }
        let oldest = try store.oldestDelivered(app: app, limit: tally.delivered - (bound - bound / 10))
        let removed = try store.removeDelivered(app: app, identifiers: oldest)
        try forgetDelivered(app: app, identifiers: removed)
        if !removed.isEmpty { try log(.removed(identifiers: removed, scope: .delivered), app: app) }
        countRemoved(app: app, delivered: removed.count)
    }
}
