import Foundation

/// The one-line send, `POST /v1/apps/{app}/send`, as a request: the body is the notification's
/// text and headers set the rest, named after the JSON fields of `POST …/requests` and mapped and
/// checked the same way. Each header may also be sent with an `X-` prefix (`X-Title`).
///
/// ```swift
/// let headers = ["title": "Backup", "delay": "10m"]
/// let request = try SendHeaders.request(body: Array("Backup done".utf8), header: { headers[$0.lowercased()] },
///                                       newIdentifier: { UUID().uuidString })
/// // request.content.title == "Backup", a 600 s time-interval trigger
/// ```
public enum SendHeaders {
    /// Header → JSON field.
    public static let fields: [(header: String, field: String)] = {
        typealias Content = JSONFieldName.Content
        typealias Request = JSONFieldName.Request
        return [
            ("Title", Content.title), ("Subtitle", Content.subtitle), ("Category", Content.categoryIdentifier),
            ("Thread", Content.threadIdentifier),
            ("Sound", Content.sound), ("Badge", Content.badge), ("Interruption-Level", Content.interruptionLevel),
            ("Identifier", Request.identifier),
            ("Delay", Request.trigger), ("At", Request.trigger), ("Expires-In", Request.expiresIn),
            ("Expires-At", Request.expirationDate), ("Dismiss-In", Request.dismissIn),
            ("Dismiss-At", Request.dismissAt),
            ("Escalate-Every", Request.escalateEvery), ("Escalate-For", Request.escalateFor),
        ]
    }()

    /// The fields the loop of plain values leaves to a mapping of their own: the request's own.
    static let mapped = Set(NotificationRequest.ownFields)

    /// The request a send makes. `header` gives a header's value by its name (case-insensitively);
    /// `newIdentifier` makes the identifier when no `Identifier` header is given.
    ///
    /// - Throws: ``ChimeError`` naming the header at fault (`Delay`, `Badge`, …) or `body`.
    public static func request(
        body: [UInt8], header: (String) -> String?,
        newIdentifier: () -> String
    ) throws(ChimeError) -> NotificationRequest {
        guard var text = String(validating: body, as: UTF8.self) else {
            throw ChimeError(
                .invalidEncoding, field: "body", "the body is not UTF-8 text; send the notification's text as UTF-8")
        }
        while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }

