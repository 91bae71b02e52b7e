import ChimeCore
import ChimeCrypto
import ChimeHTTP
import Foundation
import Synchronization

/// Web Push as a surface of its own: every delivery (and every removal) of the apps a subscribed
/// device gets goes to that device's push service — RFC 8030, with a VAPID token (RFC 8292) and the
/// payload encrypted for the subscriber (RFC 8291, `aes128gcm`).
///
/// The hub feeds it on its own lane; the lane only queues: the message is written to the store's
/// push queue (one row per subscriber, claimed by this sender), handed to the sender, and the lane
/// goes on, so a slow or dead push service delays neither the writer, the scheduler nor another
/// surface. The sender keeps up to ``Configuration/inFlight`` pushes in flight on one ``HTTPPool``
/// (HTTP/2 where the service offers it). Outcomes: 2xx finishes the push; 404 and 410 remove the
/// subscription (the browser unsubscribed); 429 and 5xx (and a failed connection) are retried with
/// back-off, after `Retry-After` when the service sends one, until the push's TTL runs out or
/// ``Configuration/attempts`` are spent; any other answer gives the push up. Every failure is noted
/// on the subscription (`lastFailure`, `lastFailureReason`). Pushes queued when the service stopped
/// (or died) are sent after the next start: at once with SQLite, after their claim ends with a
/// shared database (another node may be sending them).
///
/// ```swift
/// let surface = WebPushSurface(engine: engine, configuration: .init(key: key, contact: "mailto:ops@example.org", endpoints: endpoints))
/// let attachment = engine.attach(surface, app: nil)
/// surface.start()
/// …
/// attachment.detach(); await surface.stop()
/// ```
public final class WebPushSurface: NotificationSurface {
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

    // MARK: The surface

    public func show(_ delivery: Delivery, app: String) async {
        let message = WebPushMessage.show(delivery, app: app, now: engine.clock.now)
        await queue([message], app: app)
    }

    public func withdraw(_ identifiers: [String], app: String) async {
        await queue(WebPushMessage.close(identifiers, app: app, now: engine.clock.now), app: app)
    }

    /// Writes the messages to the store's queue for the app's subscribers and hands them to the sender.
    private func queue(_ messages: [WebPushMessage], app: String) async {
        guard !messages.isEmpty, !state.withLock({ $0.stopped }) else { return }
        do {
            let subscribers = try await engine.webPushSubscriptions().filter { $0.receives(app: app) }
            guard !subscribers.isEmpty else { return }
            for message in messages {
                let record = message.storedRecord
                let now = engine.clock.now
                let id = try await engine.queueWebPush(record, app: app, subscriptions: subscribers.map(\.id), claimedUntil: now.addingTimeInterval(configuration.lease))
                enqueue(subscribers.map { Job(push: QueuedWebPush(message: id, subscription: $0.id, app: app, body: record, attempts: 0, notBefore: now),
                                              subscription: $0) })
            }
        } catch {
            logger.warning("web push: could not queue a push; it is not sent", ["app": app, "reason": "\(error)"])
        }
    }

    // MARK: Sending

