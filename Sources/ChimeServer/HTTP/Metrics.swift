import Foundation
import Synchronization

/// A Prometheus histogram: cumulative bucket counts, sum and count.
public struct Histogram: Sendable {
    /// Upper bounds in seconds, ascending (`+Inf` is implied).
    public let bounds: [Double]
    private(set) var counts: [UInt64]
    private(set) var sum: Double = 0
    private(set) var count: UInt64 = 0

    public static let latencyBounds = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    public static let latenessBounds = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600]

    public init(bounds: [Double]) {
        self.bounds = bounds
        counts = Array(repeating: 0, count: bounds.count)
    }

    public mutating func observe(_ value: Double) {
        for (index, bound) in bounds.enumerated() where value <= bound { counts[index] += 1 }
        sum += value
        count += 1
    }

    /// The histogram's sample lines for `name` with extra `labels` (already formatted, may be empty).
    func lines(name: String, labels: String) -> [String] {
        let prefix = labels.isEmpty ? "" : labels + ","
        var out: [String] = []
        for (index, bound) in bounds.enumerated() {
            out.append("\(name)_bucket{\(prefix)le=\"\(Metrics.number(bound))\"} \(counts[index])")
        }
        out.append("\(name)_bucket{\(prefix)le=\"+Inf\"} \(count)")
        let suffix = labels.isEmpty ? "" : "{\(labels)}"
        out.append("\(name)_sum\(suffix) \(Metrics.number(sum))")
        out.append("\(name)_count\(suffix) \(count)")
        return out
    }
}

/// The server's request counters and latency histograms by route, and the fire-lateness histogram.
public final class Metrics: Sendable {
    private struct State {
        var requests: [String: [Int: UInt64]] = [:]
        var durations: [String: Histogram] = [:]
        var lateness = Histogram(bounds: Histogram.latenessBounds)
        var gauges: [String: (help: String, value: Double)] = [:]
        var expired: UInt64 = 0
        var autoDismissed: UInt64 = 0
        var realerted: UInt64 = 0
        var tokenReads: [TokenRead: UInt64] = [:]
    }

    /// What looking up an app token the token index did not know found in the store.
    public enum TokenRead: String, Sendable, CaseIterable {
        /// The store had it (another node had just made it).
        case found
        /// The store did not have it either: 401.
        case missing
        /// Not looked up (a miss for the app stands, or the reads' budget is used): 401.
        case skipped
    }

    private let state = Mutex(State())

    public init() {}

    /// Counts one finished request.
    public func recordRequest(route: String, status: Int, seconds: Double) {
        state.withLock { state in
            state.requests[route, default: [:]][status, default: 0] += 1
            state.durations[route, default: Histogram(bounds: Histogram.latencyBounds)].observe(seconds)
        }
    }

    /// Records how late a notification fired, in seconds.
    public func recordLateness(_ seconds: Double) {
        state.withLock { $0.lateness.observe(max(0, seconds)) }
    }

    /// Counts a request that fell due after its expiration and was not delivered.
    public func recordExpired() {
        state.withLock { $0.expired += 1 }
    }

    /// Counts delivered notifications removed at their end of relevance.
    public func recordAutoDismissed(_ count: Int) {
        state.withLock { $0.autoDismissed += UInt64(count) }
    }

    /// Counts escalating notifications alerted again.
    public func recordRealerted() {
        state.withLock { $0.realerted += 1 }
    }

    /// Counts one app token the token index did not know, by what the store said.
    public func recordTokenRead(_ result: TokenRead) {
        state.withLock { $0.tokenReads[result, default: 0] += 1 }
    }

    /// How many unknown app tokens were looked up with this result (for tests).
    public func tokenReads(_ result: TokenRead) -> UInt64 {
        state.withLock { $0.tokenReads[result] ?? 0 }
    }

    /// Sets a gauge that every rendering includes (the node's clock offset, for one).
    public func setGauge(_ name: String, help: String, value: Double) {
        state.withLock { $0.gauges[name] = (help, value) }
    }

    /// How many requests finished on a route with a status (for tests).
    public func requestCount(route: String, status: Int) -> UInt64 {
        state.withLock { $0.requests[route]?[status] ?? 0 }
    }

    /// The Prometheus text exposition (version 0.0.4) of the server's metrics plus `gauges`.
    public func render(gauges: [(name: String, help: String, value: Double)]) -> String {
        let snapshot = state.withLock { $0 }
        var lines: [String] = []
        let set = snapshot.gauges.keys.sorted().map {
            (name: $0, help: snapshot.gauges[$0]!.help, value: snapshot.gauges[$0]!.value)
        }
        for gauge in gauges + set {
            lines.append("# HELP \(gauge.name) \(gauge.help)")
            lines.append("# TYPE \(gauge.name) gauge")
            lines.append("\(gauge.name) \(Self.number(gauge.value))")
        }
        lines.append(
            "# HELP chime_fire_lateness_seconds How long after its fire date a timed notification was delivered.")
        lines.append("# TYPE chime_fire_lateness_seconds histogram")
        lines += snapshot.lateness.lines(name: "chime_fire_lateness_seconds", labels: "")
        lines.append(
            "# HELP chime_expired_total Requests that fell due after their expiration and were removed undelivered (expired events seen since start)."
        )
        lines.append("# TYPE chime_expired_total counter")
        lines.append("chime_expired_total \(snapshot.expired)")
        lines.append(
            "# HELP chime_auto_dismissed_total Delivered notifications removed at their end of relevance (autoDismiss; removed events seen since start)."
        )
        lines.append("# TYPE chime_auto_dismissed_total counter")
        lines.append("chime_auto_dismissed_total \(snapshot.autoDismissed)")
        lines.append(
            "# HELP chime_realerted_total Escalating notifications alerted again, unanswered (realerted events seen since start)."
        )
        lines.append("# TYPE chime_realerted_total counter")
        lines.append("chime_realerted_total \(snapshot.realerted)")
        lines.append(
            "# HELP chime_token_reads_total App tokens the token index did not know, by what the store said (found: made on another node a moment ago; missing: not there either; skipped: refused without a read, within a recent miss's hold or past the reads' budget)."
        )
        lines.append("# TYPE chime_token_reads_total counter")
        for result in TokenRead.allCases {
            lines.append("chime_token_reads_total{result=\"\(result.rawValue)\"} \(snapshot.tokenReads[result] ?? 0)")
        }
        lines.append("# HELP chime_http_requests_total HTTP requests by route template and status.")
        lines.append("# TYPE chime_http_requests_total counter")
        for route in snapshot.requests.keys.sorted() {
            for (status, count) in snapshot.requests[route, default: [:]].sorted(by: { $0.key < $1.key }) {
                lines.append("chime_http_requests_total{route=\"\(Self.escape(route))\",status=\"\(status)\"} \(count)")
            }
        }
        lines.append("# HELP chime_http_request_duration_seconds HTTP request latency by route template.")
        lines.append("# TYPE chime_http_request_duration_seconds histogram")
        for route in snapshot.durations.keys.sorted() {
            lines += snapshot.durations[route]!.lines(
                name: "chime_http_request_duration_seconds",
                labels: "route=\"\(Self.escape(route))\"")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func escape(_ label: String) -> String {
        label.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
