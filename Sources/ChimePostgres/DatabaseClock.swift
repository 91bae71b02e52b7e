import ChimeCore
import Foundation
import Synchronization

/// The database server's clock, read through this machine's: one time source for every node, so
/// two nodes never disagree about what is due.
///
/// It measures how far the database's clock (`clock_timestamp()`) is from this machine's — the
/// best of five round trips, each read at its middle — at start and then every `interval`, and
/// answers `now` as this machine's time plus that offset. Sleeping sleeps on this machine and
/// re-checks against `now`.
///
/// ```swift
/// let clock = try DatabaseClock(url: "postgresql://chime@db.internal/chime")
/// if abs(clock.offset) > 1 { print("this machine's clock is \(clock.offset) s away from the database's") }
/// let engine = NotificationEngine(store: store, clock: clock)
/// ```
public final class DatabaseClock: NotificationClock {
    private struct State {
        var offset: TimeInterval = 0
        var roundTrip: TimeInterval = 0
        var stopping = false
    }

    private let state = Mutex(State())
    private let url: String
    private let interval: TimeInterval
    private let wake = DispatchSemaphore(value: 0)
    /// Called after each measurement with the offset in seconds (from the measuring thread).
    private let onMeasure: @Sendable (TimeInterval) -> Void

    /// Connects, measures once, and keeps measuring every `interval` seconds on a thread of its own.
    ///
    /// - Throws: ``ChimeError`` `storeFailure` when the database cannot be reached.
    public init(
        url: String, interval: TimeInterval = 30, onMeasure: @escaping @Sendable (TimeInterval) -> Void = { _ in }
    ) throws {
        self.url = url
        self.interval = interval
        self.onMeasure = onMeasure
        let connection = try PostgresConnection(url: url, applicationName: "chime-clock")
        try measure(connection)
        let box = ConnectionBox(connection)
        let thread = Thread { [self] in remeasure(box) }
        thread.name = "chime.postgres.clock"
        thread.start()
    }

    /// The database's clock minus this machine's, in seconds, as last measured.
    public var offset: TimeInterval { state.withLock { $0.offset } }

    /// The round trip of the best measurement (the offset is good to about half of it).
    public var roundTrip: TimeInterval { state.withLock { $0.roundTrip } }

    public var now: Date { Date().addingTimeInterval(offset) }

    public func sleep(until deadline: Date) async throws {
        while true {
            let remaining = deadline.timeIntervalSince(now)
            if remaining <= 0 { return }
            try await Sleep.seconds(min(remaining, 5))
        }
    }

    /// Stops measuring (the offset stays as last measured).
    public func stop() {
        state.withLock { $0.stopping = true }
        wake.signal()
    }

    private func measure(_ connection: PostgresConnection) throws {
        var best: (roundTrip: TimeInterval, offset: TimeInterval)?
        for _ in 0..<5 {
            let sent = Date()
            let rows = try connection.query("SELECT extract(epoch FROM clock_timestamp())::float8")
            let received = Date()
            let database = rows.double(0, 0)
            let roundTrip = received.timeIntervalSince(sent)
            let middle = sent.timeIntervalSince1970 + roundTrip / 2
            if best.map({ roundTrip < $0.roundTrip }) ?? true { best = (roundTrip, database - middle) }
        }
        guard let best else { return }
        state.withLock {
            $0.offset = best.offset
            $0.roundTrip = best.roundTrip
        }
        onMeasure(best.offset)
    }

    private func remeasure(_ box: ConnectionBox) {
        while true {
            _ = wake.wait(timeout: .now() + interval)
            if state.withLock({ $0.stopping }) { break }
            do {
                if !box.connection.isOK { try box.connection.reset() }
                try measure(box.connection)
            } catch {
                // Keep the last offset; the next round tries again.
            }
        }
        box.connection.close()
    }
}

/// A connection handed to the one thread that uses it from then on. `@unchecked Sendable`: after
/// the hand-over nothing else touches it.
final class ConnectionBox: @unchecked Sendable {
    let connection: PostgresConnection
    init(_ connection: PostgresConnection) { self.connection = connection }
}
