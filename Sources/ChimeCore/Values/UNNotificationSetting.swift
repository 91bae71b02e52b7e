// Apple's enum, with Apple's names and raw values: a plain value, so it lives in the core and the
// `Chime` module re-exports it unchanged.

/// The state of one notification setting.
public enum UNNotificationSetting: Int, Sendable, Hashable, CaseIterable {
    case notSupported = 0
    case disabled = 1
    case enabled = 2
}
