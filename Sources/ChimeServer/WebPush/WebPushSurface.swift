import ChimeCore
import ChimeCrypto
import ChimeHTTP
import Foundation
import Synchronization

/// Web Push: every delivery (and every removal) of the apps a subscribed device gets goes to that
/// device's push service — RFC 8030, with a VAPID token (RFC 8292) and the payload encrypted for
/// the subscriber (RFC 8291, `aes128gcm`).
///
/// **Queueing, from the event log.** The sender follows the engine's logged `delivered` and
/// `removed` events (a subscriber of the hub, so it sees them in the log's order, off the writer)
/// and writes each event's messages to the store's push queue — one row per subscriber — in one
/// transaction with the queue's position in the log (``NotificationEngine/queueWebPushes(_:through:claimedUntil:)``).
/// A crash between a delivery's commit and that transaction loses nothing: at start the sender
/// reads the log after the position and queues what is missing, before the events that come live.
/// With a shared database every node follows every event, and the position (locked while it is
/// moved) lets only the first node queue each one. Nothing is written while no device is
/// subscribed: adding and firing cost nothing more for a service without Web Push.
///
/// **Sending.** What a node queued it has claimed, and sends at once: up to
/// ``Configuration/inFlight`` pushes in flight on one ``HTTPPool`` (HTTP/2 where the service offers
/// it), so a slow or dead push service delays neither the writer, the scheduler nor a surface.
/// Outcomes: 2xx finishes the push; 404 and 410 remove the subscription (the browser
/// unsubscribed); 429 and 5xx (and a failed connection) are retried with back-off, after
/// `Retry-After` when the service sends one, until the push's TTL runs out or
/// ``Configuration/attempts`` are spent; any other answer gives the push up. Every failure is noted
/// on the subscription (`lastFailure`, `lastFailureReason`).
///
/// **Stopping.** ``stop()`` lets pushes in flight finish for ``Configuration/stopGrace`` seconds
/// (their outcomes are noted), then cuts the rest off and gives back every claim it still holds:
/// another node takes them at once (told through the database's notifications), or with SQLite the
/// next start sends them. A node that dies keeps its claims until they end
/// (``Configuration/lease``, 2 minutes); the others take them at their next look after that.
///
/// ```swift
/// let surface = WebPushSurface(engine: engine, configuration: .init(key: key, contact: "mailto:ops@example.org", endpoints: endpoints))
/// surface.start()
/// …
/// await surface.stop()
/// ```
public final class WebPushSurface: Sendable {
    public struct Configuration: Sendable {
        public var key: WebPushKey
        /// The VAPID `sub`: `mailto:` or `https:` (RFC 8292 §2.1).
        public var contact: String
        public var endpoints: WebPushEndpoints
        /// Pushes in flight at once.
        public var inFlight = 64
        /// How long a push taken for sending stays claimed (then it is taken again).
        public var lease: TimeInterval = 120
        /// Tries before a push is given up.
        public var attempts = 10
        /// Seconds a push service has to answer one push.
        public var timeout: Double = 30
        /// Seconds ``WebPushSurface/stop()`` waits for pushes in flight before cutting them off.
        public var stopGrace: Double = 3

        public init(key: WebPushKey, contact: String, endpoints: WebPushEndpoints) {
            self.key = key
            self.contact = contact
            self.endpoints = endpoints
        }
    }

    /// One push to send: the queued row and its subscriber.
    struct Job: Sendable {
        var push: QueuedWebPush
        var subscription: WebPushSubscription
    }

