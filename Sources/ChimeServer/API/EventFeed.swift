import ChimeCore
import Foundation
import Synchronization

/// An app's (or every app's) events as server-sent events: `id:` is the event's sequence in the
/// store's log, `event:` its kind, `data:` the event as JSON. With `Last-Event-ID` the stream first
/// replays the log after that sequence, then continues live, without gaps or repeats.
///
/// The replay is read from the store a page at a time, and the next page only when the client
/// has taken most of the last one (the stream's queue is at most half full), so a stream resumed
/// from the start of a large log costs a page of memory, not the log.
///
/// A feed ends when the credential that opened it stops being valid: its app's token is rotated
/// or the app removed (the engine announces both), or the web session signs out or expires
/// (``ChimeAPI`` closes those). The client then reconnects and is refused.
final class EventFeed: Sendable {
    /// Who opened the feed, for deciding when it must end.
    enum Credential: Sendable, Equatable {
        /// The owner token: valid as long as the service runs.
        case owner
        /// A web session cookie (SHA-256 of its secret), until it ends or expires.
        case session(hash: String, expires: Date)
        /// An app's token (its SHA-256), until the token is rotated or the app removed.
        case app(tokenHash: String)
    }

    private enum Mode {
        /// Reading the log; logged live events are left for the log to deliver.
        case replaying
        /// The log is read to its end; live events are held until the last page is written.
        case holding
        case live
    }

    private struct State {
        var mode = Mode.live
        var held: [EngineEvent] = []
        var lastSent: Int64 = 0
        var ended = false
    }

    /// Events read from the log at a time (a page of up to 64 KB events is a few MB at most).
    static let pageSize = 32

    private let stream: EventStream
    private let frames: FrameCache
    private let app: String?
    let credential: Credential
    private let state = Mutex(State())
    private let drained = Wakeup()

    private init(stream: EventStream, frames: FrameCache, app: String?, credential: Credential) {
        self.stream = stream
        self.frames = frames
        self.app = app
        self.credential = credential
    }

    /// Opens a feed and its response. `stillValid` is asked, off the writer, whether the feed's
    /// app credential holds after the app changed (a rotated token); `opened` hears of the feed
    /// once it is set up (for closing it on sign-out).
    static func open(
        engine: NotificationEngine, app: String?, credential: Credential, request: HTTPRequest, route: String,
        frames: FrameCache, stillValid: @escaping @Sendable (EventFeed) async -> Bool,
        opened: @Sendable (EventFeed) -> Void = { _ in }
    ) async throws -> HTTPResponse {
        let after = try ServerSentEvents.lastEventID(request.header("last-event-id"))
        let stream = EventStream()
        let feed = EventFeed(stream: stream, frames: frames, app: app, credential: credential)
        if after != nil { feed.state.withLock { $0.mode = .replaying } }
        // Subscribe before reading the log. An app's stream carries what the app acts on
        // (deliveries, answers, removals, settings); the owner's also carries the refresh hints
        // (`scheduled`, `categories`, `app`, and `focus` for the focus modes) the web center uses
        // instead of polling.
        // Off the writer: a stream only queues the event for its socket, and one app may have
        // thousands of streams (10,000 called on the writer held every commit up for ~120 ms).
        let token = engine.subscribe(app: app, offPublisher: true) { event in
            if let app, event.app == app, case .app(let change, _) = event.payload {
                switch change {
                case .removed:
                    feed.end()
                    return
                case .updated:
                    if case .app = credential { Task { if await !stillValid(feed) { feed.end() } } }
                }
            }
            if app != nil, Self.hintKinds.contains(event.kind) { return }
            feed.live(event)
        }
        stream.onEnd {
            engine.unsubscribe(token)
            feed.state.withLock { $0.ended = true }
            feed.drained.fire()
        }
        stream.onDrain { feed.drained.fire() }
        stream.send(Array("retry: 2000\n\n".utf8))
        opened(feed)
        if let after {
            Task { await feed.replay(after: after, engine: engine) }
        }
        return HTTPResponse(
            status: 200,
            headers: [
                ("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"),
                ("X-Accel-Buffering", "no"),
            ],
            body: .stream(stream), route: route)
    }

