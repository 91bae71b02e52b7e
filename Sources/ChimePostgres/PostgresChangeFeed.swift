import CLibPQ
import ChimeCore
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A store's feed: a thread with a connection of its own that `LISTEN`s on the store's channel and
/// tells the engine what every node committed.
///
/// - Logged events: after a notification that events were logged (or once a second, in case), it
///   reads the log after the last number it handed over and hands the new events over in order.
///   Numbers follow commit order (see ``PostgresStore``), so nothing is skipped or repeated.
/// - Other nodes' changes become the hints the engine announces for its own (`app`, `categories`,
///   `scheduled`), their earliest fire date wakes the scheduler, and device changes and Web Push
///   claims given back are passed on.
/// - When the connection drops it reconnects (every 200 ms to 2 s); then it catches up on the log,
///   announces every app as changed (caches start over; its categories and requests too, so an
///   event stream's reader re-reads them) and wakes the scheduler.
final class PostgresChangeFeed: Sendable {
    private let url: String
    private let channel: String
    private let node: String
    private let handlers: SharedStoreFeed
    /// A pipe whose write end wakes the thread to stop.
    private let wake: (read: Int32, write: Int32)
    private let state = Mutex<(stopping: Bool, thread: Thread?, backendPID: Int32?)>((false, nil, nil))
    private let finished = DispatchSemaphore(value: 0)
    /// Signalled once the first connection listens (or the first attempt failed).
    private let listening = DispatchSemaphore(value: 0)

