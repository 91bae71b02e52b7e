import ChimeCore
import ChimeSQLite
import Foundation
import StoreTestSupport
import TestThreads
import Testing

/// The engine on SQLite under kill -9: occurrences fire exactly once across restarts, and an
/// answer is handed over again until the app's completion handler has run, and never after.
@Suite("Engine: exactly once across kill -9", .testThreads)
struct EngineCrashTests {
    static func crasher() throws -> URL {
        let candidates =
            [Bundle.main.executableURL, URL(fileURLWithPath: CommandLine.arguments[0])]
            .compactMap { $0?.deletingLastPathComponent() } + [Bundle.main.bundleURL.deletingLastPathComponent()]
        for directory in candidates {
            let url = directory.appendingPathComponent("ChimeEngineCrasher")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw ChimeError(
            .notFound, "ChimeEngineCrasher was not found next to the test bundle in \(candidates.map(\.path))")
    }

    /// Starts the helper; returns the process and its output pipe.
    static func start(_ arguments: [String]) throws -> (ChildProcess, Pipe) {
        let output = Pipe()
        let process = try ChildProcess(
            executable: crasher().path, arguments: arguments, stdout: .pipe(output), stderr: .null)
        return (process, output)
    }

    /// Waits (at most 60 s) until the helper has ended and been reaped; how it ended.
    static func end(_ process: ChildProcess) throws -> ChildProcess.Termination {
        guard let end = process.wait(timeout: 60) else {
            process.signal(SIGKILL)
            process.wait(timeout: 10)
            throw HelperTimeout(description: "ChimeEngineCrasher ran longer than 60 s")
        }
        return end
    }

    /// Runs the helper to its end, off the concurrency pool; what it printed.
    static func runToEnd(_ arguments: [String]) async throws -> String {
        try await OffPool.run("test.crash") {
            let (process, output) = try start(arguments)
            _ = try end(process)
            return String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }
    }

    /// Runs the helper with `arguments` again and again (at most 80 times), each run killed once it
    /// has printed `marker` 1 to `most` times — at a point of its work, whatever the machine's speed,
    /// rather than after a time — until a run prints "done"; then once more to its end if none did.
    /// - Returns: whether a run finished, and how many were killed.
    static func killRepeatedly(_ arguments: [String], marker: String, most: Int = 24) async throws -> (
        finished: Bool, kills: Int
    ) {
        var generator = SystemRandomNumberGenerator()
        var kills = 0
        var finished = false
        for _ in 0..<80 where !finished {
            let wanted = Int.random(in: 1...most, using: &generator)
            // Off the concurrency pool: a run's start and waits take a thread for seconds.
            let (killed, done) = try await OffPool.run("test.crash") { () throws -> (Bool, Bool) in
                let (process, output) = try Self.start(arguments)
                var seen = ""
                let deadline = Date().addingTimeInterval(60)
                while seen.components(separatedBy: marker).count - 1 < wanted && !seen.contains("done")
                    && Date() < deadline
                {
                    let chunk = output.fileHandleForReading.available(within: deadline.timeIntervalSinceNow)
                    if chunk.isEmpty { break }  // its end, or nothing for 60 s
                    seen += String(decoding: chunk, as: UTF8.self)
                }
                var killed = false
                if process.isRunning {
                    process.signal(SIGKILL)
                    killed = true
                }
                let end = try Self.end(process)
                seen += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                return (killed, end.succeeded && seen.contains("done"))
            }
            if killed { kills += 1 }
            finished = done
        }
        if !finished {
            finished = try await Self.runToEnd(arguments).contains("done")
        }
        return (finished, kills)
    }

    @Test("notifications due every 3 ms, the firing process killed again and again: each delivered exactly once")
    func firingUnderCrashes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("fire.sqlite")
        let count = 400
        // Killed once it has fired 1 to 24 notifications (1 to 3 transactions).
        let (finished, kills) = try await Self.killRepeatedly(["fire", path, String(count)], marker: "fired")
        #expect(finished)
        #expect(kills >= 5, "the firing process was killed only \(kills) times")

        let store = try SQLiteStore(path: path)
        defer { store.close() }
        let deliveries = try store.events(after: 0, app: "com.example.fire", limit: 100_000).compactMap(\.delivery)
        let identifiers = deliveries.map { $0.notification.request.identifier }
        #expect(identifiers.count == count, "\(identifiers.count) deliveries for \(count) occurrences")
        #expect(Set(identifiers).count == count, "an occurrence was delivered twice")
        #expect(try store.pendingCount(app: nil) == 0)
        #expect(try store.deliveredCount(app: "com.example.fire") == count)
        // Each delivery is dated when it was due, even when it fired after a restart.
        for delivery in deliveries {
            let index = Double(delivery.notification.request.identifier.split(separator: "-").last!)!
            #expect(delivery.notification.request.trigger == .timeInterval(0.05 + index * 0.003, repeats: false))
        }
    }

