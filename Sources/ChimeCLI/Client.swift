import Chime
import ChimeCore
import ChimeServer
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A failure talking to the service: exit code 1, with what to do.
public struct CommandError: Error, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Talks to a running `chime serve`, found through its data directory (`server.json` and
/// `owner-token`), so no further flags are needed. Over TCP it uses URLSession; for a service on a
/// Unix socket (`chime serve --listen unix:/path`) it speaks HTTP/1.1 over the socket itself.
public struct ServiceClient: Sendable {
    /// Where the service is: `http://127.0.0.1:7878`, `https://…`, or `unix:/run/chime.sock` for a
    /// Unix socket.
    public let baseURL: URL
    public let token: String
    /// The service's Unix socket, when it listens on one; requests then go over it.
    public let socketPath: String?
    /// How long a request may take to connect and to get each part of its answer, in seconds
    /// (event streams wait for events without limit).
    public var timeout: TimeInterval = 60
    private let dataDirectory: String

    /// Finds the service of a data directory.
    public init(dataDirectory: String) throws {
        let infoPath = ChimeService.serverInfoPath(dataDirectory: dataDirectory)
        guard let data = FileManager.default.contents(atPath: infoPath),
              let info = try? JSONValue.parse(data), case .string(let url)? = info["url"]
        else {
            throw CommandError("no running Chime service found in \(dataDirectory) (no \(infoPath)); start one with `chime serve --data \(dataDirectory)`, or pass --data")
        }
        // A Unix socket: `unixSocket` beside an `http://localhost` URL (as `chime serve` writes it), or a `unix:/path` URL.
        var socket: String?
        if case .string(let path)? = info["unixSocket"], !path.isEmpty {
            socket = path
        } else if url.hasPrefix("unix:") {
            socket = String(url.dropFirst(5))
        }
        let base: URL
        if let socket {
            if case .bool(true)? = info["tls"] {
                throw CommandError("the service in \(dataDirectory) serves HTTPS on the Unix socket \(socket); the chime CLI speaks plain HTTP over Unix sockets, so start it without --tls-cert/--tls-key there, or on TCP (--listen HOST:PORT)")
            }
            let shown = socket.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? socket
            guard let socketURL = URL(string: "unix:" + shown) else { throw CommandError("server.json names an unusable socket path \(socket)") }
            base = socketURL
        } else {
            guard let parsed = URL(string: url), parsed.scheme == "http" || parsed.scheme == "https" else {
                throw CommandError("the service in \(dataDirectory) listens on \(url), which the chime CLI cannot reach; restart it with --listen HOST:PORT or --listen unix:/path")
            }
            base = parsed
        }
        let tokenPath = ChimeService.ownerTokenPath(dataDirectory: dataDirectory)
        guard let tokenData = FileManager.default.contents(atPath: tokenPath) else {
            throw CommandError("cannot read the owner token \(tokenPath); run as the user who started `chime serve`")
        }
        baseURL = base
        socketPath = socket
        self.dataDirectory = dataDirectory
        token = String(decoding: tokenData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Where the service is, for messages: its URL, or `unix:/path`.
    public var location: String { socketPath.map { "unix:\($0)" } ?? baseURL.absoluteString }

    /// The transport for a service on a Unix socket.
    private var unixTransport: UnixSocketTransport? {
        guard let socketPath else { return nil }
        let dataFlag = dataDirectory == ChimeService.defaultDataDirectory() ? "" : " --data \(dataDirectory)"
        return UnixSocketTransport(path: socketPath, timeout: timeout, startCommand: "chime serve --listen unix:\(socketPath)\(dataFlag)")
    }

    public struct Response: Sendable {
        public var status: Int
        public var body: Data
        public var headers: [String: String]
        public var json: JSONValue? { try? JSONValue.parse(body) }
    }

    /// Sends a request; a non-2xx answer becomes a `CommandError` with the server's message.
    @discardableResult
    public func send(_ method: String, _ path: String, json: JSONValue? = nil, body: Data? = nil,
                     headers: [String: String] = [:], allowing: Set<Int> = []) async throws -> Response {
        if let transport = unixTransport {
            var fields = [("Authorization", "Bearer \(token)")]
            var bytes: [UInt8]?
            if let json {
                bytes = json.serializedBytes()
            } else if let body {
                bytes = Array(body)
            }
            if bytes != nil { fields.append(("Content-Type", "application/json")) }
            fields += headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            let result = try await transport.send(method: method, target: path, headers: fields, body: bytes)
            if !(200..<300).contains(result.status) && !allowing.contains(result.status) {
                throw CommandError(Self.describeFailure(status: result.status, body: result.body, path: path))
            }
            return result
        }
        guard let url = URL(string: path, relativeTo: baseURL) else { throw CommandError("bad path \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let json {
            request.httpBody = Data(json.serializedBytes())
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        } else if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response): (Data, URLResponse)
        do {
            (data, response) = try await URLSession.shared.data(for: request)
        } catch {
            throw CommandError("cannot reach the Chime service at \(baseURL.absoluteString): \(error.localizedDescription); is `chime serve` running?")
        }
        let http = response as? HTTPURLResponse
        let status = http?.statusCode ?? 0
        var headerFields: [String: String] = [:]
        for (key, value) in http?.allHeaderFields ?? [:] { headerFields[String(describing: key).lowercased()] = String(describing: value) }
        let result = Response(status: status, body: data, headers: headerFields)
        if !(200..<300).contains(status) && !allowing.contains(status) {
            throw CommandError(Self.describeFailure(status: status, body: data, path: path))
        }
        return result
    }

    /// Every item of a paged list, following the answers' `Link: rel="next"` (pages of up to
    /// 1,000), or only the first `limit` items.
    public func list(_ path: String, limit: Int? = nil) async throws -> [JSONValue] {
        var items: [JSONValue] = []
        let size = min(limit ?? 1000, 1000)
        var next: String? = path + (path.contains("?") ? "&" : "?") + "limit=\(size)"
        while let page = next {
            let response = try await send("GET", page)
            guard case .array(let values)? = response.json else { throw CommandError("the service answered \(path) with something other than a list") }
            items += values
            if let limit, items.count >= limit { return Array(items.prefix(limit)) }
            next = LinkHeader.next(response.headers["link"])
        }
        return items
    }

    static func describeFailure(status: Int, body: Data, path: String = "") -> String {
        if let json = try? JSONValue.parse(body) {
            if case .object(let error)? = json["error"] {
                var message = error["message"].flatMap { if case .string(let s) = $0 { s } else { nil } } ?? "failed"
                let field = error["field"].flatMap { if case .string(let s) = $0 { s } else { nil } }
                let code = error["code"].flatMap { if case .string(let s) = $0 { s } else { nil } }
                message = cliMessage(code: code, field: field, path: path, message: message) ?? message
                return "\(message)\(field.map { " (field: \($0))" } ?? "") [HTTP \(status)]"
            }
            if case .string(let reason)? = json["reason"] { return "\(reason) [HTTP \(status)]" }
        }
        return "the service answered HTTP \(status): \(String(decoding: body.prefix(300), as: UTF8.self))"
    }

    /// What to tell a CLI user for the errors whose server message names an HTTP route: the
    /// `chime` command that does the same instead.
    static func cliMessage(code: String?, field: String?, path: String, message: String) -> String? {
        let app = path.hasPrefix("/v1/apps/")
            ? path.dropFirst("/v1/apps/".count).split(separator: "/").first.flatMap { try? PercentEncoding.decode($0) } : nil
        switch (code, field) {
        case ("notFound", "app"?):
            let name = app ?? "APP"
            return "no app \(name); register it with `chime apps add \(name)` (`chime apps list` shows the registered ones)"
        case ("appExists", _):
            let name = app ?? message.components(separatedBy: " is already registered").first ?? "the app"
            return "\(name) is already registered; for a new token run `chime apps rotate-token \(name)`"
        default:
            return nil
        }
    }

    /// Follows a server-sent event stream, calling `onEvent(kind, id, data)` for each event until
    /// the stream ends.
    public func follow(_ path: String, onEvent: @escaping @Sendable (String, String?, String) -> Void) async throws {
        if let transport = unixTransport {
            let parser = Mutex(ServerSentEventParser())
            try await transport.stream(target: path, headers: [("Authorization", "Bearer \(token)"), ("Accept", "text/event-stream")]) { bytes in
                for event in parser.withLock({ $0.feed(bytes) }) { onEvent(event.kind, event.id, event.data) }
            }
            return
        }
        guard let url = URL(string: path, relativeTo: baseURL) else { throw CommandError("bad path \(path)") }
        var request = URLRequest(url: url)
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        request.timeoutInterval = 365 * 86_400
        let reader = EventStreamReader(onEvent: onEvent)
        let session = URLSession(configuration: .default, delegate: reader, delegateQueue: nil)
        session.dataTask(with: request).resume()
        defer { session.invalidateAndCancel() }
        do {
            try await reader.finished()
        } catch let failure as EventStreamReader.Failure {
            throw CommandError(failure.description)
        }
    }
}
