import ChimeCore
import ChimePostgres
import ChimeSQLite
import ChimeTesting
import Foundation
import PostgresTestServer
import StoreTestSupport
import Synchronization
import TestThreads
import Testing

/// registerForRemoteNotifications / unregisterForRemoteNotifications kept by the durable stores:
/// the device token and the unregistration outlive the engine, on SQLite and on PostgreSQL.
@Suite("Device token registration in the store", .testThreads, .timeLimit(.minutes(2)))
struct DeviceTokenStoreTests {
    enum Durable: String, CaseIterable, Sendable { case sqlite, postgres }

    /// Opens the same store twice in turn: `first` then `second` each get a fresh engine on it.
    static func twice(
        _ kind: Durable, first: (NotificationEngine) async throws -> Void,
        second: (NotificationEngine) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = kind == .postgres ? try PostgresTestServer.shared().makeSchema() : ""
        func run(_ body: (NotificationEngine) async throws -> Void) async throws {
            let store: any NotificationStore =
                kind == .sqlite ? try SQLiteStore(path: directory.path("store.sqlite")) : try PostgresStore(url: url)
            let engine = NotificationEngine(
                store: store, clock: ManualClock(now: Samples.base), timeZone: TimeZone(identifier: "UTC")!)
            do {
                try await body(engine)
            } catch {
                await engine.shutdown()
                throw error
            }
            await engine.shutdown()
        }
        try await run(first)
        try await run(second)
    }

    @Test(
        "the token is the same across restarts; an unregistration is kept with its date until the app registers again",
        arguments: Durable.allCases)
    func survivesRestart(kind: Durable) async throws {
        let app = "com.example.chat"
        let token = Mutex<String>("")
        try await Self.twice(
            kind,
            first: { engine in
                let registered = try await engine.registerForRemoteNotifications(app: app)
                #expect(registered.deviceToken.utf8.count == 64 && registered.deviceTokenUnregistered == nil)
                token.withLock { $0 = registered.deviceToken }
                let gone = try await engine.unregisterForRemoteNotifications(app: app)
                #expect(gone.deviceToken == registered.deviceToken && gone.deviceTokenUnregistered == Samples.base)
            },
            second: { engine in
                let stored = try await engine.app(app)
                #expect(stored.deviceToken == token.withLock { $0 } && stored.deviceTokenUnregistered == Samples.base)
                // Unregistering again keeps the first date; registering again keeps the token.
                #expect(
                    try await engine.unregisterForRemoteNotifications(app: app).deviceTokenUnregistered == Samples.base)
                let again = try await engine.registerForRemoteNotifications(app: app)
                #expect(again.deviceToken == stored.deviceToken && again.deviceTokenUnregistered == nil)
                #expect(try await engine.app(app).deviceTokenUnregistered == nil)
            })
    }
}
