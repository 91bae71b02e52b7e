import Foundation

/// A compact, versioned binary encoding of Chime's records, used by the durable stores.
///
/// Every encoded record starts with two bytes: the format version (``formatVersion``) and a tag
/// saying what kind of record follows. Integers are LEB128 varints (signed ones zig-zagged),
/// strings and byte strings are length-prefixed, doubles and dates are their 8-byte IEEE bit
/// patterns (little-endian), so every value round-trips exactly. Decoding is bounds-checked and
/// throws ``ChimeError`` with code `notAStore` on truncated or garbage input; it never traps.
///
/// ```swift
/// let bytes = RecordCodec.encode(request)
/// let back = try RecordCodec.decodeRequest(bytes)
/// assert(back == request)
/// ```
public enum RecordCodec {
    /// The format written by this version. A later format adds a new number and keeps reading the
    /// old ones. Version 2 adds attachments' thumbnail options; version 3 adds an app's APNs
    /// provider team and key; version 4 adds recurrence-rule triggers; version 5 adds when an app
    /// unregistered its device token (its provider then optional); version 6 adds a request's
    /// expiration and the `expired` event; version 7 adds an app's APNs provider certificate (the
    /// unregistration then optional too); version 8 a request's auto-dismissal; version 9 a
    /// request's escalation and the `realerted` event; version 10 what a focus did to a delivery
    /// (``Delivery/focus``, in `delivered` and `realerted` events); version 11 a repeating request's
    /// next date in its `delivered` event (``Delivery/nextTriggerDate``). A record is written in the
    /// lowest version that holds what it has, so stores that use none of them stay readable by
    /// earlier Chimes.
    public static let formatVersion: UInt8 = 11
    /// The format that added thumbnail options.
    static let thumbnailVersion: UInt8 = 2
    /// The format that added app records' ``AppRecord/apnsProvider``.
    static let apnsProviderVersion: UInt8 = 3
    /// The format that added ``NotificationTrigger/recurrence(_:)``.
    static let recurrenceVersion: UInt8 = 4
    /// The format that added ``AppRecord/deviceTokenUnregistered``.
    static let unregisteredVersion: UInt8 = 5
    /// The format that added ``NotificationRequest/expiration`` (a request's record then ends with
    /// a mask of its optional parts; see `Writer.requestOptions`) and the `expired` event.
    static let expirationVersion: UInt8 = 6
    /// The format that added ``AppRecord/apnsCertificate``.
    static let certificateVersion: UInt8 = 7
    /// The format that added ``NotificationRequest/autoDismiss`` (bits 2 and 3 of a request's mask).
    static let autoDismissVersion: UInt8 = 8
    /// The format that added ``NotificationRequest/escalation`` (bit 4 of a request's mask) and the
    /// `realerted` event.
    static let escalationVersion: UInt8 = 9
    /// The format that added ``Delivery/focus`` (a flag after a delivery event's delivery, then the
    /// decision).
    static let focusVersion: UInt8 = 10
    /// The format that added ``Delivery/nextTriggerDate`` (a flag after a `delivered` event's focus
    /// decision, then the date).
    package static let nextTriggerDateVersion: UInt8 = 11
    /// The format of records without thumbnail options.
    static let baseVersion: UInt8 = 1

    enum Tag: UInt8 {
        case request = 1, delivered, response, categories, app, event, propertyList
        /// An event with its payload (what a delivery carries: category, settings, presentation).
        /// `event` records, written before payloads, are still read.
        case eventPayload
        /// An app record with its background-launch command; `app` records are still read.
        case appLaunch
    }

    // MARK: Encoding

    public static func encode(_ request: NotificationRequest) -> [UInt8] {
        var writer = Writer(tag: .request, capacity: 256)
        writer.request(request)
        return writer.bytes
    }

    public static func encode(_ notification: DeliveredNotification) -> [UInt8] {
        var writer = Writer(tag: .delivered, capacity: 300)
        writer.delivered(notification)
        return writer.bytes
    }

    /// The delivered record of `notification` built from its request's record (`encodedRequest`,
    /// as ``encode(_:)-request`` wrote it): the same bytes as ``encode(_:)-delivered``, with the
    /// request copied instead of encoded again.
    public static func encode(_ notification: DeliveredNotification, encodedRequest: [UInt8]) -> [UInt8] {
        guard encodedRequest.count > 2, encodedRequest[1] == Tag.request.rawValue else { return encode(notification) }
        var writer = Writer(tag: .delivered, capacity: encodedRequest.count + 16)
        writer.bytes[0] = encodedRequest[0]
        writer.bytes.append(contentsOf: encodedRequest[2...])
        writer.date(notification.date)
        writer.int(notification.sequence)
        return writer.bytes
    }

    public static func encode(_ response: NotificationResponse) -> [UInt8] {
        var writer = Writer(tag: .response, capacity: 340)
        writer.response(response)
        return writer.bytes
    }

    public static func encode(_ categories: [NotificationCategory]) -> [UInt8] {
        var writer = Writer(tag: .categories, capacity: 64 + 96 * categories.count)
        writer.varint(UInt64(categories.count))
        for category in categories { writer.category(category) }
        return writer.bytes
    }

    public static func encode(_ app: AppRecord) -> [UInt8] {
        var writer = Writer(tag: .appLaunch, capacity: 200)
        writer.app(app)
        return writer.bytes
    }

    public static func encode(_ event: EngineEvent) -> [UInt8] {
        var writer = Writer(tag: .eventPayload, capacity: 480)
        writer.event(event)
        return writer.bytes
    }

    public static func encode(_ value: PropertyListValue) -> [UInt8] {
        var writer = Writer(tag: .propertyList, capacity: 64)
        writer.plist(value)
        return writer.bytes
    }

    // MARK: Decoding

