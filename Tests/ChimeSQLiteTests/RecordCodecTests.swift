import ChimeCore
import Foundation
import StoreTestSupport
import TestThreads
import Testing

@Suite("RecordCodec", .testThreads)
struct RecordCodecTests {
    @Test("a request round-trips with every trigger kind", arguments: Samples.triggers.indices)
    func requestRoundTrip(triggerIndex: Int) throws {
        let request = Samples.request("r-\(triggerIndex)", trigger: Samples.triggers[triggerIndex])
        let bytes = RecordCodec.encode(request)
        #expect(bytes.first == 1, "without thumbnail options a record keeps format 1, which earlier Chimes read")
        #expect(try RecordCodec.decodeRequest(bytes) == request)
    }

    @Test("attachments' thumbnail options round-trip in format 2, in requests, deliveries and events")
    func thumbnailOptions() throws {
        var content = Samples.content()
        content.attachments[0].thumbnailHidden = true
        content.attachments[1].thumbnailClippingRect = .init(x: 0.25, y: 0, width: 0.5, height: 1)
        content.attachments[1].thumbnailTime = 2.5
        let request = NotificationRequest(
            identifier: "thumb", content: content, trigger: .timeInterval(5, repeats: false))
        let bytes = RecordCodec.encode(request)
        #expect(bytes.first == 2)
        #expect(try RecordCodec.decodeRequest(bytes) == request)
        let delivered = DeliveredNotification(request: request, date: Date(timeIntervalSince1970: 1_780_000_000))
        #expect(try RecordCodec.decodeDelivered(RecordCodec.encode(delivered)) == delivered)
        let event = EngineEvent(
            app: "a", date: delivered.date,
            payload: .delivered(
                Delivery(
                    notification: delivered, category: nil, settings: NotificationSettings(),
                    presentation: [.list])))
        #expect(try RecordCodec.decodeEvent(RecordCodec.encode(event)) == event)
    }

