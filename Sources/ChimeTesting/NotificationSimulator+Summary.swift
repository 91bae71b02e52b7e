import Chime
import ChimeCore
import Foundation

/// Scheduled summaries (iOS 15's, ``ScheduledSummary``) in virtual time: the simulated app's
/// passive and active notifications are held quietly, and the summary comes as
/// ``NotificationSimulator/advance(by:)`` passes each time picked (across daylight-saving changes).
///
/// ```swift
/// try await simulator.setScheduledSummary(ScheduledSummary(times: ["08:00"], timeZone: "Europe/Berlin"))
/// await simulator.advance(by: 86_400)
/// #expect(await simulator.deliveredNotifications.contains { $0.request.identifier == "chime.summary" })
/// ```
extension NotificationSimulator {
    /// Puts the simulated app (or `app`) in a scheduled summary, or changes its times.
    @discardableResult
    public func setScheduledSummary(_ summary: ScheduledSummary, app: String? = nil) async throws
        -> ScheduledSummaryStatus
    {
        let status = try await engine.setScheduledSummary(summary, app: app ?? bundleIdentifier)
        await center.processEvents()
        return status
    }

    /// Takes the simulated app (or `app`) out of its scheduled summary; what it held is delivered at once.
    @discardableResult
    public func removeScheduledSummary(app: String? = nil) async throws -> Bool {
        let removed = try await engine.removeScheduledSummary(app: app ?? bundleIdentifier)
        await center.processEvents()
        return removed
    }

    /// The simulated app's scheduled summary: its next time and how many notifications it holds.
    public var scheduledSummary: ScheduledSummaryStatus? {
        get async throws { try await engine.scheduledSummary(app: bundleIdentifier) }
    }
}
