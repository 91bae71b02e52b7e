import ChimeCore
import Foundation
import FuzzSupport

// Fuzz target: the one-line send, `POST /v1/apps/{app}/send` (SendHeaders.request): the input is a
// header block (`Name: value` lines, names case-insensitive, the last of a repeated name counting, as
// the server keeps them), a blank line, and the body. Checks:
// - a refusal is a ChimeError naming the header it is about (given, with or without X-) or the body;
// - an accepted send has what the headers said: the texts trimmed, the Badge's number, a Delay's
//   seconds (DurationText, as the CLI's --in reads them), an At's instant (to the millisecond) in UTC;
// - what the engine does next refuses with a field or accepts: Validation, the first fire date;
// - an accepted request survives the store's record and the API's JSON exactly.

let now = Date(timeIntervalSince1970: 1_800_000_000)
let utc = TimeZone(identifier: "UTC")!

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSendHeaders(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = fuzzBytes(start, count)
    var headers: [String: String] = [:]
    var rest = bytes[...]
    while let end = rest.firstIndex(of: 0x0A) {
        let line = rest[..<end]
        rest = rest[(end + 1)...]
        if line.isEmpty { break }
        let text = String(decoding: line, as: UTF8.self)
        guard let colon = text.firstIndex(of: ":") else { continue }
        headers[text[..<colon].lowercased()] = String(text[text.index(after: colon)...])
    }
    let body = Array(rest)
    func given(_ name: String) -> String? {
        (headers[name.lowercased()] ?? headers["x-" + name.lowercased()])?.trimmingCharacters(in: .whitespaces)
    }

    let request: NotificationRequest
    do {
        request = try SendHeaders.request(body: body, header: { headers[$0.lowercased()] }, newIdentifier: { "made" })
    } catch {
        require(!error.message.isEmpty, "a refusal without a message")
        guard let field = error.field else { fatalError("a refusal without a field: \(error)") }
        require(field == "body" || given(field) != nil, "the refusal names \(field), which was not given: \(error)")
        return 0
    }
    let content = request.content
    require(request.identifier == given("Identifier") ?? "made", "identifier \(request.identifier)")
    require(content.title == given("Title") ?? "", "title \(content.title.debugDescription)")
    require(content.subtitle == given("Subtitle") ?? "", "subtitle \(content.subtitle.debugDescription)")
    require(
        content.categoryIdentifier == given("Category") ?? "", "category \(content.categoryIdentifier.debugDescription)"
    )
    require(content.threadIdentifier == given("Thread") ?? "", "thread \(content.threadIdentifier.debugDescription)")
    if let badge = given("Badge") {
        require(
            content.badge.map(Int64.init) == Int64(badge), "badge \(String(describing: content.badge)) for \(badge)")
    }
    checkTrigger(request.trigger, delay: given("Delay"), at: given("At"))

    do { try Validation.validate(request) } catch {
        require(error.field != nil && !error.message.isEmpty, "Validation refused without a field: \(error)")
        return 0
    }
    let first: Date?
    do { first = try FireDates.first(for: request.trigger, now: now, timeZone: utc) } catch {
        require((error as? ChimeError)?.field != nil, "FireDates refused without a ChimeError naming a field: \(error)")
        return 0
    }
    let stored: NotificationRequest
    do { stored = try RecordCodec.decodeRequest(RecordCodec.encode(request)) } catch {
        fatalError("store record does not decode: \(error)")
    }
    require(stored == request, "store record round trip differs")
    let listed = PendingRequest(request: request, nextFireDate: first, anchor: now).json
    let again: NotificationRequest
    do { again = try NotificationRequest(json: JSONValue.parse(listed.serializedBytes())) } catch {
        fatalError("API JSON does not decode: \(error)")
    }
    require(again.content == request.content && again.identifier == request.identifier, "API JSON round trip differs")
    return 0
}

func checkTrigger(_ trigger: NotificationTrigger?, delay: String?, at: String?) {
    switch (trigger, delay, at) {
    case (nil, nil, nil):
        break
    case (.timeInterval(let seconds, repeats: false)?, let delay?, nil):
        require(
            (try? DurationText.seconds(in: delay, field: "Delay", bareSeconds: true)) == seconds,
            "Delay \(delay) gave \(seconds) s")
    case (.calendar(let components, repeats: false)?, nil, let at?):
        guard let date = JSONMapping.parseDate(at) ?? TimeInterval(at).map(Date.init(timeIntervalSince1970:)),
            date.timeIntervalSince1970.isFinite
        else { fatalError("At \(at.debugDescription) accepted but not a date") }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = utc
        require(components.timeZone == utc, "At \(at) gave components in \(String(describing: components.timeZone))")
        guard let instant = calendar.date(from: components) else {
            fatalError("At \(at) gave components that are no date: \(components)")
        }
        // To the millisecond (the API's dates keep milliseconds), or to what a Double holds that far out.
        let tolerance = max(0.001, abs(date.timeIntervalSinceReferenceDate) * 1e-12)
        require(abs(instant.timeIntervalSince(date)) < tolerance, "At \(at) is \(date), its trigger \(instant)")
    default:
        fatalError(
            "trigger \(String(describing: trigger)) for Delay \(String(describing: delay)) and At \(String(describing: at))"
        )
    }
}
