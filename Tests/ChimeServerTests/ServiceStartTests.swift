import ChimeCore
import Foundation
import Synchronization
import TestThreads
import Testing

@testable import ChimeServer

#if canImport(Glibc)
    import Glibc
#endif

/// The service's parts (``ServiceParts/Part``) start in one order and stop in reverse. A failure at
/// any part stops every part started before it and leaves nothing running — no listener, nothing
/// asleep on the clock (the scheduler), the store closed cleanly — and the same directory starts
/// again; a stop called twice stops once, and neither call returns before everything stopped.
@Suite("Service parts: ordered start and shutdown", .testThreads)
struct ServiceStartTests {
    /// A data directory with the service's Unix socket in it, a manual clock, and the service's
    /// log (JSON lines), which says what started and stopped.
    final class Setup: Sendable {
        let directory = "/tmp/chime-parts-\(UUID().uuidString.prefix(8))"
        let clock = ManualClock(now: Date(timeIntervalSince1970: 1_900_000_000))
        private let lines = Mutex<[String]>([])

        init() throws {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }

        var socketPath: String { directory + "/chime.sock" }
        var storePath: String { directory + "/chime.sqlite" }
        var serverInfo: String { ChimeService.serverInfoPath(dataDirectory: directory) }

        func configuration(listen: ListenAddress? = nil) -> ChimeService.Configuration {
            var configuration = ChimeService.Configuration(
                dataDirectory: directory, listen: listen ?? .unix(path: socketPath), printsBanner: false)
            configuration.clock = clock
            return configuration
        }

        var logger: ServerLogger {
            ServerLogger(format: .json, sink: { [self] line in self.lines.withLock { $0.append(line) } })
        }

        /// The parts the log names with `message` (`started`, `stopped`), in the order logged.
        func parts(_ message: String) -> [ServiceParts.Part] {
            lines.withLock { $0 }.compactMap { line in
                guard case .object(let object)? = try? JSONValue.parse(line), object["message"] == .string(message),
                    case .string(let name)? = object["part"]
                else { return nil }
                return ServiceParts.Part(rawValue: name)
            }
        }

        /// Whether the store was closed cleanly: the marker only a clean close leaves, and no
        /// write-ahead log (an open store has one).
        var storeClosedCleanly: Bool {
            FileManager.default.fileExists(atPath: storePath + "-verified")
                && !FileManager.default.fileExists(atPath: storePath + "-wal")
        }
    }

    /// The parts that start with these tests' configuration (no desktop), in their order.
    static let started = ServiceParts.Part.allCases.filter { $0 != .desktop }

    /// Whether anything accepts connections on the Unix socket at `path`.
    static func accepts(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }

