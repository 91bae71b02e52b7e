// Apple's enum, with Apple's names and raw values: a plain value, so it lives in the core and the
// `Chime` module re-exports it unchanged.

/// How alerts are shown.
public enum UNAlertStyle: Int, Sendable, Hashable, CaseIterable {
    case none = 0
    case banner = 1
    case alert = 2
}
