import ChimeCore
import ChimeServer
import Foundation
import Synchronization
import TestThreads
import Testing

@testable import ChimeCLI

/// The CLI trusts the certificate the service of its own data directory serves: server.json pins
/// its key, so a self-signed certificate — or one naming a host other than the address the CLI
/// connects to — needs no CHIME_CA_FILE, and any other key is refused before the owner token goes out.
@Suite("chime: TLS trusted by the key its service pins", .testThreads, .timeLimit(.minutes(2)))
struct TLSPinTests {
    /// A self-signed P-256 certificate for `chime.example.org` only (not 127.0.0.1, where the
    /// service listens), and its key.
    static func selfSigned(in directory: String, name: String) async throws -> (certificate: String, key: String) {
        let certificate = directory + "/\(name).pem"
        let key = directory + "/\(name).key"
        let made = try await ChildProcess.run(
            "/usr/bin/openssl",
            arguments: [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
                "-out", certificate,
                "-days", "1", "-subj", "/CN=chime.example.org", "-addext", "subjectAltName=DNS:chime.example.org",
            ], timeout: 60)
        #expect(made.termination.succeeded, "\(made.errorText)")
        return (certificate, key)
    }

    /// Replaces server.json's `tlsPin` (nil: removes it, as a service before pinning wrote it).
    static func rewritePin(_ pin: String?, directory: String) throws {
        let path = ChimeService.serverInfoPath(dataDirectory: directory)
        guard case .object(var object) = try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: path))) else {
            Issue.record("server.json is not an object")
            return
        }
        object["tlsPin"] = pin.map(JSONValue.string)
        try Data(JSONValue.object(object).serialized().utf8).write(to: URL(fileURLWithPath: path))
    }

    /// A service on 127.0.0.1 serving a fresh self-signed certificate (see ``selfSigned(in:name:)``);
    /// `body` gets it, its data directory and the scratch directory.
    static func withService(
        logger: ServerLogger = .silent, _ body: (RunningService, String, String) async throws -> Void
    ) async throws {
        let directory = "/tmp/chime-pin-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let served = try await Self.selfSigned(in: directory, name: "served")
        let data = directory + "/data"
        var configuration = ChimeService.Configuration(
            dataDirectory: data, listen: .tcp(host: "127.0.0.1", port: 0),
            autoAllow: true, printsBanner: false)
        configuration.tlsCertificatePath = served.certificate
        configuration.tlsKeyPath = served.key
        let service = try await RunningService.start(configuration: configuration, logger: logger)
        do {
            try await body(service, data, directory)
        } catch {
            await service.stop()
            throw error
        }
        await service.stop()
    }

    @Test(
        "a self-signed certificate for another host name: the CLI works with no CA file, over HTTP/2; another key or no pin is refused, saying why"
    )
    func pinned() async throws {
        let lines = Mutex<[String]>([])
        try await Self.withService(logger: ServerLogger(sink: { line in lines.withLock { $0.append(line) } })) {
            service, data, directory in
            let other = try await Self.selfSigned(in: directory, name: "other")
            let info = try JSONValue.parse(
                Data(contentsOf: URL(fileURLWithPath: ChimeService.serverInfoPath(dataDirectory: data))))
            let pin = try #require(info["tlsPin"]?.stringValue, "server.json has no tlsPin: \(info)")
            // The pin is curl's: the same text `openssl … | base64` and `curl --pinnedpubkey` use.
            #expect(pin.hasPrefix("sha256//") && pin.count == 8 + 44)
            #expect(service.url.hasPrefix("https://127.0.0.1:"))

            let (added, addOutput) = await UnixSocketTests.run(["apps", "add", "com.example.pinned", "--json"], data)
            #expect(added == 0, "\(addOutput.errorText)")
            #expect(try JSONValue.parse(addOutput.text)["bundleIdentifier"] == .string("com.example.pinned"))
            let (listed, listOutput) = await UnixSocketTests.run(["apps", "list"], data)
            #expect(listed == 0 && listOutput.text.contains("com.example.pinned"), "\(listOutput.errorText)")
            // ALPN picked HTTP/2 for the CLI's libcurl (before, it asked for HTTP/1.1 only).
            let logged = lines.withLock { $0 }.filter { $0.contains("INFO request") && $0.contains("path=/v1/apps") }
            #expect(!logged.isEmpty && logged.allSatisfy { $0.contains("protocol=HTTP/2") }, "\(logged)")

            // Another key pinned (a different server took the port): refused, naming the pin.
            let otherPin = try #require(Self.pin(ofCertificateAt: other.certificate))
            #expect(otherPin != pin)
            try Self.rewritePin(otherPin, directory: data)
            let (refused, refusedOutput) = await UnixSocketTests.run(["apps", "list"], data)
            #expect(refused != 0)
            #expect(refusedOutput.errorText.contains("tlsPin"), "\(refusedOutput.errorText)")

            // No pin (server.json of an older service): the system's CAs, which do not know this one.
            try Self.rewritePin(nil, directory: data)
            let (unpinned, unpinnedOutput) = await UnixSocketTests.run(["apps", "list"], data)
            #expect(unpinned != 0)
            #expect(unpinnedOutput.errorText.contains("CHIME_CA_FILE"), "\(unpinnedOutput.errorText)")
        }
    }

    /// The pin of a PEM certificate file, computed by openssl itself (an independent computation).
    static func pin(ofCertificateAt path: String) -> String? {
        let pipe = Pipe()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c",
            "openssl x509 -in \"$1\" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64",
            "sh", path,
        ]
        process.standardOutput = pipe
        do { try process.run() } catch { return nil }
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return "sha256//" + String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("the pin chime serve writes is the one openssl computes for the served certificate")
    func pinMatchesOpenSSL() async throws {
        try await Self.withService { _, data, directory in
            let info = try JSONValue.parse(
                Data(contentsOf: URL(fileURLWithPath: ChimeService.serverInfoPath(dataDirectory: data))))
            // Both nil (no pin written, openssl failing) must not pass.
            let computed = try #require(Self.pin(ofCertificateAt: directory + "/served.pem"), "openssl computed no pin")
            #expect(info["tlsPin"] == .string(computed))
        }
    }
}
