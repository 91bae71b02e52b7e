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
    /// Checks the Content-Type here (415 is the route's answer); the body and headers become a
    /// request in ``SendHeaders`` (ChimeCore, where the fuzz target reaches it).
    func send(_ request: HTTPRequest, route: Route, answer: @escaping HTTPAnswer) throws -> HTTPResponse? {
        let type = Self.mediaType(of: request)
        guard ["", "text/plain", "application/x-www-form-urlencoded"].contains(type) else {
            throw APIError(
                415, "unsupportedMediaType",
                "Content-Type \(type) is not taken here: …/send takes the text itself as the body (text/plain, or what curl -d sends); for a JSON request use POST /v1/apps/{app}/requests"
            )
        }
        let now = engine.clock.now
        let notification = try SendHeaders.request(
            body: request.body, header: request.header, newIdentifier: { UUID().uuidString }
        ).added(at: now)
        try startAdd(
            [notification], at: now, route: route, array: false,
            refusal: { error in
                // The service's escalation limits, checked by the engine: named by the header given.
                guard let error = error as? ChimeError,
                    [JSONFieldName.Request.escalateEvery, JSONFieldName.Request.escalateFor].contains(error.field ?? "")
                else { return error }
                return SendHeaders.inHeaderTerms(error, trigger: "Delay")
            }, answer: answer)
        return nil
    }
}
