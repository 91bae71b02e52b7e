import CMicroHTTPD
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A thread that writes the event streams of HTTP/1.1 connections straight to their sockets, so
/// an event costs one `send(2)` per stream instead of a libmicrohttpd resume and suspend.
///
/// libmicrohttpd sends a stream's status line and header fields; at its first call of the
/// content reader — when the header is written out, since libmicrohttpd asks for body bytes only
/// once everything before them is in the kernel — the connection is suspended (libmicrohttpd then
/// neither polls nor touches its socket) and its socket is adopted here. From then on this thread
/// writes the stream's frames, with HTTP/1.1's chunked framing (or none for HTTP/1.0, whose body
/// ends when the connection closes), and watches the socket for the client hanging up. When the
/// stream ends the socket is let go (removed from this thread's epoll set) before the connection
/// is resumed, and libmicrohttpd finishes the response: the last chunk after a close, or closing
/// the connection when the client went away or was too slow.
///
/// Why not libmicrohttpd's own path: it resumes each stream for each event (an eventfd write, a
/// pass over every suspended connection, two `epoll_ctl` calls and a `send`), one connection after
/// another on its threads — about 8 µs of CPU per stream and event, 80 ms for an event reaching
/// 10,000 streams. Its "upgrade" hand-over would give the socket away cleanly, but only after a
/// `101 Switching Protocols` answer, which an `EventSource` refuses.
///
/// Only the writer's thread touches ``entries``; other threads reach it through `inbox` and an
/// eventfd (`@unchecked Sendable`: every other field is behind a lock or an atomic).
final class StreamWriter: @unchecked Sendable {
    /// A stream handed over by libmicrohttpd's content reader.
    struct Adoption: Sendable {
        let id: Int
        let fd: Int32
        let stream: MicroHTTPDStream
        /// HTTP/1.1's chunked framing (false: the body's bytes as they are, HTTP/1.0).
        let chunked: Bool
    }

    private struct Inbox {
        var adopted: [Adoption] = []
        /// Streams with something new queued (or their end).
        var ready: [Int] = []
        /// The eventfd was written and the loop has not taken the inbox since.
        var signaled = false
        var stopping = false
    }

    /// A stream this thread writes.
    private final class Entry {
        let fd: Int32
        let stream: MicroHTTPDStream
        let chunked: Bool
        /// Framed bytes the socket did not take yet (the stream is not read again until it has).
        var pending: [UInt8] = []
        var sent = 0
        /// Whether the socket is polled for room to write.
        var watchingWrites = false

        init(fd: Int32, stream: MicroHTTPDStream, chunked: Bool) {
            self.fd = fd
            self.stream = stream
            self.chunked = chunked
        }
    }

    /// Most body bytes read from a stream at once (one chunk).
    private static let chunkCapacity = 64 * 1024
    /// Room before a chunk for its size line (`FFFFF\r\n`).
    private static let headroom = 16
    /// Most bytes written to one stream in one turn before the others get theirs.
    private static let turnBudget = 256 * 1024

    private let inbox = Mutex(Inbox())
    private let nextID = Atomic<Int>(0)
    private let active = Atomic<Int>(0)
    private let epoll: Int32
    private let thread = WakeableThread()
    private var entries: [Int: Entry] = [:]
    private let scratch: UnsafeMutableRawPointer

    init() {
        epoll = chime_epoll_create()
        scratch = .allocate(byteCount: Self.headroom + Self.chunkCapacity + 2, alignment: 16)
        _ = chime_epoll_control(epoll, chime_epoll_add, thread.wake, chime_epoll_in, 0)
    }

    deinit {
        close(epoll)
        scratch.deallocate()
    }

    /// Streams being written (adopted and not yet given back).
    var count: Int { active.load(ordering: .acquiring) }

    /// Starts the thread.
    func start(name: String) {
        thread.start(name: name) { [self] in run() }
    }

