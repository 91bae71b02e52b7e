import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A failure talking to D-Bus: the bus could not be reached, a call failed, or an answer did not
/// have the expected shape.
///
/// ```swift
/// do { try connection.call(request) } catch let error as BusError where error.code == .disconnected { … }
/// ```
public struct BusError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// No session bus address, or the bus refused the connection.
        public static let unreachable = Code(rawValue: "unreachable")
        /// The connection to the bus broke.
        public static let disconnected = Code(rawValue: "disconnected")
        /// The peer answered with a D-Bus error (``BusError/name`` says which).
        public static let callFailed = Code(rawValue: "callFailed")
        /// The answer did not have the expected types.
        public static let badReply = Code(rawValue: "badReply")
    }

    public var code: Code
    /// The D-Bus error name for ``Code/callFailed`` (`org.freedesktop.DBus.Error.ServiceUnknown`, …).
    public var name: String?
    public var message: String

    public init(_ code: Code, name: String? = nil, _ message: String) {
        self.code = code
        self.name = name
        self.message = message
    }

    /// An error from an sd-bus return value (a negative errno).
    init(errno value: Int32, _ doing: String) {
        let code: Code =
            [ECONNRESET, ENOTCONN, EPIPE, ESHUTDOWN, ECONNREFUSED].contains(-value) ? .disconnected : .callFailed
        self.init(code, "\(doing): \(String(cString: strerror(-value)))")
    }

    /// Whether the error says that nobody owns the name called (the server is not running).
    public var isNoServer: Bool {
        guard code == .callFailed, let name else { return false }
        return [
            "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
            "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout",
            "org.freedesktop.DBus.Error.Spawn.ChildExited", "org.freedesktop.DBus.Error.Spawn.Failed",
        ].contains(name)
            || name.hasPrefix("org.freedesktop.DBus.Error.Spawn.")
    }

    public var description: String {
        if let name { return "\(message) (\(name))" }
        return message
    }
}
