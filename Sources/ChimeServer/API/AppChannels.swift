import ChimeCore
import Foundation
import Synchronization

/// What the service asks of the Chime apps connected to it, and what they answer — the two things
/// iOS asks of an app while it runs:
///
/// - **The notification service extension.** A push with `mutable-content: 1` and an alert, for an
///   app whose event stream says it has an extension (`?serviceExtension=true`), is sent to the app
///   as a `serviceExtension` event (`{"id", "identifier", "content", "timeLimit"}`, no `id:` line,
///   never logged);
///   the app runs its extension and posts the content to
///   `POST /v1/apps/{app}/service-extension/{id}`. The push is delivered with that content, or
///   with the original when no answer comes within the time limit (plus a grace for the trip) or
///   the stream ends. An app that is not connected gets the original content.
/// - **`willPresent` while in front.** An app whose stream says it is in front
///   (`?foreground=true`) becomes the app's presenter on the engine's hub: each delivery waits for
///   the app's answer, which it posts to `POST /v1/apps/{app}/notifications/{identifier}/presentation`
///   after asking its delegate (for the delivery it received on its stream), so the service's
///   surfaces show what the app chose and the badge is applied only with `.badge` in the answer.
///   Without an answer in `presentationTimeout`, or once the app is gone, the delivery is shown as
///   in the background. An answer may come before its delivery is asked (the app's earlier
///   deliveries are still being answered): it is kept for it, but only for a delivery that was
///   published to the app in front and not yet asked, at most ``AnswerLimits`` of them per stream,
///   and dropped with the stream. An answer nobody waits for or will ask for is not kept.
///
/// Nothing here is stored: it lives as long as the app's connection.
final class AppChannels: Sendable {
    /// The most `willPresent` answers one stream keeps for deliveries not yet asked, by count and
    /// by bytes (their identifiers); past either, an answer is refused and its delivery, when its
    /// turn comes, waits for a new answer or is shown as in the background.
    struct AnswerLimits: Sendable {
        var count = 4096
        var bytes = 1 << 20
    }

    /// What became of a `willPresent` answer.
    enum AnswerOutcome: Equatable {
        /// Handed to the delivery waiting for it.
        case answered
        /// Kept for a delivery published to the app and not yet asked.
        case kept
        /// The app has no stream open in front.
        case notInFront
        /// No delivery of that identifier waits or will be asked (its time ran out, it was answered,
        /// or it never came).
        case notAwaited
        /// The stream already keeps ``AnswerLimits`` worth of early answers.
        case full
    }

    /// How long an app's extension may take, as on iOS.
    let serviceExtensionTimeLimit: TimeInterval
    /// How long a delivery waits for the `willPresent` answer of an app in front.
    let presentationTimeout: TimeInterval
    /// Extra time for the trip to the app and back.
    static let grace: TimeInterval = 5

    private struct Connection {
        var stream: EventStream
        /// The app process's own name for itself: its next connection replaces this one.
        var client: String?
        var serviceExtension: Bool
        var foreground: Bool
        /// willPresent answers that came before their delivery asked, by identifier, first come first served.
        var early: [String: [UNNotificationPresentationOptions]] = [:]
        var earlyCount = 0
        var earlyBytes = 0

        /// What one kept answer costs the stream's byte bound.
        static func cost(_ identifier: String) -> Int { identifier.utf8.count + 16 }
    }

    private struct State {
        var next = 0
        var connections: [String: [Int: Connection]] = [:]
        /// Extension runs waiting for the app's content: call id → (app, connection, waiter).
        var calls: [String: (app: String, connection: Int, waiter: CheckedContinuation<NotificationContent?, Never>)] =
            [:]
        /// Per app in front and notification identifier: deliveries published and not yet asked
        /// (their answer may come first), and deliveries waiting for an answer, first come first served.
        var expected: [PresentationKey: Int] = [:]
        var waiting:
            [PresentationKey: [(id: Int, waiter: CheckedContinuation<UNNotificationPresentationOptions?, Never>)]] = [:]
    }

