import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

/// The in-process client (``InProcess``) answers as the wire does, so the suites that use it
/// test the API, not a stand-in: the same requests, over TCP and in-process, get the same status,
/// error, content type, paging links and body.
@Suite("In-process client", .testThreads)
struct InProcessClientTests {
    @Test("reads, refusals, paging, bad encodings and an oversized body answer alike on both")
    func sameAnswers() async throws {
        try await ServiceHarness.with { harness in
            let token = try await harness.createApp("com.example.inprocess")
            let base = "/v1/apps/com.example.inprocess"
            let wire = harness.client(token: token)
            let direct = TestClient(endpoint: harness.inProcessEndpoint, token: token)
            #expect(try await wire.post(base + "/authorization").status == 200)
            for index in 0..<5 {
                let added = try await direct.post(
                    base + "/requests",
                    json:
                        #"{"identifier": "r\#(index)", "title": "R", "trigger": {"type": "timeInterval", "timeInterval": 3600}}"#
                )
                #expect(added.status == 201, "\(added.text)")
            }
            let requests: [(method: String, target: String, body: String?)] = [
                ("GET", base + "/requests", nil),
                ("GET", base + "/requests?limit=2", nil),
                ("GET", base + "/requests?limit=2&after=2", nil),
                ("GET", base + "/requests?limit=0", nil),
                ("GET", base + "/requests?limit=%ZZ", nil),
                ("GET", base + "/notifications?thread=a+b", nil),
                ("GET", base + "/settings", nil),
                ("GET", "/v1/apps/com.example.other/requests", nil),
                ("GET", "/v1/nowhere", nil),
                ("PATCH", base + "/requests", nil),
                ("POST", base + "/requests", #"{"identifier": 5}"#),
                ("POST", base + "/requests", "{"),
                ("PUT", base + "/badge", #"{"badge": 3.0}"#),
                ("POST", base + "/requests", "[" + String(repeating: "1,", count: 40_000) + "1]"),
                ("DELETE", base + "/requests?identifier=none", nil),
            ]
            for (method, target, body) in requests {
                let bytes = body.map { Array($0.utf8) }
                let type = body == nil ? nil : "application/json"
                let overWire = try await wire.request(method, target, body: bytes, contentType: type)
                let inProcess = try await direct.request(method, target, body: bytes, contentType: type)
                #expect(
                    overWire.status == inProcess.status, "\(method) \(target): \(overWire.text) / \(inProcess.text)")
                #expect(overWire.errorCode == inProcess.errorCode, "\(method) \(target)")
                #expect(overWire.headers["content-type"] == inProcess.headers["content-type"], "\(method) \(target)")
                #expect(overWire.headers["link"] == inProcess.headers["link"], "\(method) \(target)")
                #expect(overWire.json == inProcess.json, "\(method) \(target): \(overWire.text) / \(inProcess.text)")
            }
            // A Host the service does not answer as is refused in-process too (421), as on the wire.
            let elsewhere = TestClient(
                endpoint: .inProcess(harness.service.api, host: "elsewhere.example"), token: token)
            let misdirected = try await elsewhere.get(base + "/requests")
            #expect(misdirected.status == 421 && misdirected.errorCode == "misdirectedRequest", "\(misdirected.text)")
        }
    }

    @Test("in-process requests need no socket: they are answered with the listener stopped")
    func noSocket() async throws {
        try await ServiceHarness.with(transport: .inProcess) { harness in
            _ = try await harness.createApp("com.example.nosocket")
            await harness.service.server.stop()
            let listed = try await harness.owner.get("/v1/apps")
            #expect(listed.status == 200, "\(listed.text)")
            guard case .array(let apps)? = listed.json else {
                Issue.record("not a list: \(listed.text)")
                return
            }
            #expect(apps.map { $0["bundleIdentifier"] } == [.string("com.example.nosocket")], "\(listed.text)")
            let overWire = await #expect(throws: (any Error).self) {
                try await TestClient(endpoint: harness.endpoint, token: harness.service.ownerToken).get("/v1/apps")
            }
            #expect(overWire != nil)
        }
    }
}
