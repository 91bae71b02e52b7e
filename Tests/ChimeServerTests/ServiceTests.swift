import ChimeCore
import Foundation
import Synchronization
import TestThreads
import Testing

@testable import ChimeServer

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Service", .testThreads, .serialized)
struct ServiceTests {
    @Test("run(configuration:) serves until SIGTERM, then stops cleanly and removes server.json")
    func sigterm() async throws {
        let directory = ServiceHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let info = directory + "/server.json"
        let configuration = ChimeService.Configuration(
            dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0),
            logFormat: .json, printsBanner: false)
        let running = Task { try await ChimeService.run(configuration: configuration) }
        var server: JSONValue?
        let deadline = ContinuousClock.now + .seconds(60)
        while server == nil, ContinuousClock.now < deadline {
            server = try? JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: info)))
            if server == nil { try await Sleep.for(.milliseconds(10)) }
        }
        guard case .string(let url)? = server?["url"], let port = URL(string: url)?.port else {
            Issue.record("no server.json")
            kill(getpid(), SIGTERM)
            _ = try? await running.value
            return
        }
        #expect(try await TestClient(port: UInt16(port)).get("/healthz").status == 200)
        kill(getpid(), SIGTERM)
        try await running.value
        #expect(!FileManager.default.fileExists(atPath: info))
        // The owner token survives a restart.
        let token = try String(contentsOfFile: directory + "/owner-token", encoding: .utf8)
        let again = try await RunningService.start(configuration: configuration, logger: .silent)
        #expect(again.ownerToken == token.trimmingCharacters(in: .whitespacesAndNewlines))
        await again.stop()
    }

    @Test("a buffered access log is written when the service stops: every line whole, the stop's own lines last")
    func bufferedLogFlushedOnStop() async throws {
        let directory = ServiceHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let logPath = directory + "-log"
        defer { try? FileManager.default.removeItem(atPath: logPath) }
        let descriptor = open(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        // An hour between batches: without the flush at the stop, nothing would be written.
        let logger = ServerLogger.buffered(format: .json, descriptor: descriptor, interval: .seconds(3600))
        let service = try await RunningService.start(
            configuration: .init(
                dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0), printsBanner: false), logger: logger
        )
        for _ in 0..<3 { #expect(try await TestClient(port: service.port).get("/healthz").status == 200) }
        await service.stop()
        let lines = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n").map(String.init)
        let requests = lines.filter { $0.contains(#""path":"/healthz""#) }
        #expect(requests.count == 3, "\(lines)")
        #expect(try requests.allSatisfy { try JSONValue.parse($0)["status"] == .string("200") })
        // Every line is whole: one JSON object each.
        for line in lines { #expect((try? JSONValue.parse(line)) != nil, "\(line)") }
        let last = try #require(lines.last)
        #expect(!last.contains(#""message":"request""#), "the stop's own lines come after the requests: \(last)")
    }

    @Test("access log lines as JSON name method, path, status and route; the banner names the next commands")
    func logging() async throws {
        let lines = Mutex<[String]>([])
        let logger = ServerLogger(format: .json) { line in lines.withLock { $0.append(line) } }
        let directory = ServiceHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let service = try await RunningService.start(
            configuration: .init(
                dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0), printsBanner: false), logger: logger
        )
        _ = try await TestClient(port: service.port).get("/healthz?x=\"quoted\"")
        #expect(service.banner.contains(service.url))
        #expect(service.banner.contains("chime apps add"))
        #expect(service.banner.contains("open"))
        await service.stop()
        let request = try #require(lines.withLock { $0 }.first { $0.contains(#""message":"request""#) })
        let object = try JSONValue.parse(request)
        #expect(object["method"] == .string("GET"))
        #expect(object["path"] == .string("/healthz"))
        #expect(object["status"] == .string("200"))
        #expect(object["route"] == .string("/healthz"))
        #expect(object["level"] == .string("info"))
    }
}