    public static func decodeRequest(_ bytes: [UInt8]) throws -> NotificationRequest {
        try bytes.withUnsafeBytes { try decodeRequest($0) }
    }
    public static func decodeRequest(_ buffer: UnsafeRawBufferPointer) throws -> NotificationRequest {
        try decode(buffer, .request) { try $0.request() }
    }

    public static func decodeDelivered(_ bytes: [UInt8]) throws -> DeliveredNotification {
        try bytes.withUnsafeBytes { try decodeDelivered($0) }
    }
    public static func decodeDelivered(_ buffer: UnsafeRawBufferPointer) throws -> DeliveredNotification {
        try decode(buffer, .delivered) { try $0.delivered() }
    }

    public static func decodeResponse(_ bytes: [UInt8]) throws -> NotificationResponse {
        try bytes.withUnsafeBytes { try decodeResponse($0) }
    }
    public static func decodeResponse(_ buffer: UnsafeRawBufferPointer) throws -> NotificationResponse {
        try decode(buffer, .response) { try $0.response() }
    }

    public static func decodeCategories(_ bytes: [UInt8]) throws -> [NotificationCategory] {
        try bytes.withUnsafeBytes { try decodeCategories($0) }
    }
    public static func decodeCategories(_ buffer: UnsafeRawBufferPointer) throws -> [NotificationCategory] {
        try decode(buffer, .categories) { reader in
            let count = try reader.count(minimumBytesEach: 6)
            var out: [NotificationCategory] = []
            out.reserveCapacity(count)
            for _ in 0..<count { out.append(try reader.category()) }
            return out
        }
    }

    public static func decodeApp(_ bytes: [UInt8]) throws -> AppRecord {
        try bytes.withUnsafeBytes { try decodeApp($0) }
    }
    public static func decodeApp(_ buffer: UnsafeRawBufferPointer) throws -> AppRecord {
        if buffer.count >= 2, buffer[1] == Tag.app.rawValue {
            return try decode(buffer, .app) { try $0.app() }
        }
        return try decode(buffer, .appLaunch) { reader in
            var record = try reader.app()
            record.launchCommand = try reader.flag() ? LaunchCommand(stored: try reader.strings()) : nil
            if reader.version >= certificateVersion {
                record.apnsProvider = try reader.flag() ? try reader.apnsProvider() : nil
                record.deviceTokenUnregistered = try reader.flag() ? try reader.date() : nil
                record.apnsCertificate = CertificateFingerprint(
                    sha256: [UInt8](try reader.data()), publicKeySHA256: [UInt8](try reader.data()),
                    notBefore: try reader.date(), notAfter: try reader.date())
            } else if reader.version >= unregisteredVersion {
                record.apnsProvider = try reader.flag() ? try reader.apnsProvider() : nil
                record.deviceTokenUnregistered = try reader.date()
            } else if reader.version >= apnsProviderVersion {
                record.apnsProvider = try reader.apnsProvider()
            }
            return record
        }
    }

    public static func decodeEvent(_ bytes: [UInt8]) throws -> EngineEvent {
        try bytes.withUnsafeBytes { try decodeEvent($0) }
    }
    public static func decodeEvent(_ buffer: UnsafeRawBufferPointer) throws -> EngineEvent {
        if buffer.count >= 2, buffer[1] == Tag.event.rawValue {
            return try decode(buffer, .event) { try $0.legacyEvent() }
        }
        return try decode(buffer, .eventPayload) { try $0.event() }
    }

    public static func decodePropertyList(_ bytes: [UInt8]) throws -> PropertyListValue {
        try bytes.withUnsafeBytes { try decodePropertyList($0) }
    }
    public static func decodePropertyList(_ buffer: UnsafeRawBufferPointer) throws -> PropertyListValue {
        try decode(buffer, .propertyList) { try $0.plist(depth: 0) }
    }

    private static func decode<T>(_ buffer: UnsafeRawBufferPointer, _ tag: Tag, _ body: (inout Reader) throws -> T)
        throws -> T
    {
        var reader = Reader(buffer)
        let version = try reader.byte()
        guard (baseVersion...formatVersion).contains(version) else {
            throw ChimeError(
                .notAStore,
                "a stored record has format version \(version), but this Chime reads versions \(baseVersion) to \(formatVersion); the store is corrupt or was written by a newer Chime"
            )
        }
        reader.version = version
        let found = try reader.byte()
        guard found == tag.rawValue else {
            throw ChimeError(
                .notAStore,
                "a stored record has kind \(found) where kind \(tag.rawValue) (\(tag)) was expected; the store is corrupt"
            )
        }
        let value = try body(&reader)
        guard reader.position == reader.buffer.count else {
            throw ChimeError(
                .notAStore,
                "a stored \(tag) record has \(reader.buffer.count - reader.position) unexpected trailing bytes; the store is corrupt"
            )
        }
        return value
    }

    /// Event kinds by stable number: append new kinds, never reorder.
    // Append-only. The last three are announced but never logged; they have indexes so every
    // event can be encoded.
    static let eventKinds: [EngineEvent.Kind] = [
        .delivered, .response, .removed, .silentPush, .settings, .scheduled, .categories, .app,
        .quarantined, .expired, .realerted, .focus,
    ]

    /// Calendar identifiers by stable number (the enum has no raw values of its own).
    static let calendarIdentifiers: [Calendar.Identifier] = [
        .gregorian, .buddhist, .chinese, .coptic, .ethiopicAmeteMihret, .ethiopicAmeteAlem, .hebrew, .iso8601,
        .indian, .islamic, .islamicCivil, .japanese, .persian, .republicOfChina, .islamicTabular, .islamicUmmAlQura,
    ]
}

// MARK: - Writer

extension RecordCodec {
    struct Writer {
        var bytes: [UInt8]

        init(tag: Tag, capacity: Int) {
            bytes = []
            bytes.reserveCapacity(capacity)
            bytes.append(RecordCodec.baseVersion)
            bytes.append(tag.rawValue)
        }

