import ChimeCore
import ChimeCrypto
import ChimeServer
import Foundation
import TestThreads
import Testing

/// `chime devices`: the Web Push subscriptions, listed, given apps, renamed and removed with the
/// built binary.
@Suite("chime devices", .testThreads)
struct DevicesCommandTests {
    @Test("lists the subscribed devices, chooses their apps, renames and removes them; usage errors say what to give")
    func devices() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "chime-devices-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = ChimeService.Configuration(
            dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0), printsBanner: false)
        let service = try await RunningService.start(configuration: configuration)
        defer { Task { await service.stop() } }
        func run(_ arguments: [String]) async throws -> (Int32, String, String) {
            try await BinaryTests.chime(arguments + ["--data", directory])
        }

        let (emptyStatus, empty, _) = try await run(["devices"])
        #expect(emptyStatus == 0)
        #expect(empty.contains("No devices"))
        #expect(try await run(["apps", "add", "com.example.alarm"]).0 == 0)
        let registration = WebPushRegistration(
            endpoint: "https://updates.push.services.mozilla.com/wpush/v2/abc",
            p256dh: P256PrivateKey().publicKey.rawRepresentation, auth: SecureRandom.bytes(16), name: "Phone")
        let id = try await service.engine.registerWebPushSubscription(registration, userAgent: "Firefox", date: Date())
            .subscription.id

        let (listStatus, listed, _) = try await run(["devices", "list"])
        #expect(listStatus == 0)
        #expect(
            listed.contains(id) && listed.contains("Phone")
                && listed.contains("https://updates.push.services.mozilla.com") && listed.contains("every app"))
        let (appsStatus, apps, appsErrors) = try await run(["devices", "apps", id, "com.example.alarm"])
        #expect(appsStatus == 0, "\(appsErrors)")
        #expect(apps.contains("apps: com.example.alarm"))
        #expect(try await service.engine.webPushSubscriptions().first?.apps == ["com.example.alarm"])
        let (_, all, _) = try await run(["devices", "apps", id, "--all-apps"])
        #expect(all.contains("every app"))
        let (renameStatus, renamed, _) = try await run(["devices", "rename", id, "Anna’s phone"])
        #expect(renameStatus == 0)
        #expect(renamed.contains("Anna’s phone"))
        let (jsonStatus, json, _) = try await run(["devices", "--json"])
        #expect(jsonStatus == 0)
        guard case .array(let items) = try JSONValue.parse(Array(json.utf8)) else {
            Issue.record("not a list: \(json)")
            return
        }
        #expect(items.first?["name"] == .string("Anna’s phone"))

        let (usageStatus, _, usage) = try await run(["devices", "apps", id])
        #expect(usageStatus == 2)
        #expect(usage.contains("--all-apps"))
        let (unknownStatus, _, unknown) = try await run(["devices", "remvoe", id])
        #expect(unknownStatus == 2)
        #expect(unknown.contains("did you mean 'remove'"))

        let (removeStatus, removed, _) = try await run(["devices", "remove", id])
        #expect(removeStatus == 0)
        #expect(removed.contains("Removed"))
        let (missingStatus, _, missing) = try await run(["devices", "remove", id])
        #expect(missingStatus != 0)
        #expect(missing.contains("no web push subscription"))
        #expect(try await service.engine.webPushSubscriptions().isEmpty)
        await service.stop()
    }
}
