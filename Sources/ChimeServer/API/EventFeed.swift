import ChimeCore
import Foundation
import Synchronization

/// An app's (or every app's) events as server-sent events: `id:` is the event's sequence in the
/// store's log, `event:` its kind, `data:` the event as JSON. With `Last-Event-ID` the stream first
/// replays the log after that sequence, then continues live, without gaps or repeats.
final class EventFeed: Sendable {
    private struct State {
        var replaying = true
        var held: [EngineEvent] = []
        var lastSent: Int64 = 0
    }

    private let stream: EventStream
    private let frames: FrameCache
    private let state = Mutex(State())

    private init(stream: EventStream, frames: FrameCache) {
        self.stream = stream
        self.frames = frames
    }

    static func open(engine: NotificationEngine, app: String?, request: HTTPRequest, route: String, frames: FrameCache) async throws -> HTTPResponse {
        let header = request.header("last-event-id")?.trimmingCharacters(in: .whitespaces)
        var after: Int64?
        if let header, !header.isEmpty {
            guard let value = Int64(header), value >= 0 else {
                throw APIError.badRequest("invalidValue", "Last-Event-ID \"\(header.prefix(40))\" is not an event id; send the id: of the last event received",
                                          field: "Last-Event-ID")
            }
            after = value
        }
        let stream = EventStream()
        let feed = EventFeed(stream: stream, frames: frames)
        // Subscribe before reading the log, holding live events until the replay is written.
        // An app's stream carries what the app acts on (deliveries, answers, removals, settings);
        // the owner's also carries the refresh hints (`scheduled`, `categories`, `app`) the web
        // center uses instead of polling.
        let token = engine.subscribe(app: app) { event in
            if app != nil, Self.hintKinds.contains(event.kind) { return }
            feed.live(event)
        }
        stream.onEnd { engine.unsubscribe(token) }
        stream.send(Array("retry: 2000\n\n".utf8))
        if let after {
            var cursor = after
            while true {
                let events = try await engine.events(after: cursor, app: app, limit: 1000)
                for event in events { feed.write(event) }
                guard let last = events.last else { break }
                cursor = last.sequence
            }
        }
        feed.finishReplay()
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"),
                                                    ("X-Accel-Buffering", "no")],
                            body: .stream(stream), route: route)
    }

    /// Announced events that are only hints to refresh (never in the log).
    static let hintKinds: Set<EngineEvent.Kind> = [.scheduled, .categories, .app]

    private func live(_ event: EngineEvent) {
        let send = state.withLock { state -> Bool in
            if state.replaying {
                state.held.append(event)
                return false
            }
            return true
        }
        if send { write(event) }
    }

    private func finishReplay() {
        while true {
            let held = state.withLock { state -> [EngineEvent] in
                defer { state.held.removeAll() }
                if state.held.isEmpty { state.replaying = false }
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
                EventStream.frame(event: event.kind.rawValue, id: event.sequence > 0 ? String(event.sequence) : nil,
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
