// swift-tools-version: 6.1
// App code and its tests as an app developer writes them, outside the Chime package: Chime by
// path, the Swift 5 language mode (as most iOS app code still is), Swift Testing and XCTest.
// `make test` builds it once and runs `swift test` 20 times in a row: the suites run in parallel,
// each test with its own simulator.
import PackageDescription

let package = Package(
    name: "ChimeExternalApps",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Chime", path: "../..")],
    targets: [
        // The alarm, the drinking reminder, "Show me", a rich-push service extension, place
        // reminders and an inbox badge: UIKit left out, `import UserNotifications` made `import Chime`.
        .target(name: "TutorialApps", dependencies: [.product(name: "Chime", package: "Chime")]),
        // OrganizerPlus, in a module of its own: its `Task` type shadows Swift's, as in the tutorial.
        .target(name: "OrganizerPlus", dependencies: [.product(name: "Chime", package: "Chime")]),
        .testTarget(
            name: "TutorialAppsTests",
            dependencies: [
                "TutorialApps", .product(name: "Chime", package: "Chime"),
                .product(name: "ChimeTesting", package: "Chime"),
            ]),
        .testTarget(
            name: "OrganizerPlusTests",
            dependencies: [
                "OrganizerPlus", .product(name: "Chime", package: "Chime"),
                .product(name: "ChimeTesting", package: "Chime"),
            ]),
    ],
    swiftLanguageModes: [.v5]
)
