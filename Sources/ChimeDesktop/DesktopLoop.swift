import CSystemdBus
import ChimeCore
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The thread that owns the sd-bus connection: it connects (and reconnects), makes every call,
/// reads every signal and keeps the book of what the desktop shows. Nothing else touches the
/// connection, so no lock guards it and the engine's writer never waits on D-Bus.
///
/// `@unchecked Sendable`: everything but `inbox` and `wakeFD` is used only on `thread` (jobs are
/// closures run there); `inbox` is behind a `Mutex`, and `wakeFD` is an eventfd, written by anyone.
final class DesktopLoop: @unchecked Sendable {
    typealias Job = @Sendable (DesktopLoop) -> Void

    struct Settings: Sendable {
        var address: String?
        var callTimeout: Duration
        var canPrompt: Bool
        var backlogLimit: Int
    }

    private let settings: Settings
    private let report: @Sendable (DesktopSurface.Event) -> Void
    private let outcome: @Sendable (DesktopBook.Outcome) -> Void
    private let log: @Sendable (DesktopSurface.LogLevel, String) -> Void
    private let inbox = Mutex<(jobs: [Job], stopping: Bool)>(([], false))
    private let wakeFD: Int32
    private var thread: Thread?

    // Thread-confined state.
    private var connection: BusConnection?
    private(set) var server: ServerProfile?
    private(set) var book = DesktopBook()
    /// Deliveries that arrived while no server could show them, oldest first, to show when one is there.
    private var backlog: [(key: DesktopBook.Key, delivery: Delivery, app: DesktopApp)] = []
    private var retryAt: ContinuousClock.Instant = .now
    private var retryDelay: Duration = .milliseconds(250)
    /// The problem last logged (`nil`: all is well), so an outage is logged once, and its end once.
    private var problem: String?
    private var refusals: Set<String> = []

    init(
        settings: Settings, report: @escaping @Sendable (DesktopSurface.Event) -> Void,
        outcome: @escaping @Sendable (DesktopBook.Outcome) -> Void,
        log: @escaping @Sendable (DesktopSurface.LogLevel, String) -> Void
    ) {
        self.settings = settings
        self.report = report
        self.outcome = outcome
        self.log = log
        self.wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
    }

    deinit {
        if wakeFD >= 0 { Glibc.close(wakeFD) }
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "chime.desktop"
        self.thread = thread
        thread.start()
    }

    /// Runs `job` on the loop's thread, after the jobs submitted before it.
    func submit(_ job: @escaping Job) {
        let accepted = inbox.withLock { inbox -> Bool in
            guard !inbox.stopping else { return false }
            inbox.jobs.append(job)
            return true
        }
        if accepted { wake() }
    }

