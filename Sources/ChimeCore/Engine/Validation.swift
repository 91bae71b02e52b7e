import Foundation

/// The rules every entry point (Swift API, JSON, HTTP, CLI) applies before the engine accepts a
/// request or a category. Errors name the field and say what is accepted.
public enum Validation {
    /// The longest identifier accepted, in UTF-8 bytes.
    public static let maxIdentifierBytes = 1024
    /// The largest content accepted, in bytes of text and user info.
    public static let maxContentBytes = 256 * 1024

    /// Checks a request to add (not a push); an escalation within `escalationLimits`.
    public static func validate(
        _ request: NotificationRequest, field: String = "",
        escalationLimits: EscalationLimits = EscalationLimits()
    ) throws(ChimeError) {
        try validateIdentifier(request.identifier, field: join(field, JSONFieldName.Request.identifier))
        try validate(request.content, field: join(field, JSONFieldName.Request.content))
        if let trigger = request.trigger {
            if case .push = trigger {
                throw ChimeError(
                    .invalidTrigger, field: join(field, JSONFieldName.Request.trigger),
                    "a push trigger cannot be scheduled; remote notifications arrive through the push endpoint. Accepted triggers: timeInterval, calendar, location, recurrence, or none to deliver at once"
                )
            }
            try validate(trigger, field: join(field, JSONFieldName.Request.trigger))
        }
        if let expiration = request.expiration {
            let name = expiration.date == nil ? JSONFieldName.Request.expiresIn : JSONFieldName.Request.expirationDate
            try validate(expiration, field: join(field, name))
        }
        if let autoDismiss = request.autoDismiss {
            let name = join(
                field, autoDismiss.date == nil ? JSONFieldName.Request.dismissIn : JSONFieldName.Request.dismissAt)
            try validate(autoDismiss, field: name)
            if case .after(let seconds) = autoDismiss, seconds == 0 {
                throw ChimeError(
                    .invalidValue, field: name,
                    "\(name) is 0: the notification would be gone as it came; give more than 0 seconds after the delivery, or a date"
                )
            }
        }
        if let escalation = request.escalation { try validate(escalation, limits: escalationLimits, field: field) }
    }

    /// Checks an escalation against the limits: its interval (`escalateEvery`) at least the
    /// shortest allowed, its window (`escalateFor`) longer than one interval and at most the
    /// longest allowed. The fields are named as JSON names them, after `field`.
    ///
    /// ```swift
    /// try Validation.validate(NotificationEscalation(every: 5, for: 600), limits: EscalationLimits(), field: "")
    /// // throws: "escalateEvery is 5 seconds; give 10 or more seconds between alerts …"
    /// ```
    public static func validate(_ escalation: NotificationEscalation, limits: EscalationLimits, field: String)
        throws(ChimeError)
    {
        let every = join(field, JSONFieldName.Request.escalateEvery)
        let window = join(field, JSONFieldName.Request.escalateFor)
        let interval = escalation.interval
        let duration = escalation.duration
        guard interval.isFinite, interval > 0, interval >= limits.minimumInterval else {
            throw ChimeError(
                .invalidValue, field: every,
                "\(every) is \(seconds(interval)) seconds; give \(seconds(limits.minimumInterval)) or more seconds between alerts (the service's shortest), at most \(seconds(limits.maximumDuration))"
            )
        }
        guard duration.isFinite, duration <= limits.maximumDuration else {
            throw ChimeError(
                .invalidValue, field: window,
                "\(window) is \(seconds(duration)) seconds; give at most \(seconds(limits.maximumDuration)) seconds (the service's longest escalation)"
            )
        }
        guard duration > interval else {
            throw ChimeError(
                .invalidValue, field: window,
                "\(window) is \(seconds(duration)) seconds, not longer than \(every) (\(seconds(interval))): nothing would be alerted again; give a window longer than one interval, at most \(seconds(limits.maximumDuration)) seconds"
            )
        }
    }

