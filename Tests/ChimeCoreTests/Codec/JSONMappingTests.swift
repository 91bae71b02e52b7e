import Foundation
import TestThreads
import Testing

@testable import ChimeCore

@Suite("JSON mapping of Chime's values", .testThreads)
struct JSONMappingTests {
    func request(_ text: String) throws(ChimeError) -> NotificationRequest {
        try NotificationRequest(json: JSONValue.parse(text))
    }

    @Test("decodes the issue's request shape with every content field")
    func decodesRequest() throws {
        let r = try request(
            #"""
            {"identifier": "wake", "title": "Wake up", "subtitle": "Now", "body": "It's 8", "badge": 3,
             "sound": {"name": "ping.caf", "critical": true, "volume": 0.5},
             "userInfo": {"task": "t-1", "count": 3, "ratio": 0.25, "on": true, "tags": ["a", 1], "nested": {"x": {"$data": "AQID"}},
                          "when": {"$date": "2026-12-01T09:30:00+01:00"}},
             "categoryIdentifier": "alarm.category", "threadIdentifier": "t", "targetContentIdentifier": "c",
             "interruptionLevel": "timeSensitive", "relevanceScore": 0.8, "filterCriteria": "work", "launchImageName": "L",
             "summaryArgument": "Ann", "summaryArgumentCount": 2,
             "trigger": {"type": "timeInterval", "timeInterval": 60, "repeats": true}}
            """#)
        #expect(r.identifier == "wake")
        #expect(r.content.title == "Wake up" && r.content.subtitle == "Now" && r.content.body == "It's 8")
        #expect(r.content.badge == 3)
        #expect(r.content.sound == NotificationSound(name: "ping.caf", isCritical: true, volume: 0.5))
        #expect(r.content.userInfo["task"] == .string("t-1"))
        #expect(r.content.userInfo["count"] == .integer(3))
        #expect(r.content.userInfo["ratio"] == .double(0.25))
        #expect(r.content.userInfo["tags"] == .array([.string("a"), .integer(1)]))
        #expect(r.content.userInfo["nested"] == .dictionary(["x": .data(Data([1, 2, 3]))]))
        #expect(r.content.userInfo["when"] == .date(Date(timeIntervalSince1970: 1_796_113_800)))
        #expect(r.content.interruptionLevel == .timeSensitive)
        #expect(r.content.relevanceScore == 0.8)
        #expect(r.content.targetContentIdentifier == "c" && r.content.filterCriteria == "work")
        #expect(r.content.summaryArgument == "Ann" && r.content.summaryArgumentCount == 2)
        #expect(r.trigger == .timeInterval(60, repeats: true))
    }

    @Test("accepts content nested under \"content\", and null as the default")
    func nestedContent() throws {
        let r = try request(
            #"{"identifier": "a", "content": {"title": "T", "sound": "default", "badge": null}, "trigger": null}"#)
        #expect(r.content.title == "T")
        #expect(r.content.sound == .default)
        #expect(r.content.badge == nil)
        #expect(r.trigger == nil)
        #expect(
            try request(#"{"identifier": "a", "sound": "bell.caf"}"#).content.sound
                == NotificationSound(name: "bell.caf"))
    }

    @Test("decodes calendar and location triggers")
    func triggers() throws {
        let calendar = try request(
            #"{"identifier": "c", "trigger": {"type": "calendar", "dateComponents": {"hour": 8, "minute": 30, "weekday": 2, "timeZone": "Europe/Berlin"}, "repeats": true}}"#
        )
        guard case .calendar(let components, let repeats) = calendar.trigger else {
            Issue.record("not calendar")
            return
        }
        #expect(repeats)
        #expect(components.hour == 8 && components.minute == 30 && components.weekday == 2)
        #expect(components.timeZone?.identifier == "Europe/Berlin")
        let location = try request(
            #"{"identifier": "l", "trigger": {"type": "location", "region": {"identifier": "office", "latitude": 52.52, "longitude": 13.40, "radius": 100, "notifyOnEntry": true, "notifyOnExit": false}, "repeats": false}}"#
        )
        #expect(
            location.trigger
                == .location(
                    CircularRegion(
                        identifier: "office", center: Coordinate(latitude: 52.52, longitude: 13.40), radius: 100,
                        notifyOnEntry: true, notifyOnExit: false), repeats: false))
    }

    static func richRequests() -> [NotificationRequest] {
        var content = NotificationContent(title: "Title \"quoted\"", subtitle: "Sub\n", body: "Body é 😀")
        content.badge = 0
        content.sound = NotificationSound(name: "alarm.caf", isCritical: true, volume: 0.25)
        content.userInfo = [
            "data": .data(Data([0, 255, 7])), "date": .date(Date(timeIntervalSince1970: 1_800_000_000.5)),
            "list": .array([.integer(-4), .double(1.5), .bool(false), .dictionary(["k": .string("v")])]),
            "big": .integer(Int64.max),
        ]
        content.attachments = [
            NotificationAttachment(identifier: "img", url: URL(fileURLWithPath: "/tmp/a.png"), type: "public.png"),
            NotificationAttachment(
                identifier: "clip", url: URL(fileURLWithPath: "/tmp/b.mov"), type: "com.apple.quicktime-movie",
                thumbnailHidden: true, thumbnailClippingRect: .init(x: 0, y: 0.25, width: 1, height: 0.5),
                thumbnailTime: 3),
        ]
        content.categoryIdentifier = "cat"
        content.threadIdentifier = "thread"
        content.targetContentIdentifier = "target"
        content.summaryArgument = "Ann"
        content.summaryArgumentCount = 3
        content.interruptionLevel = .critical
        content.relevanceScore = 0.5
        content.filterCriteria = "focus"
        content.launchImageName = "launch"
        var components = DateComponents()
        components.year = 2027
        components.month = 2
        components.day = 28
        components.hour = 23
        components.weekdayOrdinal = -1
        components.timeZone = TimeZone(identifier: "America/New_York")
        return [
            NotificationRequest(identifier: "rich", content: content, trigger: .calendar(components, repeats: false)),
            NotificationRequest(
                identifier: "interval", content: NotificationContent(body: "b"),
                trigger: .timeInterval(0.5, repeats: false)),
            NotificationRequest(identifier: "now", content: NotificationContent(title: "t"), trigger: nil),
            NotificationRequest(
                identifier: "loc", content: content,
                trigger: .location(
                    CircularRegion(
                        identifier: "home", center: Coordinate(latitude: -33.9, longitude: 151.2), radius: 50.5,
                        notifyOnEntry: false, notifyOnExit: true), repeats: true)),
        ]
    }

    @Test("round-trips rich requests through JSON text", arguments: richRequests())
    func roundTrip(original: NotificationRequest) throws {
        let text = original.json.serialized(pretty: true)
        let decoded = try NotificationRequest(json: JSONValue.parse(text))
        #expect(decoded == original)
    }

    @Test("a pending request written straight into bytes is its JSON serialized, byte for byte")
    func pendingBytes() throws {
        var requests = Self.richRequests()
        var odd = NotificationContent(title: "ctl \u{1}\u{1f} \\ \"", subtitle: "", body: "\u{7f}\u{85}\u{2028}")
        odd.sound = NotificationSound(name: nil)
        odd.badge = 7
        odd.relevanceScore = .infinity
        odd.userInfo = [
            "z": .double(.nan), "é": .double(-0.0), "a": .dictionary([:]), "B": .array([]), "": .string(""),
            "n": .array([.array([.dictionary(["x\n": .double(1e300)])]), .data(Data()), .integer(Int64.min)]),
        ]
        odd.attachments = []
        requests.append(
            NotificationRequest(
                identifier: "odd", content: odd, trigger: .timeInterval(86_400 * 30, repeats: true),
                expiration: .after(3600), autoDismiss: .at(Date(timeIntervalSince1970: 1_800_000_000.001)),
                escalation: NotificationEscalation(every: 60, for: 600)))
        var critical = NotificationContent(title: "c")
        critical.sound = NotificationSound(name: nil, isCritical: false, volume: 0.5)
        requests.append(
            NotificationRequest(
                identifier: "deadlines", content: critical, trigger: .push,
                expiration: .at(Date(timeIntervalSince1970: -1)), autoDismiss: .after(0.25)))
        requests.append(
            try NotificationRequest(
                json: JSONValue.parse(
                    #"{"identifier": "r", "trigger": {"type": "recurrence", "rrule": "FREQ=MONTHLY;BYDAY=-1FR", "start": "2027-01-29T09:00", "timeZone": "Europe/Berlin", "exceptionDates": ["2027-02-26T09:00"]}}"#
                )))
        requests.append(
            try NotificationRequest(
                json: JSONValue.parse(
                    #"{"identifier":"bench-1","content":{"title":"Reminder 1","body":"Time to stretch.","sound":"default","categoryIdentifier":"reminder","threadIdentifier":"thread-1","userInfo":{"taskID":"task-1-5","priority":1,"tags":["health","daily"],"note":"nnn"}},"trigger":{"type":"timeInterval","timeInterval":86400,"repeats":false}}"#
                )))
        for request in requests {
            for date in [nil, Date(timeIntervalSince1970: 1_796_113_800.25)] {
                let pending = PendingRequest(request: request, nextFireDate: date, anchor: Date())
                var bytes: [UInt8] = Array("[".utf8)
                pending.appendJSON(to: &bytes)
                #expect(
                    String(decoding: bytes.dropFirst(), as: UTF8.self) == pending.json.serialized(),
                    "\(request.identifier)")
            }
        }
    }

    @Test("a pending request posts back unchanged (nextTriggerDate is ignored on input)")
    func pendingRoundTrip() throws {
        let original = Self.richRequests()[0]
        let pending = PendingRequest(
            request: original, nextFireDate: Date(timeIntervalSince1970: 1_796_113_800.25), anchor: Date())
        let json = pending.json
        #expect(json["nextTriggerDate"] == .string("2026-12-01T08:30:00.250Z"))
        #expect(try NotificationRequest(json: JSONValue.parse(json.serialized())) == original)
    }

    @Test("bulk arrays decode and name the index in errors")
    func bulk() throws {
        let list = try JSONMapping.requests(JSONValue.parse(#"[{"identifier": "a"}, {"identifier": "b"}]"#))
        #expect(list.map(\.identifier) == ["a", "b"])
        #expect(try JSONMapping.requests(JSONValue.parse(#"{"identifier": "a"}"#)).count == 1)
        do throws(ChimeError) {
            _ = try JSONMapping.requests(
                JSONValue.parse(#"[{"identifier": "a"}, {"identifier": "b"}, {"identifier": "c"}, {"title": 1}]"#))
            Issue.record("accepted")
        } catch {
            #expect(error.field == "[3].identifier")
        }
        do throws(ChimeError) {
            _ = try JSONMapping.requests(JSONValue.parse(#"[{"identifier": "a"}, {"identifier": "a"}]"#))
            Issue.record("accepted")
        } catch {
            #expect(error.field == "[1].identifier")
        }
    }

    /// (JSON, field named, words the message must contain)
    static let invalidRequests: [(String, String?, [String])] = [
        (#"[]"#, nil, ["expected a notification request as a JSON object", "an empty array"]),
        (#"{"title": "x"}"#, "identifier", ["missing"]),
        (#"{"identifier": ""}"#, "identifier", ["empty"]),
        (#"{"identifier": 7}"#, "identifier", ["expected a string", "integer (7)"]),
        (#"{"identifier": "a", "title": 5}"#, "title", ["expected a string, found an integer"]),
        (#"{"identifier": "a", "body": ["x"]}"#, "body", ["expected a string, found an array"]),
        (
            #"{"identifier": "a", "catgoryIdentifier": "c"}"#, "catgoryIdentifier",
            ["not a field of a request", "did you mean \"categoryIdentifier\""]
        ),
        (
            #"{"identifier": "a", "content": {"title": "x"}, "body": "y"}"#, "body",
            ["both at the top level and with \"content\""]
        ),
        (#"{"identifier": "a", "content": {"titel": "x"}}"#, "content.titel", ["did you mean \"title\"", "accepted:"]),
        (#"{"identifier": "a", "content": 3}"#, "content", ["expected notification content as a JSON object"]),
        (#"{"identifier": "a", "badge": -1}"#, "badge", ["-1", "0 or more"]),
        (#"{"identifier": "a", "badge": 1.5}"#, "badge", ["expected an integer, found a number (1.5)"]),
        (#"{"identifier": "a", "badge": "3"}"#, "badge", ["expected an integer, found a string"]),
        (#"{"identifier": "a", "sound": 1}"#, "sound", ["\"default\", a sound file name"]),
        (#"{"identifier": "a", "sound": ""}"#, "sound", ["empty string"]),
        (#"{"identifier": "a", "sound": {"name": "x", "volume": 2}}"#, "sound.volume", ["0 to 1"]),
        (#"{"identifier": "a", "sound": {"name": "x", "loud": true}}"#, "sound.loud", ["not a field of a sound"]),
        (#"{"identifier": "a", "sound": {"critical": "yes"}}"#, "sound.critical", ["expected true or false"]),
        (
            #"{"identifier": "a", "interruptionLevel": "urgent"}"#, "interruptionLevel",
            ["\"urgent\" is not an interruption level", "timeSensitive"]
        ),
        (#"{"identifier": "a", "relevanceScore": 1.5}"#, "relevanceScore", ["0 to 1"]),
        (#"{"identifier": "a", "summaryArgumentCount": -2}"#, "summaryArgumentCount", ["0 or more"]),
        (#"{"identifier": "a", "userInfo": [1]}"#, "userInfo", ["expected an object"]),
        (#"{"identifier": "a", "userInfo": {"task": null}}"#, "userInfo.task", ["null", "not a property-list value"]),
        (#"{"identifier": "a", "userInfo": {"items": [1, null]}}"#, "userInfo.items[1]", ["null"]),
        (#"{"identifier": "a", "userInfo": {"blob": {"$data": "%%%"}}}"#, "userInfo.blob.$data", ["base64"]),
        (
            #"{"identifier": "a", "userInfo": {"when": {"$date": "yesterday"}}}"#, "userInfo.when.$date",
            ["not an ISO 8601 date"]
        ),
        (#"{"identifier": "a", "attachments": [{"identifier": "i"}]}"#, "attachments[0].url", ["missing"]),
        (#"{"identifier": "a", "trigger": "soon"}"#, "trigger", ["expected a trigger as a JSON object"]),
        (#"{"identifier": "a", "trigger": {}}"#, "trigger.type", ["missing", "timeInterval, calendar, location"]),
        (
            #"{"identifier": "a", "trigger": {"type": "weekly"}}"#, "trigger.type",
            ["\"weekly\" is not a trigger type", "omit the trigger to deliver at once"]
        ),
        (
            #"{"identifier": "a", "trigger": {"type": "calender", "dateComponents": {"hour": 1}}}"#, "trigger.type",
            ["did you mean \"calendar\""]
        ),
        (#"{"identifier": "a", "trigger": {"type": "push"}}"#, "trigger.type", ["only from pushes"]),
        (#"{"identifier": "a", "trigger": {"type": 1}}"#, "trigger.type", ["expected a trigger type"]),
        (#"{"identifier": "a", "trigger": {"type": "timeInterval"}}"#, "trigger.timeInterval", ["missing"]),
        (
            #"{"identifier": "a", "trigger": {"type": "timeInterval", "timeInterval": 0}}"#, "trigger.timeInterval",
            ["greater than 0"]
        ),
        (
            #"{"identifier": "a", "trigger": {"type": "timeInterval", "timeInterval": -5}}"#, "trigger.timeInterval",
            ["greater than 0"]
        ),
        (
            #"{"identifier": "a", "trigger": {"type": "timeInterval", "timeInterval": 30, "repeats": true}}"#,
            "trigger.timeInterval", ["at least 60"]
        ),
        (
            #"{"identifier": "a", "trigger": {"type": "timeInterval", "timeInterval": "10"}}"#, "trigger.timeInterval",
            ["expected a number, found a string"]
        ),
        (
            #"{"identifier": "a", "trigger": {"type": "timeInterval", "timeInterval": 10, "repeats": "no"}}"#,
            "trigger.repeats", ["expected true or false"]
        ),
        (
            #"{"identifier": "a", "trigger": {"type": "timeInterval", "timeInterval": 10, "region": {}}}"#,
            "trigger.region", ["not a field of a timeInterval trigger"]
        ),
        (#"{"identifier": "a", "trigger": {"type": "calendar"}}"#, "trigger.dateComponents", ["missing"]),
        (
            #"{"identifier": "a", "trigger": {"type": "calendar", "dateComponents": {}}}"#, "trigger.dateComponents",
            ["no components"]
        ),
        (
            #"{"identifier": "a", "trigger": {"type": "calendar", "dateComponents": {"timeZone": "UTC"}}}"#,
            "trigger.dateComponents", ["no components"]
        ),
        (
            #"{"identifier": "a", "trigger": {"type": "calendar", "dateComponents": {"month": 13}}}"#,
            "trigger.dateComponents.month", ["13", "1 to 12"]
        ),
        (
            #"{"identifier": "a", "trigger": {"type": "calendar", "dateComponents": {"hour": 24}}}"#,
            "trigger.dateComponents.hour", ["0 to 23"]
        ),
        (
            #"{"identifier": "a", "trigger": {"type": "calendar", "dateComponents": {"minute": 60}}}"#,
            "trigger.dateComponents.minute", ["0 to 59"]
        ),
        (
            #"{"identifier": "a", "trigger": {"type": "calendar", "dateComponents": {"weekday": 0}}}"#,
            "trigger.dateComponents.weekday", ["1 to 7"]
        ),
        (
            #"{"identifier": "a", "trigger": {"type": "calendar", "dateComponents": {"day": 32}}}"#,
            "trigger.dateComponents.day", ["1 to 31"]
        ),
        (
            #"{"identifier": "a", "trigger": {"type": "calendar", "dateComponents": {"hour": 8.5}}}"#,
            "trigger.dateComponents.hour", ["expected an integer"]
        ),
        (
            #"{"identifier": "a", "trigger": {"type": "calendar", "dateComponents": {"hour": 8, "timeZone": "Mars/Olympus"}}}"#,
            "trigger.dateComponents.timeZone", ["not a known time zone", "Europe/Berlin"]
        ),
        (
            #"{"identifier": "a", "trigger": {"type": "calendar", "dateComponents": {"hours": 8}}}"#,
            "trigger.dateComponents.hours", ["did you mean \"hour\""]
        ),
        (#"{"identifier": "a", "trigger": {"type": "location"}}"#, "trigger.region", ["missing"]),
        (
            #"{"identifier": "a", "trigger": {"type": "location", "region": {"latitude": 1, "longitude": 1, "radius": 1}}}"#,
            "trigger.region.identifier", ["missing"]
        ),
        (
            #"{"identifier": "a", "trigger": {"type": "location", "region": {"identifier": "o", "latitude": 91, "longitude": 1, "radius": 1}}}"#,
            "trigger.region.latitude", ["-90 to 90"]
        ),
        (
            #"{"identifier": "a", "trigger": {"type": "location", "region": {"identifier": "o", "latitude": 1, "longitude": -181, "radius": 1}}}"#,
            "trigger.region.longitude", ["-180 to 180"]
        ),
        (
            #"{"identifier": "a", "trigger": {"type": "location", "region": {"identifier": "o", "latitude": 1, "longitude": 1, "radius": 0}}}"#,
            "trigger.region.radius", ["greater than 0"]
        ),
        (
            #"{"identifier": "a", "trigger": {"type": "location", "region": {"identifier": "o", "latitude": 1, "longitude": 1}}}"#,
            "trigger.region.radius", ["missing"]
        ),
        (
            #"{"identifier": "a", "trigger": {"type": "location", "region": {"identifier": "o", "latitude": 1, "longitude": 1, "radius": 5, "notifyOnEntry": false, "notifyOnExit": false}}}"#,
            "trigger.region", ["could never fire"]
        ),
    ]

    @Test("rejects invalid requests naming the field and what is accepted", arguments: invalidRequests)
    func invalidRequest(text: String, field: String?, words: [String]) {
        do throws(ChimeError) {
            let r = try request(text)
            Issue.record("accepted \(text) as \(r)")
        } catch {
            #expect(error.field == field, "\(text): \(error.message)")
            #expect(error.code != .malformedInput)
            for word in words { #expect(error.message.contains(word), "\(text): \(error.message) lacks \(word)") }
            if let field { #expect(error.message.hasPrefix(field), "\(error.message)") }
        }
    }

    @Test(
        "a value out of range gets Validation's message word for word: the decoder checks JSON types, Validation the ranges"
    )
    func rangesAreValidations() {
        let cases: [(json: String, expected: String?)] = [
            (#"{"identifier": "a", "badge": -1}"#, refusalMessage { try Validation.validateBadge(-1, field: "badge") }),
            (
                #"{"identifier": "a", "content": {"summaryArgumentCount": -2}}"#,
                refusalMessage {
                    try Validation.validateSummaryArgumentCount(-2, field: "content.summaryArgumentCount")
                }
            ),
            (
                #"{"identifier": "a", "relevanceScore": 1.5}"#,
                refusalMessage { try Validation.validateRelevanceScore(1.5, field: "relevanceScore") }
            ),
            (
                #"{"identifier": "a", "sound": {"volume": 2}}"#,
                refusalMessage { try Validation.validateVolume(2, field: "sound.volume") }
            ),
            (
                #"{"identifier": "a", "trigger": {"type": "calendar", "dateComponents": {"hour": 24}}}"#,
                refusalMessage { try Validation.validate(DateComponents(hour: 24), field: "trigger.dateComponents") }
            ),
            (
                #"{"identifier": "a", "trigger": {"type": "calendar", "dateComponents": {"timeZone": "UTC"}}}"#,
                refusalMessage { try Validation.validate(DateComponents(), field: "trigger.dateComponents") }
            ),
        ]
        for (json, expected) in cases {
            #expect(expected != nil, "\(json): Validation accepts it")
            #expect(refusalMessage { _ = try request(json) } == expected, "\(json)")
        }
    }

    @Test("decodes the issue's category with actions, text input, icon and options")
    func category() throws {
        let c = try NotificationCategory(
            json: JSONValue.parse(
                #"""
                {"identifier": "alarm.category", "actions": [{"identifier": "snooze", "title": "Snooze 5 Sec", "options": []},
                 {"identifier": "comment", "title": "Add Comment", "options": ["foreground", "destructive"], "textInputButtonTitle": "Add",
                  "textInputPlaceholder": "Add Comment Here", "icon": {"systemImageName": "bubble"}}],
                 "intentIdentifiers": [], "options": ["customDismissAction"], "hiddenPreviewsBodyPlaceholder": "", "categorySummaryFormat": "%u more"}
                """#))
        #expect(c.identifier == "alarm.category")
        #expect(c.options == .customDismissAction)
        #expect(c.categorySummaryFormat == "%u more")
        #expect(c.actions[0] == NotificationAction(identifier: "snooze", title: "Snooze 5 Sec"))
        #expect(
            c.actions[1]
                == NotificationAction(
                    identifier: "comment", title: "Add Comment", options: [.foreground, .destructive],
                    icon: .system("bubble"), textInput: .init(buttonTitle: "Add", placeholder: "Add Comment Here")))
        #expect(try NotificationCategory(json: JSONValue.parse(c.json.serialized())) == c)
    }

    static let invalidCategories: [(String, String?, [String])] = [
        (#"[{"identifier": "a"}, {"identifier": "a"}]"#, "[1].identifier", ["listed twice"]),
        (#"[{"identifier": ""}]"#, "[0].identifier", ["empty"]),
        (#"{"identifier": "a"}"#, nil, ["expected an array of categories"]),
        (
            #"[{"identifier": "a", "actions": [{"identifier": "x", "title": "X"}, {"identifier": "x", "title": "Y"}]}]"#,
            "[0].actions[1].identifier", ["listed twice in category \"a\""]
        ),
        (
            #"[{"identifier": "a", "actions": [{"identifier": "x", "title": "X", "options": ["foreground", "loud"]}]}]"#,
            "[0].actions[0].options[1]",
            ["\"loud\" is not an option", "authenticationRequired, destructive, foreground"]
        ),
        (
            #"[{"identifier": "a", "actions": [{"identifier": "x", "title": "X", "options": "foreground"}]}]"#,
            "[0].actions[0].options", ["expected an array of option names"]
        ),
        (
            #"[{"identifier": "a", "options": ["customDismiss"]}]"#, "[0].options[0]",
            ["did you mean \"customDismissAction\""]
        ),
        (#"[{"identifier": "a", "actions": [{"identifier": "x"}]}]"#, "[0].actions[0].title", ["missing"]),
        (
            #"[{"identifier": "a", "actions": [{"identifier": "com.apple.UNNotificationDefaultActionIdentifier", "title": "X"}]}]"#,
            "[0].actions[0].identifier", ["reserved"]
        ),
        (
            #"[{"identifier": "a", "actions": [{"identifier": "x", "title": "X", "icon": {"systemImageName": "a", "templateImageName": "b"}}]}]"#,
            "[0].actions[0].icon", ["exactly one"]
        ),
        (#"[{"identifier": "a", "intentIdentifiers": [1]}]"#, "[0].intentIdentifiers[0]", ["expected a string"]),
        (#"[{"identifier": "a", "action": []}]"#, "[0].action", ["did you mean \"actions\""]),
    ]

    @Test("rejects invalid categories naming the field", arguments: invalidCategories)
    func invalidCategory(text: String, field: String?, words: [String]) {
        do throws(ChimeError) {
            let c = try JSONMapping.categories(JSONValue.parse(text))
            Issue.record("accepted \(c)")
        } catch {
            #expect(error.field == field, "\(error.message)")
            for word in words { #expect(error.message.contains(word), "\(error.message) lacks \(word)") }
        }
    }

    @Test("parses and formats ISO 8601 dates")
    func dates() {
        #expect(JSONMapping.parseDate("2026-12-01T08:30:00Z") == Date(timeIntervalSince1970: 1_796_113_800))
        #expect(JSONMapping.parseDate("2026-12-01T09:30:00+01:00") == Date(timeIntervalSince1970: 1_796_113_800))
        #expect(JSONMapping.parseDate("2026-12-01T03:30:00-0500") == Date(timeIntervalSince1970: 1_796_113_800))
        #expect(JSONMapping.parseDate("2026-12-01T08:30:00.5Z") == Date(timeIntervalSince1970: 1_796_113_800.5))
        #expect(JSONMapping.parseDate("1969-12-31T23:59:59Z") == Date(timeIntervalSince1970: -1))
        for bad in [
            "2026-12-01T08:30:00", "2026-02-30T00:00:00Z", "2026-12-01 08:30Z", "2026-13-01T00:00:00Z", "x", "",
            "2026-12-01T08:30:00Zjunk",
        ] {
            #expect(JSONMapping.parseDate(bad) == nil, "\(bad)")
        }
        #expect(JSONMapping.formatDate(Date(timeIntervalSince1970: 1_796_113_800)) == "2026-12-01T08:30:00.000Z")
        #expect(JSONMapping.formatDate(Date(timeIntervalSince1970: -0.25)) == "1969-12-31T23:59:59.750Z")
        #expect(JSONMapping.formatDate(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00.000Z")
    }

    @Test("encodes delivered notifications, responses, settings and events with Apple's names")
    func outputs() throws {
        let request = NotificationRequest(identifier: "n1", content: NotificationContent(title: "Hi"), trigger: .push)
        let delivered = DeliveredNotification(request: request, date: Date(timeIntervalSince1970: 1_796_113_800))
        let category = NotificationCategory(
            identifier: "c", actions: [NotificationAction(identifier: "ok", title: "OK")])
        let d = delivered.json(category: category)
        #expect(d["identifier"] == "n1")
        #expect(d["date"] == "2026-12-01T08:30:00.000Z")
        #expect(d["title"] == "Hi")
        #expect(d["trigger"] == ["type": "push"])
        #expect(d["actions"] == [["identifier": "ok", "title": "OK", "options": []]])
        let response = NotificationResponse(
            id: 7, notification: delivered, actionIdentifier: "ok", userText: "typed",
            date: Date(timeIntervalSince1970: 1_796_113_801))
        #expect(response.json["id"] == 7)
        #expect(response.json["userText"] == "typed")
        #expect(response.json["notification"]?["identifier"] == "n1")
        var settings = NotificationSettings()
        settings.authorizationStatus = .authorized
        settings.alertSetting = .enabled
        settings.alertStyle = .banner
        #expect(settings.json["authorizationStatus"] == "authorized")
        #expect(settings.json["alertSetting"] == "enabled")
        #expect(settings.json["alertStyle"] == "banner")
        #expect(settings.json["showPreviewsSetting"] == "always")
        let event = EngineEvent(
            sequence: 3, app: "com.example", date: delivered.date,
            payload: .removed(identifiers: ["a"], scope: .pending))
        #expect(
            event.json == [
                "sequence": 3, "app": "com.example", "kind": "removed", "date": "2026-12-01T08:30:00.000Z",
                "identifiers": ["a"], "scope": "pending",
            ])
        let delivery = Delivery(
            notification: delivered, category: category, settings: settings, presentation: [.banner, .list], badge: 4)
        let deliveredEvent = EngineEvent(
            sequence: 4, app: "com.example", date: delivered.date, payload: .delivered(delivery))
        // Each field once: the actions are the category's, the presentation the event's.
        #expect(deliveredEvent.json["category"]?["actions"] == [["identifier": "ok", "title": "OK", "options": []]])
        #expect(deliveredEvent.json["notification"]?["actions"] == nil)
        #expect(deliveredEvent.json["notification"]?["presentation"] == nil)
        #expect(deliveredEvent.json["notification"] == delivered.json)
        #expect(deliveredEvent.json["presentation"] == ["list", "banner"])
        #expect(deliveredEvent.json["category"]?["identifier"] == "c")
        #expect(deliveredEvent.json["settings"]?["alertSetting"] == "enabled")
        #expect(deliveredEvent.json["badge"] == 4)
        // What a service-backed center reads back is what the engine announced.
        #expect(try EngineEvent(json: deliveredEvent.json) == deliveredEvent)
        #expect(try EngineEvent(json: event.json) == event)
        // A repeating request's delivery: its next date as the pending list names it.
        #expect(deliveredEvent.json["nextTriggerDate"] == nil)
        var repeating = deliveredEvent
        var moved = delivery
        moved.nextTriggerDate = delivered.date.addingTimeInterval(60)
        repeating.payload = .delivered(moved)
        #expect(repeating.json["nextTriggerDate"] == "2026-12-01T08:31:00.000Z")
        #expect(try EngineEvent(json: repeating.json) == repeating)
        var app = AppRecord(
            bundleIdentifier: "com.example", created: delivered.date, deviceToken: String(repeating: "a", count: 64))
        app.tokenHash = "secret-hash"
        #expect(!app.json.serialized().contains("secret-hash"))
    }

    @Test("authorization options decode by Apple's names")
    func authorizationOptions() throws {
        #expect(try UNAuthorizationOptions(json: ["alert", "sound", "badge"]) == [.alert, .sound, .badge])
        #expect(throws: ChimeError.self) { try UNAuthorizationOptions(json: ["alerts"]) }
    }

    @Test("never crashes on byte flips of a request (every outcome is a value or a ChimeError)")
    func robustness() {
        let bytes = Array(
            #"{"identifier": "a", "badge": 2, "sound": {"name": "x", "volume": 0.5}, "userInfo": {"d": {"$data": "AQ=="}, "t": {"$date": "2026-12-01T08:30:00Z"}}, "trigger": {"type": "calendar", "dateComponents": {"hour": 8, "timeZone": "UTC"}}}"#
                .utf8)
        var accepted = 0
        for i in 0..<bytes.count {
            for flip: UInt8 in [0x00, 0x22, 0x2C, 0x30, 0x39, 0x5D, 0x7D, 0x6E, 0xC3] {
                var mutated = bytes
                mutated[i] = flip
                if (try? NotificationRequest(json: JSONValue.parse(mutated))) != nil { accepted += 1 }
            }
        }
        #expect(accepted > 0)
        #expect((try? NotificationRequest(json: JSONValue.parse(bytes))) != nil)
    }

    @Test(
        "a quarantine entry in an event and a focus spell's stored record read back as written; an entry without its app is named"
    )
    func quarantineAndFocusSession() throws {
        let date = Date(timeIntervalSince1970: 1_811_000_000)
        let entry = QuarantinedRequest(
            id: 12, app: "com.example.alarm", identifier: "bad-place", reason: "the trigger cannot be read", date: date,
            request: NotificationRequest(identifier: "bad-place", content: NotificationContent(title: "Here")))
        let event = EngineEvent(sequence: 4, app: "com.example.alarm", date: date, payload: .quarantined(entry))
        #expect(try EngineEvent(json: event.json) == event)
        var bare = entry
        bare.request = nil
        #expect(try QuarantinedRequest.answer(bare.json, field: "quarantined") == bare)
        guard case .object(var members) = entry.json else {
            Issue.record("not an object: \(entry.json)")
            return
        }
        members[JSONFieldName.Quarantine.app] = nil
        #expect {
            try QuarantinedRequest.answer(.object(members), field: "quarantined")
        } throws: { ($0 as? ChimeError)?.field == "quarantined.app" }

        var session = FocusSession(until: date)
        session.count(app: "com.example.chat")
        session.count(app: "com.example.alarm")
        session.count(app: "com.example.chat")
        #expect(FocusSession(stored: session.serialized) == session)
        #expect(FocusSession(stored: session.serialized).dictionary == ["com.example.chat": 2, "com.example.alarm": 1])
    }
}
