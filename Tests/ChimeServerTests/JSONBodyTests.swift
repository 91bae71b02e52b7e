import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

/// The permission, settings and badge bodies are read by the JSON mapping's one object reader
/// (`JSONObjectReader`): integers as every integer field takes them, unknown fields with a
/// did-you-mean, and an app without permission answered 409 from the error table.
@Suite("Request bodies through the one JSON reader", .testThreads)
struct JSONBodyTests {
    @Test("PUT /badge takes 3.0 as every other integer field does, and refuses 3.5 naming the field")
    func badgeNumbers() async throws {
        try await ServiceHarness.with(transport: .inProcess) { harness in
            let token = try await harness.createApp("com.example.badge")
            let app = harness.client(token: token)
            let whole = try await app.put("/v1/apps/com.example.badge/badge", json: #"{"badge": 3.0}"#)
            #expect(whole.status == 200, "\(whole.text)")
            #expect(whole.json?["badge"] == .integer(3))
            #expect(try await harness.owner.get("/v1/apps/com.example.badge").json?["badge"] == .integer(3))

            let fraction = try await app.put("/v1/apps/com.example.badge/badge", json: #"{"badge": 3.5}"#)
            #expect(fraction.status == 400)
            #expect(fraction.json?["error"]?["field"] == .string("badge"))
            let negative = try await app.put("/v1/apps/com.example.badge/badge", json: #"{"badge": -1}"#)
            #expect(negative.status == 400 && negative.errorCode == "badgeInputInvalid", "\(negative.text)")
        }
    }

    @Test(
        "a misspelt field or value is refused with what was meant",
        arguments: [
            ("PUT", "/badge", #"{"bagde": 3}"#, "bagde", #"did you mean "badge"?"#),
            ("POST", "/authorization/answer", #"{"alow": true}"#, "alow", #"did you mean "allow"?"#),
            ("POST", "/authorization", #"{"option": ["alert"]}"#, "option", #"did you mean "options"?"#),
            ("PATCH", "/settings", #"{"soundSeting": "disabled"}"#, "soundSeting", #"did you mean "soundSetting"?"#),
            ("PATCH", "/settings", #"{"soundSetting": "disbled"}"#, "soundSetting", #"did you mean "disabled"?"#),
            (
                "PATCH", "/settings", #"{"showPreviewsSetting": "Never"}"#, "showPreviewsSetting",
                #"did you mean "never"?"#
            ),
        ])
    func misspelt(method: String, path: String, body: String, field: String, suggestion: String) async throws {
        try await ServiceHarness.with(transport: .inProcess) { harness in
            _ = try await harness.createApp("com.example.typo")
            let answer = try await harness.owner.request(
                method, "/v1/apps/com.example.typo" + path, body: Array(body.utf8),
                contentType: "application/json")
            #expect(answer.status == 400, "\(answer.text)")
            #expect(answer.json?["error"]?["field"] == .string(field), "\(answer.text)")
            guard case .string(let message)? = answer.json?["error"]?["message"] else {
                Issue.record("no message: \(answer.text)")
                return
            }
            #expect(message.contains(suggestion), "\(message)")
        }
    }

    @Test(
        "changing the settings of an app the user has not allowed is 409 notificationsNotAllowed, from the error table")
    func settingsNotAllowed() async throws {
        try await ServiceHarness.with(transport: .inProcess, autoAllow: false) { harness in
            _ = try await harness.createApp("com.example.undecided")
            let answer = try await harness.owner.request(
                "PATCH", "/v1/apps/com.example.undecided/settings",
                body: Array(#"{"soundSetting": "disabled"}"#.utf8), contentType: "application/json")
            #expect(answer.status == 409)
            #expect(answer.errorCode == "notificationsNotAllowed", "\(answer.text)")
        }
    }
}
