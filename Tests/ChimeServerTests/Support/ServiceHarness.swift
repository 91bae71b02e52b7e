import ChimeCore
import Foundation

@testable import ChimeServer

/// A service started in-process on a free port with a temporary data directory.
///
/// `owner` and `client(token:)` reach it as `transport` says: over TCP (`.wire`, the default), or
/// with `.inProcess` by calling its API directly (``InProcess``), for suites about what the API
/// answers rather than how it travels. `endpoint` is always the socket.
struct ServiceHarness: Sendable {
    /// How the harness's clients reach the service.
    enum Transport: Sendable {
        case wire, inProcess
    }

    let service: RunningService
    let directory: String
    var transport = Transport.wire

    var owner: TestClient { client(token: service.ownerToken) }
    func client(token: String?) -> TestClient {
        TestClient(endpoint: transport == .wire ? endpoint : inProcessEndpoint, token: token)
    }
    var endpoint: TestEndpoint { .tcp(port: service.port) }
    /// The service's API without a socket, answering as its TCP address.
    var inProcessEndpoint: TestEndpoint { .inProcess(service.api, host: "127.0.0.1:\(service.port)") }

    static func temporaryDirectory() -> String {
        let path = NSTemporaryDirectory() + "chime-server-tests-" + UUID().uuidString
        return path
    }

    /// Starts a service, runs `body`, stops the service and removes the directory.
    static func with(
        transport: Transport = .wire, autoAllow: Bool = true, heartbeat: Duration = .seconds(15),
        connectionLimit: Int = 64,
        launchTimeout: Duration = .seconds(30), logger: ServerLogger = .silent,
        streamQueueLimit: Int = EventStream.defaultQueueLimit,
        serviceExtensionTimeLimit: TimeInterval = 30, streamLimits: ChimeAPI.StreamLimits = ChimeAPI.StreamLimits(),
        clock: (any NotificationClock)? = nil, publicURL: String? = nil, quota: StorageQuota = .serviceDefault,
        tls: (certificatePath: String, keyPath: String)? = nil, webPushEndpoints: [String] = [],
        directory given: String? = nil, _ body: (ServiceHarness) async throws -> Void
    ) async throws {
        let directory = given ?? temporaryDirectory()
        var configuration = ChimeService.Configuration(
            dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0),
            autoAllow: autoAllow, connectionLimit: connectionLimit,
            heartbeatInterval: heartbeat, printsBanner: false)
        configuration.launchTimeout = launchTimeout
        configuration.streamQueueLimit = streamQueueLimit
        configuration.serviceExtensionTimeLimit = serviceExtensionTimeLimit
        configuration.streamLimits = streamLimits
        configuration.publicURL = publicURL
        configuration.clock = clock
        configuration.quota = quota
        configuration.tlsCertificatePath = tls?.certificatePath
        configuration.tlsKeyPath = tls?.keyPath
        configuration.webPushEndpoints = try WebPushEndpoints(listed: webPushEndpoints)
        let service = try await RunningService.start(configuration: configuration, logger: logger)
        let harness = ServiceHarness(service: service, directory: directory, transport: transport)
        do {
            try await body(harness)
        } catch {
            await service.stop()
            if given == nil { try? FileManager.default.removeItem(atPath: directory) }
            throw error
        }
        await service.stop()
        if given == nil { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// Registers an app and returns its token.
    func createApp(_ bundle: String) async throws -> String {
        let response = try await owner.request(.createApp, json: #"{"bundleIdentifier": "\#(bundle)"}"#)
        guard response.status == 201, case .string(let token)? = response.json?["token"] else {
            throw TestClientError(description: "creating \(bundle): \(response.status) \(response.text)")
        }
        return token
    }
}
