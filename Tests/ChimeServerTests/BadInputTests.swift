import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

struct BadInput: Sendable, CustomStringConvertible {
    var name: String
    var method = "POST"
    var path = "/requests"
    var body: String?
    var contentType: String? = "application/json"
    var status: Int
    var code: String
    var field: String?
    var description: String { name }
}

let badInputs: [BadInput] = [
    BadInput(name: "malformed JSON", body: #"{"identifier": "a", "title": }"#, status: 400, code: "malformedInput"),
    BadInput(name: "empty body", body: "", status: 400, code: "malformedInput"),
    BadInput(
        name: "a number for the title", body: #"{"identifier": "a", "title": 5}"#, status: 400, code: "invalidValue",
        field: "title"),
    BadInput(
        name: "unknown field", body: #"{"identifier": "a", "titel": "x"}"#, status: 400, code: "invalidValue",
        field: "titel"),
    BadInput(
        name: "unknown trigger type", body: #"{"identifier": "a", "title": "x", "trigger": {"type": "lunar"}}"#,
        status: 400,
        code: "invalidTrigger", field: "trigger.type"),
    BadInput(
        name: "negative interval",
        body: #"{"identifier": "a", "title": "x", "trigger": {"type": "timeInterval", "timeInterval": -1}}"#,
        status: 400, code: "invalidTrigger", field: "trigger.timeInterval"),
    BadInput(
        name: "bulk error names the index", body: #"[{"identifier": "a", "title": "x"}, {"identifier": 7}]"#,
        status: 400,
        code: "invalidIdentifier", field: "[1].identifier"),
    BadInput(
        name: "wrong content type", body: #"{"identifier": "a", "title": "x"}"#, contentType: "text/plain", status: 415,
        code: "unsupportedMediaType"),
    BadInput(
        name: "no content type", body: #"{"identifier": "a", "title": "x"}"#, contentType: nil, status: 415,
        code: "unsupportedMediaType"),
    BadInput(
        name: "oversized body", body: "[" + String(repeating: "1,", count: 40_000) + "1]", status: 413, code: "tooLarge"
    ),
    BadInput(
        name: "categories not an array", method: "PUT", path: "/categories", body: "{}", status: 400,
        code: "invalidCategory"),
    BadInput(name: "unknown route", method: "GET", path: "/nothing", status: 404, code: "notFound"),
    BadInput(name: "wrong method", method: "PATCH", path: "/requests", status: 405, code: "methodNotAllowed"),
    BadInput(name: "ack of a non-number", path: "/responses/abc/ack", status: 404, code: "notFound"),
    BadInput(
        name: "respond to an unknown notification", path: "/notifications/none/responses",
        body: #"{"actionIdentifier": "com.apple.UNNotificationDefaultActionIdentifier"}"#, status: 404, code: "notFound"
    ),
    BadInput(
        name: "authorization options of the wrong type", path: "/authorization", body: #"{"options": "alert"}"#,
        status: 400,
        code: "invalidValue", field: "options"),
    BadInput(name: "Last-Event-ID not a number", method: "GET", path: "/events", status: 400, code: "invalidValue"),
]

@Suite("Bad input", .testThreads)
struct BadInputTests {
    @Test("clear errors with the right status, and nothing stored is lost", arguments: badInputs)
    func badInput(_ input: BadInput) async throws {
        try await ServiceHarness.with(transport: .inProcess) { harness in
            let token = try await harness.createApp("com.example.bad")
            let app = harness.client(token: token)
            let base = "/v1/apps/com.example.bad"
            _ = try await app.post(base + "/authorization")
            _ = try await app.post(
                base + "/requests",
                json:
                    #"{"identifier": "kept", "title": "Kept", "trigger": {"type": "timeInterval", "timeInterval": 3600}}"#
            )
            let client = harness.client(
                token: input.path == "/notifications/none/responses" ? harness.service.ownerToken : token)
            let headers: [(String, String)] = input.name.hasPrefix("Last-Event-ID") ? [("Last-Event-ID", "soon")] : []
            let response = try await client.request(
                input.method, base + input.path, headers: headers, body: input.body.map { Array($0.utf8) },
                contentType: input.contentType)
            #expect(response.status == input.status, "\(response.text)")
            #expect(response.errorCode == input.code, "\(response.text)")
            if let field = input.field {
                #expect(response.json?["error"]?["field"] == .string(field), "\(response.text)")
            }
            if case .string(let message)? = response.json?["error"]?["message"] {
                #expect(!message.isEmpty)
            } else {
                Issue.record("no message")
            }
            // The server keeps serving, and the request added before is still there.
            let pending = try await app.get(base + "/requests")
            #expect(pending.json?[0]?["identifier"] == .string("kept"))
        }
    }
}
