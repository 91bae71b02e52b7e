import Foundation
import Synchronization

extension NotificationEngine {
    // MARK: - Requests

    /// Adds requests; each replaces a pending request with the same identifier. Requests without a
    /// trigger are delivered at once. Completes after the requests are committed.
    ///
    /// - Returns: each request's next fire date (`nil` for location triggers and immediate delivery).
    /// - Throws: ``UNError`` `notificationsNotAllowed` when the app is not authorized;
    ///   ``ChimeError`` naming the field for invalid input (then nothing is added).
    ///
    /// A large add (more than two ``streamedSlice``s, on a store of its own) is prepared slice by
    /// slice on the caller's thread while the writer writes the slices before: still one
    /// transaction, committed before this returns, with nothing added when any request fails.
    @discardableResult
    public func add(_ requests: [NotificationRequest], app: String) async throws -> [Date?] {
        if requests.count > 2 * Self.streamedSlice && !isStoreShared {
            return try await streamedAdd(requests, app: app)
        }
        let prepared = try prepare(requests)
        return try await perform { try $0.add(prepared, app: app) }
    }

    /// How many requests of a large add are prepared at a time while the writer writes.
    static let streamedSlice = 1024

    /// `add` for many requests: each slice checked, encoded and dated here and handed to the
    /// writer, which writes the slices in one transaction of its own as they come. A bad request
    /// in any slice (invalid, or a trigger with no next date) rolls back the slices before it.
    private func streamedAdd(_ requests: [NotificationRequest], app: String) async throws -> [Date?] {
        let now = clock.now
        let feed = SliceFeed()
        let sliceWritten = streamedSliceWritten.withLock { $0 }
        return try await withCheckedThrowingContinuation { continuation in
            submit(
                alone: true,
                { core -> [Date?] in
                    defer { feed.abandon() }
                    var firsts: [Date?] = []
                    firsts.reserveCapacity(requests.count)
                    var scheduled = 0
                    while let slice = try feed.next() {
                        let added = try core.add(slice, app: app, announcing: false)
                        firsts += added.firsts
                        scheduled += added.scheduled
                        sliceWritten?(firsts.count)
                    }
                    if scheduled > 0 { core.announce(.scheduled(identifiers: []), app: app) }
                    return firsts
                }, completion: { continuation.resume(with: $0) })
            // The writer takes each slice as soon as it is here; the feed ends even when the writer
            // stopped listening (it failed, or the engine has shut down).
            var start = 0
            do {
                while start < requests.count, !feed.isAbandoned {
                    let end = min(start + Self.streamedSlice, requests.count)
                    feed.put(try prepare(requests, start..<end, now: now))
                    start = end
                }
                feed.finish(nil)
            } catch {
                feed.finish(error)
            }
        }
    }

    /// `add`, with a completion handler; the call order is the processing order.
    public func add(
        _ requests: [NotificationRequest], app: String,
        completion: @escaping @Sendable (Result<[Date?], any Error>) -> Void
    ) {
        let prepared: PreparedAdd
        do {
            prepared = try prepare(requests)
        } catch {
            // Keep the order promise: report through the writer, after earlier operations.
            submit({ _ in throw error }, completion: completion)
            return
        }
        submit({ try $0.add(prepared, app: app) }, completion: completion)
    }

    /// `add`, with a completion handler, for an adapter that answers from it (the service's
    /// handlers that do not wait): the checks run here, and a refusal is thrown here, before
    /// anything reaches the writer; the rest completes on the writer after the commit, in call
    /// order. The requests are prepared at once, not streamed in slices.
    package func enqueueAdd(
        _ requests: [NotificationRequest], app: String,
        completion: @escaping @Sendable (Result<[Date?], any Error>) -> Void
    ) throws {
        let prepared = try prepare(requests)
        submit({ try $0.add(prepared, app: app) }, completion: completion)
    }

    /// What an add can do before it reaches the writer, on the caller's thread: the checks, the
    /// first fire dates (in the device's zone as last known) and the store encoding.
    private func prepare(_ requests: [NotificationRequest]) throws -> PreparedAdd {
        try prepare(requests, requests.indices, now: clock.now)
    }

