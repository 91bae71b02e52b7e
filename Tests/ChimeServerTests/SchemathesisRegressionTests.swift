import Foundation
import TestThreads
import Testing

@testable import ChimeCore
@testable import ChimeServer

/// What scripts/schemathesis.sh (schemathesis against the live server's /openapi.json) found, and the
/// agreements between the document and the server that let it generate requests the server takes.
@Suite("Schemathesis regressions", .testThreads)
struct SchemathesisRegressionTests {
    static func document() throws -> JSONValue { try JSONValue.parse(OpenAPIDocument.json, maxDepth: 256) }

    static func schema(_ name: String) throws -> JSONValue {
        try #require(try document()["components"]?["schemas"]?[name], "no schema \(name)")
    }

    @Test("request bodies are documented as strictly as the decoder reads them: no other members, content in one place")
    func newRequestIsClosed() async throws {
        guard case .array(let variants)? = try Self.schema("NewRequest")["anyOf"] else {
            Issue.record("NewRequest is not an anyOf of the flat and the nested form")
            return
        }
        #expect(variants.count == 2)
        for variant in variants {
            #expect(variant["additionalProperties"] == .bool(false))
            #expect(variant["properties"]?["nextTriggerDate"] != nil, "a listed request can be posted back")
        }
        let nested = try #require(variants.first { $0["properties"]?["content"] != nil })
        #expect(nested["properties"]?["title"] == nil)
        #expect(nested["properties"]?["content"]?["additionalProperties"] == .bool(false))
        for name in ["Action", "Category", "Attachment", "DateComponents", "Region"] {
            #expect(try Self.schema(name)["additionalProperties"] == .bool(false), "\(name)")
        }

        // And the server refuses what the document leaves out.
        try await ServiceHarness.with(transport: .inProcess) { harness in
            _ = try await harness.createApp("com.example.strict")
            let base = "/v1/apps/com.example.strict"
            _ = try await harness.owner.post(base + "/authorization")
            let both = try await harness.owner.post(
                base + "/requests", json: #"{"identifier": "a", "title": "x", "content": {"body": "y"}}"#)
            #expect(both.status == 400 && both.json?["error"]?["field"] == .string("title"), "\(both.text)")
            let stray = try await harness.owner.post(
                base + "/requests",
                json: #"{"identifier": "a", "trigger": {"type": "timeInterval", "timeInterval": 60, "every": 2}}"#)
            #expect(stray.status == 400 && stray.json?["error"]?["field"] == .string("trigger.every"), "\(stray.text)")
            let listed = try await harness.owner.post(
                base + "/requests",
                json: #"{"identifier": "b", "title": "x", "trigger": {"type": "timeInterval", "timeInterval": 60}}"#)
            #expect(listed.status == 201, "\(listed.text)")
            // A listed request, nextTriggerDate included, posts back unchanged.
            let again = try await harness.owner.post(base + "/requests", json: listed.text)
            #expect(again.status == 201, "\(again.text)")
        }
    }

    @Test("the documented date-component ranges are Validation's")
    func dateComponentRanges() throws {
        let properties = try #require(try Self.schema("DateComponents")["properties"])
        for (name, _, range) in Validation.dateComponentRanges {
            #expect(properties[name]?["minimum"] == .integer(Int64(range.lowerBound)), "\(name)")
            #expect(properties[name]?["maximum"] == .integer(Int64(range.upperBound)), "\(name)")
        }
    }

    @Test("the documented push headers are the ones the endpoint accepts")
    func pushHeaders() throws {
        guard case .array(let parameters)? = try Self.document()["paths"]?["/3/device/{token}"]?["post"]?["parameters"]
        else {
            Issue.record("no parameters for POST /3/device/{token}")
            return
        }
        func values(_ header: String) -> Set<String> {
            guard
                case .array(let values)? = parameters.first(where: { $0["name"] == .string(header) })?["schema"]?[
                    "enum"]
            else { return [] }
            return Set(values.compactMap { if case .string(let s) = $0 { s } else { nil } })
        }
        #expect(values("apns-push-type") == Set(APNsRequestHeaders.PushType.allCases.map(\.rawValue)))
        #expect(values("apns-priority") == Set(APNsRequestHeaders.Priority.allCases.map { String($0.rawValue) }))
    }

    @Test("a calendar date at 23:59:59.999999999 is accepted, not refused as matching no date")
    func lastNanosecondOfTheYear() async throws {
        try await ServiceHarness.with(transport: .inProcess) { harness in
            _ = try await harness.createApp("com.example.late")
            let base = "/v1/apps/com.example.late"
            _ = try await harness.owner.post(base + "/authorization")
            let response = try await harness.owner.post(
                base + "/requests",
                json: #"""
                    {"identifier": "new-year", "trigger": {"type": "calendar", "dateComponents": {"year": 9999, "month": 12, "day": 31,
                     "hour": 23, "minute": 59, "second": 59, "nanosecond": 999999999, "timeZone": "UTC"}}}
                    """#)
            #expect(response.status == 201, "\(response.text)")
            guard case .string(let date)? = response.json?["nextTriggerDate"] else {
                Issue.record("no nextTriggerDate: \(response.text)")
                return
            }
            #expect(date == "9999-12-31T23:59:59.999Z")
        }
    }

    @Test("dates thousands of years away are listed as RFC 3339 date-times that post back")
    func farDates() async throws {
        // Found by schemathesis' response check: "nextTriggerDate": "33715-08-26T15:20:18.630Z" is no
        // date-time (four-digit years only), and a userInfo date written as "10000-01-01T11:59:59.000Z"
        // made the listed request impossible to post back.
        try await ServiceHarness.with(transport: .inProcess) { harness in
            _ = try await harness.createApp("com.example.far")
            let base = "/v1/apps/com.example.far"
            _ = try await harness.owner.post(base + "/authorization")
            let far = try await harness.owner.post(
                base + "/requests",
                json: #"{"identifier": "far", "trigger": {"type": "timeInterval", "timeInterval": 1e12}}"#)
            #expect(far.status == 201, "\(far.text)")
            #expect(far.json?["nextTriggerDate"] == .string("9999-12-31T23:59:59.999Z"), "\(far.text)")
            // Schemathesis' input, exactly.
            let found = try await harness.owner.post(
                base + "/requests",
                json:
                    #"[{"identifier": "c\u00f8\u00e6\u001a\udb9c\udeae", "nextTriggerDate": {"H\u00d6": ";\udb5e\udff4\u0000z", "\u001c": false, "\u008c\u0082\u00a0": "\u00ce\u0002\ud929\udc1a\u0012\ud8d5\uddc3\u00c2"}, "content": {"threadIdentifier": "\u00dbT", "sound": "\ud9e7\udfe4sl\u00aa\f\u00a5\u00a9T\u00cd", "targetContentIdentifier": null, "launchImageName": ""}, "trigger": {"type": "timeInterval", "timeInterval": 7.180222619675456e+16, "repeats": false}}, {"threadIdentifier": "__main__", "identifier": "\u00bdSx\u0083\ud89b\ude4e\u00f84\u000e\u009d"}, {"identifier": "*\udbcd\ude9dJS\u0004\u0088\ud805\udf2b\u00b3O\ud849\udc07\u008eJ[\u0088\"\ud89b\udd8c\u00d5\ud82c\udfcd \udb60\udddd", "content": {"subtitle": "\u0019G\udb69\udf45\udb79\uddc5\u009c", "summaryArgument": "\udbb3\udc03", "sound": null, "targetContentIdentifier": "\u00e77\u00ebCE", "badge": 9866.0, "summaryArgumentCount": 50, "threadIdentifier": "\u00dd", "categoryIdentifier": "n\u00d6\u00db\u0081\u0092\u00aa8\u0000=\ud9e6\ude75", "body": "\u00f3\u001c\ud935\udca6\u00bbL\ud948\ude44"}}]"#
            )
            #expect(found.status == 201, "\(found.text)")
            if case .array(let added)? = found.json {
                #expect(added.first?["nextTriggerDate"] == .string("9999-12-31T23:59:59.999Z"), "\(found.text)")
            } else {
                Issue.record("not an array: \(found.text)")
            }
            // A userInfo date past the year 9999 in UTC is refused (it could not come back as given);
            // one just inside is kept.
            let past = try await harness.owner.post(
                base + "/requests",
                json: #"{"identifier": "past", "userInfo": {"d": {"$date": "9999-12-31T23:59:59-12:00"}}}"#)
            #expect(past.status == 400 && past.text.contains("userInfo.d.$date"), "\(past.text)")
            let west = try await harness.owner.post(
                base + "/requests",
                json: #"""
                    {"identifier": "west", "userInfo": {"d": {"$date": "9999-12-31T11:59:59.999-12:00"}},
                     "trigger": {"type": "calendar", "dateComponents": {"year": 9999, "month": 12, "day": 31, "hour": 23, "timeZone": "Etc/GMT+12"}}}
                    """#)
            #expect(west.status == 201, "\(west.text)")
            #expect(west.json?["nextTriggerDate"] == .string("9999-12-31T23:59:59.999Z"), "\(west.text)")
            #expect(west.json?["userInfo"]?["d"]?["$date"] == .string("9999-12-31T23:59:59.999Z"), "\(west.text)")
            let listed = try await harness.owner.get(base + "/requests")
            guard case .array(let requests)? = listed.json else {
                Issue.record("not an array: \(listed.text)")
                return
            }
            for request in requests {
                let again = try await harness.owner.post(base + "/requests", json: request.serialized())
                #expect(again.status == 201, "\(again.text)")
            }
        }
    }
}