    @Test(
        "a delivered record built from its request's record is byte for byte the one encoded whole, in format 1 and 2",
        arguments: [false, true])
    func deliveredFromRequestRecord(thumbnails: Bool) throws {
        var content = Samples.content()
        if thumbnails { content.attachments[0].thumbnailHidden = true }
        for (index, trigger) in Samples.triggers.enumerated() {
            let request = NotificationRequest(identifier: "spliced-\(index)", content: content, trigger: trigger)
            let delivered = DeliveredNotification(
                request: request, date: Date(timeIntervalSince1970: 1_780_000_000.25), sequence: 1_234_567)
            let spliced = RecordCodec.encode(delivered, encodedRequest: RecordCodec.encode(request))
            #expect(spliced == RecordCodec.encode(delivered))
            #expect(try RecordCodec.decodeDelivered(spliced) == delivered)
        }
        // Not a request record: encoded whole instead.
        let delivered = DeliveredNotification(
            request: Samples.request("x", trigger: nil), date: Date(timeIntervalSince1970: 0))
        #expect(
            RecordCodec.encode(delivered, encodedRequest: RecordCodec.encode(delivered))
                == RecordCodec.encode(delivered))
    }

    @Test("date components keep every field, the time zone and the calendar")
    func dateComponents() throws {
        let request = NotificationRequest(
            identifier: "c", content: .init(), trigger: .calendar(Samples.components, repeats: true))
        let back = try RecordCodec.decodeRequest(RecordCodec.encode(request))
        guard case .calendar(let components, true)? = back.trigger else {
            Issue.record("not a repeating calendar trigger: \(String(describing: back.trigger))")
            return
        }
        #expect(components == Samples.components)
        #expect(components.timeZone?.identifier == "Europe/Paris")
        #expect(components.calendar?.identifier == .iso8601)
        #expect(components.calendar?.timeZone == Samples.components.calendar?.timeZone)
        #expect(components.nanosecond == 589_793)
    }

    @Test("a default (empty) request round-trips and is small")
    func minimal() throws {
        let request = NotificationRequest(identifier: "x", content: NotificationContent())
        let bytes = RecordCodec.encode(request)
        #expect(bytes.count < 40)
        #expect(try RecordCodec.decodeRequest(bytes) == request)
    }

    @Test("every property-list case round-trips, nested")
    func propertyLists() throws {
        for (key, value) in Samples.userInfo {
            #expect(try RecordCodec.decodePropertyList(RecordCodec.encode(value)) == value, "\(key)")
        }
        let nested = PropertyListValue.dictionary(
            Samples.userInfo.merging(["self": .dictionary(Samples.userInfo)]) { a, _ in a })
        #expect(try RecordCodec.decodePropertyList(RecordCodec.encode(nested)) == nested)
        // Equal dictionaries encode to equal bytes (keys are sorted).
        #expect(RecordCodec.encode(nested) == RecordCodec.encode(nested))
    }

    @Test("delivered notifications, responses, categories, apps and events round-trip")
    func otherRecords() throws {
        var delivered = Samples.delivered("d", at: 3.75)
        delivered.sequence = 42
        #expect(try RecordCodec.decodeDelivered(RecordCodec.encode(delivered)) == delivered)

        var response = Samples.response("r")
        response.id = 9
        #expect(try RecordCodec.decodeResponse(RecordCodec.encode(response)) == response)

        #expect(try RecordCodec.decodeCategories(RecordCodec.encode(Samples.categories)) == Samples.categories)
        #expect(try RecordCodec.decodeCategories(RecordCodec.encode([NotificationCategory]())) == [])

        let app = Samples.app("com.example.ü")
        #expect(try RecordCodec.decodeApp(RecordCodec.encode(app)) == app)
        var plain = AppRecord(bundleIdentifier: "p", created: Date(timeIntervalSinceReferenceDate: 0), deviceToken: "")
        #expect(try RecordCodec.decodeApp(RecordCodec.encode(plain)) == plain)
        plain.launchCommand = try LaunchCommand(arguments: ["/usr/bin/organizer", "--handle", "answer with spaces"])
        #expect(try RecordCodec.decodeApp(RecordCodec.encode(plain)) == plain)
        plain.launchCommand = try LaunchCommand(parsing: "organizer")
        #expect(try RecordCodec.decodeApp(RecordCodec.encode(plain)) == plain)

        for kind in EngineEvent.Kind.allCases {
            var event = Samples.event("com.example", kind: kind)
            event.sequence = 77
            #expect(try RecordCodec.decodeEvent(RecordCodec.encode(event)) == event)
        }
        let bare = EngineEvent(
            app: "a", date: Samples.base,
            payload: .delivered(
                Delivery(
                    notification: Samples.delivered("b", at: 0), category: nil,
                    settings: NotificationSettings(), presentation: [])))
        #expect(try RecordCodec.decodeEvent(RecordCodec.encode(bare)) == bare)
    }

    @Test("a delivered event's next date round-trips in format 11; without it the event keeps its format")
    func nextTriggerDate() throws {
        var event = Samples.event("com.example", kind: .delivered)
        event.sequence = 5
        let without = RecordCodec.encode(event)
        #expect(without[0] < RecordCodec.nextTriggerDateVersion)
        guard case .delivered(var delivery) = event.payload else {
            Issue.record("not a delivery: \(event.payload)")
            return
        }
        delivery.nextTriggerDate = Samples.base.addingTimeInterval(3600)
        event.payload = .delivered(delivery)
        let with = RecordCodec.encode(event)
        #expect(with[0] == RecordCodec.nextTriggerDateVersion)
        #expect(try RecordCodec.decodeEvent(with) == event)
        delivery.focus = FocusDecision(focus: "Work", quiet: true, reason: .focus)
        event.payload = .delivered(delivery)
        #expect(try RecordCodec.decodeEvent(RecordCodec.encode(event)) == event)
    }

    @Test("an app's APNs provider team and key round-trip in format 3; without them an app record stays format 1")
    func apnsProvider() throws {
        var app = Samples.app("com.example.provider")
        #expect(RecordCodec.encode(app).first == 1)
        app.apnsProvider = APNsProvider(teamID: "TEAM123456")
        #expect(RecordCodec.encode(app).first == 3)
        #expect(try RecordCodec.decodeApp(RecordCodec.encode(app)) == app)
        app.apnsProvider?.key = .init(id: "KEY1234567", publicKey: [4] + (1...64).map { UInt8($0) })
        app.launchCommand = try LaunchCommand(parsing: "organizer --answer")
        let bytes = RecordCodec.encode(app)
        #expect(try RecordCodec.decodeApp(bytes) == app)
        for length in 0..<bytes.count {
            #expect(throws: ChimeError.self, "length \(length)") {
                try RecordCodec.decodeApp(Array(bytes.prefix(length)))
            }
        }
    }

    @Test(
        "an app's unregistration round-trips in format 5, with and without a provider; registered, the record keeps its earlier format"
    )
    func unregistered() throws {
        var app = Samples.app("com.example.chat")
        app.deviceTokenUnregistered = Samples.base.addingTimeInterval(0.125)
        #expect(RecordCodec.encode(app).first == 5)
        #expect(try RecordCodec.decodeApp(RecordCodec.encode(app)) == app)
        app.apnsProvider = APNsProvider(
            teamID: "TEAM123456", key: .init(id: "KEY1234567", publicKey: [4] + (1...64).map { UInt8($0) }))
        let bytes = RecordCodec.encode(app)
        #expect(try RecordCodec.decodeApp(bytes) == app)
        for length in 0..<bytes.count {
            #expect(throws: ChimeError.self, "length \(length)") {
                try RecordCodec.decodeApp(Array(bytes.prefix(length)))
            }
        }
        app.deviceTokenUnregistered = nil
        #expect(RecordCodec.encode(app).first == 3)
        #expect(try RecordCodec.decodeApp(RecordCodec.encode(app)) == app)
    }

    @Test("an app's provider certificate round-trips in format 7, with and without the other optional parts")
    func certificate() throws {
        var app = Samples.app("com.example.certified")
        app.apnsCertificate = CertificateFingerprint(
            sha256: (1...32).map { UInt8($0) }, publicKeySHA256: (33...64).map { UInt8($0) },
            notBefore: Samples.base, notAfter: Samples.base.addingTimeInterval(86_400))
        #expect(RecordCodec.encode(app).first == 7)
        #expect(try RecordCodec.decodeApp(RecordCodec.encode(app)) == app)
        app.deviceTokenUnregistered = Samples.base.addingTimeInterval(5)
        app.apnsProvider = APNsProvider(teamID: "TEAM123456")
        let bytes = RecordCodec.encode(app)
        #expect(try RecordCodec.decodeApp(bytes) == app)
        for length in 0..<bytes.count {
            #expect(throws: ChimeError.self, "length \(length)") {
                try RecordCodec.decodeApp(Array(bytes.prefix(length)))
            }
        }
    }

    /// App records as earlier versions wrote them (from the fixtures' stores): kind `app` (store v1)
    /// and kind `appLaunch` (store v3), both format 1.
    @Test(
        "app records written before format 3 still decode, without a provider key",
        arguments: [
            "010513636F6D2E6578616D706C652E66697874757265030201020201020201020101020102870201054061626162616261626162616261626162616261626162616261626162616261626162616261626162616261626162616261626162616261626162616261626162010A7368613235363A616263000020808CFFC641",
            "010913636F6D2E6578616D706C652E66697874757265030201020201020201020101020102870201054061626162616261626162616261626162616261626162616261626162616261626162616261626162616261626162616261626162616261626162616261626162010A7368613235363A616263000020808CFFC64100",
        ])
    func oldAppRecords(hex: String) throws {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(try #require(UInt8(hex[index..<next], radix: 16)))
            index = next
        }
        let app = try RecordCodec.decodeApp(bytes)
        #expect(app == Samples.app("com.example.fixture"))
        #expect(app.apnsProvider == nil)
    }

    @Test("every truncation of a record throws notAStore instead of crashing")
    func truncated() throws {
        let bytes = RecordCodec.encode(Samples.request("t", trigger: .calendar(Samples.components, repeats: false)))
        for length in 0..<bytes.count {
            let error = #expect(throws: ChimeError.self) { try RecordCodec.decodeRequest(Array(bytes.prefix(length))) }
            #expect(error?.code == .notAStore, "length \(length)")
        }
        // Trailing bytes are refused too.
        #expect(throws: ChimeError.self) { try RecordCodec.decodeRequest(bytes + [0]) }
    }

    @Test("a record of another kind, another version, or garbage throws")
    func garbage() throws {
        let delivered = RecordCodec.encode(Samples.delivered("d", at: 1))
        #expect(throws: ChimeError.self) { try RecordCodec.decodeRequest(delivered) }
        var newer = RecordCodec.encode(Samples.request("v"))
        newer[0] = 99
        #expect(throws: ChimeError.self) { try RecordCodec.decodeRequest(newer) }

        var generator = SystemRandomNumberGenerator()
        let valid = RecordCodec.encode(Samples.response("g"))
        for _ in 0..<2_000 {
            // Random bytes after a valid header, and valid records with random bytes flipped.
            var random =
                [RecordCodec.formatVersion, 3]
                + (0..<Int.random(in: 0..<200, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
            _ = try? RecordCodec.decodeResponse(random)
            random = valid
            for _ in 0..<3 {
                random[Int.random(in: 2..<random.count, using: &generator)] = .random(in: 0...255, using: &generator)
            }
            _ = try? RecordCodec.decodeResponse(random)
        }
        // Huge lengths and over-long varints.
        #expect(throws: ChimeError.self) {
            try RecordCodec.decodeRequest([1, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F])
        }
        #expect(throws: ChimeError.self) { try RecordCodec.decodeRequest([1, 1] + Array(repeating: 0xFF, count: 20)) }
        // Deep nesting is refused, not a stack overflow.
        var deep: [UInt8] = [RecordCodec.formatVersion, 7]
        for _ in 0..<100_000 { deep += [8, 1] }
        #expect(throws: ChimeError.self) { try RecordCodec.decodePropertyList(deep) }
    }
}
