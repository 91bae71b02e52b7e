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
    func send(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
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
        let dates: [Date?]
        do {
            dates = try await engine.add([notification], app: route["app"])
        } catch let error as ChimeError where ["escalateEvery", "escalateFor"].contains(error.field ?? "") {
            // The service's escalation limits, checked by the engine: named by the header given.
            throw SendHeaders.inHeaderTerms(error, trigger: "Delay")
        }
        let added = PendingRequest(request: notification, nextFireDate: dates.first ?? nil, anchor: now).json
        return json(added, status: 201, route: route)
    }
}
