import Foundation
import Synchronization

/// Where engine events go after their transaction commits, to three kinds of attachment, each with
/// one contract (thread, order, back-pressure):
///
/// - a ``Subscriber`` (``subscribe(app:handler:)``, ``events(app:)``) is called at once, on the
///   publishing thread, with every event — or, subscribed with `offPublisher`, on one of the hub's
///   fan-out queues (one per core), in order, without holding up the publisher;
/// - a ``SurfaceAttachment`` (``attach(_:app:)``) shows deliveries and withdraws them, off that
///   thread, on a ``SerialLane`` of its own;
/// - a ``PresenterAttachment`` (``setPresenter(app:_:)``) is an app's `willPresent` while it is in
///   front: asked, on a ``SerialLane`` per app, before the surfaces show that app's deliveries.
///
/// The engine owns one (``NotificationEngine/hub``); an app's center on a `chime serve` service owns
/// one fed from the service's event stream, so surfaces and the app's `willPresent` work the same
/// way in both.
///
/// ```swift
/// let attachment = engine.attach(desktop, app: nil)        // every app's notifications
/// engine.hub.setPresenter(app: "com.example.alarm") { deliveries in
///     deliveries.map { _ in appIsInFront ? [.banner, .sound] : nil }   // the app's willPresent answers
/// }
/// …
/// attachment.detach()
/// ```
///
/// Order: each surface sees one app's events in the order the engine announced them. A delivery of
/// an app with a presenter waits for the presenter's answer; the app's later events wait behind it,
/// other apps' events do not.
public final class NotificationHub: Sendable {
    /// The app's `willPresent`, asked for one or more of its deliveries at a time, in order (a burst
    /// of deliveries is one call, so an app's main actor is entered once for all of them): one
    /// answer per delivery — the options it asks for while in front, or `nil` when it is not in
    /// front (then the engine's background presentation stands). The hub limits each answer to what
    /// the settings allow.
    public typealias Presenter = @Sendable ([Delivery]) async -> [UNNotificationPresentationOptions?]

    /// A subscriber: `handler` gets every event of its app (or, with no app, of every app) on the
    /// thread that publishes — the engine's writer after the commit and before the operation that
    /// caused it completes, or the stream reader of a service-backed center — in publish order,
    /// deliveries with the engine's background presentation (no presenter is asked). It must return
    /// quickly and never wait for the engine. No back-pressure: a subscriber that hands events on
    /// bounds its own queue (the service's event streams end a client that falls too far behind).
    /// The service's event streams (so the web center), metrics, an app center's outbox hand-over
    /// and the Web Push sender are subscribers. `finish` is called when it is removed.
    struct Subscriber {
        var app: String?
        var handler: @Sendable (EngineEvent) -> Void
        var finish: @Sendable () -> Void
        /// The fan-out queue it is called on (``subscribe(app:offPublisher:handler:)``); nil: on the
        /// publishing thread.
        var lane: Int? = nil
    }

    /// A surface: shows deliveries and withdraws removed ones for its app (or every app), off the
    /// publishing thread, on a lane of its own, so a slow surface delays neither a commit nor
    /// another surface. It sees one app's deliveries and withdrawals in publish order, after the
    /// app's presenter when it has one (then with the presenter's answer within the settings), and
    /// nothing for a delivery whose presentation is empty. Back-pressure: none on the engine; its
    /// lane holds what it has not done yet, and ``settle()`` waits for it. The desktop, the
    /// terminal and the simulator's recorder are surfaces.
    struct SurfaceAttachment {
        var app: String?
        var lane: SerialLane<@Sendable () async -> Void>
        var surface: any NotificationSurface
    }

    /// A presenter: an app's `willPresent` while it is in front, one per app, asked on the app's lane
    /// for what queued up (at most ``PresenterAttachment/batch`` deliveries a call, in publish
    /// order). Its answers decide what the app's surfaces get and whether a delivery's pending
    /// badge is applied. Back-pressure: the app's later deliveries and withdrawals wait behind its
    /// answer (its surfaces only; other apps' do not wait). An embedded center's delegate and an
    /// app in front on the service (its app channel) are presenters.
    struct PresenterAttachment {
        /// The most deliveries asked in one call.
        static let batch = 512
        var presenter: Presenter
        var lane: SerialLane<PresenterRun>
        /// Which `setPresenter` call set it: runs queued under the same one are asked together.
        var generation: Int
    }

