import CMicroHTTPD
import Synchronization

/// An event stream answered on one of libmicrohttpd's connections: the context of its content
/// reader. With a ``StreamWriter``, the reader's first call hands the connection's socket to it
/// (see there) and the stream is written from then on by the writer's thread; libmicrohttpd is
/// called again only to end the response once the writer gives the stream back. Without one,
/// libmicrohttpd writes the stream itself, resuming the suspended connection for every event.
final class MicroHTTPDStream: Sendable {
    private enum Mode {
        /// libmicrohttpd writes the stream (no writer).
        case libmicrohttpd
        /// At the reader's first call, the socket goes to `writer`.
        case handOver(StreamWriter, chunked: Bool)
        /// The writer has it.
        case written
        /// The writer gave it back: end the response (`error`: close the connection at once).
        case ended(error: Bool)
    }

    /// The stream the application writes to.
    let events: EventStream
    /// The bit pattern of libmicrohttpd's `struct MHD_Connection *`.
    private let connection: Int
    private let mode: Mutex<Mode>

    /// - Parameter chunked: whether libmicrohttpd frames the body in chunks (an HTTP/1.1 request;
    ///   an HTTP/1.0 one gets the bytes as they are, ended by closing the connection).
    init(events: EventStream, connection: OpaquePointer, writer: StreamWriter?, chunked: Bool) {
        self.events = events
        self.connection = Int(bitPattern: connection)
        mode = Mutex(writer.map { .handOver($0, chunked: chunked) } ?? .libmicrohttpd)
    }

    /// libmicrohttpd's content reader, on its thread: bytes, 0 (nothing now; the connection is
    /// suspended), -1 (the end of the stream) or -2 (close the connection).
    func read(into buffer: UnsafeMutableRawPointer, max: Int) -> Int {
        switch mode.withLock({ $0 }) {
        case .libmicrohttpd:
            return events.read(into: buffer, max: max)
        case .ended(let error):
            return error ? -2 : -1
        case .written:
            return 0  // not called while suspended
        case .handOver(let writer, let chunked):
            // libmicrohttpd asks for body bytes only once everything before them (the header) is
            // in the kernel, and touches no suspended connection's socket: from here the writer
            // owns what goes on it.
            guard let connection = OpaquePointer(bitPattern: connection) else { return -2 }
            let fd = chime_mhd_connection_fd(connection)
            guard fd >= 0 else {
                mode.withLock { $0 = .libmicrohttpd }
                return events.read(into: buffer, max: max)
            }
            let id = writer.reserveID()
            mode.withLock { $0 = .written }
            MHD_suspend_connection(connection)
            events.moveSink(to: StreamWriterSink(writer: writer, id: id))
            writer.adopt(StreamWriter.Adoption(id: id, fd: fd, stream: self, chunked: chunked))
            return 0
        }
    }

    /// The writer let the socket go: libmicrohttpd ends the response (any thread).
    func giveBack(error: Bool) {
        mode.withLock { $0 = .ended(error: error) }
        if let connection = OpaquePointer(bitPattern: connection) { MHD_resume_connection(connection) }
    }
}

/// Where an event stream written by a ``StreamWriter`` is parked and woken: nothing to do to
/// park it (the writer simply stops reading it), and waking it tells the writer.
struct StreamWriterSink: StreamSink {
    let writer: StreamWriter
    let id: Int
    func suspend() {}
    func resume() { writer.wakeUp(id) }
}
