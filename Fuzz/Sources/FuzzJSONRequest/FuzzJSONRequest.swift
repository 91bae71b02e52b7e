import ChimeCore
import Foundation
import FuzzSupport

// Fuzz target: the JSON request decoder — JSONValue.parse, then JSONMapping.requests (the body of
// `POST /v1/apps/{app}/requests`) and JSONMapping.categories (`PUT /v1/apps/{app}/categories`),
// then what the engine does before it stores: Validation and the first fire date. Any trap is a
// finding: a crash, an overflow, a sanitizer report, or one of the checks below:
// - a parse error is a ChimeError `malformedInput`; a parsed value prints to JSON that parses back
//   to the same value;
// - the decoders and Validation refuse with a ChimeError only;
// - an accepted request or category set survives the store's binary record exactly, and its API
//   JSON decodes back to the same value (after one normalising round: dates keep milliseconds);
//   the bytes of an add's answer (`PendingRequest.appendJSON`) are that JSON serialized.

let now = Date(timeIntervalSince1970: 1_800_000_000)
let utc = TimeZone(identifier: "UTC")!
let berlin = TimeZone(identifier: "Europe/Berlin")!

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONRequest(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: start, count: count)
    let value: JSONValue
    do {
        value = try JSONValue.parse(bytes)
    } catch {
        require(error.code == .malformedInput, "parse threw \(error.code)")
        require(!error.message.isEmpty, "a parse error without a message")
        return 0
    }
    checkPrinting(value)
    checkRequests(value)
    checkCategories(value)
    return 0
}

func reparse(_ value: JSONValue, pretty: Bool = false) -> JSONValue {
    do { return try JSONValue.parse(value.serializedBytes(pretty: pretty)) } catch {
        fatalError("printed JSON does not parse: \(error)")
    }
}

func checkPrinting(_ value: JSONValue) {
    require(reparse(value) == value, "compact print/parse round trip differs")
    require(reparse(value, pretty: true) == value, "pretty print/parse round trip differs")
}

func expectChimeError(_ error: any Error, _ what: String) {
    require(error is ChimeError, "\(what) threw \(type(of: error)): \(error)")
}

func checkRequests(_ value: JSONValue) {
    let requests: [NotificationRequest]
    do { requests = try JSONMapping.requests(value) } catch { return }
    for request in requests {
        do { try Validation.validate(request) } catch {
            expectChimeError(error, "Validation")
            continue
        }
        let first: Date?
        do { first = try FireDates.first(for: request.trigger, now: now, timeZone: utc) } catch {
            expectChimeError(error, "FireDates.first")
            continue
        }
        if let trigger = request.trigger, let first, trigger.repeats {
            if let next = FireDates.next(for: trigger, due: first, anchor: now, now: first, timeZone: utc) {
                require(next > first, "the next occurrence \(next) is not after \(first)")
                // With the second fixed, occurrences are at least a minute apart: never twice in one second.
                if case .calendar(let components, _) = trigger, components.second != nil {
                    require(
                        next.timeIntervalSince(first) >= 1,
                        "occurrences \(first) and \(next) are less than a second apart")
                }
            }
            _ = FireDates.next(
                for: trigger, due: first, anchor: now, now: first.addingTimeInterval(400 * 86_400), timeZone: berlin)
        }
        _ = try? FireDates.first(for: request.trigger, now: now, timeZone: berlin)

        let stored: NotificationRequest
        do { stored = try RecordCodec.decodeRequest(RecordCodec.encode(request)) } catch {
            fatalError("store record does not decode: \(error)")
        }
        require(stored == request, "store record round trip differs")
        let pending = PendingRequest(request: request, nextFireDate: first, anchor: now)
        let listed = pending.json
        var written: [UInt8] = []
        pending.appendJSON(to: &written)
        require(written == listed.serializedBytes(), "the 201's bytes differ from the request's JSON serialized")
        if case .string(let date)? = listed["nextTriggerDate"] {
            require(JSONMapping.parseDate(date) != nil, "nextTriggerDate \(date) is not a date the API reads")
        }
        let once = decodeRequest(reparse(listed))
        require(decodeRequest(reparse(once.json)) == once, "API JSON round trip is not stable")
    }
}

func decodeRequest(_ json: JSONValue) -> NotificationRequest {
    do { return try NotificationRequest(json: json) } catch {
        fatalError("API JSON of a request does not decode: \(error)")
    }
}

func checkCategories(_ value: JSONValue) {
    let categories: [NotificationCategory]
    do { categories = try JSONMapping.categories(value) } catch { return }
    do { try Validation.validate(categories) } catch {
        expectChimeError(error, "Validation")
        return
    }
    let stored: [NotificationCategory]
    do { stored = try RecordCodec.decodeCategories(RecordCodec.encode(categories)) } catch {
        fatalError("store record does not decode: \(error)")
    }
    require(stored == categories, "store record round trip differs")
    let listed = JSONValue.array(categories.map(\.json))
    let once: [NotificationCategory]
    do { once = try JSONMapping.categories(reparse(listed)) } catch {
        fatalError("API JSON of categories does not decode: \(error)")
    }
    require(once == categories, "API JSON round trip of categories differs")
}
