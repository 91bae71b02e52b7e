import Foundation
import Synchronization

extension ChimeAPI {
    /// The most event streams one holder keeps open at once, so that one app (or one browser
    /// session) cannot take every connection slot: past its share a new stream is answered 429
    /// with `Retry-After`, while the owner token, `/healthz` and every other app are still served.
    ///
    /// ```swift
    /// let api = ChimeAPI(engine: engine, ownerTokenHash: hash, metrics: metrics,
    ///                    streamLimits: .init(perApp: 4, perSession: 8))
    /// ```
    public struct StreamLimits: Sendable, Equatable {
        /// `--max-streams-per-app`: streams an app opens with its own credential (its token, or the
        /// token of a process the service launched for it), together.
        public var perApp: Int
        /// `--max-streams-per-session`: streams one web center session (one sign-in) opens.
        public var perSession: Int

        /// Sixteen each: an app's processes and a session's browser tabs, with room to spare.
        public init(perApp: Int = 16, perSession: Int = 16) {
            self.perApp = perApp
            self.perSession = perSession
        }
    }
}

/// Who holds how many event streams, held to ``ChimeAPI/StreamLimits``. A stream's share is
/// claimed before its feed opens and released when its stream ends, so a client that opens streams
/// faster than they end cannot overshoot its share.
final class StreamShares: Sendable {
    /// What a share is counted against. Streams opened with the owner token are not counted.
    enum Holder: Hashable, Sendable {
        /// An app's own credentials, by bundle identifier.
        case app(String)
        /// A web session, by the SHA-256 of its secret.
        case session(String)
    }

    let limits: ChimeAPI.StreamLimits
    private let counts = Mutex<[Holder: Int]>([:])

    init(limits: ChimeAPI.StreamLimits) {
        self.limits = limits
    }

    /// The share of `holder`.
    func limit(of holder: Holder) -> Int {
        switch holder {
        case .app: limits.perApp
        case .session: limits.perSession
        }
    }

    /// Takes one stream of `holder`'s share; `false` (nothing taken) when the share is used up.
    func claim(_ holder: Holder) -> Bool {
        let limit = limit(of: holder)
        return counts.withLock { counts in
            guard counts[holder, default: 0] < limit else { return false }
            counts[holder, default: 0] += 1
            return true
        }
    }

    /// Gives back a stream taken with ``claim(_:)``.
    func release(_ holder: Holder) {
        counts.withLock { counts in
            let left = counts[holder, default: 1] - 1
            counts[holder] = left > 0 ? left : nil
        }
    }

    /// How many streams `holder` has open.
    func count(_ holder: Holder) -> Int {
        counts.withLock { $0[holder] ?? 0 }
    }

    /// The answer to a stream past `holder`'s share: 429, naming the limit and the flag that sets it.
    func refusal(_ holder: Holder) -> APIError {
        let limit = limit(of: holder)
        var error: APIError
        switch holder {
        case .app(let app):
            error = APIError(
                429, "tooManyStreams",
                "\(app) has \(limit) event streams open, the most one app may (chime serve --max-streams-per-app); close one, or retry after it ends"
            )
        case .session:
            error = APIError(
                429, "tooManyStreams",
                "this session has \(limit) event streams open, the most one web session may (chime serve --max-streams-per-session); close a tab, or retry after one ends"
            )
        }
        error.headers = [("Retry-After", "5")]
        return error
    }
}
