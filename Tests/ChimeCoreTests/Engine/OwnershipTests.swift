import Foundation
import TestThreads
import Testing

@testable import ChimeCore

/// The engine is the only owner of its state: its core is reached on the writer only (checked at
/// run time), and no adapter runs closures against the store or the core.
@Suite("The engine owns its state", .testThreads)
struct OwnershipTests {
    @Test("the writer's core used off the writer stops the program")
    func coreOffTheWriter() async {
        await #expect(processExitsWith: .failure) {
            let engine = NotificationEngine(store: MemoryStore())
            _ = engine.core.value.timeZone
        }
    }

    @Test("on the writer the core is there")
    func coreOnTheWriter() async throws {
        let engine = NotificationEngine(store: MemoryStore())
        let zone = try await engine.perform { $0.timeZone }
        #expect(zone == (try await engine.timeZone()))
    }

    /// Sources/ChimeServer and Sources/Chime (and the CLI and the desktop) reach the engine through
    /// its named operations only (`NotificationEngine+Adapters.swift` and the public API).
    @Test(
        "no adapter runs closures on the writer or touches the store",
        arguments: ["ChimeServer", "Chime", "ChimeCLI", "ChimeDesktop"])
    func adaptersUseNamedOperations(module: String) throws {
        let files = try SourceTree.swiftFiles(in: "Sources/\(module)")
        #expect(files.count > 3, "only \(files.count) sources found in Sources/\(module)")
        let forbidden = [
            "engine.perform", "engine.submit", ".perform {", ".perform({", "submit({", "EngineCore", "core.store",
            "$0.store",
        ]
        for file in files {
            for line in try SourceTree.lines(of: file) {
                // The desktop's own bus loop has a perform of its own (DesktopLoop), which is not the engine's.
                if line.text.contains("loop.perform") { continue }
                for pattern in forbidden where line.text.contains(pattern) {
                    Issue.record("\(line.place) uses \(pattern): \(line.text.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
    }
}
