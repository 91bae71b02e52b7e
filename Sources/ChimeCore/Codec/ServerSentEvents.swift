import Foundation

/// Splits a `text/event-stream` body into events (LF, CRLF or CR line ends; `event`, `id`, `data`
/// fields) and comment lines (heartbeats), whatever the pieces it arrives in.
///
/// ```swift
/// var parser = ServerSentEventParser()
/// for event in parser.feed(Array("id: 7\nevent: delivered\ndata: {}\n\n".utf8)) { print(event.kind, event.id ?? "-") }
/// for item in parser.items(Array(": heartbeat\n\n".utf8)) {
///     if case .comment(let text) = item { print("comment", text) }  // comment heartbeat
/// }
/// ```
public struct ServerSentEventParser: Sendable {
    public struct Event: Sendable, Equatable {
        /// The `event` field, `message` when absent.
        public var kind: String
        public var id: String?
        /// The `data` lines joined with LF.
        public var data: String

        public init(kind: String, id: String?, data: String) {
            self.kind = kind
            self.id = id
            self.data = data
        }
    }

    /// What the stream holds, in its order: an event, or a comment line.
    public enum Item: Sendable, Equatable {
        case event(Event)
        /// A line starting with `:` (a server's heartbeat); its text after the colon and one space.
        case comment(String)
    }

    public init() {}

    private var line: [UInt8] = []
    private var afterCR = false
    private var kind: String?
    private var id: String?
    private var data: [String] = []
    private var hasData = false

    /// Consumes bytes and returns the events they complete; comments are skipped.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [Event] {
        items(bytes).compactMap { item in
            if case .event(let event) = item { event } else { nil }
        }
    }

    /// Consumes bytes and returns the events and comment lines they complete, in order.
    public mutating func items(_ bytes: some Sequence<UInt8>) -> [Item] {
        var items: [Item] = []
        for byte in bytes {
            if afterCR {
                afterCR = false
                if byte == 10 { continue }
            }
            if byte == 10 || byte == 13 {
                afterCR = byte == 13
                if let item = endLine() { items.append(item) }
            } else {
                line.append(byte)
            }
        }
        return items
    }

    private mutating func endLine() -> Item? {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty {
            defer { (kind, id, data, hasData) = (nil, nil, [], false) }
            return hasData ? .event(Event(kind: kind ?? "message", id: id, data: data.joined(separator: "\n"))) : nil
        }
        if line.first == UInt8(ascii: ":") {
            var comment = line.dropFirst()
            if comment.first == UInt8(ascii: " ") { comment = comment.dropFirst() }
            return .comment(String(decoding: comment, as: UTF8.self))
        }
        let text = String(decoding: line, as: UTF8.self)
        let name: Substring
        var value: Substring
        if let colon = text.firstIndex(of: ":") {
            name = text[..<colon]
            value = text[text.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
        } else {
            name = Substring(text)
            value = ""
        }
        switch name {
        case "event": kind = String(value)
        case "id": id = String(value)
        case "data":
            data.append(String(value))
            hasData = true
        default: break
        }
        return nil
    }
}

/// The server's side of `text/event-stream`: how an event is written, and the `Last-Event-ID` a
/// client sends back to resume after the last event it received.
///
/// ```swift
/// ServerSentEvents.frame(event: "delivered", id: "7", data: Array("{}".utf8))   // "id: 7\nevent: delivered\ndata: {}\n\n"
/// try ServerSentEvents.lastEventID(" 7 ")                                          // 7
/// ```
public enum ServerSentEvents {
    /// One event as it goes on the wire: `id:`, `event:`, a `data:` line per line of `data`, and
    /// the blank line that ends it.
    public static func frame(event: String? = nil, id: String? = nil, data: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.count + 64)
        if let id { bytes += Array("id: \(id)\n".utf8) }
        if let event { bytes += Array("event: \(event)\n".utf8) }
        let prefix = Array("data: ".utf8)
        var start = 0
        for index in data.indices where data[index] == 0x0A {
            bytes += prefix
            bytes += data[start..<index]
            bytes.append(0x0A)
            start = index + 1
        }
        bytes += prefix
        bytes += data[start...]
        bytes += [0x0A, 0x0A]
        return bytes
    }

    /// The event id a `Last-Event-ID` header names (an event log's sequence number), or nil for no
    /// header or an empty one.
    ///
    /// - Throws: ``ChimeError`` `invalidValue` naming `Last-Event-ID` for anything else.
    public static func lastEventID(_ header: String?) throws(ChimeError) -> Int64? {
        guard let header = header?.trimmingCharacters(in: .whitespaces), !header.isEmpty else { return nil }
        guard let value = Int64(header), value >= 0 else {
            throw ChimeError(
                .invalidValue, field: "Last-Event-ID",
                "Last-Event-ID \"\(header.prefix(40))\" is not an event id; send the id: of the last event received")
        }
        return value
    }
}
