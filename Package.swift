// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Chime",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Chime", targets: ["Chime"]),
        .library(name: "ChimeTesting", targets: ["ChimeTesting"]),
        .library(name: "ChimeCore", targets: ["ChimeCore"]),
        // For the Fuzz/ package (fuzz-jwt); apps use Chime, the service uses ChimeServer.
        .library(name: "ChimeCrypto", targets: ["ChimeCrypto"]),
        // nghttp2's module, for the Fuzz/ package's fuzz-http2 (which compiles the server's HTTP2Session.swift).
        .library(name: "CNGHTTP2", targets: ["CNGHTTP2"]),
        .library(name: "ChimeServer", targets: ["ChimeServer"]),
        .library(name: "ChimeDesktop", targets: ["ChimeDesktop"]),
        .executable(name: "chime", targets: ["chime"]),
        .executable(name: "alarm", targets: ["AlarmExample"]),
        .executable(name: "drinking-reminder", targets: ["DrinkingReminderExample"]),
        .executable(name: "show-me", targets: ["ShowMeExample"]),
        .executable(name: "organizer", targets: ["OrganizerExample"]),
        .executable(name: "chime-bench", targets: ["ChimeBenchmarks"]),
        .executable(name: "chime-bench-api", targets: ["APIBenchmarks"]),
    ],
    targets: [
        // C libraries from Debian, one system-library target each.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),

        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),

        // QR codes for sign-in links (a phone scans the one-time link). Debian's libqrencode instead of
        // a hand-written encoder (Reed–Solomon, masks, versions).
        .systemLibrary(
            name: "CQREncode",
            pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"])]
        ),
        .systemLibrary(
            name: "CSystemdBus",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),

        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),

        // HTTP client: libcurl (TCP, Unix sockets, TLS, streaming) instead of hand-written HTTP.
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),

        // Cryptography: OpenSSL 3's libcrypto through its EVP interface (P-256, ECDH, HKDF, AES-GCM).
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),

        // HTTP/2 (framing, HPACK, flow control, the protocol's checks) for the server: nghttp2.
        .systemLibrary(
            name: "CNGHTTP2",
            pkgConfig: "libnghttp2",
            providers: [.apt(["libnghttp2-dev"])]
        ),

        // TLS for the server (ALPN: HTTP/2 or HTTP/1.1): OpenSSL 3's libssl.
        .systemLibrary(
            name: "CLibSSL",
            pkgConfig: "libssl",
            providers: [.apt(["libssl-dev"])]
        ),

        // Values, validation, next-fire math, the engine, store/clock protocols, codecs. Foundation only.
        .target(name: "ChimeCore"),
        // P-256 keys, ES256 JWTs, HKDF, AES-128-GCM and Web Push encryption, wrapping libcrypto.
        .target(name: "ChimeCrypto", dependencies: ["ChimeCore", "CLibCrypto"]),
        // The embedded SQLite store.
        .target(name: "ChimeSQLite", dependencies: ["ChimeCore", "CSQLite"]),
        // The shared store: PostgreSQL through libpq, for several `chime serve` nodes.
        .target(name: "ChimePostgres", dependencies: ["ChimeCore", "CLibPQ"]),
        // The one HTTP client to `chime serve`, for the CLI, the app library and the tests: libcurl.
        .target(name: "ChimeHTTP", dependencies: ["ChimeCore", "CCurl"]),
        // Apple's UserNotifications API, as thin adapters over ChimeCore.
        .target(name: "Chime", dependencies: ["ChimeCore", "ChimeSQLite", "ChimeDesktop", "ChimeHTTP"]),
        // Desktop pop-ups: the freedesktop notification server on the session bus, through sd-bus.
        .target(name: "ChimeDesktop", dependencies: ["ChimeCore", "CSystemdBus"]),
        // The deterministic simulator.
        .target(name: "ChimeTesting", dependencies: ["Chime", "ChimeCore"]),

        // The notification center as a service: HTTP API, APNs-compatible endpoint, events, web center.
        .target(
            name: "ChimeServer",
            dependencies: [
                "ChimeCore", "ChimeCrypto", "ChimeHTTP", "ChimeSQLite", "ChimePostgres", "ChimeDesktop", "CMicroHTTPD",
                "CNGHTTP2", "CLibSSL", "CQREncode",
            ]),
        // The command-line tool and daemon.
        .target(
            name: "ChimeCLI",
            dependencies: ["ChimeServer", "ChimeCore", "ChimeCrypto", "ChimeSQLite", "Chime", "ChimeHTTP"],
            plugins: ["ChimeBuildInfo"]),
        // Stamps the CLI with the git commit it was built from (`chime --version`).
        .plugin(name: "ChimeBuildInfo", capability: .buildTool()),
        .executableTarget(name: "chime", dependencies: ["ChimeCLI"]),

        // The four tutorial apps: app logic in Swift 5 language mode (as app code usually is),
        // and a terminal front end each.
        .target(
            name: "ExampleApps",
            dependencies: ["Chime"],
            path: "Examples/ExampleApps",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .executableTarget(name: "AlarmExample", dependencies: ["ExampleApps", "Chime"], path: "Examples/alarm"),
        .executableTarget(
            name: "DrinkingReminderExample", dependencies: ["ExampleApps", "Chime"], path: "Examples/drinking-reminder"),
        .executableTarget(name: "ShowMeExample", dependencies: ["ExampleApps", "Chime"], path: "Examples/show-me"),
        .executableTarget(
            name: "OrganizerExample", dependencies: ["ExampleApps", "Chime"], path: "Examples/organizer"),

        // What both benchmarks wait with (a deadline on every wait for deliveries).
        .target(name: "BenchmarkSupport", dependencies: ["ChimeCore"], path: "Benchmarks/Support"),
        .executableTarget(
            name: "ChimeBenchmarks",
            dependencies: ["BenchmarkSupport", "ChimeCore", "ChimeSQLite"],
            path: "Benchmarks/ChimeBenchmarks"
        ),
        // Chime as an app uses it (UNUserNotificationCenter and its delegate), and the cost of a delivery.
        .executableTarget(
            name: "APIBenchmarks",
            dependencies: ["BenchmarkSupport", "Chime", "ChimeCore", "ChimeHTTP", "ChimeSQLite", "ChimeServer"],
            path: "Benchmarks/APIBenchmarks"
        ),

        // The threads test bodies run on instead of Swift's two-thread cooperative pool (every suite carries `.testThreads`).
        .target(name: "TestThreads", path: "Tests/Support/TestThreads"),
        .testTarget(name: "ChimeCoreTests", dependencies: ["TestThreads", "ChimeCore"]),
        // Published vectors (RFC 7515, 5869, 8291, the GCM spec) and Python's cryptography, PyJWT and http_ece
        // (Tests/Support/CryptoInterop, a virtual environment scripts/crypto-test-env.sh makes).
        .testTarget(
            name: "ChimeCryptoTests", dependencies: ["TestThreads", "ChimeCrypto", "ChimeCore", "CryptoInterop"]),
        // Runs Tests/Support/CryptoInterop/interop.py (cryptography, PyJWT, http_ece) for the crypto and provider-token tests.
        .target(
            name: "CryptoInterop", dependencies: ["ChimeCore"], path: "Tests/Support/CryptoInterop",
            exclude: ["interop.py", "push_service.py", "requirements.txt"]),
        // Starts a PostgreSQL server of its own (Debian's postgresql) for tests and benchmarks.
        .target(name: "PostgresTestServer", dependencies: ["ChimeCore"], path: "Tests/Support/PostgresTestServer"),
        // Killed with SIGKILL by ChimeSQLiteTests' durability test.
        .executableTarget(
            name: "ChimeStoreCrasher", dependencies: ["ChimeSQLite", "ChimeCore"], path: "Tests/Support/StoreCrasher"),
        // What the store tests share: the three stores (StoreKind), temporary directories, sample values.
        .target(
            name: "StoreTestSupport",
            dependencies: ["ChimeCore", "ChimeSQLite", "ChimePostgres", "PostgresTestServer"],
            path: "Tests/Support/StoreTestSupport"),
        // One suite, three stores: the in-memory reference, a SQLite file and PostgreSQL answer alike,
        // the encoded fast paths as the plain ones.
        .testTarget(
            name: "StoreConformanceTests",
            dependencies: [
                "TestThreads", "StoreTestSupport", "ChimeCore", "ChimeSQLite", "ChimePostgres", "PostgresTestServer",
            ]),
        .testTarget(
            name: "ChimeSQLiteTests",
            dependencies: [
                "TestThreads", "StoreTestSupport", "ChimeSQLite", "ChimePostgres", "PostgresTestServer", "ChimeCore",
                "ChimeTesting",
                "ChimeStoreCrasher", "ChimeEngineCrasher",
            ],
            exclude: ["Fixtures"]),
        // Killed with SIGKILL while firing and while answering, by ChimeSQLiteTests' engine crash tests.
        .executableTarget(
            name: "ChimeEngineCrasher", dependencies: ["Chime", "ChimeCore", "ChimeSQLite", "ChimeTesting"],
            path: "Tests/Support/EngineCrasher"),
        // The PostgreSQL store on a server of the tests' own: migrations, claims, commit-order events, the feed.
        .testTarget(
            name: "ChimePostgresTests",
            dependencies: ["TestThreads", "ChimePostgres", "ChimeCore", "PostgresTestServer"]),
        .testTarget(name: "ChimeTests", dependencies: ["TestThreads", "Chime", "ChimeTesting"]),
        .testTarget(name: "ChimeTestingTests", dependencies: ["TestThreads", "ChimeTesting", "Chime"]),
        .testTarget(name: "ExamplesTests", dependencies: ["TestThreads", "ExampleApps", "ChimeTesting", "Chime"]),
        // Started by the service in ChimeServerTests' background-launch tests, as an app would be.
        .executableTarget(
            name: "ChimeLaunchedApp", dependencies: ["Chime", "ChimeCore"], path: "Tests/Support/LaunchedApp"),
        .testTarget(
            name: "ChimeServerTests",
            dependencies: [
                "TestThreads", "ChimeServer", "ChimeCore", "ChimeSQLite", "Chime", "ChimeHTTP", "ChimeLaunchedApp",
                "PostgresTestServer", "chime",
                "ChimeTesting", "ChimeCrypto", "CryptoInterop",
            ]),
        // Against real notification servers the tests start: dbus-daemon, Xvfb, dunst, and a small
        // inline-reply server of their own (Tests/ChimeDesktopTests/Servers).
        .testTarget(
            name: "ChimeDesktopTests",
            dependencies: [
                "TestThreads", "ChimeDesktop", "ChimeCore", "ChimeSQLite", "ChimeServer", "Chime",
                "DrinkingReminderExample",
            ],
            exclude: ["Servers"]),
        // The HTTP client against a real HTTPServer and `chime serve`, over TCP and a Unix socket.
        .testTarget(name: "ChimeHTTPTests", dependencies: ["TestThreads", "ChimeHTTP", "ChimeServer", "ChimeCore"]),
        .testTarget(
            name: "ChimeCLITests",
            dependencies: ["TestThreads", "ChimeCLI", "ChimeHTTP", "ChimeServer", "ChimeCore", "ChimeSQLite", "chime"]),
    ]
)

// Strict settings for every Swift target (the example apps keep their Swift 5 mode on purpose).
for target in package.targets where target.type != .system && target.type != .plugin {
    var settings = target.swiftSettings ?? []
    if !settings.contains(where: { "\($0)".contains("swiftLanguageMode") }) {
        settings.append(.swiftLanguageMode(.v6))
    }
    target.swiftSettings = settings
}
