import CMicroHTTPD
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Something the I/O loop watches: sockets with the events it waits for, a deadline check, and
/// messages from other threads. Only ever touched on the loop's thread.
protocol LoopClient: AnyObject {
    /// The sockets to poll now, with the events wanted (an empty set: nothing to wait for now).
    var interests: [(fd: Int32, events: Int16)] { get }
    /// A socket is ready (`revents` as `poll(2)` gave them).
    func ready(fd: Int32, revents: Int16)
    /// Called about four times a second: deadlines.
    func tick(now: ContinuousClock.Instant)
    /// A message posted from another thread.
    func receive(_ message: LoopMessage)
    /// The messages of this turn were all received (called once a turn for each client that got
    /// some): what is done once for all of them, such as writing what they made.
    func receivedAll()
    /// The loop is stopping: close everything now.
    func shutDown()
}

extension LoopClient {
    func receivedAll() {}
}

/// What other threads tell a loop client.
enum LoopMessage: Sendable {
    /// The handler answered a request of an HTTP/2 stream: what makes the answer (run on the loop,
    /// only if the stream still waits for it).
    case respond(stream: Int32, @Sendable () -> HTTPResponse)
    /// An event stream has bytes (or its end) queued.
    case resume(stream: Int32)
    /// An event stream's client does not keep up: reset its stream.
    case reset(stream: Int32)
    /// The server is stopping: no new requests (an HTTP/2 GOAWAY), finish the others.
    case drain
    /// The connection is past its deadline or its slot went to a newcomer: end it (an HTTP/2 GOAWAY).
    case expire
    /// Stop listening (the listener only).
    case stopListening
}

/// One thread polling the sockets Chime serves itself (the listener, connections being sniffed or
/// handshaken, HTTP/2 sessions, TLS bridges), as libmicrohttpd's thread does its own. Other
/// threads reach a client through ``post(_:_:)``, which wakes the loop through an eventfd.
///
/// Clients live in ``clients`` by id and are only touched on the loop's thread (`@unchecked
/// Sendable`: every other field is behind `inbox`).
final class IOLoop: @unchecked Sendable {
    private struct Inbox {
        var messages: [(id: Int, message: LoopMessage)] = []
        var stopping = false
    }

    private let inbox = Mutex(Inbox())
    private let thread = WakeableThread()
    private var clients: [Int: any LoopClient] = [:]
    /// Clients that stopped reading with bytes still to read, so others get their turn: called
    /// again at the next turn without waiting for poll.
    private var again: [Int] = []
    private var nextID = 0

    /// Starts the loop's thread.
    func start(name: String) {
        thread.start(name: name) { [self] in run() }
    }

    /// Stops the loop: every client's ``LoopClient/shutDown()`` runs on its thread, then it ends.
    /// Waits for it.
    func stop() {
        let started = inbox.withLock { inbox -> Bool in
            let first = !inbox.stopping
            inbox.stopping = true
            return first
        }
        if started { thread.join() }
    }

    /// Sends `message` to the client `id` (dropped when it is gone).
    func post(_ id: Int, _ message: LoopMessage) {
        inbox.withLock { $0.messages.append((id, message)) }
        thread.signal()
    }

    // MARK: - On the loop's thread

    /// Client `id`, if it is still there.
    func client(_ id: Int) -> (any LoopClient)? { clients[id] }

    /// Adds a client (on the loop's thread, or before ``start(name:)``); returns its id.
    @discardableResult
    func add(_ make: (Int) -> any LoopClient) -> Int {
        nextID += 1
        clients[nextID] = make(nextID)
        return nextID
    }

    /// Replaces client `id` by another under the same id (a sniffed connection becoming HTTP/2).
    func replace(_ id: Int, with client: any LoopClient) { clients[id] = client }

    /// Calls client `id`'s ``LoopClient/ready(fd:revents:)`` (fd -1, POLLIN) at the next turn: it
    /// read its share of this turn and has more waiting (a client sending without pause must not
    /// keep the loop from every other connection).
    func readAgain(_ id: Int) { again.append(id) }

    /// Forgets client `id` (it closed its sockets or handed them on).
    func remove(_ id: Int) { clients[id] = nil }

    /// The ids of every client (for the server's stop).
    var clientIDs: [Int] { Array(clients.keys) }

    private func run() {
        var lastTick = ContinuousClock.now
        while true {
            let (messages, stopping) = inbox.withLock { inbox -> ([(id: Int, message: LoopMessage)], Bool) in
                defer { inbox.messages.removeAll(keepingCapacity: true) }
                return (inbox.messages, inbox.stopping)
            }
            if stopping { break }
            var received: [Int] = []
            for (id, message) in messages {
                guard let client = clients[id] else { continue }
                client.receive(message)
                if received.last != id, !received.contains(id) { received.append(id) }
            }
            for id in received { clients[id]?.receivedAll() }
            var polled = [pollfd(fd: thread.wake, events: Int16(POLLIN), revents: 0)]
            var owners: [Int] = [0]
            for (id, client) in clients {
                for interest in client.interests where interest.events != 0 {
                    polled.append(pollfd(fd: interest.fd, events: interest.events, revents: 0))
                    owners.append(id)
                }
            }
            let turn = again
            again.removeAll(keepingCapacity: true)
            let count = poll(&polled, nfds_t(polled.count), turn.isEmpty ? 250 : 0)
            if count > 0 {
                if polled[0].revents != 0 { thread.clear() }
                for index in 1..<polled.count where polled[index].revents != 0 {
                    clients[owners[index]]?.ready(fd: polled[index].fd, revents: polled[index].revents)
                }
            }
            for id in turn { clients[id]?.ready(fd: -1, revents: Int16(POLLIN)) }
            let now = ContinuousClock.now
            if now - lastTick >= .milliseconds(250) {
                lastTick = now
                for client in Array(clients.values) { client.tick(now: now) }
            }
        }
        for client in Array(clients.values) { client.shutDown() }
        clients.removeAll()
    }
}
