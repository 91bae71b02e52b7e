import Foundation
import Synchronization

/// A new directory under the temporary directory for a test's files, removed with everything in it
/// when the test process exits — so a test that hands its file to the code under test (an
/// attachment moved into a store, a SQLite file with its `-wal`, `-shm` and `-verified` companions)
/// leaves nothing behind in `/tmp`, run after run.
///
/// ```swift
/// let store = scratchDirectory("chime-outbox").appendingPathComponent("store.sqlite").path
/// ```
public func scratchDirectory(_ prefix: String) -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    ScratchDirectories.register(directory)
    return directory
}

/// The directories ``scratchDirectory(_:)`` made, removed at exit.
private enum ScratchDirectories {
    static let made = Mutex<[URL]>([])
    static let installed = Atomic<Bool>(false)

    static func register(_ directory: URL) {
        made.withLock { $0.append(directory) }
        if installed.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged {
            atexit { ScratchDirectories.removeAll() }
        }
    }

    static func removeAll() {
        for directory in made.withLock({ $0 }) { try? FileManager.default.removeItem(at: directory) }
    }
}