        @inline(__always) mutating func byte(_ value: UInt8) { bytes.append(value) }

        @inline(__always) mutating func varint(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(truncatingIfNeeded: value))
        }

        @inline(__always) mutating func int(_ value: Int64) {
            varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
        }

        @inline(__always) mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

        mutating func fixed64(_ value: UInt64) {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }

        mutating func double(_ value: Double) { fixed64(value.bitPattern) }
        mutating func date(_ value: Date) { double(value.timeIntervalSinceReferenceDate) }

        mutating func string(_ value: String) {
            var value = value
            value.withUTF8 { utf8 in
                varint(UInt64(utf8.count))
                bytes.append(contentsOf: utf8)
            }
        }

        mutating func optionalString(_ value: String?) {
            if let value {
                byte(1)
                string(value)
            } else {
                byte(0)
            }
        }

        mutating func strings(_ values: [String]) {
            varint(UInt64(values.count))
            for value in values { string(value) }
        }

        mutating func data(_ value: Data) {
            varint(UInt64(value.count))
            bytes.append(contentsOf: value)
        }

        mutating func plist(_ value: PropertyListValue) {
            switch value {
            case .string(let v):
                byte(1)
                string(v)
            case .integer(let v):
                byte(2)
                int(v)
            case .double(let v):
                byte(3)
                double(v)
            case .bool(let v): byte(v ? 5 : 4)
            case .data(let v):
                byte(6)
                data(v)
            case .date(let v):
                byte(7)
                date(v)
            case .array(let v):
                byte(8)
                varint(UInt64(v.count))
                for element in v { plist(element) }
            case .dictionary(let v):
                byte(9)
                dictionary(v)
            }
        }

        /// Keys are written sorted, so equal dictionaries encode to equal bytes.
        mutating func dictionary(_ value: [String: PropertyListValue]) {
            varint(UInt64(value.count))
            if value.count == 1, let (key, element) = value.first {
                string(key)
                plist(element)
                return
            }
            for key in value.keys.sorted() {
                string(key)
                plist(value[key]!)
            }
        }

        mutating func thumbnailOptions(_ attachment: NotificationAttachment) {
            bool(attachment.thumbnailHidden)
            if let rect = attachment.thumbnailClippingRect {
                byte(1)
                for value in [rect.x, rect.y, rect.width, rect.height] { double(value) }
            } else {
                byte(0)
            }
            if let time = attachment.thumbnailTime {
                byte(1)
                double(time)
            } else {
                byte(0)
            }
        }

        mutating func url(_ value: URL) {
            string(value.relativeString)
            if let base = value.baseURL {
                byte(1)
                url(base)
            } else {
                byte(0)
            }
        }

