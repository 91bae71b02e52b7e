import ChimeCore
import Foundation

/// An app's permission, settings and badge: `requestAuthorization`, the user's answer,
/// `getNotificationSettings`, `setBadgeCount`. (The user's settings switches, `PATCH …/settings`,
/// are with the web center's routes in `WebAPI.swift`.)
extension ChimeAPI {
    /// `POST /v1/apps/{app}/authorization`, optionally `{"options": ["alert", "sound"]}`.
    func requestAuthorization(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let options = try JSONMapping.authorizationOptions(try jsonBody(request, optional: true))
        let (granted, settings) = try await engine.requestAuthorization(app: route["app"], options: options)
        return json(AuthorizationAnswer(granted: granted, settings: settings).json, route: route)
    }

    /// `POST /v1/apps/{app}/authorization/answer` `{"allow": true}`: the user's answer.
    func answerAuthorization(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let allow = try JSONMapping.authorizationAllow(try jsonBody(request))
        let settings = try await engine.answerAuthorization(app: route["app"], allow: allow)
        return json(
            AuthorizationAnswer(granted: settings.authorizationStatus.allowsDelivery, settings: settings).json,
            route: route)
    }

    func getSettings(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        json(try await engine.settings(app: route["app"]).json, route: route)
    }

    /// `PUT /v1/apps/{app}/badge` `{"badge": 3}`; 0 clears it.
    func setBadge(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let badge = try JSONMapping.badgeCount(try jsonBody(request))
        try await engine.setBadge(badge, app: route["app"])
        return json([JSONFieldName.badge: .integer(Int64(badge))], route: route)
    }
}