    private struct PresentationKey: Hashable {
        var app: String
        var identifier: String
    }

    private let engine: NotificationEngine
    private let answerLimits: AnswerLimits
    private let state = Mutex(State())
    private let deliveries = Mutex<Int?>(nil)

    init(
        engine: NotificationEngine, serviceExtensionTimeLimit: TimeInterval = 30,
        presentationTimeout: TimeInterval = 10,
        answerLimits: AnswerLimits = AnswerLimits()
    ) {
        self.engine = engine
        self.serviceExtensionTimeLimit = serviceExtensionTimeLimit
        self.presentationTimeout = presentationTimeout
        self.answerLimits = answerLimits
        // Every app's subscribers are called before one app's, so a delivery is expected before
        // the app's stream carries it (and before the hub queues it for the presenter).
        let token = engine.subscribe(app: nil) { [weak self] event in
            guard case .delivered(let delivery) = event.payload else { return }
            self?.published(delivery.notification.request.identifier, app: event.app)
        }
        deliveries.withLock { $0 = token }
    }

    deinit {
        if let token = deliveries.withLock({ $0 }) { engine.unsubscribe(token) }
    }

    /// A delivery to `app` was published: while the app is in front, its presenter will ask for it.
    private func published(_ identifier: String, app: String) {
        state.withLock { state in
            guard state.connections[app]?.values.contains(where: { $0.foreground }) == true else { return }
            state.expected[PresentationKey(app: app, identifier: identifier), default: 0] += 1
        }
    }

    /// willPresent answers kept for deliveries not yet asked, over every stream, and deliveries
    /// published to apps in front and not yet asked (for tests).
    var keptAnswers: (count: Int, bytes: Int, expected: Int) {
        state.withLock { state in
            let connections = state.connections.values.flatMap(\.values)
            return (
                connections.reduce(0) { $0 + $1.earlyCount }, connections.reduce(0) { $0 + $1.earlyBytes },
                state.expected.values.reduce(0, +)
            )
        }
    }

    // MARK: Connections

    /// Registers an app's event stream and what it declared; it leaves when the stream ends, or when
    /// the same client (an app process reconnecting with other declarations) connects again.
    func connect(app: String, stream: EventStream, client: String?, serviceExtension: Bool, foreground: Bool) {
        let (id, replaced) = state.withLock { state -> (Int, [EventStream]) in
            state.next += 1
            var replaced: [EventStream] = []
            if let client {
                for (key, connection) in state.connections[app] ?? [:] where connection.client == client {
                    replaced.append(connection.stream)
                    state.connections[app]?[key] = nil
                }
            }
            if serviceExtension || foreground {
                state.connections[app, default: [:]][state.next] = Connection(
                    stream: stream, client: client,
                    serviceExtension: serviceExtension, foreground: foreground)
            }
            return (state.next, replaced)
        }
        for old in replaced { old.close() }
        frontChanged(app)
        if serviceExtension || foreground { stream.onEnd { [weak self] in self?.disconnect(app: app, id: id) } }
    }

    private func disconnect(app: String, id: Int) {
        let calls = state.withLock { state -> [CheckedContinuation<NotificationContent?, Never>] in
            guard state.connections[app]?[id] != nil else { return [] }
            state.connections[app]?[id] = nil
            if state.connections[app]?.isEmpty == true { state.connections[app] = nil }
            let ended = state.calls.filter { $0.value.app == app && $0.value.connection == id }
            for key in ended.keys { state.calls[key] = nil }
            return ended.values.map(\.waiter)
        }
        for call in calls { call.resume(returning: nil) }
        frontChanged(app)
    }

