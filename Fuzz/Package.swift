// swift-tools-version: 6.1
// libFuzzer targets for Chime's decoders. A separate package, so the main build never sees the
// fuzzer flags. Build and run them with `make fuzz` (scripts/fuzz.sh); see Fuzz/README.md.
import Foundation
import PackageDescription

// A path dependency's identity is the name of its directory, whatever the checkout is called.
let chime = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let fuzzTargetSettings: [SwiftSetting] = [.swiftLanguageMode(.v6)]
let fuzzTargetDependencies: [Target.Dependency] = [.product(name: "ChimeCore", package: chime), "CFuzzerDriver"]

let package = Package(
    name: "ChimeFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "..")],
    targets: [
        // Declares LLVMFuzzerRunDriver, which each target's main.swift calls.
        .target(name: "CFuzzerDriver"),
        // APNsPayload.decode: push payload bytes → notification content.
        .executableTarget(
            name: "fuzz-apns-payload", dependencies: fuzzTargetDependencies,
            path: "Sources/FuzzAPNsPayload", swiftSettings: fuzzTargetSettings),
        // JSONValue.parse + JSONMapping.requests / .categories: the bodies of POST …/requests and PUT …/categories.
        .executableTarget(
            name: "fuzz-json-request", dependencies: fuzzTargetDependencies,
            path: "Sources/FuzzJSONRequest", swiftSettings: fuzzTargetSettings),
    ]
)