    init(url: String, channel: String, node: String, handlers: SharedStoreFeed) {
        self.url = url
        self.channel = channel
        self.node = node
        self.handlers = handlers
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        }
        wake = (fds[0], fds[1])
    }

    deinit {
        close(wake.read)
        close(wake.write)
    }

    /// Starts the thread and waits (at most 10 s) until it listens, so nothing committed after
    /// this returns is missed.
    func start() {
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "chime.postgres.feed"
        state.withLock { $0.thread = thread }
        thread.start()
        _ = listening.wait(timeout: .now() + 10)
    }

    /// Stops the thread and waits for it (at most 10 s: a connection attempt in progress ends by
    /// libpq's `connect_timeout`, if one is set).
    func stop() {
        let running = state.withLock { state -> Bool in
            defer { state.stopping = true }
            return state.thread != nil && !state.stopping
        }
        guard running else { return }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        _ = finished.wait(timeout: .now() + 10)
    }

    private var stopping: Bool { state.withLock { $0.stopping } }

    /// The server process of the feed's current connection (for tests that cut it), nil while
    /// there is none.
    var backendPID: Int32? { state.withLock { $0.backendPID } }

    // MARK: The loop

    private func run() {
        var connection: PostgresConnection?
        var position: Int64?
        var delay = 0.2
        var lastRead = Date.distantPast
        var first = true
        defer { if first { listening.signal() } }
        while !stopping {
            if connection == nil {
                do {
                    let opened = try PostgresConnection(url: url, applicationName: "chime-feed")
                    try opened.execute("LISTEN \(PostgresConnection.quoteIdentifier(channel))")
                    if let known = position {
                        position = try catchUp(opened, after: known)
                        try resynchronize(opened)
                    } else {
                        position = try opened.query("SELECT coalesce(max(seq), 0) FROM chime_events").int64(0, 0)
                    }
                    connection = opened
                    let pid = opened.handle.map { PQbackendPID($0) }
                    state.withLock { $0.backendPID = pid }
                    delay = 0.2
                    if first { listening.signal() }
                    first = false
                } catch {
                    if first { listening.signal() }
                    first = false
                    if waitForWake(seconds: delay) { break }
                    delay = min(delay * 2, 2)
                    continue
                }
            }
            guard let live = connection else { continue }
            do {
                // Notifications that came in during the last query are already in libpq's list,
                // and the socket will not wake us for them: take those first, and wait only when
                // there are none.
                var notes = try live.notifications()
                if notes.isEmpty {
                    var fds = [
                        pollfd(fd: live.socket, events: Int16(POLLIN), revents: 0),
                        pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
                    ]
                    let ready = poll(&fds, 2, 1000)
                    if fds[1].revents != 0 || stopping { break }
                    if ready < 0 && errno != EINTR { throw ChimeError(.storeFailure, "poll failed: \(errno)") }
                    notes = try live.notifications()
                }
                var readLog = Date().timeIntervalSince(lastRead) >= 1
                var hints: [EngineEvent] = []
                var earliest: Double?
                var schedule = false
                var device = false
                var released = false
                for note in notes {
                    guard let (sender, changes) = PostgresChanges.parse(note.payload) else { continue }
                    if changes.events { readLog = true }
                    guard sender != node else { continue }
                    hints += try self.hints(for: changes, connection: live)
                    if let date = changes.earliest { earliest = min(earliest ?? date, date) }
                    schedule = schedule || changes.earliest != nil
                    device = device || changes.device
                    released = released || changes.webPush
                }
                if readLog, let known = position {
                    position = try catchUp(live, after: known)
                    lastRead = Date()
                }
                if !hints.isEmpty { handlers.events(hints) }
                if schedule { handlers.scheduleChanged(earliest.map { Date(timeIntervalSince1970: $0) }) }
                if device { handlers.deviceChanged() }
                if released { handlers.webPushReleased() }
            } catch {
                connection?.close()
                connection = nil
            }
        }
        connection?.close()
    }

    /// Waits up to `seconds` for the stop signal; true when it came.
    private func waitForWake(seconds: Double) -> Bool {
        var fds = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
        _ = poll(&fds, 1, Int32(seconds * 1000))
        return fds[0].revents != 0 || stopping
    }

    /// Hands over the logged events after `position`, in order; returns the new position.
    private func catchUp(_ connection: PostgresConnection, after position: Int64) throws -> Int64 {
        var cursor = position
        while true {
            let rows = try connection.query(
                "SELECT seq, body FROM chime_events WHERE seq > $1 ORDER BY seq LIMIT 1000", [.int8(cursor)])
            let events = try PostgresStore.events(rows)
            guard let last = events.last else { return cursor }
            handlers.events(events)
            cursor = last.sequence
            if events.count < 1000 { return cursor }
        }
    }

    /// The hints another node's engine announced for these changes.
    private func hints(for changes: PostgresChanges, connection: PostgresConnection) throws -> [EngineEvent] {
        let now = Date()
        var hints: [EngineEvent] = []
        for app in changes.apps.sorted() {
            // The record as it is now, which the web center applies as it is (none: removed since).
            let rows = try connection.query("SELECT record FROM chime_apps WHERE bundle_id = $1", [.text(app)])
            let record = rows.count == 0 ? nil : try RecordCodec.decodeApp(rows.bytes(0, 0))
            hints.append(EngineEvent(app: app, date: now, payload: .app(.updated, record: record)))
        }
        for app in changes.removed.sorted() { hints.append(EngineEvent(app: app, date: now, payload: .app(.removed))) }
        for app in changes.categories.sorted() {
            let rows = try connection.query("SELECT body FROM chime_categories WHERE app = $1", [.text(app)])
            let categories = rows.count == 0 ? [] : try RecordCodec.decodeCategories(rows.bytes(0, 0))
            hints.append(EngineEvent(app: app, date: now, payload: .categories(categories)))
        }
        for app in changes.pending.sorted() {
            hints.append(EngineEvent(app: app, date: now, payload: .scheduled(identifiers: [])))
        }
        return hints
    }

    /// After a reconnect, what was missed is unknown: every app counts as changed — its record
    /// (`app`), its categories (`categories`, as they are now) and its requests (`scheduled`), the
    /// hints another node's changes would have brought — and the schedule and the device state too.
    private func resynchronize(_ connection: PostgresConnection) throws {
        let rows = try connection.query("SELECT bundle_id, record FROM chime_apps ORDER BY bundle_id")
        let apps = (0..<rows.count).map { rows.string($0, 0) }
        let records = try (0..<rows.count).map { try RecordCodec.decodeApp(rows.bytes($0, 1)) }
        // One read for every app's categories (an app without a row has none).
        let stored = try connection.query("SELECT app, body FROM chime_categories")
        var categories: [String: [NotificationCategory]] = [:]
        for row in 0..<stored.count {
            categories[stored.string(row, 0)] = try RecordCodec.decodeCategories(stored.bytes(row, 1))
        }
        let now = Date()
        let hints =
            records.map { EngineEvent(app: $0.bundleIdentifier, date: now, payload: .app(.updated, record: $0)) }
            + apps.map { EngineEvent(app: $0, date: now, payload: .categories(categories[$0] ?? [])) }
            + apps.map { EngineEvent(app: $0, date: now, payload: .scheduled(identifiers: [])) }
        if !hints.isEmpty { handlers.events(hints) }
        handlers.scheduleChanged(nil)
        handlers.deviceChanged()
    }
}
