import ChimeCore
import Foundation

/// Scheduled summaries (iOS 15's), set per app by the owner: `GET /v1/summaries`,
/// `GET|PUT|DELETE /v1/apps/{app}/summary`. Answers are ``ScheduledSummaryStatus/json``: the times,
/// the time zone, `nextDelivery` and `held`.
extension ChimeAPI {
    /// `GET /v1/summaries`: every app in a scheduled summary, by app.
    func listSummaries(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        json(.array(try await engine.scheduledSummaries().map(\.json)), route: route)
    }

    /// `GET /v1/apps/{app}/summary`.
    func getSummary(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let app = route["app"]
        guard let status = try await engine.scheduledSummary(app: app) else { throw noSummary(app) }
        return json(status.json, route: route)
    }

    /// `PUT /v1/apps/{app}/summary` `{"times": ["08:00", "18:00"], "timeZone": "Europe/Berlin"}`:
    /// 201 when the app was in none, 200 when its times changed; a refusal names the field.
    func putSummary(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let app = route["app"]
        let summary = try ScheduledSummary(json: try jsonBody(request))
        let existed = try await engine.scheduledSummary(app: app) != nil
        return json(
            try await engine.setScheduledSummary(summary, app: app).json, status: existed ? 200 : 201, route: route)
    }

    /// `DELETE /v1/apps/{app}/summary`: what it held is delivered at once.
    func removeSummary(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let app = route["app"]
        guard try await engine.removeScheduledSummary(app: app) else { throw noSummary(app) }
        return json([JSONFieldName.removed: .string(app)], route: route)
    }

    private func noSummary(_ app: String) -> APIError {
        .notFound(
            "\(app.prefix(200)) is in no scheduled summary; PUT /v1/apps/{app}/summary puts it in one", field: "app")
    }
}