        func value(_ name: String) -> String? {
            (header(name) ?? header("X-" + name))?.trimmingCharacters(in: .whitespaces)
        }
        typealias Content = JSONFieldName.Content
        typealias Request = JSONFieldName.Request
        var object: JSONObject = [Request.identifier: .string(value("Identifier") ?? newIdentifier())]
        if !text.isEmpty { object[Content.body] = .string(text) }
        for (name, field) in fields where !mapped.contains(field) {
            guard let given = value(name) else { continue }
            if field == Content.badge {
                guard let number = Int64(given) else {
                    throw ChimeError(
                        .invalidValue, field: "Badge",
                        "the Badge header is '\(given.prefix(40))'; give a whole number, 0 clears the badge")
                }
                object[field] = .integer(number)
            } else {
                object[field] = .string(given)
            }
        }
        guard object[Content.body] != nil || object[Content.title] != nil else {
            throw ChimeError(
                .invalidValue, field: "body",
                "nothing to send: give the text as the body (curl -d \"Backup done\") or a Title header")
        }
        object[Request.trigger] = try trigger(delay: value("Delay"), at: value("At"))
        if let expiration = try expiration(in: value("Expires-In"), at: value("Expires-At")) {
            object[expiration.field] = expiration.value
        }
        if let dismissal = try autoDismiss(in: value("Dismiss-In"), at: value("Dismiss-At")) {
            object[dismissal.field] = dismissal.value
        }
        if let escalation = try escalation(every: value("Escalate-Every"), for: value("Escalate-For")) {
            object[Request.escalateEvery] = escalation.every
            object[Request.escalateFor] = escalation.window
        }
        do {
            return try NotificationRequest(json: .object(object))
        } catch {
            throw inHeaderTerms(error, trigger: value("At") != nil ? "At" : "Delay")
        }
    }

    /// The trigger for `Delay` (a duration, or seconds) or `At` (an ISO 8601 date and time with its
    /// offset, or seconds since 1970); none: delivered at once.
    public static func trigger(delay: String?, at: String?) throws(ChimeError) -> JSONValue {
        switch (delay, at) {
        case (nil, nil):
            return .null
        case (_?, _?):
            throw ChimeError(.invalidValue, field: "Delay", "give Delay or At, not both")
        case (let delay?, nil):
            let seconds: TimeInterval
            do { seconds = try DurationText.seconds(in: delay, field: "Delay", bareSeconds: true) } catch {
                throw ChimeError(.invalidValue, field: "Delay", "the Delay header: \(error.message)")
            }
            return NotificationTrigger.timeInterval(seconds, repeats: false).json
        case (nil, let at?):
            guard let date = JSONMapping.parseDate(at) ?? TimeInterval(at).map(Date.init(timeIntervalSince1970:)),
                calendarYears.contains(date.timeIntervalSince1970)
            else {
                throw ChimeError(
                    .invalidValue, field: "At",
                    "the At header is '\(at.prefix(40))'; give a date and time with its offset, as 2026-12-01T08:30:00+01:00, or seconds since 1970"
                )
            }
            var utc = Calendar(identifier: .gregorian)
            utc.timeZone = TimeZone(identifier: "UTC")!
            let parts = utc.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: date)
            var components: JSONObject = [JSONFieldName.Trigger.timeZone: "UTC"]
            for (name, number) in [
                ("year", parts.year), ("month", parts.month), ("day", parts.day), ("hour", parts.hour),
                ("minute", parts.minute), ("second", parts.second), ("nanosecond", parts.nanosecond),
            ] {
                if let number { components[name] = .integer(Int64(number)) }
            }
            return NotificationTrigger.calendarJSON(.object(components), repeats: false)
        }
    }

    /// `Expires-In` (a duration, or seconds) as `expiresIn`, or `Expires-At` (an ISO 8601 date and
    /// time with its offset, or seconds since 1970) as `expirationDate`; neither: `nil`.
    public static func expiration(in duration: String?, at date: String?) throws(ChimeError) -> (
        field: String, value: JSONValue
    )? {
        try deadline(
            in: duration, at: date, headers: ("Expires-In", "Expires-At"),
            fields: (JSONFieldName.Request.expiresIn, JSONFieldName.Request.expirationDate))
    }

    /// `Dismiss-In` (a duration after the delivery, or seconds) as `dismissIn`, or `Dismiss-At` (as
    /// `Expires-At`) as `dismissAt`; neither: `nil`.
    public static func autoDismiss(in duration: String?, at date: String?) throws(ChimeError) -> (
        field: String, value: JSONValue
    )? {
        try deadline(
            in: duration, at: date, headers: ("Dismiss-In", "Dismiss-At"),
            fields: (JSONFieldName.Request.dismissIn, JSONFieldName.Request.dismissAt))
    }

    /// `Escalate-Every` and `Escalate-For` (durations, or seconds) as `escalateEvery` and
    /// `escalateFor`: alerted again every so often until answered, for so long after the delivery.
    /// Both or neither; the service's limits are checked when the request is added.
    ///
    /// ```swift
    /// let escalation = try SendHeaders.escalation(every: "60s", for: "30m")   // (60, 1800)
    /// ```
    public static func escalation(every: String?, for window: String?) throws(ChimeError) -> (
        every: JSONValue, window: JSONValue
    )? {
        switch (every, window) {
        case (nil, nil):
            return nil
        case (_?, nil), (nil, _?):
            let missing = every == nil ? "Escalate-Every" : "Escalate-For"
            throw ChimeError(
                .invalidValue, field: missing,
                "\(missing) is missing; an escalation takes both Escalate-Every (the time between alerts: 60s) and Escalate-For (how long after the delivery it stops: 30m)"
            )
        case (let every?, let window?):
            func seconds(_ text: String, _ header: String) throws(ChimeError) -> JSONValue {
                do { return .number(try DurationText.seconds(in: text, field: header, bareSeconds: true)) } catch {
                    throw ChimeError(.invalidValue, field: header, "the \(header) header: \(error.message)")
                }
            }
            return (try seconds(every, "Escalate-Every"), try seconds(window, "Escalate-For"))
        }
    }

    private static func deadline(
        in duration: String?, at date: String?, headers: (duration: String, date: String),
        fields: (duration: String, date: String)
    ) throws(ChimeError) -> (field: String, value: JSONValue)? {
        switch (duration, date) {
        case (nil, nil):
            return nil
        case (_?, _?):
            throw ChimeError(
                .invalidValue, field: headers.duration, "give \(headers.duration) or \(headers.date), not both")
        case (let duration?, nil):
            do {
                return (
                    fields.duration,
                    .number(try DurationText.seconds(in: duration, field: headers.duration, bareSeconds: true))
                )
            } catch {
                throw ChimeError(
                    .invalidValue, field: headers.duration, "the \(headers.duration) header: \(error.message)")
            }
        case (nil, let at?):
            guard let date = JSONMapping.parseDate(at) ?? TimeInterval(at).map(Date.init(timeIntervalSince1970:)),
                calendarYears.contains(date.timeIntervalSince1970)
            else {
                throw ChimeError(
                    .invalidValue, field: headers.date,
                    "the \(headers.date) header is '\(at.prefix(40))'; give a date and time with its offset, as 2026-12-01T09:00:00+01:00, or seconds since 1970"
                )
            }
            return (fields.date, JSONMapping.json(date))
        }
    }

    /// The instants of the years a calendar trigger takes (0001-01-01 to 9999-12-31, UTC), in seconds
    /// since 1970. An At outside them is refused: NaN, an infinity or 1e300 (which Foundation's
    /// calendar turns into any date at all) and the year 0000 (which became 0001, its era lost).
    static let calendarYears = JSONMapping.dateRange

    /// A mapping error about a field that came from a header, named by that header; the trigger's
    /// by `trigger`, the one of Delay and At that was given (an At past the year 9999 is the At's fault).
    public static func inHeaderTerms(_ error: ChimeError, trigger: String) -> ChimeError {
        guard let field = error.field else { return error }
        let root = field.split(separator: ".").first.map(String.init) ?? field
        guard
            let header = root == JSONFieldName.Request.trigger
                ? trigger : fields.first(where: { $0.field == root })?.header
        else {
            return error
        }
        return ChimeError(error.code, field: header, "the \(header) header: \(error.message)")
    }
}
