import ChimeCore
import ChimeHTTP
import ChimeServer
import Foundation

/// A response as the test client read it.
struct TestResponse: Sendable {
    var status: Int
    /// Lowercased names.
    var headers: [String: String]
    var body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }
    var json: JSONValue? { try? JSONValue.parse(body) }
    /// `error.code` of an error answer.
    var errorCode: String? {
        if case .string(let code)? = json?["error"]?["code"] { return code }
        return nil
    }
    var reason: String? {
        if case .string(let reason)? = json?["reason"] { return reason }
        return nil
    }
}

struct TestClientError: Error, CustomStringConvertible {
    var description: String
}

/// Where the test client connects.
enum TestEndpoint: Sendable {
    case tcp(port: UInt16)
    case unix(path: String)
    /// No socket: each request goes straight to the service's API, with `host` as its Host header
    /// (``InProcess``; the service tests that are not about the wire).
    case inProcess(ChimeAPI, host: String)

    var http: HTTPEndpoint {
        switch self {
        case .tcp(let port): .url("http://127.0.0.1:\(port)")
        case .unix(let path): .unixSocket(path: path)
        case .inProcess:
            preconditionFailure("an in-process endpoint has no socket; tests of the wire use .tcp or .unix")
        }
    }
}

/// The tests' client: Chime's own ``HTTPClient`` (libcurl), or with an ``TestEndpoint/inProcess(_:host:)``
/// endpoint the service's API called directly, with the test's token, answering whatever the status. Event streams are read with ``SSEClient`` (the same client); only tests
/// of what a client may send on the wire use ``RawSocket``.
struct TestClient: Sendable {
    var endpoint: TestEndpoint
    var token: String?

    init(port: UInt16, token: String? = nil) {
        endpoint = .tcp(port: port)
        self.token = token
    }

    init(endpoint: TestEndpoint, token: String? = nil) {
        self.endpoint = endpoint
        self.token = token
    }

    func with(token: String?) -> TestClient { TestClient(endpoint: endpoint, token: token) }

    func get(_ path: String, headers: [(String, String)] = []) async throws -> TestResponse {
        try await request("GET", path, headers: headers)
    }

    /// Every page of a list from `path`, following Link rel="next" (at most 100 pages); the
    /// pages' sizes too. A page that is not a 200 list throws.
    func pages(_ path: String) async throws -> (items: [JSONValue], sizes: [Int]) {
        var items: [JSONValue] = []
        var sizes: [Int] = []
        var next: String? = path
        while let target = next, sizes.count < 100 {
            let response = try await get(target)
            guard response.status == 200, case .array(let page)? = response.json else {
                throw TestClientError(description: "GET \(target): \(response.status) \(response.text.prefix(300))")
            }
            items += page
            sizes.append(page.count)
            next = LinkHeader.next(response.headers["link"])
        }
        return (items, sizes)
    }

    func post(_ path: String, json: String? = nil, headers: [(String, String)] = []) async throws -> TestResponse {
        try await request(
            "POST", path, headers: headers, body: json.map { Array($0.utf8) },
            contentType: json == nil ? nil : "application/json")
    }

    func put(_ path: String, json: String) async throws -> TestResponse {
        try await request("PUT", path, body: Array(json.utf8), contentType: "application/json")
    }

    func delete(_ path: String) async throws -> TestResponse { try await request("DELETE", path) }

    /// A request to a declared route: its method, its template filled with `parameters` (each
    /// percent-encoded as one segment), then `query` as given (`?identifier=a1`). `json` goes as
    /// `application/json`; another body as `body` with its `contentType`.
    ///
    /// ```swift
    /// try await client.request(.addRequests, ["app": "com.example.a"], json: #"{"identifier": "a1"}"#)
    /// ```
    func request(
        _ route: APIRoute, _ parameters: [String: String] = [:], query: String = "", json: String? = nil,
        body: [UInt8]? = nil, contentType: String? = nil, headers: [(String, String)] = []
    ) async throws -> TestResponse {
        // A route the test does not know how to fill fails that test, not the whole test process
        // (APIRoute.path(_:) stops the program on a mismatch, as a mistake in product code should).
        guard Set(parameters.keys) == Set(route.parameters) else {
            throw RouteParametersMismatch(route: "\(route)", takes: route.parameters, given: parameters.keys.sorted())
        }
        return try await request(
            route.method.rawValue, route.path(parameters) + query, headers: headers,
            body: json.map { Array($0.utf8) } ?? body, contentType: json == nil ? contentType : "application/json")
    }

    /// A request as given: any method and target, for paths no route declares or spelled on purpose.
    func request(
        _ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
        contentType: String? = nil
    ) async throws -> TestResponse {
        var fields: [(String, String)] = []
        if let token { fields.append(("Authorization", "Bearer \(token)")) }
        if let contentType { fields.append(("Content-Type", contentType)) }
        if case .inProcess(let api, let host) = endpoint {
            return try await InProcess.handle(
                api, host: host, method: method, target: path, headers: fields + headers, body: body)
        }
        // 60 s: a bound for a hang, not a measure: in the first seconds of a full run hundreds of test
        // bodies open stores and fsync at once on two cores, and an answer can take more than 15 s.
        let response = try await HTTPClient(endpoint: endpoint.http, timeout: 60).request(
            method, path, headers: fields + headers, body: body)
        return TestResponse(status: response.status, headers: response.headers, body: response.body)
    }

    /// Runs blocking work on a thread of its own: neither the cooperative pool (the server's
    /// handlers) nor libdispatch's width-limited global queues (the engine's writer) are held up.
    static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await OffPool.run("test.client", body)
    }
}

/// A test asked for a declared route with parameters other than the route's own.
struct RouteParametersMismatch: Error, CustomStringConvertible {
    let route: String
    let takes: [String]
    let given: [String]
    var description: String { "\(route) takes the parameters \(takes), the test gave \(given)" }
}