        mutating func content(_ c: NotificationContent) {
            string(c.title)
            string(c.subtitle)
            string(c.body)
            if let badge = c.badge {
                byte(1)
                int(Int64(badge))
            } else {
                byte(0)
            }
            if let sound = c.sound {
                byte(1)
                optionalString(sound.name)
                bool(sound.isCritical)
                if let volume = sound.volume {
                    byte(1)
                    withUnsafeBytes(of: volume.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
                } else {
                    byte(0)
                }
            } else {
                byte(0)
            }
            string(c.launchImageName)
            dictionary(c.userInfo)
            // A record holds one content at most, so the version can still change here.
            if c.attachments.contains(where: \.hasThumbnailOptions) {
                bytes[0] = max(bytes[0], RecordCodec.thumbnailVersion)
            }
            let withOptions = bytes[0] >= 2
            varint(UInt64(c.attachments.count))
            for attachment in c.attachments {
                string(attachment.identifier)
                url(attachment.url)
                string(attachment.type)
                if withOptions { thumbnailOptions(attachment) }
            }
            string(c.categoryIdentifier)
            string(c.threadIdentifier)
            optionalString(c.targetContentIdentifier)
            string(c.summaryArgument)
            int(Int64(c.summaryArgumentCount))
            varint(UInt64(c.interruptionLevel.rawValue))
            double(c.relevanceScore)
            optionalString(c.filterCriteria)
        }

        mutating func components(_ d: DateComponents) {
            let values: [Int?] = [
                d.era, d.year, d.month, d.day, d.hour, d.minute, d.second, d.nanosecond, d.weekday,
                d.weekdayOrdinal, d.quarter, d.weekOfMonth, d.weekOfYear, d.yearForWeekOfYear,
            ]
            var mask: UInt64 = 0
            for (index, value) in values.enumerated() where value != nil { mask |= 1 << UInt64(index) }
            if d.timeZone != nil { mask |= 1 << 14 }
            if d.calendar != nil { mask |= 1 << 15 }
            if d.isLeapMonth != nil { mask |= 1 << 16 }
            varint(mask)
            for value in values { if let value { int(Int64(value)) } }
            if let zone = d.timeZone { string(zone.identifier) }
            if let calendar = d.calendar {
                let index =
                    RecordCodec.calendarIdentifiers.firstIndex(of: calendar.identifier)
                    ?? RecordCodec.calendarIdentifiers.startIndex
                varint(UInt64(index))
                string(calendar.timeZone.identifier)
                varint(UInt64(max(calendar.firstWeekday, 0)))
                varint(UInt64(max(calendar.minimumDaysInFirstWeek, 0)))
            }
            if let leap = d.isLeapMonth { bool(leap) }
        }

        mutating func trigger(_ t: NotificationTrigger?) {
            switch t {
            case nil: byte(0)
            case .timeInterval(let interval, let repeats)?:
                byte(1)
                double(interval)
                bool(repeats)
            case .calendar(let components, let repeats)?:
                byte(2)
                self.components(components)
                bool(repeats)
            case .location(let region, let repeats)?:
                byte(3)
                string(region.identifier)
                double(region.center.latitude)
                double(region.center.longitude)
                double(region.radius)
                bool(region.notifyOnEntry)
                bool(region.notifyOnExit)
                bool(repeats)
            case .push?: byte(4)
            case .recurrence(let schedule)?:
                byte(5)
                string(schedule.rule.rruleString)
                for field in [
                    schedule.start.year, schedule.start.month, schedule.start.day, schedule.start.hour,
                    schedule.start.minute, schedule.start.second,
                ] {
                    int(Int64(field ?? 0))
                }
                string(schedule.timeZone.identifier)
                varint(UInt64(schedule.exceptionDates.count))
                for date in schedule.exceptionDates { int(Int64(date.timeIntervalSince1970)) }
                if let end = schedule.countEnd {
                    byte(1)
                    int(Int64(end))
                } else {
                    byte(0)
                }
            }
        }

        mutating func request(_ r: NotificationRequest) {
            #if DEBUG
                RecordCodec.counted(\.requests)
            #endif
            // The version is the record's: raised before the content, whose reading depends on it.
            if case .recurrence? = r.trigger { bytes[0] = max(bytes[0], RecordCodec.recurrenceVersion) }
            if r.expiration != nil { bytes[0] = max(bytes[0], RecordCodec.expirationVersion) }
            if r.autoDismiss != nil { bytes[0] = max(bytes[0], RecordCodec.autoDismissVersion) }
            if r.escalation != nil { bytes[0] = max(bytes[0], RecordCodec.escalationVersion) }
            string(r.identifier)
            content(r.content)
            trigger(r.trigger)
            if bytes[0] >= RecordCodec.expirationVersion { requestOptions(r) }
        }

        /// From format 6, a request ends with a mask of its optional parts, then each part given:
        /// bit 0 an expiration date, bit 1 an expiration as seconds after the add (the engine
        /// stores dates; a request encoded before it is added may hold seconds); from format 8,
        /// bit 2 an auto-dismissal date, bit 3 an auto-dismissal as seconds after each delivery;
        /// from format 9, bit 4 an escalation (its interval and duration, two doubles).
        mutating func requestOptions(_ r: NotificationRequest) {
            var mask: UInt64 = 0
            if let expiration = r.expiration { mask |= expiration.date == nil ? 2 : 1 }
            if let autoDismiss = r.autoDismiss { mask |= autoDismiss.date == nil ? 8 : 4 }
            if r.escalation != nil { mask |= 16 }
            varint(mask)
            if let expiration = r.expiration { deadline(expiration) }
            if let autoDismiss = r.autoDismiss { deadline(autoDismiss) }
            if let escalation = r.escalation {
                double(escalation.interval)
                double(escalation.duration)
            }
        }

        mutating func deadline(_ deadline: NotificationDeadline) {
            switch deadline {
            case .at(let date): self.date(date)
            case .after(let seconds): double(seconds)
            }
        }

        mutating func delivered(_ d: DeliveredNotification) {
            request(d.request)
            date(d.date)
            int(d.sequence)
        }

        mutating func response(_ r: NotificationResponse) {
            int(r.id)
            delivered(r.notification)
            string(r.actionIdentifier)
            optionalString(r.userText)
            date(r.date)
        }

        mutating func action(_ a: NotificationAction) {
            string(a.identifier)
            string(a.title)
            varint(UInt64(a.options.rawValue))
            switch a.icon {
            case nil: byte(0)
            case .template(let name)?:
                byte(1)
                string(name)
            case .system(let name)?:
                byte(2)
                string(name)
            }
            if let input = a.textInput {
                byte(1)
                string(input.buttonTitle)
                string(input.placeholder)
            } else {
                byte(0)
            }
        }

        mutating func category(_ c: NotificationCategory) {
            string(c.identifier)
            varint(UInt64(c.actions.count))
            for action in c.actions { self.action(action) }
            strings(c.intentIdentifiers)
            varint(UInt64(c.options.rawValue))
            string(c.hiddenPreviewsBodyPlaceholder)
            string(c.categorySummaryFormat)
        }

        mutating func app(_ a: AppRecord) {
            string(a.bundleIdentifier)
            settings(a.settings)
            varint(UInt64(a.requestedOptions.rawValue))
            bool(a.promptPending)
            int(Int64(a.badge))
            string(a.deviceToken)
            optionalString(a.tokenHash)
            date(a.created)
            if let launch = a.launchCommand {
                byte(1)
                strings(launch.arguments)
            } else {
                byte(0)
            }
            if let certificate = a.apnsCertificate {
                // Format 7: provider and unregistration each behind a flag, then the certificate.
                bytes[0] = RecordCodec.certificateVersion
                if let provider = a.apnsProvider {
                    byte(1)
                    apnsProvider(provider)
                } else {
                    byte(0)
                }
                if let unregistered = a.deviceTokenUnregistered {
                    byte(1)
                    date(unregistered)
                } else {
                    byte(0)
                }
                data(Data(certificate.sha256))
                data(Data(certificate.publicKeySHA256))
                date(certificate.notBefore)
                date(certificate.notAfter)
            } else if let unregistered = a.deviceTokenUnregistered {
                // Format 5: the provider behind a flag, then the date.
                bytes[0] = RecordCodec.unregisteredVersion
                if let provider = a.apnsProvider {
                    byte(1)
                    apnsProvider(provider)
                } else {
                    byte(0)
                }
                date(unregistered)
            } else if let provider = a.apnsProvider {
                bytes[0] = RecordCodec.apnsProviderVersion
                apnsProvider(provider)
            }
        }

        mutating func apnsProvider(_ provider: APNsProvider) {
            string(provider.teamID)
            if let key = provider.key {
                byte(1)
                string(key.id)
                data(Data(key.publicKey))
            } else {
                byte(0)
            }
        }

        mutating func settings(_ s: NotificationSettings) {
            varint(UInt64(s.authorizationStatus.rawValue))
            for setting in [
                s.soundSetting, s.badgeSetting, s.alertSetting, s.notificationCenterSetting,
                s.lockScreenSetting, s.carPlaySetting,
            ] {
                varint(UInt64(setting.rawValue))
            }
            varint(UInt64(s.alertStyle.rawValue))
            varint(UInt64(s.showPreviewsSetting.rawValue))
            varint(UInt64(s.criticalAlertSetting.rawValue))
            bool(s.providesAppNotificationSettings)
            for setting in [
                s.announcementSetting, s.timeSensitiveSetting, s.scheduledDeliverySetting,
                s.directMessagesSetting,
            ] {
                varint(UInt64(setting.rawValue))
            }
        }

        mutating func delivery(_ d: Delivery) {
            delivered(d.notification)
            if let category = d.category {
                byte(1)
                self.category(category)
            } else {
                byte(0)
            }
            settings(d.settings)
            varint(UInt64(d.presentation.rawValue))
            if let badge = d.badge {
                byte(1)
                int(Int64(badge))
            } else {
                byte(0)
            }
        }

        /// A delivery's focus decision, in records of the focus version and later (a flag, then the
        /// name, whether it was held and the reason's index).
        mutating func focus(_ decision: FocusDecision?) {
            guard bytes[0] >= RecordCodec.focusVersion else { return }
            guard let decision else { return byte(0) }
            byte(1)
            string(decision.focus)
            byte(decision.quiet ? 1 : 0)
            varint(UInt64(FocusDecision.Reason.allCases.firstIndex(of: decision.reason) ?? 0))
        }

        mutating func event(_ e: EngineEvent) {
            #if DEBUG
                RecordCodec.counted(\.events)
            #endif
            int(e.sequence)
            string(e.app)
            varint(UInt64(RecordCodec.eventKinds.firstIndex(of: e.kind) ?? 0))
            date(e.date)
            switch e.payload {
            case .delivered(let d):
                // Raised before the notification, whose reading depends on the version.
                if d.focus != nil { bytes[0] = max(bytes[0], RecordCodec.focusVersion) }
                if d.nextTriggerDate != nil { bytes[0] = max(bytes[0], RecordCodec.nextTriggerDateVersion) }
                delivery(d)
                focus(d.focus)
                if bytes[0] >= RecordCodec.nextTriggerDateVersion {
                    if let next = d.nextTriggerDate {
                        byte(1)
                        date(next)
                    } else {
                        byte(0)
                    }
                }
            case .realerted(let d):
                bytes[0] = max(bytes[0], d.focus != nil ? RecordCodec.focusVersion : RecordCodec.escalationVersion)
                delivery(d)
                varint(UInt64(max(d.alert, 1)))
                focus(d.focus)
            case .response(let r): response(r)
            case .removed(let identifiers, let scope, let reason):
                strings(identifiers)
                // 2: delivered, auto-dismissed (a reader before it takes any non-zero as delivered).
                byte(scope == .pending ? 0 : reason == .autoDismiss ? 2 : 1)
            case .silentPush(let n): delivered(n)
            case .settings(let s): settings(s)
            // The identifiers only: scheduled events are announced, never logged.
            case .scheduled(let identifiers, _): strings(identifiers)
            case .categories(let categories):
                varint(UInt64(categories.count))
                for c in categories { category(c) }
            // The change only: app events are announced, never logged.
            case .app(let change, _): byte(change == .updated ? 0 : 1)
            case .quarantined(let entry):
                int(entry.id)
                string(entry.identifier)
                string(entry.reason)
            case .expired(let expired):
                // Raised before the request, whose reading depends on the version.
                bytes[0] = max(bytes[0], RecordCodec.expirationVersion)
                request(expired.request)
                date(expired.dueDate)
            case .focus(let modes):
                // Announced only, never logged; written as the modes' JSON should one be stored.
                string(JSONValue.array(modes.map(\.json)).serialized())
            }
        }
    }
}

