import ChimeCore
import Foundation

/// The one-line send, `POST /v1/apps/{app}/send`: the body is the notification's text, optional
/// headers set the rest, and an identifier is made when none is given — what `curl -d "Backup done"`
/// needs. The headers are named after the JSON fields and go through the same mapping and checks
/// as `POST …/requests`.
///
/// ```sh
/// curl -H "Authorization: Bearer $TOKEN" -H "Title: Backup" -d "Backup done" http://127.0.0.1:7878/v1/apps/com.example.backup/send
/// ```
extension ChimeAPI {
    /// Header → JSON field. Each may also be sent with an `X-` prefix (`X-Title`).
    static let sendHeaders: [(header: String, field: String)] = [
        ("Title", "title"), ("Subtitle", "subtitle"), ("Category", "categoryIdentifier"), ("Thread", "threadIdentifier"),
        ("Sound", "sound"), ("Badge", "badge"), ("Interruption-Level", "interruptionLevel"), ("Identifier", "identifier"),
        ("Delay", "trigger"), ("At", "trigger"),
    ]

    func send(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let type = request.header("content-type")?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        guard ["", "text/plain", "application/x-www-form-urlencoded"].contains(type) else {
            throw APIError(415, "unsupportedMediaType",
                           "Content-Type \(type) is not taken here: …/send takes the text itself as the body (text/plain, or what curl -d sends); for a JSON request use POST /v1/apps/{app}/requests")
        }
        guard var text = String(validating: request.body, as: UTF8.self) else {
            throw APIError.badRequest("invalidEncoding", "the body is not UTF-8 text; send the notification's text as UTF-8", field: "body")
        }
        while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }

        func value(_ name: String) -> String? {
            (request.header(name) ?? request.header("x-" + name))?.trimmingCharacters(in: .whitespaces)
        }
        var object: JSONObject = ["identifier": .string(value("Identifier") ?? UUID().uuidString)]
        if !text.isEmpty { object["body"] = .string(text) }
        for (header, field) in Self.sendHeaders where field != "trigger" && field != "identifier" {
            guard let given = value(header) else { continue }
            if field == "badge" {
                guard let number = Int64(given) else {
                    throw APIError.badRequest("invalidValue", "the Badge header is '\(given.prefix(40))'; give a whole number, 0 clears the badge",
                                              field: "Badge")
                }
                object[field] = .integer(number)
            } else {
                object[field] = .string(given)
            }
        }
        guard object["body"] != nil || object["title"] != nil else {
            throw APIError.badRequest("invalidValue", "nothing to send: give the text as the body (curl -d \"Backup done\") or a Title header",
                                      field: "body")
        }
        object["trigger"] = try Self.sendTrigger(delay: value("Delay"), at: value("At"))

        let notification: NotificationRequest
        do {
            notification = try NotificationRequest(json: .object(object))
        } catch {
            throw Self.inHeaderTerms(error)
        }
        let dates = try await engine.add([notification], app: route["app"])
        let added = PendingRequest(request: notification, nextFireDate: dates.first ?? nil, anchor: engine.clock.now).json
        return json(added, status: 201, route: route)
    }

    /// The trigger for `Delay` (a duration, or seconds) or `At` (an ISO 8601 date and time with its
    /// offset, or seconds since 1970); none: delivered at once.
    static func sendTrigger(delay: String?, at: String?) throws -> JSONValue {
        switch (delay, at) {
        case (nil, nil):
            return .null
        case (_?, _?):
            throw APIError.badRequest("invalidValue", "give Delay or At, not both", field: "Delay")
        case (let delay?, nil):
            let seconds: TimeInterval
            do { seconds = try DurationText.seconds(in: delay, field: "Delay", bareSeconds: true) } catch {
                throw APIError.badRequest("invalidValue", "the Delay header: \(error.message)", field: "Delay")
            }
            return ["type": "timeInterval", "timeInterval": .number(seconds), "repeats": false]
        case (nil, let at?):
            guard let date = JSONMapping.parseDate(at) ?? TimeInterval(at).map(Date.init(timeIntervalSince1970:)) else {
                throw APIError.badRequest("invalidValue",
                                          "the At header is '\(at.prefix(40))'; give a date and time with its offset, as 2026-12-01T08:30:00+01:00, or seconds since 1970",
                                          field: "At")
            }
            var utc = Calendar(identifier: .gregorian)
            utc.timeZone = TimeZone(identifier: "UTC")!
            let parts = utc.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: date)
            var components: JSONObject = ["timeZone": "UTC"]
            for (name, number) in [("year", parts.year), ("month", parts.month), ("day", parts.day), ("hour", parts.hour),
                                   ("minute", parts.minute), ("second", parts.second), ("nanosecond", parts.nanosecond)] {
                if let number { components[name] = .integer(Int64(number)) }
            }
            return ["type": "calendar", "dateComponents": .object(components), "repeats": false]
        }
    }

    /// A mapping error about a field that came from a header, named by that header.
    static func inHeaderTerms(_ error: any Error) -> any Error {
        guard let error = error as? ChimeError, let field = error.field else { return error }
        let root = field.split(separator: ".").first.map(String.init) ?? field
        guard let header = sendHeaders.first(where: { $0.field == root })?.header else { return error }
        return ChimeError(error.code, field: header, "the \(header) header: \(error.message)")
    }
}