    @Test(
        "escalating notifications alerted every 50 ms for 8 s, the process killed again and again: no step alerted twice, receipts agree"
    )
    func escalationUnderCrashes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("escalate.sqlite")
        let count = 20
        // The window runs on the real clock (8 s from the first run): killed after 1 to 8 alerts,
        // so that several runs fall inside it however slowly the machine starts them.
        let (finished, kills) = try await Self.killRepeatedly(
            ["escalate", path, String(count)], marker: "alerted", most: 8)
        #expect(finished)
        #expect(kills >= 2, "the escalating process was killed only \(kills) times")

        let store = try SQLiteStore(path: path)
        defer { store.close() }
        let app = "com.example.escalate"
        var byIdentifier: [String: [Int]] = [:]
        for event in try store.events(after: 0, app: app, limit: 1_000_000) {
            if case .realerted(let delivery) = event.payload {
                byIdentifier[delivery.notification.request.identifier, default: []].append(delivery.alert)
            }
        }
        // Each kill came after at least one alert the process announced (how many more fit in the
        // window depends on the machine's load, so no more is asked).
        let alerts = byIdentifier.values.reduce(0) { $0 + $1.count }
        #expect(alerts >= kills, "\(alerts) alerts logged for \(kills) kills, each after an alert")
        for index in 0..<count {
            let identifier = "alarm-\(index)"
            let receipt = try #require(try store.receipt(app: app, identifier: identifier))
            let numbers = byIdentifier[identifier] ?? []
            // Each step once: the alert numbers 2, 3, 4 … in order, none twice, and the receipt counted each.
            #expect(
                numbers == Array(stride(from: 2, through: receipt.alerts, by: 1)),
                "\(identifier): \(numbers) for \(receipt.alerts) alerts")
            #expect(receipt.expired && receipt.nextAlertAt == nil)
        }
    }

    @Test("an answer is handed over again after the app was killed before completing, once, and never after")
    func outboxAcrossKill() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("outbox.sqlite")

        let seen = try await OffPool.run("test.crash") { () throws -> String in
            let (first, firstOutput) = try Self.start(["outbox", path, "answer"])
            var seen = Data()
            let deadline = Date().addingTimeInterval(60)
            while !String(decoding: seen, as: UTF8.self).contains("received") && Date() < deadline {
                let chunk = firstOutput.fileHandleForReading.available(within: deadline.timeIntervalSinceNow)
                if chunk.isEmpty { break }  // its end, or nothing for 60 s
                seen += chunk
            }
            first.signal(SIGKILL)
            _ = try Self.end(first)
            return String(decoding: seen, as: UTF8.self)
        }
        #expect(seen.contains("received drink com.apple.UNNotificationDefaultActionIdentifier"))

        let resumed = try await Self.runToEnd(["outbox", path, "resume"])
        #expect(resumed.components(separatedBy: "received drink").count - 1 == 1, "handed over \(resumed)")
        #expect(resumed.contains("finished"))

        let again = try await Self.runToEnd(["outbox", path, "again"])
        #expect(!again.contains("received"), "handed over after it was handled: \(again)")
        #expect(again.contains("finished"))
    }
}
