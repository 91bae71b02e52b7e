import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

#if canImport(Glibc)
    import Glibc
#endif

/// Identifiers with `/`, `?`, `#`, `%`, spaces and non-ASCII letters in paths and query strings.
@Suite("Percent-encoded identifiers", .testThreads)
struct PathEncodingTests {
    static let chat = "chat/42 ü?#%"

    @Test("encode and decode: unreserved characters stay, everything else is %HH of UTF-8")
    func codec() throws {
        #expect(PercentEncoding.encode(Self.chat) == "chat%2F42%20%C3%BC%3F%23%25")
        #expect(PercentEncoding.encode("a-b.c_d~e+f&g=h") == "a-b.c_d~e%2Bf%26g%3Dh")
        #expect(try PercentEncoding.decode(PercentEncoding.encode(Self.chat)) == Self.chat)
        #expect(try PercentEncoding.decode("a+b%2b") == "a+b+")
        #expect(try PercentEncoding.decode("caf\u{e9}") == "café")

        #expect(throws: PercentDecodingError(text: "100%", problem: .incompleteEscape("%"))) {
            try PercentEncoding.decode("100%")
        }
        #expect(throws: PercentDecodingError(text: "a%2", problem: .incompleteEscape("%2"))) {
            try PercentEncoding.decode("a%2")
        }
        #expect(throws: PercentDecodingError(text: "%zz", problem: .invalidEscape("%zz"))) {
            try PercentEncoding.decode("%zz")
        }
        #expect(throws: PercentDecodingError(text: "%C3%28", problem: .invalidUTF8)) {
            try PercentEncoding.decode("%C3%28")
        }
        #expect(throws: PercentDecodingError.self) { try PercentEncoding.decode(bytes: [0x61, 0xFF]) }
    }

    @Test("the path is split on / before its segments are decoded")
    func segments() throws {
        let request = HTTPRequest(
            method: "POST", path: "/v1/apps/a/notifications/chat%2F42%20%C3%BC%3F%23%25/responses")
        #expect(try request.pathSegments() == ["v1", "apps", "a", "notifications", Self.chat, "responses"])
        #expect(try HTTPRequest(method: "GET", path: "/").pathSegments() == [""])
        #expect(try HTTPRequest(method: "GET", path: "/a//b/").pathSegments() == ["a", "", "b", ""])
        #expect(try PercentEncoding.segments(ofPath: "") == [""])
        #expect(try PercentEncoding.segments(ofPath: "//a") == ["", "a"])
        #expect(try PercentEncoding.segments(ofPath: "a/b") == ["a", "b"])
        #expect(try PercentEncoding.segments(ofPath: "/%2F/x%20") == ["/", "x "])
        #expect(throws: PercentDecodingError(text: "b%zz", problem: .invalidEscape("%zz"))) {
            try PercentEncoding.segments(ofPath: "/a/b%zz/c")
        }
        #expect(throws: PercentDecodingError.self) { try HTTPRequest(method: "GET", path: "/a/%E2%82").pathSegments() }
    }

    @Test("the server hands over the path as sent and the query decoded, + as a space")
    func serverKeepsRawPath() async throws {
        let server = HTTPServer(configuration: .init(listen: .tcp(host: "127.0.0.1", port: 0)), handler: TestHandler())
        try server.start()
        let client = TestClient(port: server.port)
        let echo = try await client.get("/a%2Fb/c%20d?x=a+b%2Bc&y=%C3%BC&z=%2F%3F%23%25&flag")
        #expect(echo.text == "GET /a%2Fb/c%20d 0 x=a b+c y=ü z=/?#% flag=")
        // Bytes outside ASCII sent unescaped arrive escaped, so the path is always ASCII.
        let port = server.port
        let raw = try await TestClient.offPool {
            let socket = try RawSocket(port: port, timeout: 60)  // a bound for a hang, not a measure
            defer { socket.close() }
            try socket.send(
                Array("GET /caf".utf8) + [0xC3, 0xA9]
                    + Array(" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8))
            return try RawSocket.response(socket.readToEnd())
        }
        #expect(raw.text == "GET /caf%C3%A9 0")
        await server.stop()
    }

    @Test("schedule, deliver, answer and remove requests whose identifiers hold / ? # % space and ü")
    func flow() async throws {
        try await ServiceHarness.with { harness in
            let token = try await harness.createApp("com.example.chat")
            let app = harness.client(token: token)
            let base = "/v1/apps/com.example.chat"
            _ = try await app.post(base + "/authorization")
            _ = try await app.put(
                base + "/categories",
                json:
                    #"[{"identifier": "chat", "actions": [{"identifier": "snooze", "title": "Snooze", "options": []}]}]"#
            )
            let events = try await SSEClient.open(harness.endpoint, path: base + "/events", token: token)
            defer { events.close() }

            let json = JSONValue.object([
                "identifier": .string(Self.chat), "title": "Chat", "categoryIdentifier": "chat",
                "trigger": ["type": "timeInterval", "timeInterval": 1, "repeats": false],
            ]).serialized()
            #expect(try await app.post(base + "/requests", json: json).status == 201)
            let delivered = try await events.next()
            #expect(delivered.event == "delivered")
            #expect(delivered.json?["notification"]?["identifier"] == .string(Self.chat))
            #expect(try await app.get(base + "/notifications").json?[0]?["identifier"] == .string(Self.chat))

            let encoded = PercentEncoding.encode(Self.chat)
            let answer = try await harness.owner.post(
                base + "/notifications/\(encoded)/responses", json: #"{"actionIdentifier": "snooze"}"#)
            #expect(answer.status == 201, "\(answer.text)")
            let outbox = try await app.get(base + "/responses")
            #expect(outbox.json?[0]?["notification"]?["identifier"] == .string(Self.chat))
            #expect(outbox.json?[0]?["actionIdentifier"] == .string("snooze"))

            // Pending requests removed by identifier: encoded, and form-style `+` for a space.
            let pending = ["a&identifier=b", "x y", "50% off/#1", "b"]
            for identifier in pending {
                let body = JSONValue.object([
                    "identifier": .string(identifier), "title": "Later",
                    "trigger": ["type": "timeInterval", "timeInterval": 3600],
                ]).serialized()
                #expect(try await app.post(base + "/requests", json: body).status == 201)
            }
            let removed = try await app.delete(
                base + "/requests?identifier=\(PercentEncoding.encode("a&identifier=b"))&identifier=x+y")
            #expect(removed.json?["removed"] == .array(["a&identifier=b", "x y"]))
            let removedPercent = try await app.delete(
                base + "/requests?identifier=\(PercentEncoding.encode("50% off/#1"))")
            #expect(removedPercent.json?["removed"] == .array(["50% off/#1"]))
            #expect(try await app.get(base + "/requests").json?[0]?["identifier"] == .string("b"))

            // Delivered notifications removed by an encoded identifier.
            let now = JSONValue.object(["identifier": .string(Self.chat), "title": "Again"]).serialized()
            #expect(try await app.post(base + "/requests", json: now).status == 201)
            let removedDelivered = try await app.delete(base + "/notifications?identifier=\(encoded)")
            #expect(removedDelivered.json?["removed"] == .array([.string(Self.chat)]))
        }
    }

    @Test(
        "invalid percent-encoding or UTF-8 in a path segment or query argument gets 400 naming it, and changes nothing")
    func badEncodings() async throws {
        try await ServiceHarness.with { harness in
            let token = try await harness.createApp("com.example.bad")
            let app = harness.client(token: token)
            let base = "/v1/apps/com.example.bad"
            _ = try await app.post(base + "/authorization")
            #expect(
                try await app.post(
                    base + "/requests",
                    json:
                        #"{"identifier": "keep", "title": "Keep", "trigger": {"type": "timeInterval", "timeInterval": 3600}}"#
                ).status == 201)

            let paths = [
                ("POST", base + "/notifications/chat%2/responses", "'chat%2' has an incomplete percent escape '%2'"),
                ("POST", base + "/notifications/%zz/responses", "invalid percent escape '%zz'"),
                ("POST", base + "/notifications/%C3%28/responses", "does not decode to UTF-8"),
                ("GET", "/v1/apps/%FF/settings", "does not decode to UTF-8"),
                ("GET", base + "/requests%", "incomplete percent escape"),
                // A bad query argument must not read as "no identifiers", which would remove everything.
                ("DELETE", base + "/requests?identifier=%E2%82", "query argument 'identifier'"),
                ("DELETE", base + "/requests?identifier=keep&identifier=100%", "query argument 'identifier'"),
                ("GET", base + "/notifications?thread=%G1", "invalid percent escape '%G1'"),
            ]
            for (method, path, message) in paths {
                let response = try await harness.owner.request(
                    method, path, body: method == "POST" ? Array(#"{"actionIdentifier": "x"}"#.utf8) : nil,
                    contentType: method == "POST" ? "application/json" : nil)
                #expect(response.status == 400, "\(method) \(path): \(response.status) \(response.text)")
                #expect(response.errorCode == "invalidEncoding", "\(path)")
                #expect(response.text.contains(message), "\(path): \(response.text)")
            }
            #expect(try await app.get(base + "/requests").json?.arrayCount == 1)

            // Raw bytes that are not UTF-8 in the request line.
            let port = harness.service.port
            let ownerToken = harness.service.ownerToken
            let raw = try await TestClient.offPool {
                let socket = try RawSocket(port: port, timeout: 5)
                defer { socket.close() }
                try socket.send(
                    Array("GET /v1/apps/".utf8) + [0xFF, 0xFE]
                        + Array(
                            "/settings HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(ownerToken)\r\nConnection: close\r\n\r\n"
                                .utf8))
                return try RawSocket.response(socket.readToEnd())
            }
            #expect(raw.status == 400)
            #expect(raw.errorCode == "invalidEncoding")

            // The APNs endpoint answers in Apple's format.
            let push = try await app.post(
                "/3/device/%zz", json: #"{"aps": {"alert": "hi"}}"#, headers: [("apns-topic", "com.example.bad")])
            #expect(push.status == 400)
            #expect(push.reason == "BadDeviceToken")
            // The server keeps serving.
            #expect(try await harness.client(token: nil).get("/healthz").status == 200)
        }
    }
}
