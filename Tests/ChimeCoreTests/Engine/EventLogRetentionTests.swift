import ChimeCore
import Foundation
import TestThreads
import Testing

@Suite("The event log's bounds", .testThreads)
struct EventLogRetentionTests {
    @Test("large deliveries never take the log past its byte bound; small ones are bounded by count")
    func byteBound() async throws {
        var configuration = NotificationEngine.Configuration()
        configuration.eventRetentionBytes = 200_000
        let store = MemoryStore()
        let engine = NotificationEngine(
            store: store, policy: FixedAuthorizationPolicy(.grant), configuration: configuration)
        _ = try await engine.requestAuthorization(app: "a", options: [.alert])
        var largest = 0
        for index in 0..<200 {
            var content = NotificationContent(title: "big")
            content.body = String(repeating: "b", count: 5_000)
            try await engine.add(
                [NotificationRequest(identifier: "n\(index % 7)", content: content, trigger: nil)], app: "a")
            let bytes = try await engine.events(after: 0, app: nil, limit: 10_000).map { RecordCodec.encode($0).count }
                .reduce(0, +)
            largest = max(largest, bytes)
        }
        #expect(largest <= 200_000)
        // Without the byte bound, 200 deliveries of 5 KB would be about 1 MB.
        #expect(try await engine.events(after: 0, app: nil, limit: 10_000).count < 200)
        await engine.shutdown()
    }
}
