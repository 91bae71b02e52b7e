// Apple's enum, with Apple's names and raw values: a plain value, so it lives in the core and the
// `Chime` module re-exports it unchanged.

/// How urgently a notification asks for attention.
public enum UNNotificationInterruptionLevel: UInt, Sendable, Hashable, CaseIterable {
    case passive = 0
    case active = 1
    case timeSensitive = 2
    case critical = 3
}

// MARK: - Names used by JSON, the CLI and the docs

extension UNNotificationInterruptionLevel {
    /// Apple's case names, as used in JSON and APNs payloads (`"time-sensitive"` is accepted too).
    public var name: String {
        switch self {
        case .passive: "passive"
        case .active: "active"
        case .timeSensitive: "timeSensitive"
        case .critical: "critical"
        }
    }

    /// Parses `passive`, `active`, `timeSensitive` / `time-sensitive`, `critical`.
    public init?(name: String) {
        switch name {
        case "passive": self = .passive
        case "active": self = .active
        case "timeSensitive", "time-sensitive": self = .timeSensitive
        case "critical": self = .critical
        default: return nil
        }
    }
}
