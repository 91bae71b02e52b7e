import ChimeCore
import Foundation

/// An app's permission, settings and badge: `requestAuthorization`, the user's answer,
/// `getNotificationSettings`, `setBadgeCount`. (The user's settings switches, `PATCH …/settings`,
/// are with the web center's routes in `WebAPI.swift`.)
extension ChimeAPI {
    /// `POST /v1/apps/{app}/authorization`, optionally `{"options": ["alert", "sound"]}`.
    func requestAuthorization(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let body = try jsonBody(request, optional: true)
        var options: UNAuthorizationOptions = [.alert, .sound, .badge]
        if let body {
            let object = try Fields(body, accepted: ["options"])
            if let value = object["options"] { options = try UNAuthorizationOptions(json: value, field: "options") }
        }
        let (granted, settings) = try await engine.requestAuthorization(app: route["app"], options: options)
        return json(["granted": .bool(granted), "status": .string(settings.authorizationStatus.name), "settings": settings.json], route: route)
    }

    /// `POST /v1/apps/{app}/authorization/answer` `{"allow": true}`: the user's answer.
    func answerAuthorization(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let object = try Fields(try jsonBody(request), accepted: ["allow"])
        let allow = try object.requiredBool("allow")
        let settings = try await engine.answerAuthorization(app: route["app"], allow: allow)
        return json(["granted": .bool(settings.authorizationStatus.allowsDelivery), "status": .string(settings.authorizationStatus.name),
                     "settings": settings.json], route: route)
    }

    func getSettings(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        json(try await engine.settings(app: route["app"]).json, route: route)
    }

    /// `PUT /v1/apps/{app}/badge` `{"badge": 3}`; 0 clears it.
    func setBadge(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let object = try Fields(try jsonBody(request), accepted: ["badge"])
        guard let value = object["badge"] else { throw APIError.badRequest("invalidValue", "badge is missing; give a count, 0 clears it", field: "badge") }
        guard case .integer(let count) = value, let badge = Int(exactly: count) else {
            throw APIError.badRequest("invalidValue", "badge: expected a whole number, found \(value.kindDescription)", field: "badge")
        }
        try await engine.setBadge(badge, app: route["app"])
        return json(["badge": .integer(Int64(badge))], route: route)
    }
}