    private struct State {
        var jobs: [Job] = []
        var running = 0
        var stopped = false
        /// The pool was shut down: sends still in flight end with an error, and their claims are given back.
        var cutOff = false
        /// Claims to give back when stopping (pushes cut off in flight).
        var released: [QueuedWebPushID] = []
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        /// VAPID tokens by audience (the push service's origin), reused until an hour before expiry.
        var tokens: [String: (token: String, renew: Date)] = [:]
        /// When a success was last noted per subscription (noted at most once a minute).
        var noted: [String: Date] = [:]
        /// The retry loop's sleep and when it ends; the soonest retry asked for since it last looked.
        var sleeper: Task<Void, Never>?
        var sleepUntil: Date = .distantFuture
        var retryAt: Date?
        var loop: Task<Void, Never>?
        /// Logged events not queued yet, in the log's order; whether they are being queued (or the
        /// start's catch-up runs), and the task doing it.
        var events: [EngineEvent] = []
        var feeding = false
        var feeder: Task<Void, Never>?
        /// The last sequence this sender queued (or found queued); later ones only are looked at.
        var lastQueued: Int64 = 0
        /// The hub subscription.
        var token: Int?

        var isIdle: Bool { running == 0 && !feeding && (stopped || (jobs.isEmpty && events.isEmpty)) }
    }

    private let engine: NotificationEngine
    private let configuration: Configuration
    private let pool: HTTPPool
    private let logger: ServerLogger
    private let state = Mutex(State())

    public init(engine: NotificationEngine, configuration: Configuration, logger: ServerLogger = .silent) {
        self.engine = engine
        self.configuration = configuration
        self.logger = logger
        let endpoints = configuration.endpoints
        pool = HTTPPool(addressCheck: { url, address in
            switch endpoints.allowance(url) {
            case .listed?: true
            case .publicService?: WebPushEndpoints.isPublic(address)
            case nil: false
            }
        })
    }

    // MARK: Queueing

    /// Starts: takes what an earlier run left queued (with SQLite all of it, this process being
    /// the only sender; with a shared database what is due), queues what the log holds after the
    /// queue's position, then follows events as they come and retries when due.
    public func start() {
        let token = engine.subscribe(app: nil) { [weak self] event in self?.received(event) }
        engine.onWebPushReleased { [weak self] in self?.wake(at: .distantPast) }
        state.withLock { state in
            state.token = token
            state.feeding = true
            state.loop = Task { await self.run() }
        }
    }

    private func run() async {
        await claimQueued(before: engine.isStoreShared ? engine.clock.now : .distantFuture)
        await catchUp()
        await feed()
        await retryLoop()
    }

    /// A logged event from the hub (on the writer, or a shared store's feed): kept for the feeder.
    private func received(_ event: EngineEvent) {
        switch event.payload {
        case .delivered, .realerted, .removed(_, .delivered, _): break
        default: return
        }
        state.withLock { state in
            guard !state.stopped else { return }
            state.events.append(event)
            guard !state.feeding else { return }
            state.feeding = true
            state.feeder = Task { await self.feed() }
        }
    }

    /// Queues the events that came, until none is left.
    private func feed() async {
        while true {
            let events = state.withLock { state -> [EngineEvent]? in
                guard !state.events.isEmpty, !state.stopped else {
                    state.feeding = false
                    return nil
                }
                defer { state.events = [] }
                return state.events
            }
            guard let events else { break }
            await queue(events)
        }
        resumeIdleWaiters()
    }

    /// What the log holds after the queue's position (events committed while no sender ran, or in
    /// the moment before a crash), queued before anything that comes live.
    private func catchUp() async {
        do {
            var position = try await engine.webPushQueuedThrough()
            state.withLock { $0.lastQueued = max($0.lastQueued, position) }
            guard try await engine.hasWebPushSubscriptions() else { return }
            let oldest = try await engine.oldestEventSequence()
            if oldest > position + 1 {
                logger.warning(
                    "web push: the event log no longer holds some events after the last queued one; their pushes are not sent",
                    ["queuedThrough": String(position), "oldestKept": String(oldest)])
            }
            while !state.withLock({ $0.stopped }) {
                let page = try await engine.events(after: position, app: nil, limit: Self.page)
                guard let last = page.last else { break }
                await queue(page)
                position = last.sequence
                if page.count < Self.page { break }
            }
        } catch {
            logger.warning(
                "web push: could not read the event log at start; what it holds is queued at the next start",
                ["reason": "\(error)"])
        }
    }