    /// Who gets an app's events: those registered for it and those registered for every app.
    /// Rebuilt when someone registers or leaves (rare), so publishing is a dictionary lookup.
    private struct Routes {
        var everyApp: [Subscriber] = []
        var byApp: [String: [Subscriber]] = [:]
        /// Subscribers called off the publishing thread, by fan-out queue.
        var laneEveryApp: [Int: [Subscriber]] = [:]
        var laneByApp: [String: [Int: [Subscriber]]] = [:]
        var surfacesForEveryApp: [SurfaceAttachment] = []
        var surfacesByApp: [String: [SurfaceAttachment]] = [:]
        /// Each app's presenter.
        var presenters: [String: PresenterAttachment] = [:]

        func surfaces(of app: String) -> [SurfaceAttachment] { surfacesForEveryApp + (surfacesByApp[app] ?? []) }
        var hasSurfaces: Bool { !surfacesForEveryApp.isEmpty || !surfacesByApp.isEmpty || !presenters.isEmpty }
    }

    private struct State {
        var next = 0
        var subscribers: [Int: Subscriber] = [:]
        var attachments: [Int: SurfaceAttachment] = [:]
        var routes = Routes()

        mutating func rebuild() {
            let presenters = routes.presenters
            routes = Routes()
            routes.presenters = presenters
            for (_, subscriber) in subscribers.sorted(by: { $0.key < $1.key }) {
                switch (subscriber.app, subscriber.lane) {
                case (let app?, nil): routes.byApp[app, default: []].append(subscriber)
                case (nil, nil): routes.everyApp.append(subscriber)
                case (let app?, let lane?): routes.laneByApp[app, default: [:]][lane, default: []].append(subscriber)
                case (nil, let lane?): routes.laneEveryApp[lane, default: []].append(subscriber)
                }
            }
            for (_, attached) in attachments.sorted(by: { $0.key < $1.key }) {
                if let app = attached.app {
                    routes.surfacesByApp[app, default: []].append(attached)
                } else {
                    routes.surfacesForEveryApp.append(attached)
                }
            }
        }
    }

    private let state = Mutex(State())
    /// The queues that call subscribers off the publishing thread: one per core (at most 8), each
    /// serial, so a subscriber (always on the same one) gets its events in publish order while the
    /// queues together use every core.
    private let fanOutQueues: [DispatchQueue] = (0..<min(8, max(1, ProcessInfo.processInfo.activeProcessorCount)))
        .map { DispatchQueue(label: "chime.hub.fan-out-\($0)", qos: .userInitiated) }
    /// Applies a delivery's pending badge (the engine's writer); `nil` on hubs without an engine.
    private let badgeApplier = Mutex<(@Sendable (String, Int) -> Void)?>(nil)
    /// Work queued on lanes and not yet done, and who waits for it to reach zero.
    private let work = Mutex<(outstanding: Int, done: Int, waiters: [CheckedContinuation<Void, Never>])>((0, 0, []))

    public init() {}

    // MARK: - Subscribers

    /// Calls `handler` with every event of one app (or, with `nil`, of every app) from now on, as it
    /// is published: on the engine's writer, after the event's transaction committed and before the
    /// operation that caused it completes. The handler must return quickly and must not wait for
    /// the engine.
    ///
    /// - Returns: a token for ``unsubscribe(_:)``.
    public func subscribe(app: String?, handler: @escaping @Sendable (EngineEvent) -> Void) -> Int {
        subscribe(app: app, handler: handler, finish: {})
    }

