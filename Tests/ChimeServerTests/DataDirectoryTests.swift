import ChimeCore
import Foundation
import Synchronization
import TestThreads
import Testing

@testable import ChimeServer

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Data directory", .testThreads)
struct DataDirectoryTests {
    func configuration(_ directory: String) -> ChimeService.Configuration {
        ChimeService.Configuration(
            dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0), printsBanner: false)
    }

    @Test("the store and the owner token are the user's alone; a directory others can read is warned about")
    func permissions() async throws {
        let directory = ServiceHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let lines = Mutex<[String]>([])
        let service = try await RunningService.start(
            configuration: configuration(directory),
            logger: ServerLogger(sink: { line in lines.withLock { $0.append(line) } }))
        await service.stop()
        for name in ["chime.sqlite", "owner-token"] {
            var info = stat()
            #expect(stat(directory + "/" + name, &info) == 0)
            #expect(info.st_mode & 0o077 == 0, "\(name) is \(String(info.st_mode & 0o777, radix: 8))")
        }
        #expect(lines.withLock { $0.contains { $0.contains("WARNING") && $0.contains("chmod 700") } })
    }

    @Test("an owner token others can read is refused, naming the file and the fix")
    func looseOwnerToken() async throws {
        let directory = ServiceHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        await #expect(throws: Never.self) {
            let service = try await RunningService.start(configuration: configuration(directory), logger: .silent)
            await service.stop()
        }
        chmod(directory + "/owner-token", 0o644)
        do {
            let service = try await RunningService.start(configuration: configuration(directory), logger: .silent)
            await service.stop()
            Issue.record("started with an owner token others can read")
        } catch let error as ServerError {
            #expect(error.message.contains(directory + "/owner-token"))
            #expect(error.message.contains("chmod 600"))
        }
    }

    @Test("an owner token that cannot be read says so, not \"File exists\"")
    func unreadableOwnerToken() async throws {
        let directory = ServiceHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = directory + "/owner-token"
        #expect(
            FileManager.default.createFile(
                atPath: path, contents: Data([0xFF, 0xFE, 0x00, 0xC3]), attributes: [.posixPermissions: 0o600]))
        do {
            let service = try await RunningService.start(configuration: configuration(directory), logger: .silent)
            await service.stop()
            Issue.record("started with a damaged owner token")
        } catch let error as ServerError {
            #expect(!error.message.contains("File exists"), "\(error.message)")
            #expect(error.message.contains(path), "\(error.message)")
        }
    }

    @Test("a full disk is answered 507 with a message saying so, not a bare 500")
    func fullDisk() {
        let error = APIError.from(ChimeError(.storageFull, "the Chime store at /x cannot be written: the disk is full"))
        #expect(error.status == 507)
        #expect(error.code == "insufficientStorage")
        #expect(error.message.contains("disk is full"))
    }
}
