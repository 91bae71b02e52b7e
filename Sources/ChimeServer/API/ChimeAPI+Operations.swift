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
        let text = metrics.render(gauges: [
            ("chime_pending", "Pending notification requests, all apps.", Double(pending)),
            ("chime_delivered", "Delivered notifications still in the notification center, all apps.", Double(delivered)),
        ])
        return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: Array(text.utf8), route: route.template)
    }

    /// `docs/openapi.json` as embedded at build time.
    func openAPIDocument(_ request: HTTPRequest, route: Route) -> HTTPResponse {
        HTTPResponse(status: 200, contentType: "application/json", body: Array(OpenAPIDocument.json.utf8), route: route.template)
    }

    /// Everything under `/3/`: answered as Apple's provider API answers, errors included.
    func push(_ request: HTTPRequest, route: Route) async -> HTTPResponse {
        await APNsEndpoint(api: self).handle(request)
    }
}
