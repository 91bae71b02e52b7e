// Apple's enum, with Apple's names and raw values: a plain value, so it lives in the core and the
// `Chime` module re-exports it unchanged.

/// When previews (the body) are shown.
public enum UNShowPreviewsSetting: Int, Sendable, Hashable, CaseIterable {
    case always = 0
    case whenAuthenticated = 1
    case never = 2
}
