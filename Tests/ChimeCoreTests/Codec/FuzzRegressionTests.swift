import Foundation
import TestThreads
import Testing

@testable import ChimeCore

/// The nastiest inputs the fuzz targets (Fuzz/, `make fuzz`) were given or found, fed through the same
/// path as the targets: JSONValue.parse → JSONMapping → Validation → FireDates → the API's JSON and
/// the store's record, and APNsPayload.decode. Each must end in a clean error or a sound value — never
/// a crash, a trap or a stack overflow. A finding of `make fuzz` is added here with its exact input.
@Suite("Fuzz regressions", .testThreads)
struct FuzzRegressionTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let utc = TimeZone(identifier: "UTC")!

    /// What the fuzz target for the request decoder does with one body; returns the error, if any.
    @discardableResult
    func decodeRequests(_ bytes: [UInt8]) -> ChimeError? {
        do {
            let value = try JSONValue.parse(bytes)
            #expect(try JSONValue.parse(value.serializedBytes()) == value)
            for request in try JSONMapping.requests(value) {
                try Validation.validate(request)
                let first = try FireDates.first(for: request.trigger, now: Self.now, timeZone: Self.utc)
                if let trigger = request.trigger, let first, trigger.repeats {
                    let next = FireDates.next(
                        for: trigger, due: first, anchor: Self.now, now: first, timeZone: Self.utc)
                    #expect(next.map { $0 > first } ?? true)
                }
                #expect(try RecordCodec.decodeRequest(RecordCodec.encode(request)) == request)
                let listed = PendingRequest(request: request, nextFireDate: first, anchor: Self.now).json
                if case .string(let date)? = listed["nextTriggerDate"] {
                    #expect(JSONMapping.parseDate(date) != nil, "\(date)")
                }
                let again = try NotificationRequest(json: JSONValue.parse(listed.serializedBytes()))
                #expect(again.identifier == request.identifier)
            }
            return nil
        } catch let error as ChimeError {
            #expect(!error.message.isEmpty)
            return error
        } catch {
            Issue.record("not a ChimeError: \(error)")
            return nil
        }
    }

    func decodeRequests(_ text: String) -> ChimeError? { decodeRequests(Array(text.utf8)) }

    func push(_ bytes: [UInt8]) -> Result<APNsPayload, APNsPayloadError> {
        do throws(APNsPayloadError) { return .success(try APNsPayload.decode(bytes)) } catch { return .failure(error) }
    }

    func pushError(_ text: String) -> APNsPayloadError? {
        if case .failure(let error) = push(Array(text.utf8)) { return error }
        return nil
    }

    // MARK: nesting

    @Test("100,000 nested arrays or objects: a depth error, not a stack overflow")
    func deepNesting() {
        let arrays = [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
        let error = decodeRequests(arrays)
        #expect(error?.code == .malformedInput)
        #expect(error?.message.contains("nesting deeper than 64 levels") == true, "\(String(describing: error))")

        let objects = Array(String(repeating: #"{"a":"#, count: 100_000).utf8)
        #expect(decodeRequests(objects)?.message.contains("nesting deeper than 64 levels") == true)

        // In a push payload, past the 4096-byte limit and within it.
        #expect(push(arrays).failureReason == APNsPayloadError.payloadTooLarge)
        let nestedPush = Array((#"{"aps": {}, "x": "# + String(repeating: "[", count: 2000)).utf8)
        let failure = push(nestedPush)
        #expect(failure.failureReason == APNsPayloadError.payloadEmpty)
        #expect(failure.failureMessage?.contains("nesting deeper than 64 levels") == true)
    }

    @Test("a caller's huge maxDepth is capped at the ceiling, which the stack survives")
    func depthCeiling() throws {
        let deep =
            [UInt8](repeating: UInt8(ascii: "["), count: 200_000)
            + [UInt8](repeating: UInt8(ascii: "]"), count: 200_000)
        #expect(throws: ChimeError.self) { try JSONValue.parse(deep, maxDepth: .max) }
        let ceiling = JSONValue.depthCeiling
        let atCeiling =
            Array(String(repeating: "[", count: ceiling).utf8) + Array(String(repeating: "]", count: ceiling).utf8)
        let value = try JSONValue.parse(atCeiling, maxDepth: .max)
        #expect(try JSONValue.parse(value.serializedBytes(), maxDepth: ceiling) == value)
        let deeper = [UInt8(ascii: "[")] + atCeiling + [UInt8(ascii: "]")]
        #expect(throws: ChimeError.self) { try JSONValue.parse(deeper, maxDepth: .max) }
    }

    @Test("userInfo nested to the parser's limit is decoded, validated, stored and listed")
    func deepUserInfo() {
        let depth = 62  // request object + userInfo + 62 = 64 levels
        let body =
            #"{"identifier": "deep", "userInfo": {"k": "# + String(repeating: "[", count: depth) + "1"
            + String(repeating: "]", count: depth) + "}}"
        #expect(decodeRequests(body) == nil)
        let tooDeep =
            #"{"identifier": "deep", "userInfo": {"k": "# + String(repeating: "[", count: depth + 1) + "1"
            + String(repeating: "]", count: depth + 1) + "}}"
        #expect(decodeRequests(tooDeep)?.code == .malformedInput)
    }

    // MARK: numbers

    @Test(
        "numbers past a double's range are refused; tiny ones underflow to zero",
        arguments: [
            ("1e400", true), ("-1e400", true), ("1" + String(repeating: "0", count: 400), true),
            ("1e-400", false), ("-0.0", false), ("0." + String(repeating: "0", count: 5000) + "1", false),
            ("-9223372036854775809", false), ("18446744073709551616", false),
        ])
    func extremeNumbers(number: String, refused: Bool) {
        let error = decodeRequests(#"{"identifier": "n", "userInfo": {"n": "# + number + "}}")
        if refused {
            #expect(error?.code == .malformedInput)
            #expect(error?.message.contains("out of range") == true, "\(String(describing: error))")
        } else {
            #expect(error == nil, "\(String(describing: error))")
        }
    }

    @Test(
        "integer fields given huge, fractional or negative numbers name the field",
        arguments: [
            (#""badge": 1e300"#, "badge"), (#""badge": 9223372036854775808"#, "badge"), (#""badge": -1"#, "badge"),
            (#""badge": 1.5"#, "badge"), (#""summaryArgumentCount": -9223372036854775808"#, "summaryArgumentCount"),
            (#""relevanceScore": 1.0000000001"#, "relevanceScore"), (#""sound": {"volume": 1e308}"#, "sound.volume"),
        ])
    func integerFields(member: String, field: String) {
        let error = decodeRequests(#"{"identifier": "n", "# + member + "}")
        #expect(error?.code == .invalidValue)
        #expect(error?.field == field, "\(String(describing: error))")
    }

    @Test("the largest accepted values survive fire dates, the store and the API's JSON")
    func extremeButValid() {
        #expect(
            decodeRequests(
                #"{"identifier": "far", "badge": 9223372036854775807, "trigger": {"type": "timeInterval", "timeInterval": 1.7976931348623157e308}}"#
            ) == nil)
        #expect(
            decodeRequests(#"{"identifier": "tiny", "trigger": {"type": "timeInterval", "timeInterval": 5e-324}}"#)
                == nil)
        #expect(
            decodeRequests(
                #"{"identifier": "every", "trigger": {"type": "timeInterval", "timeInterval": 1e308, "repeats": true}}"#
            ) == nil)
        #expect(
            decodeRequests(
                #"{"identifier": "wide", "trigger": {"type": "location", "region": {"identifier": "r", "latitude": -90, "longitude": 180, "radius": 1.7976931348623157e308}}}"#
            ) == nil)
        #expect(
            decodeRequests(
                #"{"identifier": "late", "trigger": {"type": "calendar", "dateComponents": {"year": 9999, "month": 12, "day": 31, "hour": 23, "minute": 59, "second": 59, "nanosecond": 999999999, "timeZone": "Pacific/Kiritimati"}}}"#
            ) == nil)
        let past = decodeRequests(
            #"{"identifier": "past", "trigger": {"type": "calendar", "dateComponents": {"year": 1, "era": 0}}}"#)
        #expect(past?.code == .invalidTrigger)
        let never = decodeRequests(
            #"{"identifier": "never", "trigger": {"type": "calendar", "dateComponents": {"month": 2, "day": 30}, "repeats": true}}"#
        )
        #expect(never?.code == .invalidTrigger)
        let listed = PendingRequest(
            request: NotificationRequest(
                identifier: "far", content: NotificationContent(), trigger: .timeInterval(1e308, repeats: false)),
            nextFireDate: Date(timeIntervalSinceReferenceDate: 1e308), anchor: Self.now
        ).json
        #expect(listed["nextTriggerDate"] == "9999-12-31T23:59:59.999Z")
    }

    @Test("dates past the year 9999 or before 0001 are written with a four-digit year that reads back")
    func farDates() throws {
        // Found by schemathesis: a timeInterval of 1e12 seconds was listed as "33715-08-26T15:20:18.630Z",
        // which is not an RFC 3339 date-time; a userInfo date on 9999-12-31 west of UTC was written as
        // "10000-01-01T…" and the listed request could not be posted back.
        for (seconds, expected) in [
            (1e12, "9999-12-31T23:59:59.999Z"), (.infinity, "9999-12-31T23:59:59.999Z"),
            (253_402_300_799.9996, "9999-12-31T23:59:59.999Z"), (-1e15, "0001-01-01T00:00:00.000Z"),
            (-.infinity, "0001-01-01T00:00:00.000Z"), (.nan, "1970-01-01T00:00:00.000Z"),
            (-62_167_219_200, "0001-01-01T00:00:00.000Z"), (-62_135_596_800, "0001-01-01T00:00:00.000Z"),
            (253_402_300_799.999, "9999-12-31T23:59:59.999Z"),
        ] {
            let text = JSONMapping.formatDate(Date(timeIntervalSince1970: seconds))
            #expect(text == expected, "\(seconds)")
            #expect(JSONMapping.parseDate(text) != nil, "\(text)")
        }
        #expect(
            decodeRequests(#"{"identifier": "a", "userInfo": {"d": {"$date": "9999-12-31T23:59:59+12:00"}}}"#) == nil)
        #expect(
            decodeRequests(#"{"identifier": "b", "userInfo": {"d": {"$date": "0001-01-01T00:00:00-14:00"}}}"#) == nil)
        // An instant outside the years 0001-9999 in UTC is refused, naming the field, not moved to the
        // nearest one that can be written (the date would come back other than it was given).
        for outside in ["9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00+14:00", "0000-06-01T00:00:00Z"] {
            let error = decodeRequests(#"{"identifier": "c", "userInfo": {"d": {"$date": ""# + outside + #""}}}"#)
            #expect(error?.field == "userInfo.d.$date", "\(outside): \(String(describing: error))")
            #expect(error?.message.contains("0001-9999") == true, "\(String(describing: error))")
        }
        #expect(
            decodeRequests(
                #"{"identifier": "c", "trigger": {"type": "calendar", "dateComponents": {"year": 9999, "month": 12, "day": 31, "hour": 23, "timeZone": "Etc/GMT+12"}}}"#
            ) == nil)
        #expect(
            decodeRequests(#"{"identifier": "d", "trigger": {"type": "timeInterval", "timeInterval": 1e12}}"#) == nil)
    }

    @Test("a nanosecond near a whole second stays in its second, also at the end of a day or of year 9999")
    func nanosecondRounding() throws {
        // Found by these tests: Foundation rounded 23:59:59.999999999 up to the next midnight, so the
        // date "matched no date" and was refused.
        #expect(
            decodeRequests(
                #"{"identifier": "last", "trigger": {"type": "calendar", "dateComponents": {"year": 2030, "month": 12, "day": 31, "hour": 23, "minute": 59, "second": 59, "nanosecond": 999999999}}}"#
            ) == nil)
        var components = DateComponents(hour: 23, minute: 59, second: 59, nanosecond: 999_999_999)
        components.timeZone = Self.utc
        let trigger = NotificationTrigger.calendar(components, repeats: true)
        let first = try #require(try FireDates.first(for: trigger, now: Self.now, timeZone: Self.utc))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = Self.utc
        #expect(calendar.component(.second, from: first) == 59)
        #expect(calendar.component(.day, from: first) == calendar.component(.day, from: Self.now))
        // The next occurrence is a day later, not the rounded instant just after the first.
        let next = try #require(
            FireDates.next(for: trigger, due: first, anchor: Self.now, now: first, timeZone: Self.utc))
        #expect(abs(next.timeIntervalSince(first) - 86_400) < 0.001)
        // Nanoseconds that round within their second are as before.
        var half = DateComponents(second: 30, nanosecond: 500_000_000)
        half.timeZone = Self.utc
        let halfDate = try #require(FireDates.nextCalendarDate(matching: half, after: Self.now, timeZone: Self.utc))
        #expect(halfDate.timeIntervalSince(Self.now) == 30.5)
    }

    // MARK: text

    static let invalidUTF8Sequences: [[UInt8]] = [
        [0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x80], [0xF0, 0x9F, 0x98],
    ]

    @Test("invalid UTF-8 in a value, a member name or outside strings", arguments: invalidUTF8Sequences)
    func invalidUTF8(sequence: [UInt8]) {
        let inValue = Array(#"{"identifier": "a", "title": ""#.utf8) + sequence + Array(#""}"#.utf8)
        #expect(decodeRequests(inValue)?.message.contains("UTF-8") == true)
        let inName = Array(#"{"identifier": "a", ""#.utf8) + sequence + Array(#"": 1}"#.utf8)
        #expect(decodeRequests(inName)?.message.contains("UTF-8") == true)
        let bare = Array(#"{"identifier": "a"}"#.utf8) + sequence
        #expect(decodeRequests(bare)?.code == .malformedInput)
        let payload = Array(#"{"aps": {"alert": ""#.utf8) + sequence + Array(#""}}"#.utf8)
        #expect(push(payload).failureMessage?.contains("UTF-8") == true)
    }

    @Test(
        "lone and mismatched surrogates in \\u escapes",
        arguments: [
            (#"\ud800"#, "lone high surrogate"), (#"\udfff"#, "lone low surrogate"),
            (#"\ud800\u0041"#, "not a low surrogate"),
            (#"\ud800\ud800"#, "not a low surrogate"), (#"\udbff"#, "lone high surrogate"),
            (#"\ud83d\"#, "lone high surrogate"),
            (#"\ud83d\u"#, "four hexadecimal digits"), (#"\uZZZZ"#, "four hexadecimal digits"),
        ])
    func surrogates(escape: String, expected: String) {
        let error = decodeRequests(#"{"identifier": "a", "body": ""# + escape + #""}"#)
        #expect(error?.code == .malformedInput)
        #expect(error?.message.contains(expected) == true, "\(String(describing: error))")
        #expect(pushError(#"{"aps": {"alert": ""# + escape + #""}}"#)?.message.contains(expected) == true)
        // A valid pair is one scalar.
        #expect(decodeRequests(#"{"identifier": "\ud83d\ude00", "body": "\udbff\udfff"}"#) == nil)
    }

    @Test("NUL characters: accepted in text, refused in identifiers")
    func nul() {
        #expect(decodeRequests(#"{"identifier": "a", "title": "\u0000", "userInfo": {"\u0000": "\u0000"}}"#) == nil)
        #expect(decodeRequests(#"{"identifier": "a\u0000b"}"#)?.code == .invalidIdentifier)
        #expect(
            decodeRequests(
                #"{"identifier": "a", "trigger": {"type": "location", "region": {"identifier": "\u0000", "latitude": 0, "longitude": 0, "radius": 1}}}"#
            )?.code == .invalidIdentifier)
    }

    @Test("a byte-order mark alone, whitespace alone and nothing at all")
    func emptyish() {
        #expect(decodeRequests([0xEF, 0xBB, 0xBF])?.message.contains("empty") == true)
        #expect(decodeRequests(" \n\t\r")?.message.contains("empty") == true)
        #expect(decodeRequests([])?.message.contains("empty") == true)
        #expect(push([0xEF, 0xBB, 0xBF]).failureReason == APNsPayloadError.payloadEmpty)
        #expect(push([]).failureReason == APNsPayloadError.payloadEmpty)
    }

    @Test("a duplicate member name after many members is still found")
    func lateDuplicate() {
        let members = (0..<40).map { #""k\#($0)": \#($0)"# }.joined(separator: ", ")
        let error = decodeRequests(#"{"identifier": "a", "userInfo": {"# + members + #", "k7": 0}}"#)
        #expect(error?.message.contains(#"the member name "k7" appears twice"#) == true, "\(String(describing: error))")
    }

    // MARK: push payloads

    @Test("a payload of exactly 4096 bytes is decoded; one more byte is PayloadTooLarge")
    func payloadLimit() {
        let head = #"{"aps": {"alert": ""#
        let tail = #""}}"#
        let exact = head + String(repeating: "x", count: 4096 - head.utf8.count - tail.utf8.count) + tail
        #expect(push(Array(exact.utf8)).failureReason == nil)
        let over = head + String(repeating: "x", count: 4097 - head.utf8.count - tail.utf8.count) + tail
        let failure = push(Array(over.utf8))
        #expect(failure.failureReason == APNsPayloadError.payloadTooLarge)
        if case .failure(let error) = failure { #expect(error.status == 413) }
    }

    @Test(
        "aps keys of the wrong type or range are PayloadEmpty naming the key",
        arguments: [
            (#"{"aps": {"badge": -1}}"#, "aps.badge"), (#"{"aps": {"badge": 1e300}}"#, "aps.badge"),
            (#"{"aps": {"badge": "1"}}"#, "aps.badge"),
            (#"{"aps": {"relevance-score": 1e308}}"#, "aps.relevance-score"),
            (#"{"aps": {"sound": {"volume": -1e-300}}}"#, "aps.sound.volume"),
            (#"{"aps": {"content-available": "1"}}"#, "aps.content-available"),
            (#"{"aps": {"alert": {"loc-args": "x", "loc-key": "%@"}}}"#, "aps.alert.loc-args"),
            (#"{"aps": {"alert": {"loc-key": "%@", "loc-args": [[]]}}}"#, "aps.alert.loc-args[0]"),
            (#"{"aps": {"alert": 7}}"#, "aps.alert"),
            (#"{"aps": {"summary-arg-count": -9223372036854775808}}"#, "aps.summary-arg-count"),
            (#"{"aps": []}"#, "aps"), (#"{"aps": null}"#, "aps"),
            (#"{"aps": {}, "Simulator Target Bundle": 5}"#, "Simulator Target Bundle"),
        ])
    func badAPSKeys(payload: String, field: String) {
        let error = pushError(payload)
        #expect(error?.reason == APNsPayloadError.payloadEmpty)
        #expect(error?.status == 400)
        #expect(error?.field == field, "\(String(describing: error))")
    }

    static let formatCases: [(String, [String], String)] = [
        ("%", [], "%"), ("%%%", [], "%%"), ("%1$", ["a"], "%1$"), ("%0$@", ["a"], "%0$@"),
        ("%1$@%1$@%@", ["a", "b"], "aaa"),
        ("%99999999999999999999$@", ["a"], "%99999999999999999999$@"), ("%2$@", ["a"], "%2$@"), ("%@%", ["a"], "a%"),
        ("%@ %@", ["😀", "%@"], "😀 %@"), ("%\u{301}@", ["a"], "%\u{301}@"),
    ]

    @Test("localisation formats with stray, huge or zero placeholders", arguments: formatCases)
    func formats(key: String, arguments: [String], expected: String) {
        #expect(APNsPayload.format(key, arguments: arguments) == expected)
    }

    @Test("a payload with every key at its edge still makes content that validates, stores and lists")
    func edgePayload() throws {
        let payload = #"""
            {"aps": {"alert": {"title-loc-key": "%@%@%1$@", "title-loc-args": [1e308, -9223372036854775808, "x"], "loc-key": "%",
             "subtitle": "\u0000", "summary-arg-count": 9223372036854775807}, "badge": 9223372036854775807,
             "sound": {"critical": 2, "volume": 0, "name": ""}, "relevance-score": 0, "content-available": 0.5, "mutable-content": false,
             "interruption-level": "time-sensitive"}, "n": [null, {"m": null}], "": {"": ""}}
            """#
        let decoded = try APNsPayload.decode(Array(payload.utf8))
        #expect(decoded.content.title == "1e+308-92233720368547758081e+308")
        #expect(decoded.content.badge == Int.max)
        #expect(decoded.isContentAvailable)
        #expect(decoded.content.userInfo["n"] == .array([.dictionary([:])]))
        try Validation.validate(decoded.content)
        let delivered = DeliveredNotification(
            request: NotificationRequest(identifier: "p", content: decoded.content, trigger: .push), date: Self.now)
        #expect(try RecordCodec.decodeDelivered(RecordCodec.encode(delivered)) == delivered)
        #expect(throws: Never.self) { try JSONValue.parse(delivered.json.serializedBytes()) }
    }

    // MARK: findings of the settings-file, send and event-stream targets

    @Test(
        "fuzz-config-file: a settings file with CRLF line ends reads as with LF (it was one line, so nothing was set)")
    func settingsFileCRLF() throws {
        let settings = try SettingsFile.toml(
            "# written on Windows\r\n[serve]\r\nlisten = \"0.0.0.0:7878\"  # all\r\nlaunch-timeout = 220\r\n",
            name: "chime.toml")
        #expect(
            settings == [
                SettingsFile.Setting(key: "listen", value: .string("0.0.0.0:7878"), line: 3),
                SettingsFile.Setting(key: "launch-timeout", value: .integer(220), line: 4),
            ])
    }

    @Test(
        "fuzz-config-file: a quote or backslash followed by a combining mark is still a quote or backslash (TOML is read by scalars)"
    )
    func settingsFileCombiningMarks() throws {
        // Swift's Characters join "\\" and U+0301 into one, so "\\\\" + U+0301 written by a tool did not read back.
        #expect(
            try SettingsFile.toml("data = \"a\\\\\u{301}\"", name: "chime.toml").map(\.value) == [.string("a\\\u{301}")]
        )
        #expect(try SettingsFile.toml("data = \"\u{301}x\"", name: "chime.toml").map(\.value) == [.string("\u{301}x")])
        // A backslash and a combining mark are an escape TOML does not know: refused, naming the place.
        let error = try #require(throws: ChimeError.self) {
            try SettingsFile.toml("\ndata = \"0.0 \\\u{301} not a comment\"", name: "chime.toml")
        }
        #expect(error.field == "chime.toml:2" && error.message.hasPrefix("chime.toml:2: "))
    }

    @Test("fuzz-send-headers: a trigger error from the At header names At, not Delay")
    func sendAtNamesAt() throws {
        let headers = ["at": "1938061838061800.25"]  // the finding's At: millions of years ahead
        let error = try #require(throws: ChimeError.self) {
            try SendHeaders.request(
                body: Array("at seconds".utf8), header: { headers[$0.lowercased()] }, newIdentifier: { "made" })
        }
        #expect(error.field == "At", "\(error)")
        // Such an At is now refused before the mapping (below); the mapping's own trigger errors
        // name the header that was given.
        let mapped = SendHeaders.inHeaderTerms(
            ChimeError(.invalidTrigger, field: "trigger.dateComponents.year", "year 10000"), trigger: "At")
        #expect(mapped.field == "At" && mapped.message == "the At header: year 10000")
    }

    @Test(
        "fuzz-send-headers: At must be in the years 1 to 9999 (nan was accepted as some date, 0000-01-01 as 0001-01-01)",
        arguments: ["nan", "NaN", "inf", "-infinity", "1e300", "-1e300", "253402300800", "0000-01-01T00:00:00Z"])
    func sendAtNotANumber(at: String) throws {
        let headers = ["at": at]
        let error = try #require(throws: ChimeError.self) {
            try SendHeaders.request(
                body: Array("t".utf8), header: { headers[$0.lowercased()] }, newIdentifier: { "made" })
        }
        #expect(error.field == "At" && error.code == .invalidValue, "\(error)")
    }

    @Test(
        "JSONMapping.parseDate takes the instants of the years 0001-9999 in UTC only (it took the year 0000)",
        arguments: [
            "0000-01-01T00:00:00Z", "0000-12-31T23:59:59.999Z", "0000-02-29T12:00:00Z", "0001-01-01T00:00:00+00:01",
            "0001-01-01T09:30:00+10:00", "9999-12-31T23:59:59-00:01", "9999-12-31T12:00:00-12:00",
        ])
    func parseDateYearZero(text: String) throws {
        #expect(JSONMapping.parseDate(text) == nil, "\(text)")
        let error = try #require(throws: ChimeError.self) { try JSONMapping.date(.string(text), field: "at") }
        #expect(error.field == "at" && error.message.contains("0001-9999"), "\(error)")
    }

    @Test("JSONMapping.parseDate: the first and last instants of the years 0001-9999 read and write back as given")
    func parseDateEdges() throws {
        for (text, written) in [
            ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000Z"),
            ("0001-01-01T10:00:00+10:00", "0001-01-01T00:00:00.000Z"),
            ("9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"),
            ("9999-12-31T10:59:59.5-13:00", "9999-12-31T23:59:59.500Z"),
        ] {
            let date = try #require(JSONMapping.parseDate(text), "\(text)")
            #expect(JSONMapping.dateRange.contains(date.timeIntervalSince1970))
            #expect(JSONMapping.formatDate(date) == written, "\(text)")
            #expect(JSONMapping.parseDate(written) == date, "\(written)")
        }
    }

}

extension Result where Failure == APNsPayloadError {
    var failureReason: String? {
        if case .failure(let error) = self { return error.reason }
        return nil
    }

    var failureMessage: String? {
        if case .failure(let error) = self { return error.message }
        return nil
    }
}
