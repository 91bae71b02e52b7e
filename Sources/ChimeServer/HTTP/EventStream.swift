import CMicroHTTPD
import ChimeCore
import Foundation
import Synchronization

/// Where an ``EventStream`` is written: parked when nothing is queued, resumed when something is.
/// Both are called under the stream's lock and must return at once.
protocol StreamSink: Sendable {
    /// Nothing is queued: stop asking the stream for bytes.
    func suspend()
    /// Bytes (or the end) are queued: ask again.
    func resume()
}

/// An HTTP/1.1 connection of libmicrohttpd's, suspended and resumed.
struct MicroHTTPDSink: StreamSink {
    /// The bit pattern of libmicrohttpd's `struct MHD_Connection *`.
    let connection: Int
    func suspend() { OpaquePointer(bitPattern: connection).map { MHD_suspend_connection($0) } }
    func resume() { OpaquePointer(bitPattern: connection).map { MHD_resume_connection($0) } }
}

/// A server-sent event stream: the application sends events, the server writes them to the
/// connection.
///
/// No thread waits for a subscriber: when nothing is queued, the stream's reader parks its
/// connection (libmicrohttpd suspends an HTTP/1.1 connection; an HTTP/2 stream's data is
/// deferred), and ``send(_:)`` resumes it. A heartbeat comment
/// from the server keeps idle streams alive and finds clients that went away.
///
/// ```swift
/// let stream = EventStream()
/// stream.send(event: "delivered", id: "42", data: #"{"identifier": "a"}"#)
/// return HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream")], body: .stream(stream))
/// ```
public final class EventStream: Sendable {
    /// The most bytes a stream queues for a client by default: past it, the client is too slow
    /// (or not reading), and the connection is closed (see ``send(_:)``).
    public static let defaultQueueLimit = 1 << 20

    private struct State {
        /// Frames not yet written, oldest first; the first is written from `offset`. Frames are
        /// shared with every other stream carrying the same event (nothing is copied per stream).
        var frames = TimeQueue<[UInt8]>()
        var offset = 0
        var queued = 0
        var limit = EventStream.defaultQueueLimit
        var closed = false
        /// The client did not keep up (or went away): the queue was dropped, the connection is cut.
        var abandoned = false
        /// Where the stream is written, once the response is queued; nil again when it ended.
        var sink: (any StreamSink)?
        var suspended = false
        var ended = false
        var onEnd: [@Sendable () -> Void] = []
        var onDrain: (@Sendable () -> Void)?
        var disconnect: (@Sendable () -> Void)?
    }

    // The sink is only used under this lock, and only while its connection is known to exist
    // (between `attach` and `detach`).
    private let state = Mutex(State())

    public init() {}

    /// Queues an event. `data` may span lines; each becomes a `data:` line.
    public func send(event: String? = nil, id: String? = nil, data: String) {
        send(Self.frame(event: event, id: id, data: Array(data.utf8)))
    }

    /// One event as it goes on the wire: `id:`, `event:`, a `data:` line per line of `data`, and
    /// the blank line that ends it. Built once and shared when many streams carry the same event.
    public static func frame(event: String? = nil, id: String? = nil, data: [UInt8]) -> [UInt8] {
        ServerSentEvents.frame(event: event, id: id, data: data)
    }

    /// Queues a comment line (ignored by clients; used for heartbeats).
    public func sendComment(_ comment: String) {
        send(Array(": \(comment)\n\n".utf8))
    }

