import ChimeCore
import Foundation
import StoreTestSupport
import TestThreads
import Testing

@testable import ChimeSQLite

/// The write-ahead log is copied into the file and restarted by the background checkpointer, with
/// no checkpoint inside a commit: it stays bounded while writes go on.
@Suite("SQLiteStore: the write-ahead log stays bounded", .testThreads)
struct WALCheckpointerTests {
    static func walSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? NSNumber)?.intValue ?? 0
    }

    @Test("bursts of writes much larger than the restart threshold reuse the log from its start")
    func bounded() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        // 128 frames of 4 KiB: a restart is due after about half a megabyte.
        let store = try SQLiteStore(path: path, durability: .normal, schema: .current, checkpointRestartFrames: 128)
        defer { store.close() }
        var written = 0
        var largest = 0
        for burst in 0..<12 {
            for batch in 0..<20 {
                try store.transaction {
                    for index in 0..<20 {
                        let identifier = "r-\(burst)-\(batch)-\(index)"
                        var record = pending(identifier, fire: Double(written))
                        record.request.content.body = String(repeating: "x", count: 900)
                        try store.putPending(record, app: "com.example.wal")
                        written += 1
                    }
                }
            }
            largest = max(largest, Self.walSize(path))
            // The checkpointer's next round copies the burst and restarts the log: waited for, not slept for.
            #expect(store.waitForCheckpoint(), "no checkpoint round within 60 s")
        }
        #expect(try store.pendingCount(app: nil) == written)
        // About 11 MB were written in all; a log that never restarted would hold all of it.
        #expect(largest < 4 * 1024 * 1024, "the log grew to \(largest) bytes")
    }
}