// MARK: - Reader

extension RecordCodec {
    struct Reader {
        let buffer: UnsafeRawBufferPointer
        var position = 0
        /// The record's format version.
        var version = RecordCodec.baseVersion

        init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

        static let maxDepth = 64

        func corrupt(_ what: String) -> ChimeError {
            ChimeError(
                .notAStore,
                "a stored record is corrupt (\(what) at byte \(position) of \(buffer.count)); the store file is damaged — restore it from a backup or move it away to start afresh"
            )
        }

        @inline(__always) mutating func byte() throws -> UInt8 {
            guard position < buffer.count else { throw corrupt("truncated") }
            defer { position += 1 }
            return buffer[position]
        }

        @inline(__always) mutating func varint() throws -> UInt64 {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let b = try byte()
                if shift == 63 && b > 1 { throw corrupt("varint overflow") }
                result |= UInt64(b & 0x7F) << shift
                if b < 0x80 { return result }
                shift += 7
                if shift > 63 { throw corrupt("varint too long") }
            }
        }

        mutating func int64() throws -> Int64 {
            let raw = try varint()
            return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
        }

        mutating func int() throws -> Int {
            let value = try int64()
            guard let result = Int(exactly: value) else { throw corrupt("integer out of range") }
            return result
        }

        mutating func bool() throws -> Bool {
            switch try byte() {
            case 0: return false
            case 1: return true
            default: throw corrupt("bad boolean")
            }
        }

        /// A presence flag for an optional value.
        mutating func flag() throws -> Bool { try bool() }

        /// A length or count, checked against the bytes left.
        mutating func count(minimumBytesEach: Int) throws -> Int {
            let raw = try varint()
            let left = buffer.count - position
            guard raw <= UInt64(left / max(minimumBytesEach, 1)) else { throw corrupt("length \(raw) beyond the end") }
            return Int(raw)
        }

