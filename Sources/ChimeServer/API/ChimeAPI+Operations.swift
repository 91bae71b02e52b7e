import ChimeCore
import Foundation

/// What runs the service needs besides the API: liveness, metrics, this API's document, and the
/// APNs provider endpoint (``APNsEndpoint``).
extension ChimeAPI {
    func health(_ request: HTTPRequest, route: Route) -> HTTPResponse {
        json(["status": "ok"], route: route)
    }

    /// Prometheus' text format: the server's counters and histograms, and the engine's gauges.
    func metricsText(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let pending = try await engine.pendingCount()
        let delivered = try await engine.deliveredCount()
        let quarantined = try await engine.quarantinedCount()
        let text = metrics.render(gauges: [
            ("chime_pending", "Pending notification requests, all apps.", Double(pending)),
            (
                "chime_delivered", "Delivered notifications still in the notification center, all apps.",
                Double(delivered)
            ),
            (
                "chime_quarantined", "Due requests the scheduler could not deliver and set aside (GET /v1/quarantine).",
                Double(quarantined)
            ),
        ])
        return HTTPResponse(
            status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: Array(text.utf8),
            route: route.template)
    }

    /// `GET /v1/quarantine`: what the scheduler set aside, oldest first, paged by entry id.
    func listQuarantine(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let page = try Page(request)
        let entries = try await engine.quarantined(after: page.number(), limit: page.limit + 1)
        return page.response(entries.map { ($0.json, String($0.id)) }, request: request, route: route)
    }

    /// `DELETE /v1/quarantine/{id}`: the owner has seen it; the request is gone for good.
    func removeQuarantined(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let idText = route["id"]
        guard let id = Int64(idText), id > 0 else {
            throw APIError.notFound(
                "quarantine id \(idText.prefix(40)) is not a number; use an id from GET /v1/quarantine", field: "id")
        }
        guard try await engine.removeQuarantined(id) else {
            throw APIError.notFound("no quarantine entry \(id) (already removed?); see GET /v1/quarantine", field: "id")
        }
        return json([JSONFieldName.removed: .integer(id)], route: route)
    }

    /// `docs/openapi.json` as embedded at build time.
    func openAPIDocument(_ request: HTTPRequest, route: Route) -> HTTPResponse {
        HTTPResponse(
            status: 200, contentType: "application/json", body: Array(OpenAPIDocument.json.utf8), route: route.template)
    }

    /// Everything under `/3/`: answered as Apple's provider API answers, errors included.
    func push(_ request: HTTPRequest, route: Route) async -> HTTPResponse {
        await APNsEndpoint(api: self).handle(request)
    }
}
