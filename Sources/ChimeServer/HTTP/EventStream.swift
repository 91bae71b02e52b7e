import CMicroHTTPD
import Foundation
import Synchronization

/// A server-sent event stream: the application sends events, the server writes them to the
/// connection.
///
/// No thread waits for a subscriber: when nothing is queued, the stream's reader suspends the
/// connection (libmicrohttpd then ignores it), and ``send(_:)`` resumes it. A heartbeat comment
/// from the server keeps idle streams alive and finds clients that went away.
///
/// ```swift
/// let stream = EventStream()
/// stream.send(event: "delivered", id: "42", data: #"{"identifier": "a"}"#)
/// return HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream")], body: .stream(stream))
/// ```
public final class EventStream: Sendable {
    private struct State {
        var buffer: [UInt8] = []
        var offset = 0
        var closed = false
        /// The connection, once the response is queued; nil again when the connection ended.
        var connection: Int = 0  // the bit pattern of libmicrohttpd's `struct MHD_Connection *`
        var suspended = false
        var ended = false
        var onEnd: [@Sendable () -> Void] = []
    }

    // libmicrohttpd's connection pointer is only used under this lock, and only while the
    // connection is known to exist (between `attach` and `detach`).
    private let state = Mutex(State())

    public init() {}

    /// Queues an event. `data` may span lines; each becomes a `data:` line.
    public func send(event: String? = nil, id: String? = nil, data: String) {
        send(Self.frame(event: event, id: id, data: Array(data.utf8)))
    }

    /// One event as it goes on the wire: `id:`, `event:`, a `data:` line per line of `data`, and
    /// the blank line that ends it. Built once and shared when many streams carry the same event.
    public static func frame(event: String? = nil, id: String? = nil, data: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.count + 64)
        if let id { bytes += Array("id: \(id)\n".utf8) }
        if let event { bytes += Array("event: \(event)\n".utf8) }
        let prefix = Array("data: ".utf8)
        var start = 0
        for index in data.indices where data[index] == 0x0A {
            bytes += prefix
            bytes += data[start..<index]
            bytes.append(0x0A)
            start = index + 1
        }
        bytes += prefix
        bytes += data[start...]
        bytes += [0x0A, 0x0A]
        return bytes
    }

    /// Queues a comment line (ignored by clients; used for heartbeats).
    public func sendComment(_ comment: String) {
        send(Array(": \(comment)\n\n".utf8))
    }

    /// Queues raw bytes.
    public func send(_ bytes: [UInt8]) {
        state.withLock { state in
            guard !state.closed, !state.ended else { return }
            state.buffer += bytes
            resumeIfSuspended(&state)
        }
    }

    /// Ends the stream after what is queued has been written.
    public func close() {
        state.withLock { state in
            state.closed = true
            resumeIfSuspended(&state)
        }
    }

    /// Whether the stream has ended (closed and written, or the client went away).
    public var isEnded: Bool { state.withLock { $0.ended } }

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
        if state.suspended, let connection = OpaquePointer(bitPattern: state.connection) {
            state.suspended = false
            MHD_resume_connection(connection)
        }
    }

    func attach(_ connection: OpaquePointer) {
        let bits = Int(bitPattern: connection)
        state.withLock { $0.connection = bits }
    }

    /// The connection is finished: never touch it again.
    func detach() {
        let calls = state.withLock { state -> [@Sendable () -> Void] in
            state.connection = 0
            state.suspended = false
            if state.ended { return [] }
            state.ended = true
            defer { state.onEnd.removeAll() }
            return state.onEnd
        }
        for call in calls { call() }
    }

    /// Whether the connection is parked waiting for events.
    var isSuspended: Bool { state.withLock { $0.suspended } }

    /// libmicrohttpd's content reader: queued bytes, end of stream, or suspend and return 0.
    /// Called on the daemon's thread.
    func read(into buffer: UnsafeMutablePointer<CChar>, max: Int) -> Int {
        let target = Int(bitPattern: buffer)
        return state.withLock { state -> Int in
            let available = state.buffer.count - state.offset
            if available > 0 {
                let count = min(available, max)
                state.buffer.withUnsafeBytes { raw in
                    UnsafeMutableRawPointer(bitPattern: target)!.copyMemory(from: raw.baseAddress! + state.offset, byteCount: count)
                }
                state.offset += count
                if state.offset == state.buffer.count {
                    state.buffer.removeAll(keepingCapacity: true)
                    state.offset = 0
                }
                return count
            }
            if state.closed { return -1 }  // MHD_CONTENT_READER_END_OF_STREAM
            // Nothing to write: park the connection until `send` or `close` resumes it. Suspending
            // from the content reader is one of the two places libmicrohttpd allows it.
            if let connection = OpaquePointer(bitPattern: state.connection) {
                state.suspended = true
                MHD_suspend_connection(connection)
            }
            return 0
        }
    }
}
