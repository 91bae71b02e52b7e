import Foundation

/// Splits a `text/event-stream` body into events (LF, CRLF or CR line ends; `event`, `id`, `data`
/// fields; comments skipped), whatever the pieces it arrives in.
///
/// ```swift
/// var parser = ServerSentEventParser()
/// for event in parser.feed(Array("id: 7\nevent: delivered\ndata: {}\n\n".utf8)) { print(event.kind, event.id ?? "-") }
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

    public init() {}

    private var line: [UInt8] = []
    private var afterCR = false
    private var kind: String?
    private var id: String?
    private var data: [String] = []
    private var hasData = false

    /// Consumes bytes and returns the events they complete.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [Event] {
        var events: [Event] = []
        for byte in bytes {
            if afterCR {
                afterCR = false
                if byte == 10 { continue }
            }
            if byte == 10 || byte == 13 {
                afterCR = byte == 13
                if let event = endLine() { events.append(event) }
            } else {
                line.append(byte)
            }
        }
        return events
    }

    private mutating func endLine() -> Event? {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty {
            defer { (kind, id, data, hasData) = (nil, nil, [], false) }
            return hasData ? Event(kind: kind ?? "message", id: id, data: data.joined(separator: "\n")) : nil
        }
        if line.first == UInt8(ascii: ":") { return nil }
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