    /// Gives every stream back to libmicrohttpd (its connection is closed) and ends the thread;
    /// waits for it. libmicrohttpd must not be stopped before: it aborts on a suspended connection.
    func stop() {
        let first = inbox.withLock { inbox -> Bool in
            defer { inbox.stopping = true }
            return !inbox.stopping
        }
        if first { thread.join() }
    }

    /// A new stream's id: what its sink names it by.
    func reserveID() -> Int { nextID.add(1, ordering: .relaxed).newValue }

    /// Takes over a stream whose connection libmicrohttpd has just suspended (any thread). A
    /// stream adopted after ``stop()`` is given back at once.
    func adopt(_ adoption: Adoption) {
        active.add(1, ordering: .relaxed)
        let (accepted, wakeUp) = inbox.withLock { inbox -> (Bool, Bool) in
            guard !inbox.stopping else { return (false, false) }
            inbox.adopted.append(adoption)
            defer { inbox.signaled = true }
            return (true, !inbox.signaled)
        }
        if !accepted {
            active.subtract(1, ordering: .relaxed)
            adoption.stream.giveBack(error: true)
            return
        }
        if wakeUp { thread.signal() }
    }

    /// Stream `id` has bytes (or its end) queued (any thread; must return at once).
    func wakeUp(_ id: Int) {
        let wakeUp = inbox.withLock { inbox -> Bool in
            inbox.ready.append(id)
            defer { inbox.signaled = true }
            return !inbox.signaled
        }
        if wakeUp { thread.signal() }
    }

    // MARK: - On the writer's thread

    private func run() {
        var tokens = [UInt64](repeating: 0, count: 512)
        var events = [UInt32](repeating: 0, count: 512)
        let hangUp = chime_epoll_rdhup | chime_epoll_hup | chime_epoll_err
        var again: [Int] = []
        while true {
            let count = chime_epoll_wait(epoll, &tokens, &events, Int32(tokens.count), again.isEmpty ? -1 : 0)
            let turn = again
            again.removeAll(keepingCapacity: true)
            for index in 0..<max(0, Int(count)) {
                let ready = events[index]
                let id = Int(tokens[index])
                if id == 0 {
                    thread.clear()
                    continue
                }
                guard let entry = entries[id] else { continue }
                if ready & hangUp != 0 || (ready & chime_epoll_in != 0 && !drainInput(entry)) {
                    giveBack(id, error: true)
                    continue
                }
                if ready & chime_epoll_out != 0, !pump(id, entry) { again.append(id) }
            }
            let (adopted, ready, stopping) = inbox.withLock { inbox in
                defer {
                    inbox.adopted.removeAll(keepingCapacity: true)
                    inbox.ready.removeAll(keepingCapacity: true)
                    inbox.signaled = false
                }
                return (inbox.adopted, inbox.ready, inbox.stopping)
            }
            if stopping { break }
            for adoption in adopted {
                let entry = Entry(fd: adoption.fd, stream: adoption.stream, chunked: adoption.chunked)
                let watched = chime_epoll_in | chime_epoll_rdhup
                guard chime_epoll_control(epoll, chime_epoll_add, adoption.fd, watched, UInt64(adoption.id)) == 0 else {
                    active.subtract(1, ordering: .relaxed)
                    adoption.stream.giveBack(error: true)
                    continue
                }
                entries[adoption.id] = entry
                if !pump(adoption.id, entry) { again.append(adoption.id) }
            }
            for id in turn + ready {
                guard let entry = entries[id], !entry.watchingWrites else { continue }
                if !pump(id, entry), !again.contains(id) { again.append(id) }
            }
        }
        for id in Array(entries.keys) { giveBack(id, error: true) }
        // Adopted after the last turn: give those back too.
        for adoption in inbox.withLock({ $0.adopted }) {
            active.subtract(1, ordering: .relaxed)
            adoption.stream.giveBack(error: true)
        }
    }

