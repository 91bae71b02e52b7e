import CMicroHTTPD
import Synchronization

/// One request's state between libmicrohttpd's calls. Touched on the daemon thread, except
/// `response`, which the handler's task sets under the lock before resuming the connection.
final class RequestState: @unchecked Sendable {
    var request = HTTPRequest(method: "GET", path: "/")
    /// Set once the first call of the access handler has seen the head.
    var headSeen = false
    /// Found in the request target before the head was complete (answered at the first call).
    var problem: RequestProblem?
    var entry: ConnectionGuard.Entry?
    let startedAt = ContinuousClock.now
    var limit = 0
    var tooLarge = false
    var started = false
    var status: Int?
    var route = "unmatched"
    /// The bit pattern of the connection, for resuming it (set when it is parked).
    private let finished = Mutex<(response: HTTPResponse?, done: Bool, connection: Int)>((nil, false, 0))

    /// Remembers the connection to resume when the answer is ready.
    func park(on connection: OpaquePointer) {
        let bits = Int(bitPattern: connection)
        finished.withLock { $0.connection = bits }
    }

    /// Stores the handler's response and resumes the connection; only the first call counts.
    func finish(_ response: HTTPResponse) {
        finished.withLock { finished in
            guard !finished.done else { return }
            finished.response = response
            finished.done = true
            if let connection = OpaquePointer(bitPattern: finished.connection) { MHD_resume_connection(connection) }
        }
    }

    func takeResponse() -> HTTPResponse? {
        finished.withLock { finished in
            defer { finished.response = nil }
            return finished.response
        }
    }
}
