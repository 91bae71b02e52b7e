import ChimeCore
import ChimeCrypto
import Foundation

/// The Web Push routes: the service's VAPID public key, and the subscribed devices (registered by
/// the web center with `PushSubscription.toJSON()`, listed, given apps, named, removed).
extension ChimeAPI {
    /// What the Web Push routes need: the public key browsers subscribe with, and where pushes
    /// may go. `nil` on an API without Web Push (in-process uses that do not send).
    public struct WebPush: Sendable {
        /// The VAPID public key, base64url (``WebPushKey/publicKeyText``).
        public var publicKey: String
        public var endpoints: WebPushEndpoints

        public init(publicKey: String, endpoints: WebPushEndpoints) {
            self.publicKey = publicKey
            self.endpoints = endpoints
        }
    }

    private func webPushOn() throws -> WebPush {
        guard let webPush else {
            throw APIError(503, "unavailable", "Web Push is not set up in this service (it is in `chime serve`)")
        }
        return webPush
    }

    /// `GET /v1/web-push/key`: `{"publicKey": base64url point}`, the `applicationServerKey` to subscribe with.
    func webPushKey(_ request: HTTPRequest, route: Route) throws -> HTTPResponse {
        json([JSONFieldName.WebPushKey.publicKey: .string(try webPushOn().publicKey)], route: route)
    }

    /// `GET /v1/web-push/subscriptions`: the subscribed devices, oldest first, paged by id.
    func listWebPushSubscriptions(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let page = try Page(request)
        var subscriptions = try await engine.webPushSubscriptions()
        if let after = page.after {
            guard let index = subscriptions.firstIndex(where: { $0.id == after }) else { throw Page.badCursor(after) }
            subscriptions.removeFirst(index + 1)
        }
        return page.response(
            subscriptions.prefix(page.limit + 1).map { ($0.json, $0.id) }, request: request, route: route)
    }

    /// `POST /v1/web-push/subscriptions` with `PushSubscription.toJSON()` (and `name`, `apps`):
    /// 201 with the new subscription, 200 when the endpoint was registered already (updated).
    func createWebPushSubscription(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let registration = try WebPushRegistration.decode(try jsonBody(request), endpoints: try webPushOn().endpoints)
        // The point itself (OpenSSL's check), so that a key no push could be encrypted to is refused now, not at the first push.
        _ = try WebPushEncryption.subscriberKey(registration.p256dh)
        try await requireApps(registration.apps ?? nil)
        let (subscription, created) = try await engine.registerWebPushSubscription(
            registration, userAgent: request.header("user-agent") ?? "",
            date: engine.clock.now)
        return json(subscription.json, status: created ? 201 : 200, route: route)
    }

    /// `PATCH /v1/web-push/subscriptions/{id}` `{"apps": [...] | null, "name": "…"}`.
    func updateWebPushSubscription(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        typealias Field = JSONFieldName.Device
        let object = try JSONObjectReader(
            try jsonBody(request), what: "a device's apps and name", accepted: Field.changes)
        guard object.object[Field.apps] != nil || object.object[Field.name] != nil else {
            throw APIError.badRequest(
                "invalidValue",
                "give \(Field.apps) (an array of bundle identifiers, or null for every app), \(Field.name), or both",
                field: Field.apps)
        }
        var apps: [String]??
        if object.object[Field.apps] != nil {
            let chosen = try WebPushRegistration.decodeApps(object.object[Field.apps], field: Field.apps)
            try await requireApps(chosen)
            apps = .some(chosen)
        }
        let name = try object.string(Field.name)
        if let name { try WebPushSubscription.validateName(name, field: Field.name) }
        return json(
            try await engine.updateWebPushSubscription(id: route["id"], apps: apps, name: name).json, route: route)
    }

    /// Throws unless every app chosen for a device is registered.
    private func requireApps(_ apps: [String]?) async throws {
        for (index, app) in (apps ?? []).enumerated() where try await lookup(app) == nil {
            throw APIError.notFound(
                "apps[\(index)]: no app \(app); register it with POST /v1/apps", field: "apps[\(index)]")
        }
    }

    /// `DELETE /v1/web-push/subscriptions/{id}`: the device gets no more pushes.
    func removeWebPushSubscription(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let id = route["id"]
        guard try await engine.removeWebPushSubscription(id: id) else {
            throw APIError.notFound(
                "no web push subscription \(id.prefix(40)) (already removed?); see GET /v1/web-push/subscriptions",
                field: "id")
        }
        return json([JSONFieldName.removed: .string(id)], route: route)
    }
}
