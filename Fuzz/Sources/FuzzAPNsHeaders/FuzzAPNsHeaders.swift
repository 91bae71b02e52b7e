import ChimeCore
import Foundation
import FuzzSupport

// Fuzz target: the APNs request headers of POST /3/device/{token} (APNsRequestHeaders.parse). The
// input is a header block (`name: value` lines, names lower-cased as HTTP/2 sends them, the last of
// a repeated name counting, values as given after one optional space). Checks, against a model of
// Apple's rules written apart from the parser:
// - a refusal is one of Apple's reasons (BadMessageId, InvalidPushType, BadPriority,
//   BadExpirationDate, BadCollapseId), status 400, naming a header that was given, and exactly the
//   first refusal the model finds in the parser's documented order;
// - what the model accepts is accepted, with the values the headers said;
// - accepted headers rendered again parse to the same value, and each rendered value is the given
//   one or its canonical text (an expiration's leading zeros dropped).

let pushTypes = [
    "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity", "pushtotalk",
    "widgets", "controls",
]

/// The model: the first refusal (reason, header) in the parser's order, or nil.
func modelRefusal(_ headers: [String: String]) -> (String, String)? {
    if let type = headers["apns-push-type"], !pushTypes.contains(type) { return ("InvalidPushType", "apns-push-type") }
    if let id = headers["apns-id"] {
        let hex = Set("0123456789abcdefABCDEF")
        let chars = Array(id)
        let dashes = [8, 13, 18, 23]
        let ok =
            chars.count == 36
            && chars.indices.allSatisfy { dashes.contains($0) ? chars[$0] == "-" : hex.contains(chars[$0]) }
        if !ok { return ("BadMessageId", "apns-id") }
    }
    if let expiration = headers["apns-expiration"] {
        let digits = !expiration.isEmpty && expiration.unicodeScalars.allSatisfy { ("0"..."9").contains($0) }
        // Int64's range, by comparing the digits without leading zeros.
        var trimmed = Substring(expiration)
        while trimmed.count > 1, trimmed.first == "0" { trimmed = trimmed.dropFirst() }
        let fits = trimmed.count < 19 || (trimmed.count == 19 && trimmed <= "9223372036854775807")
        if !(digits && fits && expiration.utf8.count <= 19) { return ("BadExpirationDate", "apns-expiration") }
    }
    if let priority = headers["apns-priority"], !["10", "5", "1"].contains(priority) {
        return ("BadPriority", "apns-priority")
    }
    if (headers["apns-push-type"] ?? "alert") == "background", headers["apns-priority"] == "10" {
        return ("BadPriority", "apns-priority")
    }
    if let collapse = headers["apns-collapse-id"], collapse.isEmpty || collapse.utf8.count > 64 {
        return ("BadCollapseId", "apns-collapse-id")
    }
    return nil
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAPNsHeaders(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = fuzzBytes(start, count)
    var headers: [String: String] = [:]
    for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
        let text = String(decoding: line, as: UTF8.self)
        guard let colon = text.firstIndex(of: ":") else { continue }
        var value = text[text.index(after: colon)...]
        if value.first == " " { value = value.dropFirst() }
        headers[text[..<colon].lowercased()] = String(value)
    }

    let expected = modelRefusal(headers)
    let parsed: APNsRequestHeaders
    do {
        parsed = try APNsRequestHeaders.parse { headers[$0] }
    } catch {
        require(APNsRequestHeaders.reasons.contains(error.reason), "a refusal that is not Apple's reason: \(error)")
        require(error.status == 400 && !error.message.isEmpty, "status or message: \(error)")
        require(headers[error.header] != nil, "the refusal names \(error.header), which was not given: \(error)")
        guard let expected else { fatalError("refused what the model accepts: \(error) for \(headers)") }
        require(expected == (error.reason, error.header), "refused with \(error), the model says \(expected)")
        return 0
    }
    if let expected { fatalError("accepted what the model refuses (\(expected)): \(parsed) for \(headers)") }

    require(parsed.id == headers["apns-id"], "apns-id \(String(describing: parsed.id))")
    require(
        parsed.pushType?.rawValue == headers["apns-push-type"], "apns-push-type \(String(describing: parsed.pushType))")
    require(
        parsed.priority.map { String($0.rawValue) } == headers["apns-priority"],
        "apns-priority \(String(describing: parsed.priority))")
    require(
        parsed.collapseID == headers["apns-collapse-id"], "apns-collapse-id \(String(describing: parsed.collapseID))")
    require(parsed.topic == headers["apns-topic"], "apns-topic \(String(describing: parsed.topic))")
    switch (parsed.expiration, headers["apns-expiration"].flatMap { Int64($0) }) {
    case (nil, nil): break
    case (.immediately?, 0?): require(parsed.expiration?.date == nil, "immediately has a date")
    case (.at(let seconds)?, let given?):
        require(seconds == given && seconds > 0, "apns-expiration \(seconds) for \(given)")
        require(parsed.expiration?.date == Date(timeIntervalSince1970: TimeInterval(given)), "expiration date")
    default:
        fatalError(
            "apns-expiration \(String(describing: parsed.expiration)) for \(String(describing: headers["apns-expiration"]))"
        )
    }
    require(parsed.effectivePushType.rawValue == headers["apns-push-type"] ?? "alert", "effective push type")
    require(
        parsed.effectivePriority != .immediate || parsed.effectivePushType != .background, "background at priority 10")
    require(parsed.requestIdentifier(apnsID: "made") == headers["apns-collapse-id"] ?? "made", "request identifier")

    let rendered = Dictionary(
        parsed.rendered.map { ($0.name, $0.value) },
        uniquingKeysWith: { first, _ in fatalError("\(first) rendered twice") })
    for (name, value) in rendered where name != "apns-expiration" {
        require(
            headers[name] == value,
            "\(name) rendered as \(value.debugDescription), given \(String(describing: headers[name]))")
    }
    let again: APNsRequestHeaders
    do { again = try APNsRequestHeaders.parse { rendered[$0] } } catch {
        fatalError("the rendered headers are refused: \(error)")
    }
    require(again == parsed, "rendered headers parse to \(again), not \(parsed)")
    return 0
}
