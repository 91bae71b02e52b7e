import Synchronization

/// The connection a request came on (one HTTP/2 connection, or one HTTP/1.1 connection with its
/// keep-alive requests), and what handlers keep for it while it is open: the state lives in this
/// object, so it goes when the connection's last request is done with it, and nothing has to be
/// swept. Handlers find it as ``HTTPRequest/connection``.
///
/// ```swift
/// struct Seen: Sendable { var count = 0 }
/// let count = request.connection?.withValue(Seen()) { seen in
///     seen.count += 1
///     return seen.count
/// }
/// ```
public final class HTTPConnection: Sendable {
    private let values = Mutex<[ObjectIdentifier: any Sendable]>([:])

    public init() {}

    /// Runs `body` on this connection's value of type `Value` (`initial` the first time), keeping
    /// what `body` leaves in it. One value per type; calls are serialized.
    public func withValue<Value: Sendable, Result>(_ initial: @autoclosure () -> Value, _ body: (inout Value) -> Result)
        -> Result
    {
        values.withLock { values in
            let key = ObjectIdentifier(Value.self)
            var value = values[key] as? Value ?? initial()
            let result = body(&value)
            values[key] = value
            return result
        }
    }
}
