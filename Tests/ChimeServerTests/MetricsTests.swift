import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

@Suite("Metrics and documents", .testThreads)
struct MetricsTests {
    @Test("GET /metrics is Prometheus text with the gauges, request counters and histograms")
    func metrics() async throws {
        try await ServiceHarness.with { harness in
            let token = try await harness.createApp("com.example.metrics")
            let app = harness.client(token: token)
            _ = try await app.post("/v1/apps/com.example.metrics/authorization")
            _ = try await app.post(
                "/v1/apps/com.example.metrics/requests",
                json:
                    #"{"identifier": "later", "title": "L", "trigger": {"type": "timeInterval", "timeInterval": 600}}"#)
            _ = try await app.post(
                "/v1/apps/com.example.metrics/requests", json: #"{"identifier": "now", "title": "N"}"#)
            _ = try await harness.client(token: nil).get("/healthz")
            _ = try await harness.client(token: nil).get("/nowhere")
            // A request is counted when libmicrohttpd reports it finished, which can come just after
            // its client has the answer (and on another thread than the next request): read the
            // metrics until every request made is in them.
            let counted = [
                #"chime_http_requests_total{route="/healthz",status="200"} 1"#,
                #"chime_http_requests_total{route="/v1/apps/{app}/requests",status="201"} 2"#,
                #"chime_http_requests_total{route="unmatched",status="404"} 1"#,
            ]
            var response = try await harness.client(token: nil).get("/metrics")
            var lines = response.text.split(separator: "\n").map(String.init)
            for _ in 0..<2_000 where !counted.allSatisfy(lines.contains) {
                response = try await harness.client(token: nil).get("/metrics")
                lines = response.text.split(separator: "\n").map(String.init)
            }
            #expect(response.status == 200)
            #expect(response.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
            #expect(lines.contains("chime_pending 1"))
            #expect(lines.contains("chime_delivered 1"))
            #expect(lines.contains("# TYPE chime_fire_lateness_seconds histogram"))
            #expect(lines.contains("# TYPE chime_http_requests_total counter"))
            #expect(lines.contains(#"chime_http_requests_total{route="/healthz",status="200"} 1"#))
            #expect(lines.contains(#"chime_http_requests_total{route="/v1/apps/{app}/requests",status="201"} 2"#))
            #expect(lines.contains(#"chime_http_requests_total{route="unmatched",status="404"} 1"#))
            #expect(lines.contains(#"chime_http_request_duration_seconds_count{route="/v1/apps/{app}/requests"} 2"#))
            #expect(lines.contains(#"chime_http_request_duration_seconds_bucket{route="/healthz",le="+Inf"} 1"#))
            // Every line is a comment or `name{labels} value`.
            let sample = try Regex(#"^[a-z_]+(\{.*\})? [0-9.e+-]+$"#)
            for line in lines where !line.hasPrefix("#") {
                #expect(line.wholeMatch(of: sample) != nil, "\(line)")
            }
        }
    }

    @Test("GET /openapi.json serves docs/openapi.json exactly")
    func openAPI() async throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("docs/openapi.json")
        let expected = try String(contentsOf: file, encoding: .utf8)
        try await ServiceHarness.with { harness in
            let response = try await harness.client(token: nil).get("/openapi.json")
            #expect(response.status == 200)
            #expect(response.text == expected, "run scripts/generate-openapi-swift.sh after editing docs/openapi.json")
            let document = try #require(response.json)
            #expect(document["openapi"] == .string("3.1.0"))
        }
    }

    @Test("access tokens are 64 hexadecimal characters; their hashes are SHA-256 in hexadecimal")
    func tokens() {
        #expect(Tokens.hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Tokens.make().count == 64)
        #expect(Tokens.make() != Tokens.make())
    }

    @Test("listen addresses parse, and bad ones say what is accepted")
    func listenAddresses() throws {
        #expect(try ListenAddress(parsing: "127.0.0.1:7878") == .tcp(host: "127.0.0.1", port: 7878))
        #expect(try ListenAddress(parsing: ":0") == .tcp(host: "127.0.0.1", port: 0))
        #expect(try ListenAddress(parsing: "localhost:80") == .tcp(host: "127.0.0.1", port: 80))
        #expect(try ListenAddress(parsing: "unix:/tmp/chime.sock") == .unix(path: "/tmp/chime.sock"))
        #expect(throws: ServerError.self) { try ListenAddress(parsing: "example.com:80") }
        #expect(throws: ServerError.self) { try ListenAddress(parsing: "127.0.0.1:99999") }
        #expect(throws: ServerError.self) { try ListenAddress(parsing: "unix:relative") }
    }
}