    /// `prepare` for the requests at `slice` of an add of `requests` (a streamed add's slice),
    /// each refused with its index in the whole add.
    private func prepare(_ requests: [NotificationRequest], _ slice: Range<Int>, now: Date) throws -> PreparedAdd {
        for index in slice {
            try Validation.validate(
                requests[index], field: requests.count == 1 ? "" : "[\(index)]",
                escalationLimits: configuration.escalationLimits)
        }
        // The whole add (the usual case) is handed on as it is, not copied request by request.
        let taken = slice == requests.indices ? requests : Array(requests[slice])
        return PreparedAdd(taken, now: now, timeZone: deviceZone.withLock { $0 })
    }

    /// The app's pending requests, in the order they were first added.
    public func pending(app: String) async throws -> [PendingRequest] {
        try await read { try $0.pending(app: app) }
    }

    /// A page of the app's pending requests: those first added after `sequence` (0: from the
    /// first), in that order, at most `limit`.
    public func pending(app: String, after sequence: Int64, limit: Int) async throws -> [PendingRequest] {
        try await read { try $0.pending(app: app, after: sequence, limit: limit) }
    }

    /// Removes pending requests by identifier (all of the app's when `identifiers` is `nil`).
    @discardableResult
    public func removePending(app: String, identifiers: [String]?) async throws -> [String] {
        try await perform { try $0.removePending(app: app, identifiers: identifiers) }
    }

    /// Runs an operation without waiting, keeping the call order (for the fire-and-forget API).
    public func removePending(
        app: String, identifiers: [String]?, completion: @escaping @Sendable (Result<[String], any Error>) -> Void
    ) {
        submit({ try $0.removePending(app: app, identifiers: identifiers) }, completion: completion)
    }

    /// How many requests are pending (one app, or all).
    public func pendingCount(app: String? = nil) async throws -> Int {
        try await read { try $0.pendingCount(app: app) }
    }

    // MARK: - Quarantine

    /// The quarantine: due requests the scheduler could not deliver and set aside (all apps), after
    /// entry `id`, oldest first, at most `limit`. See ``QuarantinedRequest``.
    public func quarantined(after id: Int64 = 0, limit: Int = 1000) async throws -> [QuarantinedRequest] {
        try await read { try $0.quarantined(after: id, limit: limit) }
    }

    /// How many requests are in the quarantine.
    public func quarantinedCount() async throws -> Int {
        try await read { try $0.quarantinedCount() }
    }

    /// Removes a quarantine entry (the owner has seen it); returns whether it was there.
    @discardableResult
    public func removeQuarantined(_ id: Int64) async throws -> Bool {
        try await perform { try $0.store.removeQuarantined(id: id) }
    }
}

/// The slices of a streamed add, from the caller's thread (`put`, then `finish`) to the writer
/// (`next`, which waits for the next slice: `nil` at the end, the caller's error if it failed;
/// `abandon` when the writer stops early).
final class SliceFeed: Sendable {
    private struct State {
        /// Slices not taken yet (a taken one is let go: a large add is not held twice).
        var slices: [PreparedAdd] = []
        var finished = false
        var failure: (any Error)?
        var abandoned = false
    }

    private let state = Mutex(State())
    private let ready = DispatchSemaphore(value: 0)

    func put(_ slice: PreparedAdd) {
        state.withLock { $0.slices.append(slice) }
        ready.signal()
    }

    func finish(_ failure: (any Error)?) {
        state.withLock { state in
            state.finished = true
            state.failure = failure
        }
        ready.signal()
    }

    var isAbandoned: Bool { state.withLock { $0.abandoned } }

    func abandon() { state.withLock { $0.abandoned = true } }

    func next() throws -> PreparedAdd? {
        while true {
            let taken = state.withLock { state -> Result<PreparedAdd?, any Error>? in
                if !state.slices.isEmpty { return .success(state.slices.removeFirst()) }
                guard state.finished else { return nil }
                if let failure = state.failure { return .failure(failure) }
                return .success(nil)
            }
            if let taken { return try taken.get() }
            ready.wait()
        }
    }
}