    /// Queues raw bytes. A client that lets more than the stream's limit
    /// (``defaultQueueLimit`` unless the server sets another) pile up unread is disconnected: the
    /// queue is dropped at once and the connection closed, so a subscriber that never reads costs a
    /// bounded amount of memory. A client of an event feed resumes with `Last-Event-ID`, losing
    /// nothing.
    ///
    /// - Returns: false when the stream no longer takes bytes (closed, ended, or just abandoned).
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        let (accepted, cut) = state.withLock { state -> (Bool, (@Sendable () -> Void)?) in
            guard !state.closed, !state.ended, !state.abandoned else { return (false, nil) }
            if state.queued > 0, state.queued + bytes.count > state.limit {
                return (false, abandon(&state))
            }
            state.frames.append(bytes)
            state.queued += bytes.count
            resumeIfSuspended(&state)
            return (true, nil)
        }
        cut?()
        return accepted
    }

    /// Bytes queued and not yet handed to the connection.
    public var queuedBytes: Int { state.withLock { $0.queued } }

    /// The most bytes the stream queues before it abandons its client.
    public var queueLimit: Int { state.withLock { $0.limit } }

    /// Calls `body` (on the server's thread; it must return quickly) each time the queue falls to
    /// half the stream's limit or below: room to send more (a feed replaying its log in pages).
    public func onDrain(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.onDrain = body }
    }

    /// Drops what is queued and ends the connection at once (the client went away or is too slow).
    public func abandon() {
        let cut = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.ended, !state.abandoned else { return nil }
            return abandon(&state)
        }
        cut?()
    }

    private func abandon(_ state: inout State) -> (@Sendable () -> Void)? {
        state.abandoned = true
        state.frames = TimeQueue()
        state.offset = 0
        state.queued = 0
        resumeIfSuspended(&state)
        return state.disconnect
    }

    /// Ends the stream after what is queued has been written.
    public func close() {
        state.withLock { state in
            state.closed = true
            resumeIfSuspended(&state)
        }
    }

    /// Whether the stream has ended (closed and written, the client went away, or abandoned).
    public var isEnded: Bool { state.withLock { $0.ended || $0.abandoned } }

    /// Registers a call made once when the stream ends for any reason (client gone, closed,
    /// server stopping). Called at once when it has already ended.
    public func onEnd(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.ended { return true }
            state.onEnd.append(body)
            return false
        }
        if now { body() }
    }

    // MARK: - Server side

    private func resumeIfSuspended(_ state: inout State) {
        if state.suspended, let sink = state.sink {
            state.suspended = false
            sink.resume()
        }
    }

    /// The server queued the stream on `sink`: at most `limit` bytes may wait, and
    /// `disconnect` ends the connection (or the HTTP/2 stream) when the client does not keep up.
    func attach(_ sink: any StreamSink, limit: Int, disconnect: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.sink = sink
            state.limit = max(limit, 1)
            state.disconnect = disconnect
        }
    }

    /// The stream's connection is now written by another party (a ``StreamWriter`` took over
    /// libmicrohttpd's socket): park and wake it through `sink` from now on.
    func moveSink(to sink: any StreamSink) {
        state.withLock { state in
            guard state.sink != nil else { return }
            state.sink = sink
            state.suspended = false
        }
    }

    /// The connection is finished: never touch it again.
    func detach() {
        let calls = state.withLock { state -> [@Sendable () -> Void] in
            state.sink = nil
            state.suspended = false
            state.frames = TimeQueue()
            state.queued = 0
            state.onDrain = nil
            state.disconnect = nil
            if state.ended { return [] }
            state.ended = true
            defer { state.onEnd.removeAll() }
            return state.onEnd
        }
        for call in calls { call() }
    }

    /// Whether the connection is parked waiting for events.
    var isSuspended: Bool { state.withLock { $0.suspended } }

    /// The server's reader (libmicrohttpd's content reader, an HTTP/2 data source): queued bytes,
    /// -1 at the end of the stream, -2 when the client was abandoned, or 0 after parking the sink.
    /// Called on the server's thread.
    func read(into buffer: UnsafeMutableRawPointer, max: Int) -> Int {
        let address = Int(bitPattern: buffer)
        let (count, drained) = state.withLock { state -> (Int, (@Sendable () -> Void)?) in
            if state.abandoned { return (-2, nil) }  // MHD_CONTENT_READER_END_WITH_ERROR: close now
            if state.queued > 0 {
                let before = state.queued
                let target = UnsafeMutableRawPointer(bitPattern: address)!
                var written = 0
                while written < max, let frame = state.frames.first {
                    let count = min(frame.count - state.offset, max - written)
                    frame.withUnsafeBytes { raw in
                        (target + written).copyMemory(from: raw.baseAddress! + state.offset, byteCount: count)
                    }
                    written += count
                    state.offset += count
                    if state.offset == frame.count {
                        state.frames.removeFirst()
                        state.offset = 0
                    }
                }
                state.queued -= written
                let half = state.limit / 2
                return (written, before > half && state.queued <= half ? state.onDrain : nil)
            }
            if state.closed { return (-1, nil) }  // MHD_CONTENT_READER_END_OF_STREAM
            // Nothing to write: park the connection until `send` or `close` resumes it. Suspending
            // from the content reader is one of the two places libmicrohttpd allows it.
            if let sink = state.sink {
                state.suspended = true
                sink.suspend()
            }
            return (0, state.onDrain)
        }
        drained?()
        return count
    }
}
