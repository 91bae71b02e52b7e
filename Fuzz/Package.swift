// swift-tools-version: 6.1
// libFuzzer targets for Chime's decoders. A separate package, so the main build never sees the
// fuzzer flags. Build and run them with `make fuzz` (scripts/fuzz.sh); see Fuzz/README.md.
import Foundation
import PackageDescription

// A path dependency's identity is the name of its directory, whatever the checkout is called.
let chime = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let fuzzTargetSettings: [SwiftSetting] = [.swiftLanguageMode(.v6)]
let fuzzTargetDependencies: [Target.Dependency] = [.product(name: "ChimeCore", package: chime), "FuzzSupport"]

/// One libFuzzer executable: `fuzz-<name>` from `Sources/<directory>`, for scripts/fuzz.sh.
func fuzzTarget(_ name: String, _ directory: String) -> Target {
    .executableTarget(
        name: "fuzz-" + name, dependencies: fuzzTargetDependencies, path: "Sources/" + directory,
        swiftSettings: fuzzTargetSettings)
}

let package = Package(
    name: "ChimeFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "..")],
    targets: [
        // Declares LLVMFuzzerRunDriver, which FuzzSupport.runFuzzer calls.
        .target(name: "CFuzzerDriver"),
        // The driver call and the helpers every target uses.
        .target(name: "FuzzSupport", dependencies: ["CFuzzerDriver"], swiftSettings: fuzzTargetSettings),
        // APNsPayload.decode: push payload bytes (POST /3/device/{token}, `chime push FILE.apns`) → notification content.
        fuzzTarget("apns-payload", "FuzzAPNsPayload"),
        // JSONValue.parse + JSONMapping.requests / .categories: the bodies of POST …/requests and PUT …/categories
        // (`chime categories set FILE.json` sends the file as it is).
        fuzzTarget("json-request", "FuzzJSONRequest"),
        // SettingsFile.toml / .json: `chime serve --config FILE`.
        fuzzTarget("config-file", "FuzzConfigFile"),
        // PercentEncoding: path segments, query strings, APIRoute.path.
        fuzzTarget("percent-encoding", "FuzzPercentEncoding"),
        // LinkHeader: the next page of a list.
        fuzzTarget("link-header", "FuzzLinkHeader"),
        // ServerSentEventParser (the clients' event streams) and ServerSentEvents.lastEventID (Last-Event-ID).
        fuzzTarget("event-stream", "FuzzEventStream"),
        // ParsedArguments.parse, compiled from the CLI's own Arguments.swift (a symlink; it needs only ChimeCore).
        fuzzTarget("arguments", "FuzzArguments"),
        // SendHeaders: POST /v1/apps/{app}/send, its headers (Delay, At, Interruption-Level, …) and body.
        fuzzTarget("send-headers", "FuzzSendHeaders"),
        // JSONWebToken (ChimeCrypto) and ProviderTokens, compiled from the server's own ProviderTokens.swift (a symlink;
        // it needs only ChimeCore and ChimeCrypto): APNs provider tokens, VAPID JWTs.
        .executableTarget(
            name: "fuzz-jwt", dependencies: fuzzTargetDependencies + [.product(name: "ChimeCrypto", package: chime)],
            path: "Sources/FuzzJWT", swiftSettings: fuzzTargetSettings),
        // RecurrenceRule / RecurrenceSchedule: RFC 5545 RRULE text and its next dates.
        fuzzTarget("rrule", "FuzzRecurrenceRule"),
        // WebPushRegistration.decode (POST /v1/web-push/subscriptions) and the store's record of a subscription.
        fuzzTarget("web-push-subscription", "FuzzWebPushSubscription"),
        // APNsRequestHeaders: the apns-* headers of POST /3/device/{token}.
        fuzzTarget("apns-headers", "FuzzAPNsHeaders"),
        // HTTP2Session, compiled from the server's own HTTP2Session.swift, HTTPRequest.swift, RequestChecks.swift and FieldText.swift (symlinks;
        // they need only ChimeCore and nghttp2): a server session driven in memory by a client's frames.
        .executableTarget(
            name: "fuzz-http2", dependencies: fuzzTargetDependencies + [.product(name: "CNGHTTP2", package: chime)],
            path: "Sources/FuzzHTTP2",
            swiftSettings: fuzzTargetSettings),
        // WebPushEncryption (ChimeCrypto, OpenSSL) with a subscriber's keys: p256dh, auth, padding, record size.
        .executableTarget(
            name: "fuzz-web-push-keys",
            dependencies: fuzzTargetDependencies + [.product(name: "ChimeCrypto", package: chime)],
            path: "Sources/FuzzWebPushKeys", swiftSettings: fuzzTargetSettings),
    ]
)
