import CMicroHTTPD
import ChimeCore
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Applies ``ConnectionTable``'s slot policy to libmicrohttpd's connections: it hears of every
/// connection (started, head complete, body complete, streaming, between requests, closed), and
/// shuts down the sockets the table sheds. A sweep every quarter of a second closes connections
/// past their deadline and event streams whose client hung up (a suspended stream is not polled
/// by libmicrohttpd, so without the sweep its slot would stay taken until the next heartbeat).
///
/// Shutting a socket down (never closing it: libmicrohttpd owns it) makes libmicrohttpd see the
/// end of the connection and clean it up on its own thread. Sockets are only touched under the
/// lock, between the connection-started and connection-closed notifications, so a number that
/// libmicrohttpd has closed and the kernel reused is never shut down.
final class ConnectionGuard: Sendable {
    /// One connection as libmicrohttpd's socket context carries it.
    final class Entry: Sendable {
        let id: Int
        /// Whether it holds a slot (false: answered 503 and closed).
        let admitted: Bool
        /// What its requests carry as ``HTTPRequest/connection``.
        let connection = HTTPConnection()
        init(id: Int, admitted: Bool) {
            self.id = id
            self.admitted = admitted
        }
    }

    private struct State {
        var table: ConnectionTable
        var next = 0
        var sockets: [Int: Int32] = [:]
        /// How connections Chime serves itself are ended (an HTTP/2 GOAWAY first), instead of a shutdown.
        var enders: [Int: @Sendable () -> Void] = [:]
        var streams: [Int: EventStream] = [:]
    }

    private let state: Mutex<State>
    private let origin = ContinuousClock.now
    private let sweeper = Mutex<Task<Void, Never>?>(nil)
    private let logger: ServerLogger

    init(limits: ConnectionTable.Limits, logger: ServerLogger) {
        state = Mutex(State(table: ConnectionTable(limits: limits)))
        self.logger = logger
    }

    private var now: Duration { ContinuousClock.now - origin }

    /// Starts the sweep.
    func start() {
        let task = Task.detached { [weak self] in
            while !Task.isCancelled {
                try? await Sleep.for(.milliseconds(250))
                guard let self, !Task.isCancelled else { return }
                self.sweep()
            }
        }
        sweeper.withLock { $0 = task }
    }

    /// Stops the sweep.
    func stop() {
        sweeper.withLock { task in
            task?.cancel()
            task = nil
        }
    }

    // MARK: - libmicrohttpd's notifications (its thread)

    /// A connection was accepted: admit it or refuse it, shedding what the table says.
    func opened(_ connection: OpaquePointer) -> Entry {
        opened(fd: chime_mhd_connection_fd(connection), address: Self.addressKey(chime_mhd_client_address(connection)))
    }

    /// A connection Chime serves itself (HTTP/2) was accepted on socket `fd`; `end`, when given,
    /// ends it when it is shed or past its deadline (instead of shutting its socket down).
    func opened(fd: Int32, address: String, end: (@Sendable () -> Void)? = nil) -> Entry {
        let now = self.now
        return state.withLock { state in
            state.next += 1
            let id = state.next
            let (admitted, shed) = state.table.open(id, address: address, now: now)
            // A connection with an ender is never shut down by its socket (nor watched: only
            // libmicrohttpd's connections have event streams here).
            if let end { state.enders[id] = end } else { state.sockets[id] = fd }
            for victim in shed { Self.shutDown(victim, in: state) }
            return Entry(id: id, admitted: admitted)
        }
    }

    /// The connection is now doing `phase`.
    func enter(_ phase: ConnectionTable.Phase, _ entry: Entry) {
        let now = self.now
        state.withLock { $0.table.enter(phase, entry.id, now: now) }
    }

    /// An event stream is open on the connection: watched for its client hanging up.
    func streaming(_ entry: Entry, stream: EventStream) {
        let now = self.now
        state.withLock { state in
            state.table.enter(.streaming, entry.id, now: now)
            state.streams[entry.id] = stream
        }
    }

    /// The connection is gone (libmicrohttpd closes its socket after this returns).
    func closed(_ entry: Entry) {
        state.withLock { state in
            state.table.close(entry.id)
            state.sockets[entry.id] = nil
            state.enders[entry.id] = nil
            state.streams[entry.id] = nil
        }
    }

    /// Ends a connection now (an event stream whose client does not keep up).
    func disconnect(_ entry: Entry) {
        let now = self.now
        state.withLock { state in
            if state.table.shed(entry.id, now: now) { Self.shutDown(entry.id, in: state) }
        }
    }

    /// Open connections: admitted ones, and all that libmicrohttpd still holds.
    var counts: (admitted: Int, open: Int) {
        state.withLock { ($0.table.admitted, $0.table.connections.count) }
    }

    // MARK: - The sweep

    /// Shuts down connections past their deadline, and ends event streams whose client hung up.
    func sweep() {
        let now = self.now
        let (expired, departed) = state.withLock { state -> (Int, [EventStream]) in
            let expired = state.table.expire(now: now)
            for id in expired { Self.shutDown(id, in: state) }
            return (expired.count, Self.hungUp(in: state))
        }
        for stream in departed { stream.abandon() }
        if expired > 0 {
            logger.info("connections closed", ["reason": "no complete request in time", "count": String(expired)])
        }
    }

    /// Streams whose socket reports that the client closed its side or the connection broke.
    /// An event stream's client sends nothing after its request, so the end of its input means
    /// it has gone.
    private static func hungUp(in state: State) -> [EventStream] {
        guard !state.streams.isEmpty else { return [] }
        var ids: [Int] = []
        var polled: [pollfd] = []
        for (id, stream) in state.streams where !stream.isEnded {
            guard let fd = state.sockets[id], fd >= 0 else { continue }
            ids.append(id)
            polled.append(pollfd(fd: fd, events: chime_pollrdhup(), revents: 0))
        }
        guard !polled.isEmpty, poll(&polled, nfds_t(polled.count), 0) > 0 else { return [] }
        var gone: [EventStream] = []
        for (index, entry) in polled.enumerated()
        where entry.revents & (chime_pollrdhup() | Int16(POLLHUP) | Int16(POLLERR)) != 0 {
            if let stream = state.streams[ids[index]] { gone.append(stream) }
        }
        return gone
    }

    private static func shutDown(_ id: Int, in state: State) {
        if let end = state.enders[id] { return end() }
        guard let fd = state.sockets[id], fd >= 0 else { return }
        Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// The client's address without its port: the unit of the per-address share.
    static func addressKey(_ address: UnsafePointer<sockaddr>?) -> String {
        guard let address else { return "unix" }
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
                var copy = inet.pointee.sin_addr
                var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
                inet_ntop(AF_INET, &copy, &text, socklen_t(text.count))
                return cText(text)
            }
        case AF_UNIX: return "unix"
        default: return "?"
        }
    }
}