    /// Like ``subscribe(app:handler:)``, but with `offPublisher` the handler is called on one of the
    /// hub's fan-out queues (one per core) instead of the publishing thread: still every event, in
    /// publish order, but possibly after the operation that caused it has completed. For
    /// subscribers that only hand events on — the service's event streams, which queue them for a
    /// socket — so that 10,000 of them cost the engine's writer a few queue hand-offs per commit
    /// instead of 10,000 calls, and their writes share the cores.
    ///
    /// ```swift
    /// let token = hub.subscribe(app: "com.example.alarm", offPublisher: true) { event in
    ///     stream.send(frame(for: event))   // never waits; may run after the add returned
    /// }
    /// ```
    public func subscribe(
        app: String?, offPublisher: Bool, handler: @escaping @Sendable (EngineEvent) -> Void
    ) -> Int {
        subscribe(app: app, handler: handler, finish: {}, offPublisher: offPublisher)
    }

    func subscribe(
        app: String?, handler: @escaping @Sendable (EngineEvent) -> Void, finish: @escaping @Sendable () -> Void,
        offPublisher: Bool = false
    ) -> Int {
        let lanes = fanOutQueues.count
        return state.withLock { state -> Int in
            state.next += 1
            state.subscribers[state.next] = Subscriber(
                app: app, handler: handler, finish: finish, lane: offPublisher ? state.next % lanes : nil)
            state.rebuild()
            return state.next
        }
    }

    /// How many subscriptions the hub has (``subscribe(app:handler:)``, ``events(app:)``, each event
    /// stream of the service): what a test waits on to know that a stream it opened is listening.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Stops a subscription made with ``subscribe(app:handler:)``.
    public func unsubscribe(_ token: Int) {
        let removed = state.withLock { state -> Subscriber? in
            defer { state.rebuild() }
            return state.subscribers.removeValue(forKey: token)
        }
        removed?.finish()
    }