    /// Starts with `configuration`, expecting a failure at `part`; then holds that what started
    /// before it stopped, last first, and that nothing of it runs.
    func expectFailure(
        at part: ServiceParts.Part, _ setup: Setup, configuration: ChimeService.Configuration,
        injected: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        await #expect(sourceLocation: sourceLocation) {
            _ = try await RunningService.start(
                configuration: configuration, logger: setup.logger, failing: injected ? part : nil)
        } throws: { error in
            "\(error)".contains("cannot start \(part.title): ")
        }
        let before = Array(Self.started.prefix { $0 != part })
        #expect(setup.parts("started") == before, sourceLocation: sourceLocation)
        #expect(setup.parts("stopped") == before.reversed(), sourceLocation: sourceLocation)
        #expect(
            !Self.accepts(setup.socketPath), "a listener of the failed start accepts", sourceLocation: sourceLocation)
        #expect(
            setup.clock.sleeperCount == 0, "still asleep on the clock: \(setup.clock.sleeperDeadlines)",
            sourceLocation: sourceLocation)
        if before.contains(.store) {
            #expect(
                setup.storeClosedCleanly, "the store of the failed start is not closed", sourceLocation: sourceLocation)
        }
    }

    /// The same directory starts and stops cleanly.
    func expectStartsAgain(_ setup: Setup, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let service = try await RunningService.start(configuration: setup.configuration(), logger: .silent)
        #expect(Self.accepts(setup.socketPath), sourceLocation: sourceLocation)
        await service.stop()
        #expect(!Self.accepts(setup.socketPath), sourceLocation: sourceLocation)
    }

    @Test(
        "a failure at any part stops every part started before it, last first, names the part, and leaves nothing running",
        arguments: ServiceStartTests.started)
    func failureAtEachPart(part: ServiceParts.Part) async throws {
        let setup = try Setup()
        await expectFailure(at: part, setup, configuration: setup.configuration(), injected: true)
        #expect(!FileManager.default.fileExists(atPath: setup.serverInfo))
        try await expectStartsAgain(setup)
    }

    @Test("a store that is not a Chime store: nothing starts, and the error names the store")
    func unopenableStore() async throws {
        let setup = try Setup()
        #expect(
            FileManager.default.createFile(
                atPath: setup.storePath, contents: Data(String(repeating: "not a store ", count: 400).utf8),
                attributes: [.posixPermissions: 0o600]))
        await expectFailure(at: .store, setup, configuration: setup.configuration())
        try FileManager.default.removeItem(atPath: setup.storePath)
        try await expectStartsAgain(setup)
    }

    @Test("a Web Push key that is not a key: the store started before it is closed again")
    func unreadableWebPushKey() async throws {
        let setup = try Setup()
        let key = WebPushKey.path(dataDirectory: setup.directory)
        #expect(
            FileManager.default.createFile(
                atPath: key, contents: Data("not a key\n".utf8), attributes: [.posixPermissions: 0o600]))
        await expectFailure(at: .webPushKey, setup, configuration: setup.configuration())
        try FileManager.default.removeItem(atPath: key)
        try await expectStartsAgain(setup)
    }

    @Test("a port another listener holds: the scheduler, the surfaces, the engine and the store stop again")
    func portTaken() async throws {
        let setup = try Setup()
        let taken = try TCPSocket.listen(host: "127.0.0.1", port: 0)
        defer { close(taken) }
        let port = TCPSocket.boundPort(taken)
        await expectFailure(
            at: .httpServer, setup, configuration: setup.configuration(listen: .tcp(host: "127.0.0.1", port: port)))
        try await expectStartsAgain(setup)
    }

    @Test(
        "server.json cannot be written (a directory in its place): the listener and everything before it stop, and the directory starts again"
    )
    func serverInfoUnwritable() async throws {
        let setup = try Setup()
        try FileManager.default.createDirectory(atPath: setup.serverInfo, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: setup.serverInfo + "/keep", withIntermediateDirectories: false)
        await expectFailure(at: .serverInfo, setup, configuration: setup.configuration())
        #expect(!FileManager.default.fileExists(atPath: setup.serverInfo + ".tmp"))
        #expect(
            FileManager.default.fileExists(atPath: setup.serverInfo + "/keep"),
            "server.json's stop ran, not having started")
        try FileManager.default.removeItem(atPath: setup.serverInfo)
        try await expectStartsAgain(setup)
    }

    @Test(
        "the parts start in their order and stop in reverse, each stop logged; stop twice at once stops once, and neither returns before all stopped"
    )
    func stopTwice() async throws {
        let setup = try Setup()
        let service = try await RunningService.start(configuration: setup.configuration(), logger: setup.logger)
        #expect(setup.parts("started") == Self.started)
        #expect(Self.accepts(setup.socketPath))
        #expect(FileManager.default.fileExists(atPath: setup.serverInfo))
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await service.stop() }
            group.addTask { await service.stop() }
            // Whichever returns first: everything has stopped.
            await group.next()
            #expect(setup.storeClosedCleanly, "a stop returned before the store was closed")
            #expect(!Self.accepts(setup.socketPath), "a stop returned while the listener accepts")
            #expect(setup.clock.sleeperCount == 0, "a stop returned while the scheduler sleeps on the clock")
            #expect(!FileManager.default.fileExists(atPath: setup.serverInfo))
            await group.next()
        }
        await service.stop()
        #expect(setup.parts("stopped") == Self.started.reversed())
        try await expectStartsAgain(setup)
    }
}
