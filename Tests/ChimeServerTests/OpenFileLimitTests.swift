import ChimeCore
import Foundation
import Synchronization
import TestThreads
import Testing

@testable import ChimeServer

/// `chime serve` and the open-files limit: it raises its soft limit to the hard one, and where even
/// the hard limit cannot hold `--max-connections`, it serves fewer connections and says why and what
/// to change, instead of letting connections take the descriptors its store needs.
@Suite("The open-files limit and --max-connections", .testThreads)
struct OpenFileLimitTests {
    @Test("the connection limit that fits is the largest whose connections fit in the descriptors")
    func fitting() {
        // Fits: unchanged.
        #expect(HTTPServer.Configuration.connectionLimit(fittingDescriptors: 20_000, asked: 10_000) == 10_000)
        #expect(HTTPServer.Configuration.connectionLimit(fittingDescriptors: 1_344, asked: 1_024) == 1_024)
        for descriptors in [1, 64, 65, 100, 384, 896, 1_343, 4_000, 65_408] {
            let fitted = HTTPServer.Configuration.connectionLimit(fittingDescriptors: descriptors, asked: 100_000)
            #expect(fitted >= 1)
            if fitted > 1 {
                #expect(HTTPServer.Configuration.daemonConnectionLimit(total: fitted) <= descriptors)
            }
            #expect(HTTPServer.Configuration.daemonConnectionLimit(total: fitted + 1) > descriptors)
        }
    }

    @Test("a limit too low for --max-connections: fewer connections, and a warning naming both and the fix")
    func lowered() {
        let lines = Mutex<[String]>([])
        let logger = ServerLogger(sink: { line in lines.withLock { $0.append(line) } })
        var configuration = ChimeService.Configuration(dataDirectory: "/nonexistent", printsBanner: false)
        configuration.connectionLimit = 10_000
        configuration.connectionLimitPerAddress = 9_000
        let limits = RunningService.fitConnectionLimits(configuration, openFiles: 512, logger: logger)
        let expected = HTTPServer.Configuration.connectionLimit(
            fittingDescriptors: 512 - RunningService.reservedDescriptors, asked: 10_000)
        #expect(limits.total == expected)
        #expect(limits.perAddress == expected)
        let warning = lines.withLock { $0.joined(separator: "\n") }
        #expect(warning.contains("holds \(expected) connections, not the 10000 of --max-connections"))
        #expect(warning.contains("LimitNOFILE="))
        #expect(warning.contains("openFilesLimit=512"))

        // Enough descriptors, or no limit: what was asked, and nothing said.
        lines.withLock { $0.removeAll() }
        for openFiles in [20_000, nil] {
            let unchanged = RunningService.fitConnectionLimits(configuration, openFiles: openFiles, logger: logger)
            #expect(unchanged.total == 10_000)
            #expect(unchanged.perAddress == 9_000)
        }
        #expect(lines.withLock { $0.isEmpty })
    }

    @Test("chime serve under a hard limit of 512 open files with --max-connections 10000: starts, warns, serves")
    func binaryUnderLowLimit() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit") else {
            Issue.record("prlimit (util-linux) is not installed")
            return
        }
        let node = ClusterTests.Node(
            "limited", database: nil, arguments: ["--max-connections", "10000", "--desktop", "off"],
            wrapper: ["/usr/bin/prlimit", "--nofile=512:512"])
        do {
            try await node.start()
        } catch {
            await node.stop()
            throw error
        }
        let health = try? await node.client(nil).get("/healthz")
        await node.stop()
        #expect(health?.status == 200)
        let served = HTTPServer.Configuration.connectionLimit(
            fittingDescriptors: 512 - RunningService.reservedDescriptors, asked: 10_000)
        #expect(node.log.contains("holds \(served) connections, not the 10000 of --max-connections"), "\(node.log)")
    }
}
