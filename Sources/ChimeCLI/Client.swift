import Chime
import ChimeCore
import ChimeHTTP
import ChimeServer
import Foundation

/// A failure talking to the service: exit code 1, with what to do.
public struct CommandError: Error, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Talks to a running `chime serve`, found through its data directory (`server.json` and
/// `owner-token`), so no further flags are needed. Requests go through ``HTTPClient`` (libcurl),
/// over TCP or the service's Unix socket alike.
public struct ServiceClient: Sendable {
    public typealias Response = HTTPClient.Response

    /// Where the service is: `http://127.0.0.1:7878`, `https://…`, or `unix:/run/chime.sock`.
    public var endpoint: HTTPEndpoint { http.endpoint }
    public let token: String
    /// The service's Unix socket, when it listens on one; requests then go over it.
    public var socketPath: String? {
        if case .unixSocket(let path) = http.endpoint { return path }
        return nil
    }
    /// How long a request may take to connect and to finish, in seconds (event streams wait for
    /// events without limit).
    public var timeout: TimeInterval {
        get { http.timeout }
        set { http.timeout = newValue }
    }
    private var http: HTTPClient

    /// Finds the service of a data directory. A service serving TLS is trusted by the key its
    /// server.json pins (`tlsPin`: the certificate `chime serve --tls-cert` serves, self-signed or
    /// naming another host); `CHIME_CA_FILE`, when set, names a PEM file of CA certificates to
    /// verify it with instead.
    public init(dataDirectory: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let infoPath = ChimeService.serverInfoPath(dataDirectory: dataDirectory)
        guard let data = FileManager.default.contents(atPath: infoPath),
            let info = try? JSONValue.parse(data), case .string(let url)? = info["url"]
        else {
            throw CommandError(
                "no running Chime service found in \(dataDirectory) (no \(infoPath)); start one with `chime serve --data \(dataDirectory)`, or pass --data"
            )
        }
        // A Unix socket: `unixSocket` beside an `http://localhost` URL (as `chime serve` writes it), or a `unix:/path` URL.
        var socket: String?
        if case .string(let path)? = info["unixSocket"], !path.isEmpty {
            socket = path
        } else if url.hasPrefix("unix:") {
            socket = String(url.dropFirst(5))
        }
        let endpoint: HTTPEndpoint
        let dataFlag = dataDirectory == ChimeService.defaultDataDirectory() ? "" : " --data \(dataDirectory)"
        if let socket {
            if case .bool(true)? = info["tls"] {
                throw CommandError(
                    "the service in \(dataDirectory) serves HTTPS on the Unix socket \(socket); the chime CLI speaks plain HTTP over Unix sockets, so start it without --tls-cert/--tls-key there, or on TCP (--listen HOST:PORT)"
                )
            }
            do { endpoint = try HTTPEndpoint("unix:" + socket) } catch {
                throw CommandError("server.json names an unusable socket path \(socket)")
            }
        } else {
            do { endpoint = try HTTPEndpoint(url) } catch {
                throw CommandError(
                    "the service in \(dataDirectory) listens on \(url), which the chime CLI cannot reach; restart it with --listen HOST:PORT or --listen unix:/path"
                )
            }
        }
        let tokenPath = ChimeService.ownerTokenPath(dataDirectory: dataDirectory)
        guard let tokenData = FileManager.default.contents(atPath: tokenPath) else {
            throw CommandError("cannot read the owner token \(tokenPath); run as the user who started `chime serve`")
        }
        let start = socket.map { "chime serve --listen unix:\($0)\(dataFlag)" } ?? "chime serve\(dataFlag)"
        var pin: String?
        if case .string(let text)? = info["tlsPin"], text.hasPrefix("sha256//") { pin = text }
        http = HTTPClient(
            endpoint: endpoint, caFile: environment["CHIME_CA_FILE"].flatMap { $0.isEmpty ? nil : $0 },
            pinnedPublicKey: pin, startCommand: start)
        token = String(decoding: tokenData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Where the service is, for messages: its URL, or `unix:/path`.
    public var location: String { endpoint.description }

    /// Sends a request to a declared route: its method, its template filled with `parameters`
    /// (each percent-encoded as one segment), then `query` as given (`?identifier=a`, see
    /// ``CLI/query(_:)``). A non-2xx answer becomes a `CommandError` with the server's message.
    ///
    /// ```swift
    /// try await client.send(.addRequests, ["app": "com.example.alarm"], json: ["identifier": "Alarm", "title": "Alarm"])
    /// ```
    @discardableResult
    public func send(
        _ route: APIRoute, _ parameters: [String: String] = [:], query: String = "", json: JSONValue? = nil,
        body: Data? = nil, headers: [String: String] = [:], allowing: Set<Int> = []
    ) async throws -> Response {
        try await send(
            route.method.rawValue, route.path(parameters) + query, app: parameters["app"], json: json, body: body,
            headers: headers, allowing: allowing)
    }

    private func send(
        _ method: String, _ target: String, app: String?, json: JSONValue? = nil, body: Data? = nil,
        headers: [String: String] = [:], allowing: Set<Int> = []
    ) async throws -> Response {
        var fields = [("Authorization", "Bearer \(token)")]
        let bytes = json?.serializedBytes() ?? body.map(Array.init)
        if bytes != nil { fields.append(("Content-Type", "application/json")) }
        fields += headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let response: Response
        do {
            response = try await http.request(method, target, headers: fields, body: bytes)
        } catch let error as HTTPClientError {
            throw CommandError(error.message)
        }
        if !response.isSuccess && !allowing.contains(response.status) {
            throw CommandError(Self.describeFailure(response, app: app))
        }
        return response
    }

    /// Every item of the paged list a GET route answers, following the answers' `Link: rel="next"`
    /// (pages of up to 1,000), or only the first `limit` items.
    public func list(_ route: APIRoute, _ parameters: [String: String] = [:], query: String = "", limit: Int? = nil)
        async throws -> [JSONValue]
    {
        var items: [JSONValue] = []
        let size = min(limit ?? 1000, 1000)
        let path = route.path(parameters) + query
        var next: String? = path + (path.contains("?") ? "&" : "?") + "limit=\(size)"
        while let page = next {
            let response = try await send(route.method.rawValue, page, app: parameters["app"])
            guard case .array(let values)? = response.json else {
                throw CommandError("the service answered \(path) with something other than a list")
            }
            items += values
            if let limit, items.count >= limit { return Array(items.prefix(limit)) }
            next = LinkHeader.next(response.headers["link"])
        }
        return items
    }

    /// What went wrong, for a CLI user; `app` is the app the request named, if any.
    static func describeFailure(_ response: Response, app: String? = nil) -> String {
        switch response.serviceError {
        case let error? where error.reason == nil:
            var message = error.message ?? "failed"
            message = cliMessage(code: error.code, field: error.field, app: app, message: message) ?? message
            return "\(message)\(error.field.map { " (field: \($0))" } ?? "") [HTTP \(response.status)]"
        case let error?:
            return "\(error.reason ?? "") [HTTP \(response.status)]"
        case nil:
            return
                "the service answered HTTP \(response.status): \(String(decoding: response.body.prefix(300), as: UTF8.self))"
        }
    }

    /// What to tell a CLI user for the errors whose server message names an HTTP route: the
    /// `chime` command that does the same instead.
    static func cliMessage(code: String?, field: String?, app: String?, message: String) -> String? {
        switch (code, field) {
        case ("notFound", "app"?):
            let name = app ?? "APP"
            return
                "no app \(name); register it with `chime apps add \(name)` (`chime apps list` shows the registered ones)"
        case ("appExists", _):
            let name = app ?? message.components(separatedBy: " is already registered").first ?? "the app"
            return "\(name) is already registered; for a new token run `chime apps rotate-token \(name)`"
        default:
            return nil
        }
    }

    /// Follows the server-sent event stream of a route (`.appEvents`, `.allEvents`), calling
    /// `onEvent(kind, id, data)` for each event until the stream ends or the task is cancelled
    /// (then it returns).
    public func follow(
        _ route: APIRoute, _ parameters: [String: String] = [:],
        onEvent: @escaping @Sendable (String, String?, String) -> Void
    ) async throws {
        do {
            try await http.events(route.path(parameters), headers: [("Authorization", "Bearer \(token)")]) {
                onEvent($0.kind, $0.id, $0.data)
            }
        } catch is CancellationError {
            return
        } catch let error as HTTPClientError {
            if let response = error.response {
                throw CommandError(
                    "the event stream answered: " + Self.describeFailure(response, app: parameters["app"]))
            }
            throw CommandError(error.message)
        }
    }
}
