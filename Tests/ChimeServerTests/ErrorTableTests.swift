import ChimeCore
import Foundation
import PostgresTestServer
import TestThreads
import Testing

@testable import ChimePostgres
@testable import ChimeServer

/// The one error table (`ErrorTable`) as the service answers it: a conflict on a shared database
/// that outlasts the engine's retries is 503 with `Retry-After`, never PostgreSQL's text.
@Suite("Errors answered from the one table", .testThreads)
struct ErrorTableTests {
    @Test(
        "a conflict that survives the retries is 503 with Retry-After and no database text, on the API and the push endpoint"
    )
    func conflictAfterRetries() async throws {
        let server = try PostgresTestServer.shared()
        let database = try server.makeDatabase()
        // Each of the service's connections waits at most 20 ms for a row lock, then PostgreSQL
        // answers lock_not_available (55P03): a conflict, which the engine runs again.
        let name = try #require(database.split(separator: "/").last)
        try server.sql("ALTER DATABASE \(name) SET lock_timeout = '20ms'")
        let directory = ServiceHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let service = try await SharedServiceTests.node(database, directory)
        do {
            let appName = "com.example.conflict"
            let token = try await SharedServiceTests.register(appName, on: service)
            let app = TestClient(port: service.port, token: token)
            let device = try await app.get("/v1/apps/\(appName)/device-token")
            guard case .string(let deviceToken)? = device.json?["deviceToken"] else {
                throw TestClientError(description: "no device token: \(device.text)")
            }

            // Another session holds the app's row, as a node in the middle of a long transaction.
            let holder = try PostgresConnection(url: database, applicationName: "chime-test-holder")
            try holder.execute("BEGIN")
            _ = try holder.query("SELECT 1 FROM chime_apps WHERE bundle_id = $1 FOR UPDATE", [.text(appName)])

            let badge = try await app.put("/v1/apps/\(appName)/badge", json: #"{"badge": 3}"#)
            #expect(badge.status == 503, "\(badge.text)")
            #expect(badge.errorCode == "storeConflict")
            #expect(badge.headers["retry-after"] == "1")
            #expect(
                !badge.text.contains("PostgreSQL") && !badge.text.contains("55P03") && !badge.text.contains("lock"),
                "\(badge.text)")

            // The app is contended now, so a push reads it FOR UPDATE and meets the same lock.
            let push = try await app.request(
                "POST", "/3/device/\(deviceToken)", headers: [("apns-topic", appName)],
                body: Array(#"{"aps": {"alert": "held", "badge": 4}}"#.utf8))
            #expect(push.status == 503, "\(push.text)")
            #expect(push.reason == "ServiceUnavailable")
            #expect(push.headers["retry-after"] == "1")
            #expect(!push.text.contains("PostgreSQL") && !push.text.contains("55P03"), "\(push.text)")

            // The other session ends: the same request goes through.
            try holder.execute("ROLLBACK")
            let retried = try await app.put("/v1/apps/\(appName)/badge", json: #"{"badge": 3}"#)
            #expect(retried.status == 200 || retried.status == 204, "\(retried.text)")
        } catch {
            await service.stop()
            throw error
        }
        await service.stop()
    }

    @Test(
        "the table's kinds are the engine's: store codes fail the transaction, the rest only the operation",
        arguments: [
            (ChimeError.Code.storeFailure, true), (.storeTooNew, true), (.notAStore, true), (.storageFull, true),
            (.storeConflict, true),
            (.invalidValue, false), (.notFound, false), (.shutDown, false),
            (ChimeError.Code(rawValue: "someFutureCode"), false),
        ])
    func kinds(code: ChimeError.Code, isStore: Bool) {
        let error = ChimeError(code, "x")
        #expect(error.isStoreError == isStore)
        #expect(NotificationEngine.isOperationError(error) == !isStore)
        #expect(APIError.from(error).status == ErrorTable.entry(for: error).status)
    }
}
