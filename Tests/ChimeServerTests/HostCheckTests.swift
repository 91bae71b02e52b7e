import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

/// DNS rebinding: a request whose `Host` is a name the service was not given is refused 421,
/// but on `/healthz`.
@Suite("Host names answered", .testThreads)
struct HostCheckTests {
    @Test(
        "IP literals, localhost and the given names are answered; other names are not",
        arguments: [
            ("127.0.0.1:7878", true), ("[::1]:7878", true), ("LOCALHOST:7878", true), ("10.0.0.5", true),
            ("chime.example.org", true), ("Chime.Example.Org.:443", true), ("rebind.attacker.example:7878", false),
            ("localhost.attacker.example", false), ("127.0.0.1.attacker.example", false),
        ])
    func names(host: String, answered: Bool) {
        #expect(HostNames(["chime.example.org"]).allows(host) == answered)
    }

    @Test(
        "over the wire: another name gets 421 naming the flag on /metrics, /openapi.json and the API; /healthz is served; --public-url's name is answered"
    )
    func wire() async throws {
        try await ServiceHarness.with(publicURL: "https://chime.example.org") { harness in
            let client = harness.owner
            let rebound = [("Host", "rebind.attacker.example:\(harness.service.port)")]
            for path in ["/metrics", "/openapi.json", "/v1/apps", "/"] {
                let refused = try await client.get(path, headers: rebound)
                #expect(refused.status == 421, "\(path)")
                #expect(refused.errorCode == "misdirectedRequest")
                #expect(refused.text.contains("--public-url"))
            }
            #expect(try await client.get("/healthz", headers: rebound).status == 200)
            #expect(
                try await client.get("/metrics", headers: [("Host", "localhost:\(harness.service.port)")]).status == 200
            )
            #expect(try await client.get("/metrics", headers: [("Host", "chime.example.org")]).status == 200)
            #expect(try await client.get("/metrics").status == 200)
        }
    }
}
