import ChimeCore
import ChimePostgres
import Foundation
import PostgresTestServer
import TestThreads
import Testing

/// Scheduled summaries on engines sharing one PostgreSQL database: an app put in a summary on one
/// node is held on every node, and its summary is delivered once, whichever nodes fire at its time.
@Suite("Scheduled summary on a PostgreSQL cluster", .testThreads)
struct ScheduledSummaryClusterTests {
    @Test(
        "12 notifications fired on three nodes are held; three nodes firing at 18:00 deliver one summary, by relevanceScore"
    )
    func summaryOnce() async throws {
        let url = try PostgresTestServer.shared().makeSchema()
        let stores = try (0..<3).map { _ in try PostgresStore(url: url) }
        let clock = FocusClusterTests.SharedClock(try FocusClusterTests.date("2027-06-07T08:00:00Z"))
        let engines = stores.map {
            NotificationEngine(store: $0, clock: clock, policy: FixedAuthorizationPolicy(.grant))
        }
        defer { for store in stores { store.close() } }
        do {
            let app = "com.example.summary"
            _ = try await engines[0].requestAuthorization(app: app, options: [.alert, .sound])
            try await engines[0].setScheduledSummary(ScheduledSummary(times: ["18:00"], timeZone: "UTC"), app: app)
            #expect(try await engines[2].settings(app: app).scheduledDeliverySetting == .enabled)
            // The other nodes learn of it through the feed (a device change): wait for it, bounded.
            let deadline = Date().addingTimeInterval(60)
            for engine in engines[1...] {
                while try await engine.scheduledSummaries().isEmpty, Date() < deadline {
                    try await Sleep.for(.milliseconds(10))
                }
                #expect(try await engine.scheduledSummaries().map(\.app) == [app])
            }
            for index in 0..<12 {
                var content = NotificationContent(title: "n\(index)")
                content.sound = NotificationSound(name: nil)
                content.relevanceScore = Double(index % 4) / 4
                content.summaryArgument = index % 2 == 0 ? "Alice" : "Bob"
                content.summaryArgumentCount = 2
                _ = try await engines[index % 3].add(
                    [
                        NotificationRequest(
                            identifier: "n\(index)", content: content,
                            trigger: .timeInterval(Double(60 * (index + 1)), repeats: false))
                    ],
                    app: app)
            }
            let noon = try FocusClusterTests.date("2027-06-07T12:00:00Z")
            clock.set(noon)
            #expect(try await FocusClusterTests.fireAll(engines, at: noon) == 12)
            let held = try await engines[2].events(after: 0, app: app, limit: 1000).compactMap(\.delivery)
            #expect(held.count == 12)
            #expect(held.allSatisfy { $0.focus?.reason == .scheduledSummary && $0.presentation == [.list] })
            #expect(try await engines[1].scheduledSummary(app: app)?.held == 12)

            let evening = try FocusClusterTests.date("2027-06-07T18:00:00Z")
            clock.set(evening)
            try await FocusClusterTests.fireAll(engines, at: evening)
            let summaries = try await FocusClusterTests.deliveries(of: "chime.summary", app: app, on: engines[0])
            // Scores 0.75 first (n3, n7, n11), then the rest: 9 notifications of 2 items each.
            #expect(
                summaries.map(\.notification.request.content.body) == [
                    "n3\nn7\nn11\n18 more notifications from Alice and Bob"
                ])
            #expect(summaries.first?.presentation.contains(.banner) == true && summaries.first?.focus == nil)
            for engine in engines { try await engine.fireDue(now: evening.addingTimeInterval(60)) }
            #expect(try await FocusClusterTests.deliveries(of: "chime.summary", app: app, on: engines[1]).count == 1)
            #expect(try await engines[2].scheduledSummary(app: app)?.held == 0)
        } catch {
            for engine in engines { await engine.shutdown() }
            throw error
        }
        for engine in engines { await engine.shutdown() }
    }
}
