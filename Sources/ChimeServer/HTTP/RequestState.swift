import CMicroHTTPD
import Synchronization

/// One request's state between libmicrohttpd's calls. Touched on the daemon thread, except the
/// answer, which the handler gives from any thread under the lock (resuming the connection if it
/// was suspended for it).
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
    /// The answer once the handler gave it (a function that makes it, run on the daemon thread),
    /// whether one was given, and the bit pattern of the connection while it is suspended waiting
    /// for it.
    private let finished = Mutex<(make: (@Sendable () -> HTTPResponse)?, done: Bool, connection: Int)>((nil, false, 0))

    /// Suspends the connection until the answer comes, unless it is here already: then it is
    /// returned (made) and the connection is not suspended. On the daemon thread, in the access
    /// handler's call that completed the request.
    func parkUnlessAnswered(_ connection: OpaquePointer) -> HTTPResponse? {
        let make = finished.withLock { finished -> (@Sendable () -> HTTPResponse)? in
            if let make = finished.make {
                finished.make = nil
                return make
            }
            finished.connection = Int(bitPattern: connection)
            MHD_suspend_connection(connection)
            return nil
        }
        return make?()
    }

    /// Stores the handler's answer and resumes the connection if it is suspended; only the first
    /// call counts. Any thread.
    func finish(_ make: @escaping @Sendable () -> HTTPResponse) {
        finished.withLock { finished in
            guard !finished.done else { return }
            finished.make = make
            finished.done = true
            if let connection = OpaquePointer(bitPattern: finished.connection) { MHD_resume_connection(connection) }
        }
    }

    /// ``finish(_:)`` with an answer already made.
    func finish(_ response: HTTPResponse) {
        finish { response }
    }

    /// The answer, made on the daemon thread, once the connection was resumed for it.
    func takeResponse() -> HTTPResponse? {
        let make = finished.withLock { finished in
            defer { finished.make = nil }
            return finished.make
        }
        return make?()
    }
}
