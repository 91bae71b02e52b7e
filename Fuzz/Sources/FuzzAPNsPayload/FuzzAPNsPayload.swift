import ChimeCore
import Foundation
import FuzzSupport

// Fuzz target: APNsPayload.decode, the one decoder behind `POST /3/device/{token}`, `chime push` and
// the simulator's `push`. Any trap is a finding: a crash, an overflow, a sanitizer report, or one of
// the checks below, which state what must hold for every input:
// - a refusal is PayloadEmpty (400) or PayloadTooLarge (413) with a message, as the endpoint answers;
// - an accepted payload has the ranges the decoder promises, decodes the same from `Data` and from
//   its parsed JSON, passes or fails `Validation` with a ChimeError, and survives what the service
//   does next: the store's binary record and the JSON the API lists.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAPNsPayload(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: start, count: count)
    let payload: APNsPayload
    do {
        payload = try APNsPayload.decode(bytes)
    } catch {
        check(error)
        return 0
    }
    check(payload, bytes: bytes)
    return 0
}

func check(_ error: APNsPayloadError) {
    switch error.reason {
    case APNsPayloadError.payloadEmpty: require(error.status == 400, "PayloadEmpty with status \(error.status)")
    case APNsPayloadError.payloadTooLarge: require(error.status == 413, "PayloadTooLarge with status \(error.status)")
    default: fatalError("unexpected reason \(error.reason)")
    }
    require(!error.message.isEmpty, "an error without a message")
}

func check(_ payload: APNsPayload, bytes: UnsafeBufferPointer<UInt8>) {
    let content = payload.content
    if let badge = content.badge { require(badge >= 0, "negative badge \(badge)") }
    require((0...1).contains(content.relevanceScore), "relevance score \(content.relevanceScore)")
    if let volume = content.sound?.volume { require((0...1).contains(volume), "volume \(volume)") }
    require(content.summaryArgumentCount >= 0, "negative summary-arg-count")

    // The same bytes through the other entry points.
    let fromData: APNsPayload
    do { fromData = try APNsPayload.decode(Data(bytes)) } catch {
        fatalError("Data decode refused what bytes accepted: \(error)")
    }
    require(fromData == payload, "Data decode differs")
    let json: JSONValue
    do { json = try JSONValue.parse(bytes) } catch { fatalError("accepted a payload that does not parse: \(error)") }
    let fromJSON: APNsPayload
    do { fromJSON = try APNsPayload.decode(json: json) } catch {
        fatalError("decode(json:) refused what decode accepted: \(error)")
    }
    require(fromJSON == payload, "decode(json:) differs")
    _ = payload.isSilent

    // What the service does with it: validate, store, list.
    do {
        try Validation.validate(content)
    } catch {
        // Typed throws make it a ChimeError; it must also say which field and why.
        require(error.field != nil && !error.message.isEmpty, "Validation refused without a field or message: \(error)")
        return
    }
    let request = NotificationRequest(identifier: "fuzz", content: content, trigger: .push)
    let delivered = DeliveredNotification(
        request: request, date: Date(timeIntervalSince1970: 1_800_000_000), sequence: 7)
    let stored: DeliveredNotification
    do { stored = try RecordCodec.decodeDelivered(RecordCodec.encode(delivered)) } catch {
        fatalError("store record does not decode: \(error)")
    }
    require(stored == delivered, "store record round trip differs")
    let listed = delivered.json.serializedBytes()
    do { _ = try JSONValue.parse(listed) } catch { fatalError("listed JSON does not parse: \(error)") }
}
