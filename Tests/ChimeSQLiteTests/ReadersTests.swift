import Dispatch
import Foundation
import StoreTestSupport
import Synchronization
import TestThreads
import Testing

@testable import ChimeCore
@testable import ChimeSQLite

/// Reads beside the writer: the engine's read-only operations run on the SQLite store's reader
/// connections (WAL snapshots), not through the writer's transactions.
@Suite("Reads beside the writer", .testThreads)
struct ReadersTests {
    static let app = "com.example.readers"

    static func engine(_ directory: TemporaryDirectory) throws -> (NotificationEngine, SQLiteStore) {
        let store = try SQLiteStore(path: directory.path("store.sqlite"))
        return (NotificationEngine(store: store), store)
    }

    static func request(_ identifier: String, in seconds: TimeInterval) -> NotificationRequest {
        NotificationRequest(
            identifier: identifier, content: NotificationContent(title: identifier),
            trigger: .timeInterval(seconds, repeats: false))
    }

    @Test("a list is answered while the writer is held busy by another operation")
    func readWhileWriterBusy() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (engine, _) = try Self.engine(directory)
        _ = try await engine.requestAuthorization(app: Self.app, options: [.alert])
        try await engine.add([Self.request("later", in: 3600)], app: Self.app)

        // An operation that holds the writer until the read below has been answered (at most 60 s).
        let release = DispatchSemaphore(value: 0)
        let outcome = Mutex<DispatchTimeoutResult?>(nil)
        await withCheckedContinuation { (entered: CheckedContinuation<Void, Never>) in
            engine.submit(
                { _ in
                    entered.resume()
                    let result = release.wait(timeout: .now() + 60)
                    outcome.withLock { $0 = result }
                }, completion: { _ in })
        }
        let pending = try await engine.pending(app: Self.app)
        let delivered = try await engine.delivered(app: Self.app)
        let settings = try await engine.settings(app: Self.app)
        release.signal()
        await engine.barrier()
        #expect(outcome.withLock { $0 } == .success, "the reads waited for the writer")
        #expect(pending.map(\.request.identifier) == ["later"])
        #expect(delivered.isEmpty)
        #expect(settings.authorizationStatus == .authorized)
        await engine.shutdown()
    }

    @Test("reads open no write transaction; the next fire date comes from memory")
    func readsDoNotWrite() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (engine, store) = try Self.engine(directory)
        _ = try await engine.requestAuthorization(app: Self.app, options: [.alert])
        try await engine.add([Self.request("soon", in: 60), Self.request("later", in: 3600)], app: Self.app)
        let before = store.writeTransactions.load(ordering: .relaxed)
        for _ in 0..<20 {
            #expect(try await engine.pending(app: Self.app).count == 2)
            #expect(try await engine.pending(app: Self.app, after: 0, limit: 10).count == 2)
            #expect(try await engine.pendingCount(app: Self.app) == 2)
            #expect(try await engine.delivered(app: Self.app).isEmpty)
            #expect(try await engine.deliveredCount(app: Self.app) == 0)
            #expect(try await engine.apps().map(\.bundleIdentifier) == [Self.app])
            #expect(try await engine.app(Self.app).settings.authorizationStatus == .authorized)
            #expect(try await engine.categories(app: Self.app).isEmpty)
            #expect(try await engine.outbox(app: Self.app).isEmpty)
            #expect(try await !engine.events(after: 0, app: Self.app).isEmpty)
            #expect(try await engine.nextFireDate() != nil)
        }
        #expect(store.writeTransactions.load(ordering: .relaxed) == before, "a read opened BEGIN IMMEDIATE")
        await engine.shutdown()
    }
}
