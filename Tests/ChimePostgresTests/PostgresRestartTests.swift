import ChimeCore
import ChimePostgres
import Foundation
import PostgresTestServer
import Synchronization
import TestThreads
import Testing

/// The database going away under running nodes: three engines with their schedulers on one
/// PostgreSQL server of the test's own, restarted with a fast and then an immediate shutdown while
/// requests fall due and adds come in. The nodes reconnect by themselves; every acknowledged add is
/// delivered, exactly once, and every node's hub sees each delivery once.
@Suite("PostgreSQL restarted under running nodes", .testThreads, .timeLimit(.minutes(3)))
struct PostgresRestartTests {
    static let app = "com.example.restart"

    /// Each node's view: the deliveries its hub published, with when it saw them.
    final class Seen: Sendable {
        private let state = Mutex<
            (
                identifiers: [String], lateness: [String: TimeInterval],
                waiters: [(Int, CheckedContinuation<Void, Never>)]
            )
        >(
            ([], [:], []))

        init(_ engine: NotificationEngine) {
            _ = engine.subscribe(app: PostgresRestartTests.app) { [self] event in
                guard let notification = event.delivery?.notification else { return }
                let lateness = Date().timeIntervalSince(notification.date)
                let ready = self.state.withLock { state -> [CheckedContinuation<Void, Never>] in
                    state.identifiers.append(notification.request.identifier)
                    state.lateness[notification.request.identifier] = lateness
                    let count = state.identifiers.count
                    let ready = state.waiters.filter { $0.0 <= count }.map(\.1)
                    state.waiters.removeAll { $0.0 <= count }
                    return ready
                }
                for continuation in ready { continuation.resume() }
            }
        }

        var identifiers: [String] { state.withLock { $0.identifiers } }
        var lateness: [String: TimeInterval] { state.withLock { $0.lateness } }

        /// Returns once `count` deliveries were seen (the suite's time limit bounds the wait).
        func wait(for count: Int) async {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if state.identifiers.count >= count { return true }
                    state.waiters.append((count, continuation))
                    return false
                }
                if now { continuation.resume() }
            }
        }
    }

    /// Adds through `engine` until the add is acknowledged (a failure while the database is away
    /// is retried: an add of the same identifier replaces, so a retry never duplicates).
    static func addAcknowledged(_ request: NotificationRequest, via engine: NotificationEngine) async -> Int {
        var failures = 0
        while true {
            do {
                _ = try await engine.add([request], app: app)
                return failures
            } catch {
                failures += 1
                try? await Sleep.for(.milliseconds(50))  // a pause between attempts, not a wait for a state
            }
        }
    }

    @Test(
        "fast and immediate shutdowns under three running nodes: nodes reconnect, nothing acknowledged is lost, nothing fires twice"
    )
    func restarts() async throws {
        let server = try await PostgresTestServer.start(durable: true)
        defer { server.stop() }
        let url = try server.makeSchema()
        let stores = try (0..<3).map { _ in try PostgresStore(url: url) }
        let engines = stores.map { NotificationEngine(store: $0, policy: FixedAuthorizationPolicy(.grant)) }
        let seen = engines.map(Seen.init)
        _ = try await engines[0].requestAuthorization(app: Self.app, options: [.alert])
        for engine in engines { engine.startScheduler() }

        // Three waves of adds spread over the nodes, each due 1 to 2 s later; a restart between them.
        var identifiers: [String] = []
        var failedAttempts = 0
        func wave(_ name: String, count: Int) async {
            for index in 0..<count {
                let identifier = "\(name)-\(index)"
                let request = NotificationRequest(
                    identifier: identifier, content: NotificationContent(title: identifier),
                    trigger: .timeInterval(1 + Double(index % 10) / 10, repeats: false))
                failedAttempts += await Self.addAcknowledged(request, via: engines[index % engines.count])
                identifiers.append(identifier)
            }
        }
        await wave("before", count: 60)
        try await server.restart(.fast)
        await wave("after-fast", count: 60)
        // Down for 2 s while the wave above falls due: it fires once the database is back.
        await server.halt(.immediate)
        try await Sleep.for(.seconds(2))  // the outage itself, not a wait for a state
        try await server.resume()
        await wave("after-immediate", count: 60)

        for view in seen { await view.wait(for: identifiers.count) }
        for (index, view) in seen.enumerated() {
            let delivered = view.identifiers
            #expect(
                delivered.count == identifiers.count,
                "node \(index) saw \(delivered.count) deliveries of \(identifiers.count)")
            #expect(
                Set(delivered) == Set(identifiers),
                "node \(index): missing \(Set(identifiers).subtracting(delivered).sorted().prefix(5))")
            #expect(Set(delivered).count == delivered.count, "node \(index) saw a delivery twice")
        }
        #expect(try await engines[0].deliveredCount(app: Self.app) == identifiers.count)
        #expect(try await engines[0].pendingCount(app: Self.app) == 0)
        // How late the last wave fired once the database was back (reported, not asserted: time is the benchmarks' to judge).
        let lateness = seen[0].lateness
        func worst(_ prefix: String) -> String {
            String(
                format: "%.3f s",
                identifiers.filter { $0.hasPrefix(prefix + "-") }.compactMap { lateness[$0] }.max() ?? 0)
        }
        print(
            "PostgresRestartTests: \(failedAttempts) add attempts failed during the restarts; lateness max: due across the fast restart \(worst("before")), "
                + "due during the 2 s outage \(worst("after-fast")), added after it \(worst("after-immediate"))")
        for engine in engines {
            engine.stopScheduler()
            await engine.shutdown()
        }
        for store in stores { store.close() }
    }
}
