import ChimeCore
import Foundation
import FuzzSupport

// Fuzz target: server-sent events on the client side (ServerSentEventParser, which `chime events`,
// a center on the service and the tests read streams with) and the `Last-Event-ID` header a client
// resumes with (ServerSentEvents.lastEventID, which the server parses). The first byte chooses where
// the stream is cut into pieces; the rest is the stream. Checks:
// - the same items come out whatever pieces the stream arrives in (whole, cut, byte by byte), and
//   feed() gives the events of items();
// - every event parsed, written again as the server writes events (ServerSentEvents.frame), parses
//   back to the same event;
// - a Last-Event-ID is accepted exactly when it is a number of at least 0 (the ids the server
//   writes), the id of a written event is accepted as its number, and a refusal is a ChimeError
//   naming Last-Event-ID.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEventStream(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = fuzzBytes(start, count)
    guard let cut = bytes.first else { return 0 }
    let stream = Array(bytes.dropFirst())

    var whole = ServerSentEventParser()
    let items = whole.items(stream)
    var pieces = ServerSentEventParser()
    let step = Int(cut % 17) + 1
    let cutItems = stride(from: 0, to: stream.count, by: step).flatMap {
        pieces.items(stream[$0..<min($0 + step, stream.count)])
    }
    require(cutItems == items, "the stream cut every \(step) bytes parses differently")
    var single = ServerSentEventParser()
    require(stream.flatMap { single.feed([$0]) } == events(items), "byte by byte, feed() gives other events")

    for case .event(let event) in items {
        var again = ServerSentEventParser()
        let written = ServerSentEvents.frame(event: event.kind, id: event.id, data: Array(event.data.utf8))
        require(again.items(written) == [.event(event)], "\(event) written as the server writes it parses differently")
        checkLastEventID(event.id)
    }
    checkLastEventID(String(decoding: stream, as: UTF8.self))

    // The id of every event the server writes, as a client sends it back.
    let number = stream.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } >> 1
    var client = ServerSentEventParser()
    let id = client.feed(ServerSentEvents.frame(event: "delivered", id: String(number), data: [])).first?.id
    require(
        (try? ServerSentEvents.lastEventID(id)) == Int64(number), "the id \(number) does not come back as Last-Event-ID"
    )
    return 0
}

func events(_ items: [ServerSentEventParser.Item]) -> [ServerSentEventParser.Event] {
    items.compactMap { if case .event(let event) = $0 { event } else { nil } }
}

func checkLastEventID(_ header: String?) {
    let trimmed = header?.trimmingCharacters(in: .whitespaces) ?? ""
    do throws(ChimeError) {
        let id = try ServerSentEvents.lastEventID(header)
        if let id {
            require(id >= 0, "Last-Event-ID \(id) is negative")
            require(Int64(trimmed) == id, "Last-Event-ID \(trimmed.debugDescription) accepted as \(id)")
        } else {
            require(trimmed.isEmpty, "Last-Event-ID \(trimmed.debugDescription) ignored")
        }
    } catch {
        require(
            error.field == "Last-Event-ID" && !error.message.isEmpty,
            "a Last-Event-ID refusal without its field: \(error)")
        require(Int64(trimmed).map { $0 < 0 } ?? true, "Last-Event-ID \(trimmed.debugDescription) refused")
    }
}