    /// Announced events that are only hints to refresh (never in the log). `focus` is the owner's
    /// (its app is empty), so an app's stream never gets it anyway.
    static let hintKinds: Set<EngineEvent.Kind> = [.scheduled, .categories, .app, .focus]

    /// Ends the feed at once (its credential is no longer valid): what is queued is dropped and
    /// the connection closed.
    func end() {
        stream.abandon()
    }

    /// Calls `body` once when the feed's stream ends, for any reason.
    func onEnd(_ body: @escaping @Sendable () -> Void) {
        stream.onEnd(body)
    }

    /// Whether the feed has ended.
    var isEnded: Bool { state.withLock { $0.ended } || stream.isEnded }

    /// Reads the log after `after` a page at a time, each page once the client has taken most of
    /// the last; then writes what arrived live meanwhile and goes live.
    private func replay(after: Int64, engine: NotificationEngine) async {
        var cursor = after
        let app = self.app
        while !isEnded {
            let page: [EngineEvent]
            do {
                // Read on the writer: an event committed after this read is published after it,
                // so holding from here on misses nothing.
                page = try await engine.eventPage(after: cursor, app: app, limit: Self.pageSize) { [self] events in
                    if events.count < Self.pageSize { state.withLock { $0.mode = .holding } }
                }
            } catch {
                end()
                return
            }
            for event in page {
                // Wait until the frame fits the stream's queue: the replay never overflows it.
                let size = frames.frame(for: event).count
                while !isEnded, stream.queuedBytes > 0, stream.queuedBytes + size > stream.queueLimit {
                    await drained.wait()
                }
                if isEnded { return }
                write(event)
            }
            if page.count < Self.pageSize { break }
            cursor = page.last?.sequence ?? cursor
        }
        finishReplay()
    }

    private func live(_ event: EngineEvent) {
        let send = state.withLock { state -> Bool in
            switch state.mode {
            case .live: return true
            case .holding:
                state.held.append(event)
                return false
            case .replaying:
                // A logged event is in the log, where the replay will reach it; a hint is sent now.
                return event.sequence == 0
            }
        }
        if send { write(event) }
    }

    private func finishReplay() {
        while true {
            let held = state.withLock { state -> [EngineEvent] in
                defer { state.held.removeAll() }
                if state.held.isEmpty { state.mode = .live }
                return state.held
            }
            if held.isEmpty { return }
            for event in held { write(event) }
        }
    }

    private func write(_ event: EngineEvent) {
        let fresh = state.withLock { state -> Bool in
            // Events without a log sequence (logging off) are always sent.
            if event.sequence > 0 {
                if event.sequence <= state.lastSent { return false }
                state.lastSent = event.sequence
            }
            return true
        }
        guard fresh else { return }
        stream.send(frames.frame(for: event))
    }

    /// The most recent events' frames by sequence (a fan-out to 1,000 subscribers encodes each
    /// event once, not 1,000 times).
    final class FrameCache: Sendable {
        private static let capacity = 512
        private let cache = Mutex<(order: [Int64], frames: [Int64: [UInt8]])>(([], [:]))

        func frame(for event: EngineEvent) -> [UInt8] {
            let build = {
                EventStream.frame(
                    event: event.kind.rawValue, id: event.sequence > 0 ? String(event.sequence) : nil,
                    data: event.json.serializedBytes())
            }
            guard event.sequence > 0 else { return build() }
            if let known = cache.withLock({ $0.frames[event.sequence] }) { return known }
            let frame = build()
            cache.withLock { cache in
                guard cache.frames[event.sequence] == nil else { return }
                cache.frames[event.sequence] = frame
                cache.order.append(event.sequence)
                if cache.order.count > Self.capacity {
                    let drop = cache.order.count - Self.capacity / 2
                    for sequence in cache.order.prefix(drop) { cache.frames[sequence] = nil }
                    cache.order.removeFirst(drop)
                }
            }
            return frame
        }
    }
}
