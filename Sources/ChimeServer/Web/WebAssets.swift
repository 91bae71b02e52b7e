import ChimeCrypto
import Foundation

/// The web notification center's files — plain HTML, CSS and JavaScript kept in `Web/` and
/// embedded in the binary by `scripts/generate-web-assets.sh` (no build step, no CDN).
///
/// Set `CHIME_WEB_DIR=/path/to/Web` to serve the files from disk instead, so an edit shows on the
/// next reload while working on the center.
enum WebAssets {
    /// One file, ready to serve.
    struct File: Sendable {
        var name: String
        var contentType: String
        var bytes: [UInt8]
        /// A strong validator for `If-None-Match`.
        var etag: String
    }

    /// The embedded files by name, with their types and validators computed once.
    private static let files: [String: File] = {
        var files: [String: File] = [:]
        for (name, text) in embedded { files[name] = make(name: name, bytes: Array((text + "\n").utf8)) }
        for (name, text) in embeddedBinary {
            // The generator wrote it; a file that does not decode is left out (and its test fails).
            if let data = Data(base64Encoded: text) { files[name] = make(name: name, bytes: Array(data)) }
        }
        return files
    }()

    private static let diskDirectory: String? = {
        guard let directory = ProcessInfo.processInfo.environment["CHIME_WEB_DIR"], !directory.isEmpty else {
            return nil
        }
        return directory
    }()

    /// The file served at `/name`, if there is one.
    static func file(named name: String) -> File? {
        guard !name.isEmpty, !name.hasPrefix("."), !name.contains("/") else { return nil }
        if let directory = diskDirectory {
            guard let data = FileManager.default.contents(atPath: directory + "/" + name) else { return nil }
            return make(name: name, bytes: Array(data))
        }
        return files[name]
    }

    private static func make(name: String, bytes: [UInt8]) -> File {
        File(
            name: name, contentType: contentType(name), bytes: bytes,
            etag: "\"" + String(Digest.sha256Hex(bytes).prefix(32)) + "\"")
    }

    static func contentType(_ name: String) -> String {
        switch name.split(separator: ".").last.map(String.init) ?? "" {
        case "html": "text/html; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "svg": "image/svg+xml"
        case "json": "application/json"
        case "webmanifest": "application/manifest+json"
        case "png": "image/png"
        case "wav": "audio/wav"
        default: "application/octet-stream"
        }
    }

    /// The Content-Security-Policy of the center's page: its own scripts and styles only, no
    /// inline script, nothing from elsewhere, not framed.
    static let contentSecurityPolicy = [
        "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "media-src 'self' data:",
        "connect-src 'self'", "manifest-src 'self'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
    ].joined(separator: "; ")
}
