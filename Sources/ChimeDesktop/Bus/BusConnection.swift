import CSystemdBus
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One connection to a D-Bus bus through sd-bus. Not `Sendable`: an sd-bus connection belongs to
/// one thread, and this one lives on ``DesktopLoop``'s thread from open to close.
final class BusConnection {
    private var bus: OpaquePointer?
    /// The match handlers, kept alive (and their slots) until the connection closes.
    private var matches: [(slot: OpaquePointer?, box: Unmanaged<MatchBox>)] = []

    final class MatchBox {
        let handler: (MessageReader) -> Void
        init(_ handler: @escaping (MessageReader) -> Void) { self.handler = handler }
    }

    /// Connects and says hello to the bus at `address` (a D-Bus address such as
    /// `unix:path=/run/user/1000/bus`).
    init(address: String, description: String) throws {
        var bus: OpaquePointer?
        try check(sd_bus_new(&bus), "create a bus connection")
        do {
            try check(sd_bus_set_address(bus, address), "use the bus address \(address)")
            try check(sd_bus_set_bus_client(bus, 1), "act as a bus client")
            _ = sd_bus_set_description(bus, description)
            let started = sd_bus_start(bus)
            if started < 0 {
                throw BusError(
                    .unreachable,
                    "cannot connect to the session bus at \(address): \(String(cString: strerror(-started)))")
            }
        } catch {
            sd_bus_flush_close_unref(bus)
            throw error
        }
        self.bus = bus
    }

    deinit { close() }

    /// Flushes what is queued and closes the connection. Match handlers are released.
    func close() {
        for match in matches {
            sd_bus_slot_unref(match.slot)
            match.box.release()
        }
        matches.removeAll()
        if let bus { sd_bus_flush_close_unref(bus) }
        bus = nil
    }

    var isOpen: Bool { bus.map { sd_bus_is_open($0) > 0 } ?? false }

    /// This connection's unique name on the bus (`:1.42`).
    var uniqueName: String? {
        var name: UnsafePointer<CChar>?
        guard let bus, sd_bus_get_unique_name(bus, &name) >= 0, let name else { return nil }
        return String(cString: name)
    }

    /// Calls a method and reads its answer, waiting at most `timeout` for it.
    ///
    /// - Throws: ``BusError`` `callFailed` with the D-Bus error name when the peer answers with an
    ///   error, `disconnected` when the connection broke, `badReply` when `read` rejects the answer.
    func call<T>(
        destination: String, path: String, interface: String, member: String, timeout: Duration,
        arguments fill: (MessageWriter) throws -> Void = { _ in },
        reply read: (MessageReader) throws -> T
    ) throws -> T {
        guard let bus else { throw BusError(.disconnected, "the connection to the session bus is closed") }
        var message: OpaquePointer?
        try check(
            sd_bus_message_new_method_call(bus, &message, destination, path, interface, member),
            "create a \(member) call")
        defer { sd_bus_message_unref(message) }
        guard let message else { throw BusError(.callFailed, "sd-bus made no \(member) message") }
        try fill(MessageWriter(message: message))
        var error = chime_sd_bus_error_null()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        let micros = UInt64(
            max(1, timeout.components.seconds * 1_000_000 + timeout.components.attoseconds / 1_000_000_000_000))
        let result = sd_bus_call(bus, message, micros, &error, &reply)
        defer { sd_bus_message_unref(reply) }
        if result < 0 {
            if let name = error.name.map({ String(cString: $0) }), name != "org.freedesktop.DBus.Error.Disconnected" {
                let text = error.message.map { String(cString: $0) } ?? name
                throw BusError(.callFailed, name: name, "\(member) failed: \(text)")
            }
            let failure = BusError(errno: result, "\(member) failed")
            throw isOpen ? failure : BusError(.disconnected, failure.message)
        }
        guard let reply else { throw BusError(.badReply, "\(member) came back without a reply") }
        return try read(MessageReader(message: reply))
    }

    /// Calls `handler` (on this thread, from ``process()``) with every message matching `rule`, a
    /// D-Bus match rule (`type='signal',interface='…'`). The rule is also installed on the bus,
    /// so broadcast signals arrive; signals sent to this connection alone match it too.
    func addMatch(_ rule: String, handler: @escaping (MessageReader) -> Void) throws {
        guard let bus else { throw BusError(.disconnected, "the connection to the session bus is closed") }
        let box = Unmanaged.passRetained(MatchBox(handler))
        var slot: OpaquePointer?
        let result = sd_bus_add_match(
            bus, &slot, rule,
            { message, userdata, _ in
                guard let message, let userdata else { return 0 }
                Unmanaged<MatchBox>.fromOpaque(userdata).takeUnretainedValue().handler(MessageReader(message: message))
                return 0
            }, box.toOpaque())
        if result < 0 {
            box.release()
            throw BusError(errno: result, "install the match \(rule)")
        }
        matches.append((slot, box))
    }

    /// Dispatches everything that has arrived (match handlers run here).
    ///
    /// - Throws: ``BusError`` `disconnected` when the connection broke.
    func process() throws {
        guard let bus else { throw BusError(.disconnected, "the connection to the session bus is closed") }
        while true {
            let result = sd_bus_process(bus, nil)
            if result < 0 {
                throw BusError(.disconnected, "the session bus connection broke: \(String(cString: strerror(-result)))")
            }
            if result == 0 { return }
        }
    }

    /// What to poll for: the connection's descriptor, its events and how long until sd-bus needs
    /// to run again (a pending call's timeout), in milliseconds (-1: no deadline).
    func pollRequest() -> (fd: Int32, events: Int16, timeoutMilliseconds: Int32)? {
        guard let bus else { return nil }
        let fd = sd_bus_get_fd(bus)
        let events = sd_bus_get_events(bus)
        guard fd >= 0, events >= 0 else { return nil }
        var deadline: UInt64 = 0
        var timeout: Int32 = -1
        if sd_bus_get_timeout(bus, &deadline) > 0, deadline != UInt64.max {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let nowMicros = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
            timeout = deadline <= nowMicros ? 0 : Int32(min((deadline - nowMicros + 999) / 1000, UInt64(Int32.max)))
        }
        return (fd, Int16(events), timeout)
    }
}