    /// Makes the engine's presenter for `app` follow whether a connection is in front; deliveries
    /// waiting for an app that left the front are shown as in the background.
    private func frontChanged(_ app: String) {
        // Under the lock, so that the presenter always matches the connections.
        let waiters = state.withLock { state -> [CheckedContinuation<UNNotificationPresentationOptions?, Never>] in
            let inFront = state.connections[app]?.values.contains { $0.foreground } ?? false
            guard inFront != engine.hub.hasPresenter(app: app) else { return [] }
            if inFront {
                engine.hub.setPresenter(app: app) { [weak self] deliveries in
                    // The app answers a burst one delivery after another, in order.
                    var answers: [UNNotificationPresentationOptions?] = []
                    for delivery in deliveries {
                        answers.append(
                            await self?.presentation(app: app, identifier: delivery.notification.request.identifier)
                                ?? nil)
                    }
                    return answers
                }
                return []
            }
            engine.hub.setPresenter(app: app, nil)
            var waiters: [CheckedContinuation<UNNotificationPresentationOptions?, Never>] = []
            for key in state.waiting.keys where key.app == app {
                waiters += state.waiting.removeValue(forKey: key)?.map(\.waiter) ?? []
            }
            for key in state.expected.keys where key.app == app { state.expected[key] = nil }
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }

    /// Whether the app has a stream open that runs its service extension, and one that is in front.
    func connection(of app: String) -> (serviceExtension: Bool, foreground: Bool) {
        state.withLock { state in
            let connections = state.connections[app]?.values ?? [:].values
            return (connections.contains { $0.serviceExtension }, connections.contains { $0.foreground })
        }
    }

    // MARK: The service extension

    /// Runs the app's extension on a push through its connection: the content to deliver, or
    /// `nil` when no connected stream has an extension.
    func runServiceExtension(app: String, request: NotificationRequest) async -> NotificationContent? {
        let id = UUID().uuidString.lowercased()
        let clock = engine.clock
        let deadline = clock.now.addingTimeInterval(serviceExtensionTimeLimit + Self.grace)
        let event: JSONValue = [
            "id": .string(id), "identifier": .string(request.identifier), "content": request.content.json,
            "timeLimit": .number(serviceExtensionTimeLimit),
        ]
        let sent = Atomic<Bool>(false)
        let timer = Task { [weak self] in
            try? await clock.sleep(until: deadline)
            if !Task.isCancelled { self?.finishCall(id, with: nil) }
        }
        defer { timer.cancel() }
        let answer = await withCheckedContinuation { (continuation: CheckedContinuation<NotificationContent?, Never>) in
            let stream = state.withLock { state -> EventStream? in
                guard
                    let (connection, entry) = state.connections[app]?.filter({ $0.value.serviceExtension }).max(by: {
                        $0.key < $1.key
                    })
                else { return nil }
                state.calls[id] = (app, connection, continuation)
                return entry.stream
            }
            guard let stream else { return continuation.resume(returning: nil) }
            sent.store(true, ordering: .relaxed)
            stream.send(EventStream.frame(event: "serviceExtension", data: event.serializedBytes()))
        }
        guard sent.load(ordering: .relaxed) else { return nil }
        return answer ?? request.content
    }

    /// The app's content for a call; `false` when no such call waits (it ended, or is another app's).
    @discardableResult
    func answerServiceExtension(app: String, id: String, content: NotificationContent) -> Bool {
        guard state.withLock({ $0.calls[id]?.app == app }) else { return false }
        return finishCall(id, with: content)
    }

    @discardableResult
    private func finishCall(_ id: String, with content: NotificationContent?) -> Bool {
        let waiter = state.withLock { $0.calls.removeValue(forKey: id)?.waiter }
        waiter?.resume(returning: content)
        return waiter != nil
    }

    // MARK: willPresent of the app in front

    /// The answer of the app in front for a delivery, or `nil` (shown as in the background) when
    /// none comes in time.
    private func presentation(app: String, identifier: String) async -> UNNotificationPresentationOptions? {
        let key = PresentationKey(app: app, identifier: identifier)
        let clock = engine.clock
        let deadline = clock.now.addingTimeInterval(presentationTimeout)
        let waiterID = state.withLock { state -> Int in
            state.next += 1
            return state.next
        }
        let timer = Task { [weak self] in
            try? await clock.sleep(until: deadline)
            if !Task.isCancelled { self?.giveUp(key, waiterID: waiterID) }
        }
        defer { timer.cancel() }
        return await withCheckedContinuation {
            (continuation: CheckedContinuation<UNNotificationPresentationOptions?, Never>) in
            let early = state.withLock { state -> UNNotificationPresentationOptions?? in
                if let count = state.expected[key] { state.expected[key] = count > 1 ? count - 1 : nil }
                if let first = Self.takeEarly(identifier, from: &state.connections[app]) { return .some(first) }
                guard state.connections[app]?.values.contains(where: { $0.foreground }) == true else {
                    return .some(nil)
                }
                state.waiting[key, default: []].append((waiterID, continuation))
                return .none
            }
            if let early { continuation.resume(returning: early) }
        }
    }

    private func giveUp(_ key: PresentationKey, waiterID: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<UNNotificationPresentationOptions?, Never>? in
            guard let index = state.waiting[key]?.firstIndex(where: { $0.id == waiterID }) else { return nil }
            let waiter = state.waiting[key]?.remove(at: index).waiter
            if state.waiting[key]?.isEmpty == true { state.waiting[key] = nil }
            return waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The oldest early answer for `identifier` kept by any of the app's streams, taken.
    private static func takeEarly(_ identifier: String, from connections: inout [Int: Connection]?)
        -> UNNotificationPresentationOptions?
    {
        // In place: a copy of a connection would copy its answers on the first change.
        guard let id = connections?.first(where: { $0.value.early[identifier] != nil })?.key,
            let first = connections?[id]?.early[identifier]?.first
        else { return nil }
        connections?[id]?.early[identifier]?.removeFirst()
        if connections?[id]?.early[identifier]?.isEmpty == true { connections?[id]?.early[identifier] = nil }
        connections?[id]?.earlyCount -= 1
        connections?[id]?.earlyBytes -= Connection.cost(identifier)
        return first
    }

    /// The app's `willPresent` answer for its notification `identifier`: handed to the delivery
    /// that waits for it, or kept (within the stream's ``AnswerLimits``) for one published and not
    /// yet asked; an answer nobody waits for is not kept.
    @discardableResult
    func reportPresentation(app: String, identifier: String, options: UNNotificationPresentationOptions)
        -> AnswerOutcome
    {
        let key = PresentationKey(app: app, identifier: identifier)
        let limits = answerLimits
        let result = state.withLock {
            state -> (CheckedContinuation<UNNotificationPresentationOptions?, Never>?, AnswerOutcome) in
            // The newest stream in front keeps what is kept: it goes when that stream ends.
            var newest: Int?
            for (id, connection) in state.connections[app] ?? [:] where connection.foreground && id > (newest ?? .min) {
                newest = id
            }
            guard let id = newest else { return (nil, .notInFront) }
            if var waiting = state.waiting[key], !waiting.isEmpty {
                let first = waiting.removeFirst()
                state.waiting[key] = waiting.isEmpty ? nil : waiting
                return (first.waiter, .answered)
            }
            // Before the delivery asked (its lane is still busy): kept for it, one answer per
            // delivery expected, within the stream's bounds.
            let kept = state.connections[app]?.values.reduce(0) { $0 + ($1.early[identifier]?.count ?? 0) } ?? 0
            guard kept < state.expected[key] ?? 0 else { return (nil, .notAwaited) }
            let cost = Connection.cost(identifier)
            let (count, bytes) = state.connections[app]?[id].map { ($0.earlyCount, $0.earlyBytes) } ?? (0, 0)
            guard count < limits.count, bytes + cost <= limits.bytes else { return (nil, .full) }
            // In place: a copy of the connection would copy its answers.
            state.connections[app]?[id]?.early[identifier, default: []].append(options)
            state.connections[app]?[id]?.earlyCount += 1
            state.connections[app]?[id]?.earlyBytes += cost
            return (nil, .kept)
        }
        result.0?.resume(returning: options)
        return result.1
    }
}
