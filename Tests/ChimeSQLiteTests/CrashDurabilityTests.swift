import ChimeCore
import ChimeSQLite
import Foundation
import StoreTestSupport
import TestThreads
import Testing

/// Kill -9 durability: a child process (`ChimeStoreCrasher`, Tests/Support/StoreCrasher) adds
/// requests one transaction at a time and prints each identifier after its commit; the test kills
/// it with SIGKILL at a random moment, reopens the store and checks that every acknowledged
/// request is there, intact.
@Suite("SQLiteStore: survives kill -9", .testThreads)
struct CrashDurabilityTests {
    /// The helper is built next to the test bundle (`.build/debug/ChimeStoreCrasher`).
    static func crasherURL() throws -> URL {
        let candidates =
            [Bundle.main.executableURL, URL(fileURLWithPath: CommandLine.arguments[0])]
            .compactMap { $0?.deletingLastPathComponent() } + [Bundle.main.bundleURL.deletingLastPathComponent()]
        for directory in candidates {
            let url = directory.appendingPathComponent("ChimeStoreCrasher")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw ChimeError(
            .notFound,
            "ChimeStoreCrasher was not found next to the test bundle (looked in \(candidates.map(\.path))); build it with `swift build --build-tests`"
        )
    }

    @Test("every acknowledged request survives SIGKILL at random moments (20 kills)")
    func killNine() async throws {
        let crasher = try Self.crasherURL()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("crash.sqlite")
        var generator = SystemRandomNumberGenerator()
        var totalAcknowledged = 0

        for run in 0..<20 {
            let delay = Double.random(in: 0.03...0.2, using: &generator)
            // The process's life, its waits and the kill on a thread of their own: they would hold
            // one of the concurrency pool's two threads for seconds, and stall every other test.
            let (end, received, stderr) = try await OffPool.run("test.crash") {
                () throws -> (ChildProcess.Termination, Data, String) in
                let output = Pipe()
                let errors = Pipe()
                let process = try ChildProcess(
                    executable: crasher.path, arguments: [path, "run\(run)"], stdout: .pipe(output),
                    stderr: .pipe(errors))
                // Wait for the first acknowledgement, so the kill lands while it is writing.
                var received = output.fileHandleForReading.available(within: 30)
                Thread.sleep(forTimeInterval: delay)
                process.signal(SIGKILL)
                guard let end = process.wait(timeout: 30) else {
                    throw HelperTimeout(description: "run \(run) outlived SIGKILL by 30 s")
                }
                received += output.fileHandleForReading.readDataToEndOfFile()
                return (
                    end, received, String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                )
            }
            #expect(end == .signaled(SIGKILL), "run \(run) ended by itself (\(end)): \(stderr)")

            // Only complete lines were acknowledged; a line cut by the kill does not count.
            var text = String(decoding: received, as: UTF8.self)
            if !text.hasSuffix("\n"), let cut = text.lastIndex(of: "\n") {
                text = String(text[...cut])
            } else if !text.hasSuffix("\n") {
                text = ""
            }
            let acknowledged = text.split(separator: "\n").map(String.init)
            totalAcknowledged += acknowledged.count
            #expect(!acknowledged.isEmpty, "run \(run) acknowledged nothing: \(stderr)")

            let store = try SQLiteStore(path: path)
            for identifier in acknowledged {
                let found = try #require(
                    try store.pending(app: "com.example.crash", identifier: identifier),
                    "acknowledged \(identifier) is missing after kill -9 (run \(run))")
                #expect(found.request.content.title == "Crash \(identifier)")
                #expect(found.request.content.userInfo["id"] == .string(identifier))
                #expect(found.request.content.userInfo["blob"] == .data(Data(identifier.utf8)))
            }
            // Sequences stay unique across crashes.
            let all = try store.pending(app: "com.example.crash")
            #expect(Set(all.map(\.sequence)).count == all.count)
            store.close()
        }
        #expect(totalAcknowledged >= 20)
    }
}
