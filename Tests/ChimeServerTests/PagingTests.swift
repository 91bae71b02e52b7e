import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

@Suite("Paged lists", .testThreads)
struct PagingTests {
    let base = "/v1/apps/com.example.pages"

    func identifiers(_ items: [JSONValue]) -> [String] { items.compactMap { $0["identifier"]?.stringValue } }

    @Test("pending requests: 100 by default, limit and after from the Link header, every one once, in order")
    func pending() async throws {
        try await ServiceHarness.with(transport: .inProcess) { harness in
            let token = try await harness.createApp("com.example.pages")
            let app = harness.client(token: token)
            _ = try await app.post(base + "/authorization")
            let body =
                "["
                + (0..<250).map {
                    #"{"identifier": "p\#($0)", "title": "x", "trigger": {"type": "timeInterval", "timeInterval": 3600}}"#
                }
                .joined(separator: ",") + "]"
            #expect(try await app.post(base + "/requests", json: body).status == 201)
            let first = try await app.get(base + "/requests")
            #expect(first.json?.arrayValue.count == 100)
            #expect(first.headers["link"]?.contains("rel=\"next\"") == true)
            let (items, sizes) = try await app.pages(base + "/requests?limit=70")
            #expect(sizes == [70, 70, 70, 40])
            #expect(identifiers(items) == (0..<250).map { "p\($0)" })
            // The last page has no Link.
            let last = try await app.get(base + "/requests?limit=250")
            #expect(last.headers["link"] == nil)
        }
    }

    @Test("delivered notifications page newest first through ties on the date, keeping the thread filter")
    func delivered() async throws {
        try await ServiceHarness.with(transport: .inProcess) { harness in
            let token = try await harness.createApp("com.example.pages")
            let app = harness.client(token: token)
            _ = try await app.post(base + "/authorization")
            // Delivered at once, in one call: many share a date.
            let body =
                "["
                + (0..<45).map {
                    #"{"identifier": "d\#($0)", "title": "x", "threadIdentifier": "\#($0 % 2 == 0 ? "even" : "odd")"}"#
                }
                .joined(separator: ",") + "]"
            #expect(try await app.post(base + "/requests", json: body).status == 201)
            let all = try await app.get(base + "/notifications?limit=1000")
            let (items, sizes) = try await app.pages(base + "/notifications?limit=7")
            #expect(sizes.count == 7)
            #expect(identifiers(items) == identifiers(all.json?.arrayValue ?? []))
            #expect(Set(identifiers(items)).count == 45)
            let (even, _) = try await app.pages(base + "/notifications?thread=even&limit=4")
            #expect(Set(identifiers(even)) == Set(stride(from: 0, to: 45, by: 2).map { "d\($0)" }))
        }
    }

    @Test("apps, the outbox and categories page the same way")
    func otherLists() async throws {
        try await ServiceHarness.with(transport: .inProcess) { harness in
            for index in 0..<12 { _ = try await harness.createApp("com.example.app\(index)") }
            let (apps, sizes) = try await harness.owner.pages("/v1/apps?limit=5")
            #expect(sizes == [5, 5, 2])
            #expect(
                apps.compactMap { $0["bundleIdentifier"]?.stringValue }
                    == (0..<12).map { "com.example.app\($0)" }.sorted())

            let token = try await harness.createApp("com.example.pages")
            let app = harness.client(token: token)
            _ = try await app.post(base + "/authorization")
            let categories =
                "["
                + (0..<9).map { #"{"identifier": "c\#($0)", "actions": [{"identifier": "ok", "title": "OK"}]}"# }
                .joined(separator: ",") + "]"
            #expect(try await app.put(base + "/categories", json: categories).status == 200)
            let (listed, categorySizes) = try await app.pages(base + "/categories?limit=4")
            #expect(categorySizes == [4, 4, 1])
            #expect(identifiers(listed) == (0..<9).map { "c\($0)" })

            let body =
                "["
                + (0..<11).map { #"{"identifier": "n\#($0)", "title": "x", "categoryIdentifier": "c0"}"# }.joined(
                    separator: ",") + "]"
            _ = try await app.post(base + "/requests", json: body)
            for index in 0..<11 {
                _ = try await harness.owner.post(
                    base + "/notifications/n\(index)/responses", json: #"{"actionIdentifier": "ok"}"#)
            }
            let (outbox, outboxSizes) = try await app.pages(base + "/responses?limit=3")
            #expect(outboxSizes == [3, 3, 3, 2])
            let ids = outbox.compactMap { item -> Int64? in
                if case .integer(let id)? = item["id"] { return id } else { return nil }
            }
            #expect(ids == ids.sorted() && Set(ids).count == 11)
        }
    }

    @Test("a page stops early past about 1 MiB, so a list of large items never comes in one answer")
    func byteBound() async throws {
        try await ServiceHarness.with(transport: .inProcess) { harness in
            let token = try await harness.createApp("com.example.pages")
            let app = harness.client(token: token)
            _ = try await app.post(base + "/authorization")
            let big = String(repeating: "b", count: 50_000)
            for index in 0..<40 {
                _ = try await app.post(
                    base + "/requests",
                    json:
                        #"{"identifier": "big\#(index)", "body": "\#(big)", "trigger": {"type": "timeInterval", "timeInterval": 3600}}"#
                )
            }
            let first = try await app.get(base + "/requests?limit=1000")
            #expect(first.body.count <= Page.byteLimit + 60_000)
            #expect((first.json?.arrayValue.count ?? 0) < 40)
            let (items, _) = try await app.pages(base + "/requests?limit=1000")
            #expect(identifiers(items) == (0..<40).map { "big\($0)" })
        }
    }

    @Test(
        "a limit out of range or a cursor that is not one is a 400 naming it",
        arguments: [
            ("/requests?limit=0", "limit"), ("/requests?limit=1001", "limit"), ("/requests?limit=many", "limit"),
            ("/requests?after=-3", "after"), ("/notifications?after=yesterday", "after"),
            ("/responses?after=x", "after"),
        ])
    func badPages(_ query: String, _ field: String) async throws {
        try await ServiceHarness.with(transport: .inProcess) { harness in
            let token = try await harness.createApp("com.example.pages")
            let response = try await harness.client(token: token).get(base + query)
            #expect(response.status == 400)
            #expect(response.json?["error"]?["field"] == .string(field))
        }
    }
}

extension JSONValue {
    fileprivate var stringValue: String? { if case .string(let text) = self { return text } else { return nil } }
    fileprivate var arrayValue: [JSONValue] { if case .array(let items) = self { return items } else { return [] } }
}