    /// A live stream of events, for one app or (with `nil`) every app, from now on.
    public func events(app: String?) -> AsyncStream<EngineEvent> {
        let (stream, continuation) = AsyncStream<EngineEvent>.makeStream(bufferingPolicy: .unbounded)
        let token = subscribe(app: app, handler: { continuation.yield($0) }, finish: { continuation.finish() })
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { state in
                state.subscribers[token] = nil
                state.rebuild()
            }
        }
        return stream
    }

    // MARK: - Surfaces

    /// A surface's place on the hub; ``detach()`` takes it off.
    public struct Attachment: Sendable {
        fileprivate let hub: NotificationHub
        fileprivate let token: Int

        /// Stops showing on this surface. What was already queued for it is still shown.
        public func detach() { hub.detach(token) }
    }

    /// Shows one app's notifications (or, with `nil`, every app's) on `surface` from now on.
    @discardableResult
    public func attach(_ surface: any NotificationSurface, app: String?) -> Attachment {
        let lane = SerialLane<@Sendable () async -> Void> { [self] items in
            for item in items {
                await item()
                ended()
            }
        }
        let token = state.withLock { state -> Int in
            state.next += 1
            state.attachments[state.next] = SurfaceAttachment(app: app, lane: lane, surface: surface)
            state.rebuild()
            return state.next
        }
        return Attachment(hub: self, token: token)
    }

    fileprivate func detach(_ token: Int) {
        state.withLock { state in
            state.attachments[token] = nil
            state.rebuild()
        }
    }

    /// Sets (or with `nil` removes) the app's presenter: its `willPresent`, asked for each of its
    /// deliveries before surfaces show them.
    public func setPresenter(app: String, _ presenter: Presenter?) {
        state.withLock { state in
            if let presenter {
                let lane =
                    state.routes.presenters[app]?.lane
                    ?? SerialLane<PresenterRun> { [self] runs in
                        for run in runs { await present(run, app: app) }
                    }
                state.next += 1
                state.routes.presenters[app] = PresenterAttachment(
                    presenter: presenter, lane: lane, generation: state.next)
            } else {
                state.routes.presenters[app] = nil
            }
        }
    }

    /// Whether the app has a presenter (is in front).
    public func hasPresenter(app: String) -> Bool {
        state.withLock { $0.routes.presenters[app] != nil }
    }

    /// Where deliveries' pending badges go once the app in front answered (the engine sets it).
    package func setBadgeApplier(_ applier: @escaping @Sendable (String, Int) -> Void) {
        badgeApplier.withLock { $0 = applier }
    }

    /// Applies a delivery's pending badge, if it has one, through the engine.
    fileprivate func applyPendingBadge(_ delivery: inout Delivery, app: String) {
        guard let badge = delivery.pendingBadge else { return }
        delivery.pendingBadge = nil
        delivery.badge = badge
        badgeApplier.withLock { $0 }?(app, badge)
    }

    // MARK: - Publishing

    /// Hands events to subscribers at once and queues what surfaces show. Called by the engine
    /// after each commit, in commit order (and by a service-backed center for each event that
    /// arrives on its stream).
    public func publish(_ events: [EngineEvent]) {
        guard !events.isEmpty else { return }
        let routes = state.withLock { $0.routes }
        for event in events {
            for subscriber in routes.everyApp { subscriber.handler(event) }
            for subscriber in routes.byApp[event.app] ?? [] { subscriber.handler(event) }
        }
        if !routes.laneEveryApp.isEmpty || !routes.laneByApp.isEmpty { fanOut(events, routes: routes) }
        guard routes.hasSurfaces || events.contains(where: { $0.delivery?.pendingBadge != nil }) else { return }
        // An app's consecutive jobs for its presenter are queued together: one lock and one count
        // for a firing transaction's worth, not one per delivery.
        var run: (app: String, lane: SerialLane<PresenterRun>, run: PresenterRun)?
        for event in events {
            var job: SurfaceJob
            switch event.payload {
            case .delivered(let delivery), .realerted(let delivery): job = .show(delivery)
            case .removed(let identifiers, .delivered, _): job = .withdraw(identifiers)
            default: continue
            }
            if run?.app == event.app {
                run?.run.jobs.append(job)
                continue
            }
            if let entry = routes.presenters[event.app] {
                if let run { enqueue(run.run, on: run.lane) }
                run = (
                    event.app, entry.lane,
                    PresenterRun(jobs: [job], presenter: entry.presenter, generation: entry.generation)
                )
                continue
            }
            // No longer in front: a badge that waited for the app's answer is applied as in the background.
            if case .show(var delivery) = job, delivery.pendingBadge != nil {
                applyPendingBadge(&delivery, app: event.app)
                job = .show(delivery)
            }
            if case .show(let delivery) = job, delivery.presentation.isEmpty { continue }
            route(job, app: event.app, surfaces: routes.surfaces(of: event.app))
        }
        if let run { enqueue(run.run, on: run.lane) }
    }

    /// Hands `events` to the subscribers called off the publishing thread: one block per fan-out
    /// queue that has any of them, holding that queue's share of the work, in publish order.
    private func fanOut(_ events: [EngineEvent], routes: Routes) {
        for lane in fanOutQueues.indices {
            let everyApp = routes.laneEveryApp[lane] ?? []
            var work: [(event: EngineEvent, subscribers: [Subscriber])] = []
            for event in events {
                let forApp = routes.laneByApp[event.app]?[lane] ?? []
                if everyApp.isEmpty && forApp.isEmpty { continue }
                work.append((event, everyApp.isEmpty ? forApp : forApp.isEmpty ? everyApp : everyApp + forApp))
            }
            if work.isEmpty { continue }
            fanOutQueues[lane].async { [work] in
                for (event, subscribers) in work {
                    for subscriber in subscribers { subscriber.handler(event) }
                }
            }
        }
    }

    /// Consecutive jobs of one app with a presenter, with the presenter they were queued for.
    struct PresenterRun: Sendable {
        fileprivate var jobs: [SurfaceJob]
        var presenter: Presenter
        var generation: Int
    }

    /// Queues a run on its app's presenter lane; a run queued under the same presenter as the last
    /// one waiting joins it, so they are asked together.
    private func enqueue(_ run: PresenterRun, on lane: SerialLane<PresenterRun>) {
        guard !run.jobs.isEmpty else { return }
        began(run.jobs.count)
        lane.enqueue(run) { last in
            guard last.generation == run.generation else { return false }
            last.jobs += run.jobs
            return true
        }
    }

    fileprivate func route(_ job: SurfaceJob, app: String) {
        route(job, app: app, surfaces: surfaces(of: app))
    }

    fileprivate func surfaces(of app: String) -> [SurfaceAttachment] {
        state.withLock { $0.routes.surfaces(of: app) }
    }

    fileprivate func route(_ job: SurfaceJob, app: String, surfaces: [SurfaceAttachment]) {
        for attachment in surfaces {
            let surface = attachment.surface
            began()
            switch job {
            case .show(let delivery):
                attachment.lane.enqueue({ await surface.show(delivery, app: app) })
            case .withdraw(let identifiers):
                attachment.lane.enqueue({ await surface.withdraw(identifiers, app: app) })
            }
        }
    }

    /// Waits until every surface and presenter has done what was published before this call, and
    /// what that work published in turn, and every subscriber called off the publishing thread
    /// has had what was published before this call.
    ///
    /// - Returns: whether any work was waited for (the simulator repeats until nothing is left).
    @discardableResult
    public func settle() async -> Bool {
        if state.withLock({ !$0.routes.laneEveryApp.isEmpty || !$0.routes.laneByApp.isEmpty }) {
            // Each fan-out queue is serial: a block queued now runs after everything queued before.
            for queue in fanOutQueues {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    queue.async { continuation.resume() }
                }
            }
        }
        let before = work.withLock { $0.done }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = work.withLock { work -> Bool in
                if work.outstanding == 0 { return true }
                work.waiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
        return work.withLock { $0.done } != before
    }

    /// Ends every subscriber's stream (engine shutdown).
    func finish() {
        let all = state.withLock { state -> [Subscriber] in
            defer {
                state.subscribers.removeAll()
                state.rebuild()
            }
            return Array(state.subscribers.values)
        }
        for subscriber in all { subscriber.finish() }
    }

    fileprivate func began(_ count: Int = 1) {
        work.withLock { $0.outstanding += count }
    }

    fileprivate func ended(_ count: Int = 1) {
        guard count > 0 else { return }
        let waiters = work.withLock { work -> [CheckedContinuation<Void, Never>] in
            work.outstanding -= count
            work.done &+= count
            guard work.outstanding == 0 else { return [] }
            defer { work.waiters.removeAll() }
            return work.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// What a surface is asked to do for one event.
private enum SurfaceJob: Sendable {
    case show(Delivery)
    case withdraw([String])
}

extension NotificationHub {
    /// Asks the app's presenter about a run of its jobs, in order: what has queued up in one call
    /// (at most ``PresenterAttachment/batch`` deliveries), then each delivery the app shows goes to
    /// the surfaces with the app's answer within its settings. Withdrawals go through in their place.
    fileprivate func present(_ run: PresenterRun, app: String) async {
        let jobs = run.jobs
        var index = 0
        while index < jobs.count {
            guard case .show = jobs[index] else {
                route(jobs[index], app: app)
                ended()
                index += 1
                continue
            }
            // A run of deliveries: one call to the presenter for up to `batch` of them.
            var deliveries: [Delivery] = []
            deliveries.reserveCapacity(min(PresenterAttachment.batch, jobs.count - index))
            while index < jobs.count, deliveries.count < PresenterAttachment.batch,
                case .show(let delivery) = jobs[index]
            {
                deliveries.append(delivery)
                index += 1
            }
            let answers = await run.presenter(deliveries)
            let surfaces = surfaces(of: app)
            for (offset, var delivery) in deliveries.enumerated() {
                let requested = offset < answers.count ? answers[offset] : nil
                if let requested {
                    delivery.presentation = Presentation.foreground(requested: requested, settings: delivery.settings)
                    // A focus that held it holds it in front too.
                    if delivery.focus?.quiet == true { delivery.presentation.subtract([.banner, .sound]) }
                }
                // The badge waited for this answer: applied with `.badge` in it, or without
                // an answer (not in front after all).
                if requested == nil || delivery.presentation.contains(.badge) {
                    applyPendingBadge(&delivery, app: app)
                } else {
                    delivery.pendingBadge = nil
                }
                if !delivery.presentation.isEmpty { route(.show(delivery), app: app, surfaces: surfaces) }
            }
            ended(deliveries.count)
        }
    }
}