    private func enqueue(_ jobs: [Job]) {
        state.withLock { $0.jobs.append(contentsOf: jobs) }
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
                let waiters = self.state.withLock { state -> [CheckedContinuation<Void, Never>] in
                    state.running -= 1
                    guard state.running == 0, state.stopped || state.jobs.isEmpty else { return [] }
                    defer { state.idleWaiters = [] }
                    return state.idleWaiters
                }
                for waiter in waiters { waiter.resume() }
                self.pump()
            }
        }
    }

    /// Waits until nothing is being sent and nothing waits to be (tests and benchmarks).
    public func idle() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.running == 0 && (state.jobs.isEmpty || state.stopped) { return true }
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
        if state.withLock({ $0.stopped }) { return }     // left claimed in the store: sent after the next start
        let push = job.push, id = job.subscription.id
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
                logger.warning("web push: the push service says the subscription is gone; removed it", ["subscription": id, "reason": reason])
            case .retry(let delay, let reason):
                let attempts = push.attempts + 1
                let expires = (WebPushMessage(storedRecord: push.body).map { $0.created.addingTimeInterval(TimeInterval($0.ttl)) }) ?? now
                let next = now.addingTimeInterval(delay)
                if attempts >= configuration.attempts || next >= expires {
                    try await engine.finishWebPush(message: push.message, subscription: id)
                    try await engine.recordWebPushOutcome(id: id, failure: "gave up after \(attempts) attempts: \(reason)", date: now)
                } else {
                    try await engine.retryWebPush(message: push.message, subscription: id, attempts: attempts, notBefore: next)
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
            logger.warning("web push: could not record a push's outcome; it is tried again later", ["subscription": id, "reason": "\(error)"])
        }
    }

    /// How old a push with TTL 0 may be and still get its one try (seconds).
    static let nowOrNeverGrace = 30

    /// One try: encrypt, sign, POST, and judge the answer.
    func attempt(_ job: Job) async -> Outcome {
        let subscription = job.subscription
        guard let message = WebPushMessage(storedRecord: job.push.body) else { return .failed("the queued message is damaged") }
        let now = engine.clock.now
        let age = Int(max(0, now.timeIntervalSince(message.created)))
        // A TTL of 0 (RFC 8030's now or never: the push service delivers it only to a device that is
        // there) has its one try, as long as it is still news: Chime's own queue may hold it a few
        // seconds on a busy machine, which must not make "now" into "never".
        let fresh = message.ttl > 0 ? age < message.ttl : job.push.attempts == 0 && age < Self.nowOrNeverGrace
        guard fresh else { return .failed("expired before it could be sent (TTL \(message.ttl) s)") }
        guard configuration.endpoints.allowance(subscription.endpoint) != nil,
              let parsed = WebPushEndpoints.parse(subscription.endpoint) else {
            return .failed("the endpoint is not a push service this service sends to (see --web-push-endpoints)")
        }
        let body: [UInt8]
        do {
            body = try WebPushEncryption.encrypt(message.payload.serializedBytes(), p256dh: subscription.p256dh, auth: subscription.auth)
        } catch {
            return .failed("the subscription's keys are unusable: \(error.message)")
        }
        let audience = "\(parsed.scheme)://\(parsed.host)" + (parsed.port.map { ":\($0)" } ?? "")
        let token: String
        do { token = try vapidToken(audience: audience, now: now) } catch { return .failed("could not sign the VAPID token: \(error.message)") }
        var headers = [("TTL", String(max(0, message.ttl - age))), ("Urgency", message.urgency), ("Content-Encoding", "aes128gcm"),
                       ("Content-Type", "application/octet-stream"),
                       ("Authorization", "vapid t=\(token), k=\(configuration.key.publicKeyText)")]
        if let topic = message.topic { headers.append(("Topic", topic)) }
        let response: HTTPClient.Response
        do {
            response = try await pool.send(HTTPPool.Request(url: subscription.endpoint, headers: headers, body: body, timeout: configuration.timeout))
        } catch {
            if error.code == .permissionDenied || error.code == .badRequest { return .failed(error.message) }
            return .retry(backoff(job.push.attempts, retryAfter: nil, now: now), error.message)
        }
        let status = response.status
        let reason = "HTTP \(status)" + (response.text.isEmpty ? "" : ": " + String(response.text.prefix(120)))
        switch status {
        case 200..<300: return .sent
        case 404, 410: return .gone(reason)
        case 429, 500..<600: return .retry(backoff(job.push.attempts, retryAfter: response.headers["retry-after"], now: now), reason)
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
        let token = try JSONWebToken.sign(claims: ["aud": .string(audience), "exp": .integer(expires), "sub": .string(configuration.contact)],
                                          header: ["typ": "JWT"], with: configuration.key.privateKey)
        state.withLock { $0.tokens[audience] = (token, now.addingTimeInterval(11 * 3600)) }
        return token
    }

    // MARK: The queue in the store

    /// Starts taking queued pushes from the store: what an earlier run left, and retries when due.
    public func start() {
        let task = Task { await self.retryLoop() }
        state.withLock { $0.loop = task }
    }

    private func retryLoop() async {
        // With SQLite this process is the only sender: what is queued was left by an earlier run.
        var before = engine.isStoreShared ? engine.clock.now : Date.distantFuture
        while !state.withLock({ $0.stopped }) {
            let now = engine.clock.now
            do {
                let claimed = try await engine.claimWebPushes(before: before, claimUntil: now.addingTimeInterval(configuration.lease), limit: 1000)
                if !claimed.isEmpty {
                    let subscriptions = Dictionary(try await engine.webPushSubscriptions().map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
                    enqueue(claimed.compactMap { push in subscriptions[push.subscription].map { Job(push: push, subscription: $0) } })
                    if claimed.count == 1000 {
                        before = engine.clock.now
                        continue
                    }
                }
            } catch {
                logger.warning("web push: could not read the push queue; trying again", ["reason": "\(error)"])
            }
            // Sleep until the soonest retry asked for, or half a claim (claims of a stopped node end);
            // no sleeper: stopped, or a retry is due now.
            let sleeper = state.withLock { state -> Task<Void, Never>? in
                guard !state.stopped else { return nil }
                let now = engine.clock.now
                if let retry = state.retryAt, retry <= now {
                    // A retry fell due while the queue was read: read it again at once.
                    state.retryAt = nil
                    return nil
                }
                let until = min(state.retryAt ?? .distantFuture, now.addingTimeInterval(configuration.lease / 2))
                state.sleepUntil = until
                let seconds = max(0.001, until.timeIntervalSince(now))
                let task = Task<Void, Never> { _ = try? await Sleep.for(.milliseconds(Int((seconds * 1000).rounded(.up)))) }
                state.sleeper = task
                return task
            }
            await sleeper?.value
            before = engine.clock.now
        }
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

    /// Stops sending: what is queued or in flight stays in the store for the next start.
    public func stop() async {
        let (loop, sleeper) = state.withLock { state -> (Task<Void, Never>?, Task<Void, Never>?) in
            state.stopped = true
            return (state.loop, state.sleeper)
        }
        sleeper?.cancel()
        pool.shutdown()
        await loop?.value
        await idle()
    }
}
