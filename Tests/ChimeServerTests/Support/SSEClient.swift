import ChimeCore
import ChimeHTTP
import Foundation

struct SSEEvent: Sendable {
    var id: String?
    var event: String?
    var data: String
    var json: JSONValue? { try? JSONValue.parse(data) }
}

/// The tests' reader of a server-sent event stream, on Chime's own ``HTTPClient`` (libcurl, the
/// client the CLI and `ServiceBackend` follow their streams with): `open` returns once the answer's
/// head is in, whatever its status; events and heartbeat comments are kept in order for `next` and
/// `waitForComments`, each wait bounded. The stream is read on HTTPClient's thread until the
/// server ends it or `close()` (or dropping the client) cancels it.
final class SSEClient: Sendable {
    let status: Int
    let headers: [String: String]
    private let feed: Feed
    private let reader: Task<Void, Never>

    private init(head: HTTPClient.Response, feed: Feed, reader: Task<Void, Never>) {
        status = head.status
        headers = head.headers
        self.feed = feed
        self.reader = reader
    }

    /// Opens the stream of a declared event route (`.appEvents`, `.allEvents`: GET), its template
    /// filled with `parameters`, then `query`.
    static func open(
        _ endpoint: TestEndpoint, _ route: APIRoute, _ parameters: [String: String] = [:], query: String = "",
        token: String?,
        lastEventID: String? = nil, headers: [(String, String)] = [], source: String? = nil
    ) async throws -> SSEClient {
        precondition(route.method == .get, "\(route) is not an event stream")
        return try await open(
            endpoint, path: route.path(parameters) + query, token: token, lastEventID: lastEventID, headers: headers,
            source: source)
    }

    /// - Parameter source: the local address to connect from (`127.0.0.2`: another client
    ///   address on the same machine), or nil for the default.
    static func open(
        _ endpoint: TestEndpoint, path: String, token: String?, lastEventID: String? = nil,
        headers: [(String, String)] = [],
        source: String? = nil
    ) async throws -> SSEClient {
        var fields: [(String, String)] = []
        if let token { fields.append(("Authorization", "Bearer \(token)")) }
        if let lastEventID { fields.append(("Last-Event-ID", lastEventID)) }
        let request = fields + headers
        let client = HTTPClient(endpoint: endpoint.http, timeout: 15, localAddress: source)
        let feed = Feed()
        let reader = Task {
            do {
                try await client.events(
                    path, headers: request, onResponse: { head in feed.update { $0.head = head } },
                    onComment: { _ in feed.update { $0.comments += 1 } }
                ) { event in
                    feed.update { $0.events.append(SSEEvent(id: event.id, event: event.kind, data: event.data)) }
                }
                feed.update { $0.end = "the server ended it" }
            } catch is CancellationError {
                feed.update { $0.end = "closed by the test" }
            } catch {
                feed.update { state in
                    state.end = "\(error)"
                    state.failure = error
                }
            }
        }
        // Generous: while blocking tests hold Swift's cooperative threads, no server handler runs.
        let head = try await feed.wait(30) { state -> HTTPClient.Response? in
            if let head = state.head { return head }
            if let failure = state.failure { throw failure }
            if let end = state.end { throw TestClientError(description: "no response head for \(path): \(end)") }
            return nil
        }
        guard let head else {
            reader.cancel()
            throw TestClientError(description: "no response head for \(path) within 30 s")
        }
        return SSEClient(head: head, feed: feed, reader: reader)
    }

    /// The next event, waiting up to `timeout` seconds.
    func next(timeout: Double = 60) async throws -> SSEEvent {
        let event = try await feed.wait(timeout) { state -> SSEEvent? in
            if !state.events.isEmpty { return state.events.removeFirst() }
            if let end = state.end { throw TestClientError(description: "the stream ended (\(end))") }
            return nil
        }
        guard let event else { throw TestClientError(description: "no event within \(timeout) s") }
        return event
    }

    /// Waits until the stream ends (the server ended it, or the connection broke).
    func waitForEnd(timeout: Double = 60) async throws -> Bool {
        try await feed.wait(timeout) { $0.end == nil ? nil : true } ?? false
    }

    /// Waits until at least `count` comment lines (heartbeats) arrived.
    func waitForComments(_ count: Int, timeout: Double = 60) async throws -> Bool {
        try await feed.wait(timeout) { state -> Bool? in
            if state.comments >= count { return true }
            return state.end == nil ? nil : false
        } ?? false
    }

    /// Closes the connection (the reader's transfer is cancelled; curl closes the socket).
    func close() { reader.cancel() }

    deinit { reader.cancel() }
}

/// What the reader has received, for the waits.
///
/// `@unchecked Sendable`: `state` is read and written only with `condition` locked.
private final class Feed: @unchecked Sendable {
    struct State {
        var head: HTTPClient.Response?
        var events: [SSEEvent] = []
        var comments = 0
        /// How the stream ended, once it has.
        var end: String?
        /// The error that ended it before a head came (no service, refused).
        var failure: (any Error)?
    }

    private let condition = NSCondition()
    private var state = State()

    func update(_ change: (inout State) -> Void) {
        condition.lock()
        change(&state)
        condition.broadcast()
        condition.unlock()
    }

    /// Waits, on a thread of its own, until `ready` gives a value or throws, or `timeout` seconds
    /// passed (then nil).
    func wait<T: Sendable>(_ timeout: Double, until ready: @escaping @Sendable (inout State) throws -> T?) async throws
        -> T?
    {
        try await TestClient.offPool { [self] in
            let deadline = Date().addingTimeInterval(timeout)
            condition.lock()
            defer { condition.unlock() }
            while true {
                if let value = try ready(&state) { return value }
                if !condition.wait(until: deadline) { return try ready(&state) }
            }
        }
    }
}