    /// Reads what the client sent after its request (nothing, for an event stream's client; a
    /// pipelined request is never answered, since the stream does not end) and drops it.
    /// - Returns: false when the client closed its side or the connection broke.
    private func drainInput(_ entry: Entry) -> Bool {
        let result = recv(entry.fd, scratch, Self.chunkCapacity, Int32(MSG_DONTWAIT))
        if result > 0 { return true }
        if result < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return true }
        return false
    }

    /// Writes what stream `id` has queued until it is empty, the socket is full, or the turn's
    /// budget is spent.
    /// - Returns: false when the budget ran out with more to write (call again next turn).
    private func pump(_ id: Int, _ entry: Entry) -> Bool {
        var budget = Self.turnBudget
        while true {
            if entry.sent < entry.pending.count {
                switch flushPending(entry) {
                case .moved: break
                case .wouldBlock:
                    watchWrites(id, entry, true)
                    return true
                case .ended, .failed:
                    giveBack(id, error: true)
                    return true
                }
                if entry.sent < entry.pending.count {
                    watchWrites(id, entry, true)
                    return true
                }
                entry.pending.removeAll(keepingCapacity: false)
                entry.sent = 0
            }
            if entry.watchingWrites { watchWrites(id, entry, false) }
            if budget <= 0 { return false }
            let body = scratch + Self.headroom
            let count = entry.stream.events.read(into: body, max: Self.chunkCapacity)
            switch count {
            case 0: return true  // parked until the next event wakes it
            case -1:
                giveBack(id, error: false)
                return true
            case ..<0:
                giveBack(id, error: true)
                return true
            default: break
            }
            budget -= count
            var start = body
            var length = count
            if entry.chunked {
                let sizeLine = Self.writeSizeLine(count, before: body)
                start = body - sizeLine
                (body + count).storeBytes(of: 13, as: UInt8.self)
                (body + count + 1).storeBytes(of: 10, as: UInt8.self)
                length = sizeLine + count + 2
            }
            let result = Glibc.send(entry.fd, start, length, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            if result == length { continue }
            if result < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR {
                giveBack(id, error: true)
                return true
            }
            let written = max(0, result)
            entry.pending = Array(UnsafeRawBufferPointer(start: start + written, count: length - written))
            entry.sent = 0
        }
    }

    /// Writes a chunk's size line (`count` in hexadecimal, then CRLF) into the bytes just before
    /// `body`, without allocating (once per stream and event); returns its length.
    private static func writeSizeLine(_ count: Int, before body: UnsafeMutableRawPointer) -> Int {
        let digits: StaticString = "0123456789ABCDEF"
        var cursor = body - 2
        cursor.storeBytes(of: 13, as: UInt8.self)
        (cursor + 1).storeBytes(of: 10, as: UInt8.self)
        var rest = count
        repeat {
            cursor -= 1
            cursor.storeBytes(of: digits.utf8Start[rest & 15], as: UInt8.self)
            rest >>= 4
        } while rest > 0
        return body - cursor
    }

    private func flushPending(_ entry: Entry) -> TransferResult {
        let result = entry.pending.withUnsafeBytes { raw in
            Glibc.send(
                entry.fd, raw.baseAddress! + entry.sent, raw.count - entry.sent, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        }
        if result > 0 {
            entry.sent += result
            return .moved(result)
        }
        if result < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return .wouldBlock }
        return .failed
    }

    private func watchWrites(_ id: Int, _ entry: Entry, _ watch: Bool) {
        guard entry.watchingWrites != watch else { return }
        entry.watchingWrites = watch
        let watched = chime_epoll_in | chime_epoll_rdhup | (watch ? chime_epoll_out : 0)
        _ = chime_epoll_control(epoll, chime_epoll_modify, entry.fd, watched, UInt64(id))
    }

    /// Lets the socket go (off the epoll set first: libmicrohttpd may close it as soon as the
    /// connection is resumed) and gives the stream back to libmicrohttpd.
    private func giveBack(_ id: Int, error: Bool) {
        guard let entry = entries.removeValue(forKey: id) else { return }
        _ = chime_epoll_control(epoll, chime_epoll_delete, entry.fd, 0, 0)
        active.subtract(1, ordering: .relaxed)
        entry.stream.giveBack(error: error)
    }
}
