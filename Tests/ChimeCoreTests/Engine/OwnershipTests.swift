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
    /// its named operations only (`NotificationEngine+Adapters.swift` and the public API): no
    /// closures on the writer, and no call of a store's operations (`store.insertValue(…)`, any
    /// function of `NotificationStore` or `SharedNotificationStore`) on anything named a store.
    @Test(
        "no adapter runs closures on the writer or touches the store",
        arguments: ["ChimeServer", "Chime", "ChimeCLI", "ChimeDesktop"])
    func adaptersUseNamedOperations(module: String) throws {
        let files = try SourceTree.swiftFiles(in: "Sources/\(module)")
        #expect(files.count > 3, "only \(files.count) sources found in Sources/\(module)")
        let storeCalls = try Self.storeOperations().flatMap { name in
            ["store.", "store?.", "store!.", "$0."].map { $0 + name + "(" }
        }
        let forbidden =
            [
                "engine.perform", "engine.submit", ".perform {", ".perform({", "submit({", "EngineCore", "core.store",
                "$0.store",
            ] + storeCalls
        for file in files {
            for line in try SourceTree.codeLines(of: file) {
                // The desktop's own bus loop has a perform of its own (DesktopLoop), which is not the engine's.
                if line.text.contains("loop.perform") { continue }
                // Store names end in `store` (`store`, `sharedStore`, `opened.store`): compared in lower case.
                let text = line.text.lowercased()
                for pattern in forbidden where text.contains(pattern.lowercased()) {
                    Issue.record("\(line.place) uses \(pattern): \(line.text.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
    }

    @Test("the store's operations are read from its protocols")
    func storeOperationsFound() throws {
        let names = try Self.storeOperations()
        for name in ["insertValue", "setValue", "value", "putApp", "pending", "events", "startFeed"] {
            #expect(names.contains(name), "\(name) is not among the store's operations read: \(names)")
        }
    }

    /// The names of the functions `NotificationStore` and `SharedNotificationStore` declare, read
    /// from their sources (so a new store operation is covered without changing this test).
    static func storeOperations() throws -> [String] {
        var names: Set<String> = []
        for (file, protocolName) in [
            ("NotificationStore.swift", "NotificationStore"),
            ("SharedNotificationStore.swift", "SharedNotificationStore"),
        ] {
            let url = SourceTree.root.appendingPathComponent("Sources/ChimeCore/Store/\(file)")
            var inside = false
            for line in try SourceTree.codeLines(of: url) {
                if line.text.hasPrefix("public protocol \(protocolName):") {
                    inside = true
                } else if inside, line.text.hasPrefix("}") {
                    break
                } else if inside, let range = line.text.range(of: "func ") {
                    names.insert(String(line.text[range.upperBound...].prefix { $0.isLetter || $0.isNumber }))
                }
            }
        }
        return names.sorted()
    }
}