    /// Seconds as text: whole numbers without a fraction (`60`, `0.5`); also the CLI's.
    package static func seconds(_ value: Double) -> String {
        value.isFinite && value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// Checks a deadline (a request's expiration): a duration of 0 seconds or more, or a date in
    /// the years 0001-9999.
    ///
    /// ```swift
    /// try Validation.validate(.after(-5), field: "expiresIn")   // throws: "expiresIn is -5.0; give 0 or more seconds …"
    /// ```
    public static func validate(_ deadline: NotificationDeadline, field: String) throws(ChimeError) {
        switch deadline {
        case .after(let seconds):
            guard seconds.isFinite, seconds >= 0, seconds <= maxDeadlineSeconds else {
                throw ChimeError(
                    .invalidValue, field: field,
                    "\(field) is \(seconds); give 0 or more seconds (at most \(Int(maxDeadlineSeconds)), about 100 years), or a date"
                )
            }
        case .at(let date):
            guard JSONMapping.dateRange.contains(date.timeIntervalSince1970) else {
                throw ChimeError(
                    .invalidValue, field: field,
                    "\(field) is \(date.timeIntervalSince1970) seconds since 1970; give a date in the years 0001-9999")
            }
        }
    }

    /// The longest duration a deadline may count (about 100 years), so the date it makes is a date.
    public static let maxDeadlineSeconds: TimeInterval = 100 * 366 * 86_400

    /// Checks an identifier: not empty, at most ``maxIdentifierBytes`` bytes, no NUL characters.
    public static func validateIdentifier(_ identifier: String, field: String) throws(ChimeError) {
        if identifier.isEmpty {
            throw ChimeError(.invalidIdentifier, field: field, "\(field) is empty; give a non-empty identifier")
        }
        if identifier.utf8.count > maxIdentifierBytes {
            throw ChimeError(
                .invalidIdentifier, field: field,
                "\(field) is \(identifier.utf8.count) bytes long; at most \(maxIdentifierBytes) are accepted")
        }
        if identifier.utf8.contains(0) {
            throw ChimeError(
                .invalidIdentifier, field: field, "\(field) contains a NUL character, which is not accepted")
        }
    }

    /// Checks the name of where the user answered (a response's `surface`): 1 to 64 ASCII
    /// letters, digits, `.`, `-` or `_`.
    ///
    /// ```swift
    /// try Validation.validateSurface("webPush")   // accepted
    /// try Validation.validateSurface("my phone")  // throws invalidValue naming "surface"
    /// ```
    public static func validateSurface(_ surface: String, field: String = JSONFieldName.Response.surface)
        throws(ChimeError)
    {
        guard (1...64).contains(surface.utf8.count),
            surface.unicodeScalars.allSatisfy({
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0))
            })
        else {
            throw ChimeError(
                .invalidValue, field: field,
                "\(field) is \"\(surface.prefix(70))\"; name where the user answered in 1 to 64 letters, digits, '.', '-' or '_' (web, desktop, webPush)"
            )
        }
    }

    /// Checks content values and size.
    public static func validate(_ content: NotificationContent, field: String = JSONFieldName.Request.content)
        throws(ChimeError)
    {
        typealias Field = JSONFieldName.Content
        try validateBadge(content.badge, field: join(field, Field.badge))
        try validateRelevanceScore(content.relevanceScore, field: join(field, Field.relevanceScore))
        try validateSummaryArgumentCount(content.summaryArgumentCount, field: join(field, Field.summaryArgumentCount))
        if let volume = content.sound?.volume {
            try validateVolume(
                Double(volume), field: join(field, JSONPath.member(Field.sound, JSONFieldName.Sound.volume)))
        }
        for (index, attachment) in content.attachments.enumerated() {
            try validateThumbnail(attachment, field: join(field, JSONPath.element(Field.attachments, index)))
        }
        let size = estimatedSize(content)
        if size > maxContentBytes {
            throw ChimeError(
                .tooLarge, field: field,
                "\(field) is about \(size) bytes; at most \(maxContentBytes) bytes of text and user info are accepted")
        }
    }

    /// Checks a badge count: 0 or more (0 clears the badge); none leaves the badge as it is.
    ///
    /// ```swift
    /// try Validation.validateBadge(-1, field: "badge")   // throws: "badge is -1; give 0 or more …"
    /// ```
    public static func validateBadge(_ badge: Int?, field: @autoclosure () -> String = "badge") throws(ChimeError) {
        guard let badge else { return }  // most content sets none: no field name to make
        let field = field()
        if let refusal = badgeRefusal(badge, field: field) {
            throw ChimeError(.invalidValue, field: field, refusal + ", or leave it out to keep the badge as it is")
        }
    }

    /// The badge rule, for a notification's badge and `setBadgeCount` alike: why `count` is not a
    /// badge (a negative count), or `nil` when it is one.
    package static func badgeRefusal(_ count: Int, field: String) -> String? {
        count < 0 ? "\(field) is \(count); give 0 or more (0 clears the badge)" : nil
    }

    /// Checks how many items a notification adds to its group's summary: 0 or more.
    public static func validateSummaryArgumentCount(
        _ count: Int, field: @autoclosure () -> String = "summaryArgumentCount"
    ) throws(ChimeError) {
        if count < 0 {
            let field = field()
            throw ChimeError(.invalidValue, field: field, "\(field) is \(count); give 0 or more")
        }
    }

    /// Checks a relevance score: a number from 0 to 1.
    public static func validateRelevanceScore(_ score: Double, field: @autoclosure () -> String = "relevanceScore")
        throws(ChimeError)
    {
        if !score.isFinite || !(0...1).contains(score) {
            let field = field()
            throw ChimeError(.invalidValue, field: field, "\(field) is \(score); accepted: a number from 0 to 1")
        }
    }

    /// Checks a critical sound's volume: a number from 0 to 1.
    public static func validateVolume(
        _ volume: Double, field: String = JSONFieldName.Content.sound + "." + JSONFieldName.Sound.volume
    ) throws(ChimeError) {
        if !volume.isFinite || !(0...1).contains(volume) {
            throw ChimeError(.invalidValue, field: field, "\(field) is \(volume); accepted: a number from 0 to 1")
        }
    }

    /// Checks an attachment's thumbnail options: a clipping rectangle inside the unit square with a
    /// positive size, a thumbnail time of 0 seconds or more.
    public static func validateThumbnail(_ attachment: NotificationAttachment, field: String) throws(ChimeError) {
        if let rect = attachment.thumbnailClippingRect {
            let name = join(field, JSONFieldName.Attachment.thumbnailClippingRect)
            let values = [rect.x, rect.y, rect.width, rect.height]
            guard values.allSatisfy(\.isFinite), rect.x >= 0, rect.y >= 0, rect.width > 0, rect.height > 0,
                rect.x + rect.width <= 1, rect.y + rect.height <= 1
            else {
                throw ChimeError(
                    .invalidValue, field: name,
                    "\(name) is (x \(rect.x), y \(rect.y), width \(rect.width), height \(rect.height)); give a part of the image in unit coordinates: x and y from 0, width and height above 0, x + width and y + height at most 1"
                )
            }
        }
        if let time = attachment.thumbnailTime, !time.isFinite || time < 0 {
            let name = join(field, JSONFieldName.Attachment.thumbnailTime)
            throw ChimeError(
                .invalidValue, field: name,
                "\(name) is \(time); give 0 or more: seconds into a video, or the frame number of an animated image")
        }
    }

    /// Checks a trigger's parameters.
    public static func validate(_ trigger: NotificationTrigger, field: String = JSONFieldName.Request.trigger)
        throws(ChimeError)
    {
        typealias Field = JSONFieldName.Trigger
        switch trigger {
        case .timeInterval(let interval, let repeats):
            guard interval.isFinite, interval > 0 else {
                let name = join(field, Field.timeInterval)
                throw ChimeError(
                    .invalidTrigger, field: name, "\(name) is \(interval); the time interval must be greater than 0")
            }
            if repeats && interval < 60 {
                let name = join(field, Field.timeInterval)
                throw ChimeError(
                    .invalidTrigger, field: name,
                    "\(name) is \(interval) with repeats; the time interval must be at least 60 if repeating")
            }
        case .calendar(let components, _):
            try validate(components, field: join(field, Field.dateComponents))
        case .location(let region, _):
            try validate(region, field: join(field, Field.region))
        case .recurrence(let schedule):
            // A schedule is checked when it is made; a rule changed since (a `var` copy) again here.
            do { try schedule.rule.validate() } catch let error as ChimeError {
                throw error.movingField(from: JSONFieldName.Request.trigger, to: field)
            } catch {
                throw ChimeError(.invalidTrigger, field: join(field, Field.rrule), "\(error)")
            }
        case .push:
            break
        }
    }

    /// The date components a calendar trigger may hold, by name (the JSON mapping reads and writes
    /// the same names, in this order), with the range each accepts. Key paths are immutable
    /// values, so sharing is safe.
    nonisolated(unsafe) static let dateComponentRanges:
        [(name: String, keyPath: WritableKeyPath<DateComponents, Int?>, range: ClosedRange<Int>)] = [
            ("era", \.era, 0...1), ("year", \.year, 1...9999), ("month", \.month, 1...12), ("day", \.day, 1...31),
            ("hour", \.hour, 0...23), ("minute", \.minute, 0...59), ("second", \.second, 0...59),
            ("nanosecond", \.nanosecond, 0...999_999_999), ("weekday", \.weekday, 1...7),
            ("weekdayOrdinal", \.weekdayOrdinal, -5...5), ("quarter", \.quarter, 1...4),
            ("weekOfMonth", \.weekOfMonth, 1...6),
            ("weekOfYear", \.weekOfYear, 1...53), ("yearForWeekOfYear", \.yearForWeekOfYear, 1...9999),
        ]

    /// Checks date components for a calendar trigger: at least one component, each in range.
    public static func validate(
        _ components: DateComponents, field: String = JSONFieldName.Trigger.dateComponents
    ) throws(ChimeError) {
        var any = false
        for (name, keyPath, range) in dateComponentRanges {
            guard let value = components[keyPath: keyPath] else { continue }
            any = true
            if !range.contains(value) {
                throw ChimeError(
                    .invalidTrigger, field: join(field, name),
                    "\(join(field, name)) is \(value); accepted: \(range.lowerBound) to \(range.upperBound)")
            }
        }
        if !any {
            throw ChimeError(
                .invalidTrigger, field: field,
                "\(field) has no components; give at least one of \(dateComponentRanges.map(\.name).joined(separator: ", "))"
            )
        }
    }

    /// Checks a region: identifier, valid coordinates, a positive radius, entry or exit.
    public static func validate(_ region: CircularRegion, field: String = JSONFieldName.Trigger.region)
        throws(ChimeError)
    {
        try validateIdentifier(region.identifier, field: join(field, "identifier"))
        try validate(region.center, field: field, code: .invalidTrigger)
        if !region.radius.isFinite || region.radius <= 0 {
            throw ChimeError(
                .invalidTrigger, field: join(field, "radius"),
                "\(join(field, "radius")) is \(region.radius); give a radius in metres greater than 0")
        }
        if !region.notifyOnEntry && !region.notifyOnExit {
            throw ChimeError(
                .invalidTrigger, field: field,
                "\(field) notifies neither on entry nor on exit, so it could never fire; set notifyOnEntry or notifyOnExit"
            )
        }
    }

    /// Whether `text` is a bundle identifier: 1 to 255 ASCII letters, digits, `.`, `-` or `_`
    /// (Apple's reverse-DNS names, such as `com.example.alarm`).
    public static func isBundleIdentifier(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 255
            && text.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }

    /// Checks an app's bundle identifier (see ``isBundleIdentifier(_:)``): every app, on the
    /// service or embedded, is named by one.
    public static func validateBundleIdentifier(_ text: String, field: String = JSONFieldName.App.bundleIdentifier)
        throws(ChimeError)
    {
        guard isBundleIdentifier(text) else {
            throw ChimeError(
                .invalidIdentifier, field: field,
                "\(field) \"\(text.prefix(80))\" is not a bundle identifier; use 1 to 255 letters, digits, '.', '-' or '_', as com.example.alarm"
            )
        }
    }

    /// Checks a point on Earth: latitude −90…90, longitude −180…180 (degrees). `field` is the
    /// object holding `latitude` and `longitude`.
    public static func validate(_ coordinate: Coordinate, field: String, code: ChimeError.Code = .invalidValue)
        throws(ChimeError)
    {
        if !coordinate.latitude.isFinite || !(-90...90).contains(coordinate.latitude) {
            throw ChimeError(
                code, field: join(field, "latitude"),
                "\(join(field, "latitude")) is \(coordinate.latitude); accepted: -90 to 90")
        }
        if !coordinate.longitude.isFinite || !(-180...180).contains(coordinate.longitude) {
            throw ChimeError(
                code, field: join(field, "longitude"),
                "\(join(field, "longitude")) is \(coordinate.longitude); accepted: -180 to 180")
        }
    }

    /// Checks a set of categories: identifiers present and unique, action identifiers unique within
    /// each category and not the system identifiers.
    public static func validate(_ categories: [NotificationCategory], field: String = "categories") throws(ChimeError) {
        var seen: Set<LiteralKey> = []
        for (index, category) in categories.enumerated() {
            let at = "\(field)[\(index)]"
            try validateIdentifier(category.identifier, field: join(at, "identifier"))
            if !seen.insert(LiteralKey(category.identifier)).inserted {
                throw ChimeError(
                    .invalidCategory, field: join(at, "identifier"),
                    "category '\(category.identifier)' is listed twice; each category identifier may appear once")
            }
            var actions: Set<LiteralKey> = []
            for (actionIndex, action) in category.actions.enumerated() {
                let actionField = join(at, "actions[\(actionIndex)].identifier")
                try validateIdentifier(action.identifier, field: actionField)
                if action.identifier.isLiterally(UNNotificationDefaultActionIdentifier)
                    || action.identifier.isLiterally(UNNotificationDismissActionIdentifier)
                {
                    throw ChimeError(
                        .invalidCategory, field: actionField,
                        "action identifier '\(action.identifier)' is reserved for the system; choose another")
                }
                if !actions.insert(LiteralKey(action.identifier)).inserted {
                    throw ChimeError(
                        .invalidCategory, field: actionField,
                        "action '\(action.identifier)' is listed twice in category '\(category.identifier)'; each action identifier may appear once in a category"
                    )
                }
            }
        }
    }

    static func join(_ prefix: String, _ name: String) -> String {
        prefix.isEmpty ? name : "\(prefix).\(name)"
    }

    static func estimatedSize(_ content: NotificationContent) -> Int {
        var size = content.title.utf8.count + content.subtitle.utf8.count + content.body.utf8.count
        size += content.categoryIdentifier.utf8.count + content.threadIdentifier.utf8.count
        size += content.launchImageName.utf8.count + content.summaryArgument.utf8.count
        size += (content.targetContentIdentifier?.utf8.count ?? 0) + (content.filterCriteria?.utf8.count ?? 0)
        for (key, value) in content.userInfo { size += key.utf8.count + estimatedSize(value) }
        for attachment in content.attachments {
            size += attachment.identifier.utf8.count + attachment.url.path.utf8.count
        }
        return size
    }

    static func estimatedSize(_ value: PropertyListValue) -> Int {
        switch value {
        case .string(let s): s.utf8.count
        case .integer, .double, .date: 8
        case .bool: 1
        case .data(let d): d.count
        case .array(let a): a.reduce(0) { $0 + estimatedSize($1) }
        case .dictionary(let d): d.reduce(0) { $0 + $1.key.utf8.count + estimatedSize($1.value) }
        }
    }
}
