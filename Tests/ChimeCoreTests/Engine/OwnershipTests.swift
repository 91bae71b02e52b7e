@testable import ChimeCore
import Foundation
import Testing

/// The engine is the only owner of its state: its core is reached on the writer only (checked at
/// run time), and no adapter runs closures against the store or the core.
@Suite("The engine owns its state")
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
    @Test("no adapter runs closures on the writer or touches the store", arguments: ["ChimeServer", "Chime", "ChimeCLI", "ChimeDesktop"])
    func adaptersUseNamedOperations(module: String) throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources/\(module)")
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        #expect(files.count > 3, "no sources found at \(sources.path)")
        let forbidden = ["engine.perform", "engine.submit", ".perform {", ".perform({", "submit({", "EngineCore", "core.store", "$0.store"]
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                // The desktop's own bus loop has a perform of its own (DesktopLoop), which is not the engine's.
                if line.contains("loop.perform") { continue }
                for pattern in forbidden where line.contains(pattern) {
                    Issue.record("\(file.lastPathComponent):\(number + 1) uses \(pattern): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
    }
}