    /// Runs `job` on the loop's thread and returns its result; `nil` when the loop has stopped.
    func perform<T: Sendable>(_ job: @escaping @Sendable (DesktopLoop) -> T) async -> T? {
        await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            let once = Mutex<CheckedContinuation<T?, Never>?>(continuation)
            let accepted = inbox.withLock { inbox -> Bool in
                guard !inbox.stopping else { return false }
                inbox.jobs.append { loop in
                    let value = job(loop)
                    once.withLock { $0.take() }?.resume(returning: value)
                }
                return true
            }
            if accepted { wake() } else { once.withLock { $0.take() }?.resume(returning: nil) }
        }
    }

    /// Runs what was submitted, closes the connection and ends the thread.
    func stop() {
        inbox.withLock { $0.stopping = true }
        wake()
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    // MARK: - The thread

    private func run() {
        while true {
            let (jobs, stopping) = inbox.withLock { inbox -> ([Job], Bool) in
                defer { inbox.jobs.removeAll() }
                return (inbox.jobs, inbox.stopping)
            }
            if connection == nil && ContinuousClock.now >= retryAt { connect() }
            for job in jobs { job(self) }
            if stopping {
                connection?.close()
                connection = nil
                return
            }
            if let connection {
                do { try connection.process() } catch { lost(error) }
            }
            waitForWork()
        }
    }

    /// Sleeps until the bus has something, a job arrives, a call times out or a reconnection is due.
    private func waitForWork() {
        var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        var timeout: Int32 = -1
        if let request = connection?.pollRequest() {
            fds.append(pollfd(fd: request.fd, events: request.events, revents: 0))
            timeout = request.timeoutMilliseconds
        } else if connection == nil {
            let remaining = retryAt - ContinuousClock.now
            timeout = Int32(
                max(
                    0,
                    min(
                        remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000,
                        60_000)))
        }
        _ = poll(&fds, nfds_t(fds.count), timeout)
        var count: UInt64 = 0
        _ = read(wakeFD, &count, 8)
    }

    /// The bus address without its `guid`: a bus restarted on the same socket has a new one, and
    /// reconnecting to it is the point.
    private var address: String? {
        let address = settings.address.flatMap { $0.isEmpty ? nil : $0 } ?? DesktopSurface.sessionBusAddress()
        return address.map(Self.withoutGUID)
    }

    static func withoutGUID(_ address: String) -> String {
        address.split(separator: ";", omittingEmptySubsequences: true).map { entry in
            guard let colon = entry.firstIndex(of: ":") else { return String(entry) }
            let pairs = entry[entry.index(after: colon)...].split(separator: ",").filter { !$0.hasPrefix("guid=") }
            return entry[...colon] + pairs.joined(separator: ",")
        }.joined(separator: ";")
    }

    private func connect() {
        guard let address else {
            trouble(
                "no session bus: DBUS_SESSION_BUS_ADDRESS is not set and $XDG_RUNTIME_DIR/bus does not exist; desktop pop-ups are off until one is there"
            )
            retryLater()
            return
        }
        do {
            let connection = try BusConnection(address: address, description: "chime-desktop")
            try connection.addMatch(FreedesktopNotifications.signalRule) { [unowned self] reader in signal(reader) }
            try connection.addMatch(FreedesktopNotifications.ownerRule) { [unowned self] reader in ownerChanged(reader)
            }
            self.connection = connection
            retryDelay = .milliseconds(250)
            readServer()
        } catch {
            trouble("cannot connect to the session bus: \(error); trying again")
            retryLater()
        }
    }

    private func retryLater() {
        retryAt = .now + retryDelay
        retryDelay = min(retryDelay * 2, .seconds(30))
    }

    /// The connection broke: forget it and what it showed, and connect again.
    private func lost(_ error: any Error) {
        connection?.close()
        connection = nil
        if server != nil { report(.serverGone) }
        server = nil
        book.forgetAll()
        trouble("lost the session bus (\(error)); reconnecting")
        retryAt = .now
    }

    /// Reads who the server is and what it can do (starting it where the bus can), then shows what waited.
    private func readServer() {
        guard let connection else { return }
        do {
            let profile = try FreedesktopNotifications.profile(on: connection, timeout: settings.callTimeout)
            book.forgetAll()
            server = profile
            recovered(
                "showing notifications on \(profile.name) \(profile.version) (capabilities: \(profile.capabilities.sorted().joined(separator: ", ")))"
            )
            report(.connected(profile))
            showBacklog()
        } catch let error as BusError where error.code == .disconnected {
            lost(error)
        } catch {
            server = nil
            trouble("no notification server on the session bus (\(error)); pop-ups wait until one starts")
        }
    }

    private func ownerChanged(_ reader: MessageReader) {
        let owner: String?
        do { owner = try FreedesktopNotifications.newOwner(reader) } catch { return }
        if owner == nil || owner != server?.owner {
            if server != nil {
                server = nil
                book.forgetAll()
                report(.serverGone)
                trouble("the notification server stopped; pop-ups wait until one starts")
            }
        }
        if owner != nil && server == nil { readServer() }
    }

    private func signal(_ reader: MessageReader) {
        // Only the server's own signals: another client on the bus cannot answer for the user.
        guard let server, reader.sender == server.owner, let signal = try? FreedesktopNotifications.signal(reader)
        else { return }
        report(.signal(signal))
        if let result = book.received(signal) { outcome(result) }
    }

    // MARK: - Jobs (on the thread)

    func show(_ delivery: Delivery, key: DesktopBook.Key, app: DesktopApp) {
        guard let connection, let server else {
            queue(delivery, key: key, app: app)
            return
        }
        let popUp = DesktopMapping.popUp(
            for: delivery, app: app, server: server, replacesID: book.replacesID(for: key),
            canPrompt: settings.canPrompt)
        for action in popUp.leftOut {
            refused(
                "text-input action '\(action.identifier)' of \(key.app) is not offered on the desktop: the server has no inline reply and no reply prompt is available (install zenity, kdialog or yad)"
            )
        }
        do {
            let id = try FreedesktopNotifications.notify(popUp.request, on: connection, timeout: settings.callTimeout)
            book.shown(key, id: id, popUp: popUp)
            report(.shown(app: key.app, identifier: key.identifier, id: id, request: popUp.request))
        } catch let error as BusError where error.code == .disconnected {
            lost(error)
            queue(delivery, key: key, app: app)
        } catch let error as BusError where error.isNoServer {
            self.server = nil
            book.forgetAll()
            report(.serverGone)
            trouble("the notification server went away (\(error)); pop-ups wait until one starts")
            queue(delivery, key: key, app: app)
        } catch {
            refused("the notification server refused Notify for \(key.app): \(error)")
        }
    }

    func withdraw(_ key: DesktopBook.Key) {
        backlog.removeAll { $0.key == key }
        guard let id = book.withdrawn(key) else { return }
        report(.closed(app: key.app, identifier: key.identifier, id: id))
        guard let connection, server != nil else { return }
        do {
            try FreedesktopNotifications.close(id, on: connection, timeout: settings.callTimeout)
        } catch let error as BusError where error.code == .disconnected {
            lost(error)
        } catch {
            refused("the notification server refused CloseNotification: \(error)")
        }
    }

    func reopen(_ key: DesktopBook.Key) {
        book.reopen(key)
    }

    /// Closes every pop-up this loop shows (the service stops: their buttons would reach nobody).
    func closeAll() {
        guard let connection, server != nil else { return }
        for id in book.entries.keys.sorted() {
            try? FreedesktopNotifications.close(id, on: connection, timeout: settings.callTimeout)
        }
        book.forgetAll()
    }

    private func queue(_ delivery: Delivery, key: DesktopBook.Key, app: DesktopApp) {
        backlog.removeAll { $0.key == key }
        backlog.append((key, delivery, app))
        if backlog.count > settings.backlogLimit { backlog.removeFirst(backlog.count - settings.backlogLimit) }
    }

    private func showBacklog() {
        let waiting = backlog
        backlog.removeAll()
        for item in waiting { show(item.delivery, key: item.key, app: item.app) }
    }

    // MARK: - Logging once

    private func trouble(_ text: String) {
        guard problem != text else { return }
        problem = text
        log(.warning, text)
    }

    private func recovered(_ text: String) {
        log(problem == nil ? .info : .warning, problem == nil ? text : "back: " + text)
        problem = nil
    }

    private func refused(_ text: String) {
        guard refusals.insert(text).inserted else { return }
        log(.warning, text)
    }
}
