import CSystemdBus
import Foundation

/// A value of a notification hint (`a{sv}`): the few D-Bus types the freedesktop hints use.
public enum HintValue: Sendable, Hashable {
    case string(String)
    case bool(Bool)
    case byte(UInt8)
    case int32(Int32)
}

/// Fills an sd-bus message with arguments. Used on the bus thread only, while the message lives.
struct MessageWriter {
    let message: OpaquePointer

    func append(_ value: String) throws {
        try check(chime_sd_bus_append_string(message, value), "append a string")
    }

    func append(_ value: UInt32) throws {
        try check(chime_sd_bus_append_uint32(message, value), "append a uint32")
    }

    func append(_ value: Int32) throws {
        try check(chime_sd_bus_append_int32(message, value), "append an int32")
    }

    /// An array of strings (`as`).
    func append(_ values: [String]) throws {
        try check(sd_bus_message_open_container(message, CChar(UInt8(ascii: "a")), "s"), "open an array")
        for value in values { try append(value) }
        try check(sd_bus_message_close_container(message), "close an array")
    }

    /// A dictionary of variants (`a{sv}`), in key order so the message is the same every time.
    func append(_ hints: [String: HintValue]) throws {
        try check(sd_bus_message_open_container(message, CChar(UInt8(ascii: "a")), "{sv}"), "open the hints")
        for (key, value) in hints.sorted(by: { $0.key < $1.key }) {
            try check(sd_bus_message_open_container(message, CChar(UInt8(ascii: "e")), "sv"), "open a hint")
            try append(key)
            switch value {
            case .string(let text):
                try check(sd_bus_message_open_container(message, CChar(UInt8(ascii: "v")), "s"), "open a variant")
                try append(text)
            case .bool(let flag):
                try check(sd_bus_message_open_container(message, CChar(UInt8(ascii: "v")), "b"), "open a variant")
                try check(chime_sd_bus_append_bool(message, flag ? 1 : 0), "append a boolean")
            case .byte(let byte):
                try check(sd_bus_message_open_container(message, CChar(UInt8(ascii: "v")), "y"), "open a variant")
                try check(chime_sd_bus_append_byte(message, byte), "append a byte")
            case .int32(let number):
                try check(sd_bus_message_open_container(message, CChar(UInt8(ascii: "v")), "i"), "open a variant")
                try append(number)
            }
            try check(sd_bus_message_close_container(message), "close a variant")
            try check(sd_bus_message_close_container(message), "close a hint")
        }
        try check(sd_bus_message_close_container(message), "close the hints")
    }
}

/// Reads the arguments of an sd-bus message in order. Used on the bus thread only, while the
/// message lives.
struct MessageReader {
    let message: OpaquePointer

    func string() throws -> String {
        var value: UnsafePointer<CChar>?
        let result = chime_sd_bus_read_string(message, CChar(UInt8(ascii: "s")), &value)
        guard result > 0, let value else { throw BusError(.badReply, "expected a string in \(describe)") }
        return String(cString: value)
    }

    func uint32() throws -> UInt32 {
        var value: UInt32 = 0
        guard chime_sd_bus_read_uint32(message, &value) > 0 else {
            throw BusError(.badReply, "expected a uint32 in \(describe)")
        }
        return value
    }

    func bool() throws -> Bool {
        var value: Int32 = 0
        guard chime_sd_bus_read_bool(message, &value) > 0 else {
            throw BusError(.badReply, "expected a boolean in \(describe)")
        }
        return value != 0
    }

    /// An array of strings (`as`).
    func strings() throws -> [String] {
        guard sd_bus_message_enter_container(message, CChar(UInt8(ascii: "a")), "s") > 0 else {
            throw BusError(.badReply, "expected an array of strings in \(describe)")
        }
        var values: [String] = []
        while sd_bus_message_at_end(message, 0) == 0 { values.append(try string()) }
        guard sd_bus_message_exit_container(message) >= 0 else {
            throw BusError(.badReply, "a broken array in \(describe)")
        }
        return values
    }

    /// The message's member and signature, for error messages.
    var describe: String {
        let member = sd_bus_message_get_member(message).map { String(cString: $0) } ?? "a reply"
        let signature = sd_bus_message_get_signature(message, 1).map { String(cString: $0) } ?? ""
        return "\(member) (\(signature))"
    }

    /// The unique name of the connection that sent the message (`:1.42`).
    var sender: String? { sd_bus_message_get_sender(message).map { String(cString: $0) } }
    var member: String? { sd_bus_message_get_member(message).map { String(cString: $0) } }
    var interface: String? { sd_bus_message_get_interface(message).map { String(cString: $0) } }
}

@inline(__always)
func check(_ result: Int32, _ doing: String) throws {
    if result < 0 { throw BusError(errno: result, doing) }
}
