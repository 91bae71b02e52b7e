import Foundation

/// What a notification server said about itself at start: `GetServerInformation` and
/// `GetCapabilities`, and the unique bus name it answered from.
///
/// ```swift
/// if profile.has("inline-reply") { … }       // KDE Plasma
/// print(profile.name, profile.version)       // "dunst", "1.9.0"
/// ```
public struct ServerProfile: Sendable, Hashable {
    public var name: String
    public var vendor: String
    public var version: String
    public var specVersion: String
    public var capabilities: Set<String>
    /// The server's unique name on the bus (`:1.7`): signals from any other sender are ignored.
    public var owner: String

    public init(
        name: String, vendor: String = "", version: String = "", specVersion: String = "",
        capabilities: Set<String>, owner: String = ""
    ) {
        self.name = name
        self.vendor = vendor
        self.version = version
        self.specVersion = specVersion
        self.capabilities = capabilities
        self.owner = owner
    }

    public func has(_ capability: String) -> Bool { capabilities.contains(capability) }
}

/// One `Notify` call: the arguments as the freedesktop specification orders them.
public struct NotifyRequest: Sendable, Hashable {
    public var appName: String
    public var replacesID: UInt32
    public var appIcon: String
    public var summary: String
    public var body: String
    /// Pairs of action key and label, in order (`["default", "Open", "snooze", "Snooze"]`).
    public var actions: [String]
    public var hints: [String: HintValue]
    /// Milliseconds; -1 lets the server decide, 0 never expires.
    public var expireTimeout: Int32
}

/// A signal from the notification server about a notification it shows.
public enum ServerSignal: Sendable, Hashable {
    /// The user chose an action (`default` for a click on the body).
    case actionInvoked(id: UInt32, key: String)
    /// The pop-up went away: 1 expired, 2 dismissed by the user, 3 closed by `CloseNotification`, 4 other.
    case closed(id: UInt32, reason: UInt32)
    /// KDE's inline reply: the user typed `text` and sent it.
    case replied(id: UInt32, text: String)
    /// A token for the app the action starts (XDG activation), sent before `ActionInvoked`.
    case activationToken(id: UInt32, token: String)
}

/// The `org.freedesktop.Notifications` interface, called over a ``BusConnection``.
enum FreedesktopNotifications {
    static let name = "org.freedesktop.Notifications"
    static let path = "/org/freedesktop/Notifications"
    static let interface = "org.freedesktop.Notifications"

    /// Every signal of the interface, broadcast or sent to this connection alone.
    static let signalRule = "type='signal',path='\(path)',interface='\(interface)'"
    /// Who owns the server's name: a server starting, stopping or being replaced.
    static let ownerRule =
        "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
        + "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(name)'"

    /// Asks the server who it is and what it can do. Starts it if the bus can activate it.
    static func profile(on connection: BusConnection, timeout: Duration) throws -> ServerProfile {
        var owner = ""
        let information = try connection.call(
            destination: name, path: path, interface: interface, member: "GetServerInformation",
            timeout: timeout
        ) { reader -> (String, String, String, String) in
            owner = reader.sender ?? ""
            return (try reader.string(), try reader.string(), try reader.string(), try reader.string())
        }
        let capabilities = try connection.call(
            destination: name, path: path, interface: interface, member: "GetCapabilities",
            timeout: timeout
        ) { try $0.strings() }
        return ServerProfile(
            name: information.0, vendor: information.1, version: information.2, specVersion: information.3,
            capabilities: Set(capabilities), owner: owner)
    }

    /// Shows (or, with `replacesID`, updates) a notification; returns the server's id for it.
    static func notify(_ request: NotifyRequest, on connection: BusConnection, timeout: Duration) throws -> UInt32 {
        try connection.call(
            destination: name, path: path, interface: interface, member: "Notify", timeout: timeout,
            arguments: { writer in
                try writer.append(request.appName)
                try writer.append(request.replacesID)
                try writer.append(request.appIcon)
                try writer.append(request.summary)
                try writer.append(request.body)
                try writer.append(request.actions)
                try writer.append(request.hints)
                try writer.append(request.expireTimeout)
            }, reply: { try $0.uint32() })
    }

    /// Takes a notification off the screen (the server answers with `NotificationClosed` reason 3).
    static func close(_ id: UInt32, on connection: BusConnection, timeout: Duration) throws {
        try connection.call(
            destination: name, path: path, interface: interface, member: "CloseNotification", timeout: timeout,
            arguments: { try $0.append(id) }, reply: { _ in () })
    }

    /// The unique name owning the server's name, or `nil` when no server runs.
    static func owner(on connection: BusConnection, timeout: Duration) throws -> String? {
        do {
            return try connection.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetNameOwner", timeout: timeout, arguments: { try $0.append(name) },
                reply: { try $0.string() })
        } catch let error as BusError where error.name == "org.freedesktop.DBus.Error.NameHasNoOwner" {
            return nil
        }
    }

    /// Reads a signal of the interface; `nil` for members this surface does not use.
    static func signal(_ reader: MessageReader) throws -> ServerSignal? {
        switch reader.member {
        case "ActionInvoked": return .actionInvoked(id: try reader.uint32(), key: try reader.string())
        case "NotificationClosed": return .closed(id: try reader.uint32(), reason: try reader.uint32())
        case "NotificationReplied": return .replied(id: try reader.uint32(), text: try reader.string())
        case "ActivationToken": return .activationToken(id: try reader.uint32(), token: try reader.string())
        default: return nil
        }
    }

    /// Reads `NameOwnerChanged(name, old, new)`: the new owner, or `nil` when the name was released.
    static func newOwner(_ reader: MessageReader) throws -> String? {
        _ = try reader.string()
        _ = try reader.string()
        let new = try reader.string()
        return new.isEmpty ? nil : new
    }
}
