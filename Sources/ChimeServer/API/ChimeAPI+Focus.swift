import ChimeCore
import Foundation

/// Focus modes (quiet hours; a Chime addition), the owner's, for every app: `GET /v1/focus`,
/// `GET|PUT|DELETE /v1/focus/{name}`, `POST /v1/focus/{name}/on|off`. Answers are
/// ``FocusStatus/json``: the mode with `active`, `nextChange`, `held` and `heldTotal`.
extension ChimeAPI {
    /// `GET /v1/focus`: every focus mode, by name.
    func listFocus(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        json(.array(try await engine.focusModes().map(\.json)), route: route)
    }

    /// `GET /v1/focus/{name}`.
    func getFocus(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let name = try focusName(route)
        guard let status = try await engine.focusMode(named: name) else { throw noFocus(name) }
        return json(status.json, route: route)
    }

    /// `PUT /v1/focus/{name}`: adds the mode or replaces it (201 when new); every field is checked
    /// and a refusal names it.
    func putFocus(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let name = try focusName(route)
        let mode = try FocusMode(json: try jsonBody(request), name: name)
        let existed = try await engine.focusMode(named: name) != nil
        return json(try await engine.putFocusMode(mode).json, status: existed ? 200 : 201, route: route)
    }

    /// `DELETE /v1/focus/{name}`: what it held is summarized at once.
    func removeFocus(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let name = try focusName(route)
        guard try await engine.removeFocusMode(named: name) else { throw noFocus(name) }
        return json([JSONFieldName.removed: .string(name)], route: route)
    }

    /// `POST /v1/focus/{name}/on`: on by hand until the schedule's next start or end.
    func focusOn(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        try await setFocus(route, on: true)
    }

    /// `POST /v1/focus/{name}/off`: off by hand until the schedule's next start or end; what it
    /// held is summarized at once.
    func focusOff(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        try await setFocus(route, on: false)
    }

    private func setFocus(_ route: Route, on: Bool) async throws -> HTTPResponse {
        let name = try focusName(route)
        guard try await engine.focusMode(named: name) != nil else { throw noFocus(name) }
        return json(try await engine.setFocus(named: name, on: on).json, route: route)
    }

    private func focusName(_ route: Route) throws -> String {
        let name = route["name"]
        try FocusMode.validateName(name)
        return name
    }

    private func noFocus(_ name: String) -> APIError {
        .notFound(
            "there is no focus mode named \"\(name.prefix(80))\"; GET /v1/focus lists them (PUT /v1/focus/{name} adds one)",
            field: "name")
    }
}