        mutating func fixed64() throws -> UInt64 {
            guard buffer.count - position >= 8 else { throw corrupt("truncated") }
            var value: UInt64 = 0
            withUnsafeMutableBytes(of: &value) {
                $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[position..<position + 8]))
            }
            position += 8
            return UInt64(littleEndian: value)
        }

        mutating func double() throws -> Double { Double(bitPattern: try fixed64()) }
        mutating func date() throws -> Date { Date(timeIntervalSinceReferenceDate: try double()) }

        mutating func rawBytes() throws -> UnsafeRawBufferPointer {
            let length = try count(minimumBytesEach: 1)
            defer { position += length }
            return UnsafeRawBufferPointer(rebasing: buffer[position..<position + length])
        }

        mutating func string() throws -> String {
            String(decoding: try rawBytes(), as: UTF8.self)
        }

        mutating func optionalString() throws -> String? {
            try flag() ? try string() : nil
        }

        mutating func strings() throws -> [String] {
            let count = try count(minimumBytesEach: 1)
            var out: [String] = []
            out.reserveCapacity(count)
            for _ in 0..<count { out.append(try string()) }
            return out
        }

        mutating func data() throws -> Data { Data(try rawBytes()) }

        mutating func plist(depth: Int) throws -> PropertyListValue {
            guard depth < Self.maxDepth else { throw corrupt("nesting deeper than \(Self.maxDepth)") }
            switch try byte() {
            case 1: return .string(try string())
            case 2: return .integer(try int64())
            case 3: return .double(try double())
            case 4: return .bool(false)
            case 5: return .bool(true)
            case 6: return .data(try data())
            case 7: return .date(try date())
            case 8:
                let count = try count(minimumBytesEach: 1)
                var out: [PropertyListValue] = []
                out.reserveCapacity(count)
                for _ in 0..<count { out.append(try plist(depth: depth + 1)) }
                return .array(out)
            case 9: return .dictionary(try dictionary(depth: depth + 1))
            case let other: throw corrupt("unknown value type \(other)")
            }
        }

        mutating func dictionary(depth: Int) throws -> [String: PropertyListValue] {
            let count = try count(minimumBytesEach: 2)
            var out: [String: PropertyListValue] = [:]
            out.reserveCapacity(count)
            for _ in 0..<count {
                let key = try string()
                out[key] = try plist(depth: depth)
            }
            return out
        }

        mutating func url() throws -> URL {
            let string = try string()
            let base: URL? = try flag() ? try url() : nil
            guard let url = URL(string: string, relativeTo: base) else { throw corrupt("invalid URL") }
            return url
        }

        mutating func content() throws -> NotificationContent {
            var c = NotificationContent(title: try string(), subtitle: try string(), body: try string())
            if try flag() { c.badge = try int() }
            if try flag() {
                let name = try optionalString()
                let critical = try bool()
                var volume: Float?
                if try flag() {
                    let lo = try UInt32(byte()) | UInt32(byte()) << 8
                    let hi = try UInt32(byte()) << 16 | UInt32(byte()) << 24
                    volume = Float(bitPattern: lo | hi)
                }
                c.sound = NotificationSound(name: name, isCritical: critical, volume: volume)
            }
            c.launchImageName = try string()
            c.userInfo = try dictionary(depth: 0)
            let attachments = try count(minimumBytesEach: 4)
            for _ in 0..<attachments {
                let identifier = try string()
                let url = try url()
                var attachment = NotificationAttachment(identifier: identifier, url: url, type: try string())
                if version >= 2 {
                    attachment.thumbnailHidden = try bool()
                    if try flag() {
                        attachment.thumbnailClippingRect = .init(
                            x: try double(), y: try double(), width: try double(), height: try double())
                    }
                    if try flag() { attachment.thumbnailTime = try double() }
                }
                c.attachments.append(attachment)
            }
            c.categoryIdentifier = try string()
            c.threadIdentifier = try string()
            c.targetContentIdentifier = try optionalString()
            c.summaryArgument = try string()
            c.summaryArgumentCount = try int()
            let level = try varint()
            guard let interruption = UNNotificationInterruptionLevel(rawValue: UInt(truncatingIfNeeded: level)),
                level < 16
            else {
                throw corrupt("unknown interruption level \(level)")
            }
            c.interruptionLevel = interruption
            c.relevanceScore = try double()
            c.filterCriteria = try optionalString()
            return c
        }

        mutating func components() throws -> DateComponents {
            let mask = try varint()
            guard mask < 1 << 17 else { throw corrupt("unknown date components") }
            var values: [Int?] = Array(repeating: nil, count: 14)
            for index in 0..<14 where mask & (1 << UInt64(index)) != 0 { values[index] = try int() }
            var d = DateComponents()
            d.era = values[0]
            d.year = values[1]
            d.month = values[2]
            d.day = values[3]
            d.hour = values[4]
            d.minute = values[5]
            d.second = values[6]
            d.nanosecond = values[7]
            d.weekday = values[8]
            d.weekdayOrdinal = values[9]
            d.quarter = values[10]
            d.weekOfMonth = values[11]
            d.weekOfYear = values[12]
            d.yearForWeekOfYear = values[13]
            if mask & (1 << 14) != 0 { d.timeZone = try timeZone() }
            if mask & (1 << 15) != 0 {
                let index = try varint()
                guard index < UInt64(RecordCodec.calendarIdentifiers.count) else { throw corrupt("unknown calendar") }
                var calendar = Calendar(identifier: RecordCodec.calendarIdentifiers[Int(index)])
                calendar.timeZone = try timeZone()
                let firstWeekday = try varint()
                let minimumDays = try varint()
                guard (1...7).contains(firstWeekday), (1...7).contains(minimumDays) else {
                    throw corrupt("bad calendar week settings")
                }
                calendar.firstWeekday = Int(firstWeekday)
                calendar.minimumDaysInFirstWeek = Int(minimumDays)
                d.calendar = calendar
            }
            if mask & (1 << 16) != 0 { d.isLeapMonth = try bool() }
            return d
        }

        mutating func timeZone() throws -> TimeZone {
            let identifier = try string()
            guard let zone = TimeZone(identifier: identifier) else {
                throw ChimeError(
                    .storeFailure,
                    "a stored calendar trigger uses the time zone \"\(identifier)\", which this system does not know; install the time zone database (tzdata)"
                )
            }
            return zone
        }

        mutating func trigger() throws -> NotificationTrigger? {
            switch try byte() {
            case 0: return nil
            case 1: return .timeInterval(try double(), repeats: try bool())
            case 2: return .calendar(try components(), repeats: try bool())
            case 3:
                let identifier = try string()
                let center = Coordinate(latitude: try double(), longitude: try double())
                let region = CircularRegion(
                    identifier: identifier, center: center, radius: try double(),
                    notifyOnEntry: try bool(), notifyOnExit: try bool())
                return .location(region, repeats: try bool())
            case 4: return .push
            case 5 where version >= RecordCodec.recurrenceVersion: return .recurrence(try recurrence())
            case let other: throw corrupt("unknown trigger kind \(other)")
            }
        }

        mutating func recurrence() throws -> RecurrenceSchedule {
            let text = try string()
            var fields: [Int] = []
            for _ in 0..<6 { fields.append(Int(try int64())) }
            let zone = try timeZone()
            let count = try self.count(minimumBytesEach: 1)
            var exceptions: [Date] = []
            exceptions.reserveCapacity(count)
            for _ in 0..<count { exceptions.append(Date(timeIntervalSince1970: TimeInterval(try int64()))) }
            let countEnd: Int? = try flag() ? Int(try int64()) : nil
            do {
                return try RecurrenceSchedule(
                    rule: RecurrenceRule(parsing: text),
                    start: DateComponents(
                        year: fields[0], month: fields[1], day: fields[2], hour: fields[3],
                        minute: fields[4], second: fields[5]),
                    timeZone: zone, exceptionDates: exceptions, knownCountEnd: countEnd)
            } catch {
                throw corrupt("a stored recurrence rule does not read back (\(ChimeError.message(of: error)))")
            }
        }

        mutating func request() throws -> NotificationRequest {
            var request = NotificationRequest(identifier: try string(), content: try content(), trigger: try trigger())
            if version >= RecordCodec.expirationVersion {
                let mask = try varint()
                let known =
                    version >= RecordCodec.escalationVersion ? 5 : version >= RecordCodec.autoDismissVersion ? 4 : 2
                guard mask < 1 << known else { throw corrupt("unknown request options \(mask)") }
                guard mask & 3 != 3 else { throw corrupt("two expirations") }
                guard mask & 12 != 12 else { throw corrupt("two auto-dismissals") }
                if mask & 1 != 0 { request.expiration = .at(try date()) }
                if mask & 2 != 0 { request.expiration = .after(try double()) }
                if mask & 4 != 0 { request.autoDismiss = .at(try date()) }
                if mask & 8 != 0 { request.autoDismiss = .after(try double()) }
                if mask & 16 != 0 {
                    request.escalation = NotificationEscalation(every: try double(), for: try double())
                }
            }
            return request
        }

        mutating func delivered() throws -> DeliveredNotification {
            DeliveredNotification(request: try request(), date: try date(), sequence: try int64())
        }

        mutating func response() throws -> NotificationResponse {
            NotificationResponse(
                id: try int64(), notification: try delivered(), actionIdentifier: try string(),
                userText: try optionalString(), date: try date())
        }

        mutating func action() throws -> NotificationAction {
            let identifier = try string()
            let title = try string()
            let options = UNNotificationActionOptions(rawValue: UInt(truncatingIfNeeded: try varint()))
            var icon: NotificationAction.Icon?
            switch try byte() {
            case 0: icon = nil
            case 1: icon = .template(try string())
            case 2: icon = .system(try string())
            case let other: throw corrupt("unknown icon kind \(other)")
            }
            var input: NotificationAction.TextInput?
            if try flag() { input = .init(buttonTitle: try string(), placeholder: try string()) }
            return NotificationAction(
                identifier: identifier, title: title, options: options, icon: icon, textInput: input)
        }

        mutating func category() throws -> NotificationCategory {
            let identifier = try string()
            let count = try count(minimumBytesEach: 6)
            var actions: [NotificationAction] = []
            actions.reserveCapacity(count)
            for _ in 0..<count { actions.append(try action()) }
            return NotificationCategory(
                identifier: identifier, actions: actions, intentIdentifiers: try strings(),
                options: UNNotificationCategoryOptions(rawValue: UInt(truncatingIfNeeded: try varint())),
                hiddenPreviewsBodyPlaceholder: try string(), categorySummaryFormat: try string())
        }

        mutating func enumValue<E: RawRepresentable>(_: E.Type) throws -> E where E.RawValue == Int {
            let raw = try varint()
            guard raw < 1024, let value = E(rawValue: Int(raw)) else { throw corrupt("unknown \(E.self) \(raw)") }
            return value
        }

        mutating func app() throws -> AppRecord {
            let identifier = try string()
            let s = try settings()
            let options = UNAuthorizationOptions(rawValue: UInt(truncatingIfNeeded: try varint()))
            let prompt = try bool()
            let badge = try int()
            let token = try string()
            let tokenHash = try optionalString()
            var record = AppRecord(bundleIdentifier: identifier, created: try date(), deviceToken: token)
            record.settings = s
            record.requestedOptions = options
            record.promptPending = prompt
            record.badge = badge
            record.tokenHash = tokenHash
            return record
        }

        mutating func apnsProvider() throws -> APNsProvider {
            var provider = APNsProvider(teamID: try string())
            if try flag() { provider.key = .init(id: try string(), publicKey: [UInt8](try data())) }
            return provider
        }

        mutating func settings() throws -> NotificationSettings {
            var s = NotificationSettings()
            s.authorizationStatus = try enumValue(UNAuthorizationStatus.self)
            s.soundSetting = try enumValue(UNNotificationSetting.self)
            s.badgeSetting = try enumValue(UNNotificationSetting.self)
            s.alertSetting = try enumValue(UNNotificationSetting.self)
            s.notificationCenterSetting = try enumValue(UNNotificationSetting.self)
            s.lockScreenSetting = try enumValue(UNNotificationSetting.self)
            s.carPlaySetting = try enumValue(UNNotificationSetting.self)
            s.alertStyle = try enumValue(UNAlertStyle.self)
            s.showPreviewsSetting = try enumValue(UNShowPreviewsSetting.self)
            s.criticalAlertSetting = try enumValue(UNNotificationSetting.self)
            s.providesAppNotificationSettings = try bool()
            s.announcementSetting = try enumValue(UNNotificationSetting.self)
            s.timeSensitiveSetting = try enumValue(UNNotificationSetting.self)
            s.scheduledDeliverySetting = try enumValue(UNNotificationSetting.self)
            s.directMessagesSetting = try enumValue(UNNotificationSetting.self)
            return s
        }

        mutating func eventHead() throws -> (sequence: Int64, app: String, kind: EngineEvent.Kind, date: Date) {
            let sequence = try int64()
            let app = try string()
            let kindIndex = try varint()
            guard kindIndex < UInt64(RecordCodec.eventKinds.count) else {
                throw corrupt("unknown event kind \(kindIndex)")
            }
            return (sequence, app, RecordCodec.eventKinds[Int(kindIndex)], try date())
        }

        mutating func delivery() throws -> Delivery {
            let notification = try delivered()
            let category: NotificationCategory? = try flag() ? try self.category() : nil
            let settings = try settings()
            let presentation = UNNotificationPresentationOptions(rawValue: UInt(truncatingIfNeeded: try varint()))
            let badge: Int? = try flag() ? try int() : nil
            return Delivery(
                notification: notification, category: category, settings: settings, presentation: presentation,
                badge: badge)
        }

        mutating func focus() throws -> FocusDecision? {
            guard version >= RecordCodec.focusVersion, try flag() else { return nil }
            let name = try string()
            let quiet = try flag()
            let reason = try varint()
            guard reason < UInt64(FocusDecision.Reason.allCases.count) else {
                throw corrupt("unknown focus reason \(reason)")
            }
            return FocusDecision(focus: name, quiet: quiet, reason: FocusDecision.Reason.allCases[Int(reason)])
        }

        mutating func event() throws -> EngineEvent {
            let head = try eventHead()
            let payload: EngineEvent.Payload
            switch head.kind {
            case .delivered:
                var delivery = try delivery()
                delivery.focus = try focus()
                if version >= RecordCodec.nextTriggerDateVersion, try flag() { delivery.nextTriggerDate = try date() }
                payload = .delivered(delivery)
            case .realerted:
                var delivery = try delivery()
                let alert = try varint()
                guard (2...UInt64(Int32.max)).contains(alert) else {
                    throw corrupt("a realerted event's alert is \(alert)")
                }
                delivery.alert = Int(alert)
                delivery.focus = try focus()
                payload = .realerted(delivery)
            case .response: payload = .response(try response())
            case .removed:
                let identifiers = try strings()
                let scope = try byte()
                payload = .removed(
                    identifiers: identifiers, scope: scope == 0 ? .pending : .delivered,
                    reason: scope == 2 ? .autoDismiss : .request)
            case .silentPush: payload = .silentPush(try delivered())
            case .settings: payload = .settings(try settings())
            case .scheduled: payload = .scheduled(identifiers: try strings())
            case .categories:
                let count = try self.count(minimumBytesEach: 6)
                var categories: [NotificationCategory] = []
                for _ in 0..<count { categories.append(try category()) }
                payload = .categories(categories)
            case .app: payload = .app(try byte() == 0 ? .updated : .removed)
            case .quarantined:
                // The request itself stays in the quarantine; the event says which and why.
                payload = .quarantined(
                    QuarantinedRequest(
                        id: try int64(), app: head.app, identifier: try string(),
                        reason: try string(), date: head.date, request: nil))
            case .expired:
                payload = .expired(ExpiredRequest(request: try request(), dueDate: try date()))
            case .focus:
                guard case .array(let items)? = try? JSONValue.parse(try string()),
                    let modes = try? items.map({ item throws(ChimeError) in try FocusStatus(json: item) })
                else { throw corrupt("a focus event's modes") }
                payload = .focus(modes)
            }
            return EngineEvent(sequence: head.sequence, app: head.app, date: head.date, payload: payload)
        }

        /// An event logged before events carried payloads (tag `event`): a delivery then had no
        /// category, settings or presentation; it is read with no category, the settings unknown
        /// and a presentation for the list only.
        mutating func legacyEvent() throws -> EngineEvent {
            let head = try eventHead()
            let notification: DeliveredNotification? = try flag() ? try delivered() : nil
            let response: NotificationResponse? = try flag() ? try self.response() : nil
            let identifiers = try strings()
            let scope = try optionalString()
            let payload: EngineEvent.Payload
            switch (head.kind, notification, response) {
            case (.delivered, let notification?, _):
                payload = .delivered(
                    Delivery(
                        notification: notification, category: nil, settings: NotificationSettings(),
                        presentation: [.list]))
            case (.silentPush, let notification?, _): payload = .silentPush(notification)
            case (.response, _, let response?): payload = .response(response)
            case (.removed, _, _):
                payload = .removed(identifiers: identifiers, scope: scope == "pending" ? .pending : .delivered)
            case (.settings, _, _): payload = .settings(NotificationSettings())
            default: throw corrupt("a \(head.kind) event without its payload")
            }
            return EngineEvent(sequence: head.sequence, app: head.app, date: head.date, payload: payload)
        }
    }
}