    /// The last logged event this sender has queued or found queued (tests wait for it).
    var queuedThrough: Int64 { state.withLock { $0.lastQueued } }

    /// The most events queued in one transaction.
    static let page = 500

    /// Writes the events' messages to the store's queue for the subscribers of their apps, with
    /// the queue's position in the log, and hands what was queued to the sender.
    private func queue(_ events: [EngineEvent]) async {
        let after = state.withLock { $0.lastQueued }
        let fresh = events.filter { $0.sequence == 0 || $0.sequence > after }
        var start = 0
        while start < fresh.count {
            let chunk = fresh[start..<min(fresh.count, start + Self.page)]
            start += Self.page
            let through = chunk.last(where: { $0.sequence > 0 })?.sequence ?? 0
            var failures = 0
            while true {
                do {
                    let subscriptions = try await engine.webPushSubscriptions()
                    // Nobody subscribed: nothing is written (the first registration moves the position).
                    guard !subscriptions.isEmpty else { break }
                    let now = engine.clock.now
                    let entries = chunk.compactMap { Self.entry(for: $0, subscriptions: subscriptions, now: now) }
                    let queued = try await engine.queueWebPushes(
                        entries, through: through, claimedUntil: now.addingTimeInterval(configuration.lease))
                    let byID = Dictionary(subscriptions.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
                    enqueue(
                        queued.compactMap { push in byID[push.subscription].map { Job(push: push, subscription: $0) } })
                    break
                } catch {
                    failures += 1
                    if failures >= 5 || state.withLock({ $0.stopped }) {
                        logger.warning(
                            "web push: could not queue pushes; those of these events are not sent",
                            ["events": String(chunk.count), "reason": "\(error)"])
                        break
                    }
                    try? await Sleep.for(.milliseconds(100 << failures))
                }
            }
            state.withLock { $0.lastQueued = max($0.lastQueued, through) }
        }
    }

    /// What one event asks of the queue: a show for a delivery the settings let be shown (and
    /// again for an escalating notification alerted again), closes for removed notifications; for
    /// the subscribers of its app.
    static func entry(for event: EngineEvent, subscriptions: [WebPushSubscription], now: Date) -> WebPushQueueEntry? {
        let messages: [WebPushMessage]
        switch event.payload {
        case .delivered(let delivery), .realerted(let delivery):
            // Held by a focus: in the list only, not pushed.
            guard !delivery.presentation.isEmpty, delivery.focus?.quiet != true else { return nil }
            messages = [WebPushMessage.show(delivery, app: event.app, now: now)]
        case .removed(let identifiers, .delivered, _):
            messages = WebPushMessage.close(identifiers, app: event.app, now: now)
        default:
            return nil
        }
        let subscribers = subscriptions.filter { $0.receives(app: event.app) }.map(\.id)
        guard !subscribers.isEmpty, !messages.isEmpty else { return nil }
        return WebPushQueueEntry(
            sequence: event.sequence, app: event.app, messages: messages.map(\.storedRecord), subscriptions: subscribers
        )
    }

    // MARK: Sending

    private func enqueue(_ jobs: [Job]) {
        guard !jobs.isEmpty else { return }
        state.withLock { state in
            // Queued as the sender stopped: given back with the rest.
            if state.stopped { state.released += jobs.map(\.push.id) } else { state.jobs.append(contentsOf: jobs) }
        }
        pump()
    }

    /// Starts sends while fewer than `inFlight` run.
    private func pump() {
        let started = state.withLock { state -> [Job] in
            guard !state.stopped else { return [] }
            var taken: [Job] = []
            while state.running < configuration.inFlight, !state.jobs.isEmpty {
                taken.append(state.jobs.removeFirst())
                state.running += 1
            }
            return taken
        }
        for job in started {
            Task {
                await self.send(job)
                self.state.withLock { $0.running -= 1 }
                self.resumeIdleWaiters()
                self.pump()
            }
        }
    }

    private func resumeIdleWaiters() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard state.isIdle else { return [] }
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until nothing is being queued or sent and nothing waits to be (the start's catch-up
    /// included): for tests and benchmarks.
    public func idle() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.isIdle { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// What became of one push.
    enum Outcome: Equatable {
        case sent
        /// The subscription is gone (404, 410): remove it.
        case gone(String)
        /// Try again after this many seconds.
        case retry(TimeInterval, String)
        /// Give it up, noting why.
        case failed(String)
    }

    private func send(_ job: Job) async {
        let outcome = await attempt(job)
        if case .retry = outcome {
            // Cut off by a stop: given back, so another node (or the next start) sends it now.
            let cut = state.withLock { state -> Bool in
                if state.cutOff { state.released.append(job.push.id) }
                return state.cutOff
            }
            if cut { return }
        }
        let push = job.push
        let id = job.subscription.id
        let now = engine.clock.now
        do {
            switch outcome {
            case .sent:
                try await engine.finishWebPush(message: push.message, subscription: id)
                let note = state.withLock { state -> Bool in
                    if let last = state.noted[id], now.timeIntervalSince(last) < 60 { return false }
                    state.noted[id] = now
                    return true
                }
                if note { try await engine.recordWebPushOutcome(id: id, failure: nil, date: now) }
            case .gone(let reason):
                _ = try await engine.removeWebPushSubscription(id: id)
                logger.warning(
                    "web push: the push service says the subscription is gone; removed it",
                    ["subscription": id, "reason": reason])
            case .retry(let delay, let reason):
                let attempts = push.attempts + 1
                let expires =
                    (WebPushMessage(storedRecord: push.body).map { $0.created.addingTimeInterval(TimeInterval($0.ttl)) })
                    ?? now
                let next = now.addingTimeInterval(delay)
                if attempts >= configuration.attempts || next >= expires {
                    try await engine.finishWebPush(message: push.message, subscription: id)
                    try await engine.recordWebPushOutcome(
                        id: id, failure: "gave up after \(attempts) attempts: \(reason)", date: now)
                } else {
                    try await engine.retryWebPush(
                        message: push.message, subscription: id, attempts: attempts, notBefore: next)
                    try await engine.recordWebPushOutcome(id: id, failure: reason, date: now)
                    wake(at: next)
                }
            case .failed(let reason):
                try await engine.finishWebPush(message: push.message, subscription: id)
                try await engine.recordWebPushOutcome(id: id, failure: reason, date: now)
                logger.warning("web push: a push was refused and given up", ["subscription": id, "reason": reason])
            }
        } catch {
            // The store failed: the push stays claimed and is taken again when the claim ends.
            logger.warning(
                "web push: could not record a push's outcome; it is tried again later",
                ["subscription": id, "reason": "\(error)"])
        }
    }

    /// How old a push with TTL 0 may be and still get its one try (seconds).
    static let nowOrNeverGrace = 30

    /// One try: encrypt, sign, POST, and judge the answer.
    func attempt(_ job: Job) async -> Outcome {
        let subscription = job.subscription
        guard let message = WebPushMessage(storedRecord: job.push.body) else {
            return .failed("the queued message is damaged")
        }
        let now = engine.clock.now
        let age = Int(max(0, now.timeIntervalSince(message.created)))
        // A TTL of 0 (RFC 8030's now or never: the push service delivers it only to a device that is
        // there) has its one try, as long as it is still news: Chime's own queue may hold it a few
        // seconds on a busy machine, which must not make "now" into "never".
        let fresh = message.ttl > 0 ? age < message.ttl : job.push.attempts == 0 && age < Self.nowOrNeverGrace
        guard fresh else { return .failed("expired before it could be sent (TTL \(message.ttl) s)") }
        guard configuration.endpoints.allowance(subscription.endpoint) != nil,
            let parsed = WebPushEndpoints.parse(subscription.endpoint)
        else {
            return .failed("the endpoint is not a push service this service sends to (see --web-push-endpoints)")
        }
        let body: [UInt8]
        do {
            body = try WebPushEncryption.encrypt(
                message.payload.serializedBytes(), p256dh: subscription.p256dh, auth: subscription.auth)
        } catch {
            return .failed("the subscription's keys are unusable: \(error.message)")
        }
        let audience = "\(parsed.scheme)://\(parsed.host)" + (parsed.port.map { ":\($0)" } ?? "")
        let token: String
        do { token = try vapidToken(audience: audience, now: now) } catch {
            return .failed("could not sign the VAPID token: \(error.message)")
        }
        var headers = [
            ("TTL", String(max(0, message.ttl - age))), ("Urgency", message.urgency), ("Content-Encoding", "aes128gcm"),
            ("Content-Type", "application/octet-stream"),
            ("Authorization", "vapid t=\(token), k=\(configuration.key.publicKeyText)"),
        ]
        if let topic = message.topic { headers.append(("Topic", topic)) }
        let response: HTTPClient.Response
        do {
            response = try await pool.send(
                HTTPPool.Request(
                    url: subscription.endpoint, headers: headers, body: body, timeout: configuration.timeout))
        } catch {
            if error.code == .permissionDenied || error.code == .badRequest { return .failed(error.message) }
            return .retry(backoff(job.push.attempts, retryAfter: nil, now: now), error.message)
        }
        let status = response.status
        let reason = "HTTP \(status)" + (response.text.isEmpty ? "" : ": " + String(response.text.prefix(120)))
        switch status {
        case 200..<300: return .sent
        case 404, 410: return .gone(reason)
        case 429, 500..<600:
            return .retry(backoff(job.push.attempts, retryAfter: response.headers["retry-after"], now: now), reason)
        default: return .failed(reason)
        }
    }

    /// `Retry-After` (seconds or an HTTP date) within 1 s to 1 h; without one, 2^attempts seconds (at most 1 h).
    func backoff(_ attempts: Int, retryAfter: String?, now: Date) -> TimeInterval {
        if let text = retryAfter?.trimmingCharacters(in: .whitespaces) {
            if let seconds = Double(text), seconds.isFinite { return min(max(seconds, 1), 3600) }
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
            if let date = formatter.date(from: text) { return min(max(date.timeIntervalSince(now), 1), 3600) }
        }
        return min(pow(2, Double(min(attempts, 12))), 3600)
    }

    /// The VAPID JWT for a push service: `aud` its origin, `exp` 12 hours ahead (RFC 8292 allows 24),
    /// `sub` the contact; one per origin, made again an hour before it expires.
    func vapidToken(audience: String, now: Date) throws(ChimeError) -> String {
        if let cached = state.withLock({ $0.tokens[audience] }), cached.renew > now { return cached.token }
        let expires = Int64(now.timeIntervalSince1970) + 12 * 3600
        let token = try JSONWebToken.sign(
            claims: ["aud": .string(audience), "exp": .integer(expires), "sub": .string(configuration.contact)],
            header: ["typ": "JWT"], with: configuration.key.privateKey)
        state.withLock { $0.tokens[audience] = (token, now.addingTimeInterval(11 * 3600)) }
        return token
    }

    // MARK: The queue in the store

    /// Takes queued pushes due by `before` (all of them at the first look with SQLite) and hands
    /// them to the sender; a push whose subscriber is gone is finished.
    private func claimQueued(before: Date) async {
        var before = before
        while !state.withLock({ $0.stopped }) {
            do {
                let now = engine.clock.now
                let claimed = try await engine.claimWebPushes(
                    before: before, claimUntil: now.addingTimeInterval(configuration.lease), limit: 1000)
                guard !claimed.isEmpty else { return }
                let subscriptions = Dictionary(
                    try await engine.webPushSubscriptions().map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }
                )
                for push in claimed where subscriptions[push.subscription] == nil {
                    try await engine.finishWebPush(message: push.message, subscription: push.subscription)
                }
                enqueue(
                    claimed.compactMap { push in
                        subscriptions[push.subscription].map { Job(push: push, subscription: $0) }
                    })
                guard claimed.count == 1000 else { return }
                before = engine.clock.now
            } catch {
                logger.warning("web push: could not read the push queue; trying again", ["reason": "\(error)"])
                return
            }
        }
    }

    private func retryLoop() async {
        while true {
            // Sleep until the soonest retry asked for, or half a claim (claims of a node that died
            // end); no sleeper: stopped, or a retry is due now.
            let (stopped, sleeper) = state.withLock { state -> (Bool, Task<Void, Never>?) in
                guard !state.stopped else { return (true, nil) }
                let now = engine.clock.now
                if let retry = state.retryAt, retry <= now {
                    // A retry fell due (or another node gave claims back) while the queue was read.
                    state.retryAt = nil
                    return (false, nil)
                }
                let until = min(state.retryAt ?? .distantFuture, now.addingTimeInterval(configuration.lease / 2))
                state.sleepUntil = until
                let seconds = max(0.001, until.timeIntervalSince(now))
                let task = Task<Void, Never> {
                    _ = try? await Sleep.for(.milliseconds(Int((seconds * 1000).rounded(.up))))
                }
                state.sleeper = task
                return (false, task)
            }
            if stopped { return }
            await sleeper?.value
            await claimQueued(before: engine.clock.now)
        }
    }

    /// Ends the sends still in flight (each gives its claim back) and the pool.
    private func cutOff() {
        state.withLock { $0.cutOff = true }
        pool.shutdown()
    }

    /// Makes the retry loop look at the queue again at `date`.
    private func wake(at date: Date) {
        state.withLock { state in
            state.retryAt = min(state.retryAt ?? .distantFuture, date)
            guard date < state.sleepUntil else { return }
            state.sleepUntil = date
            state.sleeper?.cancel()
        }
    }

    /// Stops: follows no more events (what was not queued yet is, by the next start or another
    /// node, from the log), lets pushes in flight finish for ``Configuration/stopGrace`` seconds,
    /// cuts off the rest, and gives back every claim still held — pushes waiting their turn and
    /// those cut off — so another node sends them at once (with SQLite, the next start).
    public func stop() async {
        let (loop, sleeper, feeder, token) = state.withLock { state in
            state.stopped = true
            return (state.loop, state.sleeper, state.feeder, state.token)
        }
        if let token { engine.unsubscribe(token) }
        engine.onWebPushReleased(nil)
        sleeper?.cancel()
        await loop?.value
        await feeder?.value
        let deadline = Task {
            guard (try? await Sleep.for(.milliseconds(Int(configuration.stopGrace * 1000)))) != nil else { return }
            self.cutOff()
        }
        await idle()
        deadline.cancel()
        cutOff()
        let held = state.withLock { state -> [QueuedWebPushID] in
            defer {
                state.jobs = []
                state.released = []
            }
            return state.jobs.map(\.push.id) + state.released
        }
        guard !held.isEmpty else { return }
        do {
            // As if their claims had ended: due now on every node's clock.
            try await engine.releaseWebPushes(held, at: engine.clock.now.addingTimeInterval(-configuration.lease))
        } catch {
            logger.warning(
                "web push: could not give back claimed pushes; they are sent when their claims end",
                ["pushes": String(held.count), "reason": "\(error)"])
        }
    }
}
