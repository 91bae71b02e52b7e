import Foundation

/// Scheduled summaries (``ScheduledSummary``; iOS 15's, set per app by the service's owner): an
/// app's passive and active notifications are held quietly and delivered as one summary at the
/// times picked, ordered by `relevanceScore`.
///
/// ```swift
/// try await engine.setScheduledSummary(ScheduledSummary(times: ["08:00", "18:00"], timeZone: "Europe/Berlin"),
///                                      app: "com.example.news")
/// let status = try await engine.scheduledSummary(app: "com.example.news")
/// print(status?.nextDelivery as Any, status?.held as Any)
/// ```
extension NotificationEngine {
    /// Every app in a scheduled summary, by app, with its next time and how many notifications it
    /// holds so far.
    public func scheduledSummaries() async throws -> [ScheduledSummaryStatus] {
        try await perform { try $0.summaryStatuses() }
    }

    /// The app's scheduled summary, or `nil` when it is in none.
    public func scheduledSummary(app: String) async throws -> ScheduledSummaryStatus? {
        try await scheduledSummaries().first { $0.app == app }
    }

    /// Puts an app in a scheduled summary, or changes its times (what it holds is then due at the
    /// first new time). Its ``NotificationSettings/scheduledDeliverySetting`` becomes `.enabled`.
    /// - Throws: ``ChimeError`` naming `app` for a bundle identifier that is not one; `tooLarge`
    ///   past ``ScheduledSummary/maximumApps`` apps.
    @discardableResult
    public func setScheduledSummary(_ summary: ScheduledSummary, app: String) async throws -> ScheduledSummaryStatus {
        try await perform { try $0.setScheduledSummary(summary, app: app) }
    }

    /// Takes an app out of its scheduled summary; what it held is delivered at once, as a summary.
    /// - Returns: whether it was in one.
    @discardableResult
    public func removeScheduledSummary(app: String) async throws -> Bool {
        try await perform { try $0.removeScheduledSummary(app: app) }
    }
}
