// Apple's enum, with Apple's names and raw values: a plain value, so it lives in the core and the
// `Chime` module re-exports it unchanged.

/// Whether the user has allowed the app's notifications.
public enum UNAuthorizationStatus: Int, Sendable, Hashable, CaseIterable {
    case notDetermined = 0
    case denied = 1
    case authorized = 2
    case provisional = 3
    case ephemeral = 4
}

// MARK: - Names used by JSON, the CLI and the docs

extension UNAuthorizationStatus {
    /// Apple's case name: `notDetermined`, `denied`, `authorized`, `provisional`, `ephemeral`.
    public var name: String {
        switch self {
        case .notDetermined: "notDetermined"
        case .denied: "denied"
        case .authorized: "authorized"
        case .provisional: "provisional"
        case .ephemeral: "ephemeral"
        }
    }

    /// Parses Apple's case name (see ``name``).
    public init?(name: String) {
        guard let status = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = status
    }

    /// Whether notifications may be delivered in this state.
    public var allowsDelivery: Bool { self == .authorized || self == .provisional || self == .ephemeral }
}
