import ChimeCore
import Foundation

/// The event streams, and what a connected app answers over its stream's side channel: its
/// notification service extension's content and its `willPresent` answer (see ``AppChannels``).
extension ChimeAPI {
    /// `GET /v1/apps/{app}/events`: the app's events as server-sent events.
    func appEvents(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let app = route["app"]
        // A Chime app says what it does while connected: run its service extension, answer willPresent.
        let serviceExtension = try Self.flag(request, "serviceExtension")
        let foreground = try Self.flag(request, "foreground")
        // Declaring them changes what the service does (pushes wait for the stream, deliveries for
        // its answers): with the session cookie, the same checks as a write, so that a page on
        // another port of the same host cannot open such a stream in the user's name.
        if serviceExtension || foreground, bearerToken(request) == nil,
            let secret = WebSessions.sessionCookie(in: request)
        {
            try checkChange(secret, request: request)
        }
        let response = try await openFeed(request, app: app, route: route)
        if case .stream(let stream) = response.body {
            channels.connect(
                app: app, stream: stream, client: request.queryValues("client").last,
                serviceExtension: serviceExtension, foreground: foreground)
        }
        return response
    }

    /// `GET /v1/events`: every app's events (the owner's stream).
    func allEvents(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        try await openFeed(request, app: nil, route: route)
    }

    /// `POST /v1/apps/{app}/service-extension/{id}`: the content the app's service extension made of a push.
    func serviceExtensionContent(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let app = route["app"]
        let id = route["id"]
        let content = try NotificationContent(json: try jsonBody(request), field: "")
        try Validation.validate(content, field: "")
        guard channels.answerServiceExtension(app: app, id: id, content: content) else {
            throw APIError.notFound(
                "no push \(id) waits for \(app)'s service extension (its time ran out, or it was answered)", field: "id"
            )
        }
        return HTTPResponse(status: 204, route: route.template)
    }

    /// `POST /v1/apps/{app}/notifications/{identifier}/presentation` `{"options": […]}`: the app in
    /// front answers `willPresent`.
    func reportPresentation(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let app = route["app"]
        let object = try JSONObjectReader(try jsonBody(request), what: "willPresent's answer", accepted: ["options"])
        guard let options = try object.options("options", table: UNNotificationPresentationOptions.names) else {
            throw APIError.badRequest(
                "invalidValue", "options is missing; give willPresent's answer, such as [\"banner\", \"sound\"]",
                field: "options")
        }
        let identifier = route["identifier"]
        switch channels.reportPresentation(app: app, identifier: identifier, options: options) {
        case .answered, .kept:
            return HTTPResponse(status: 204, route: route.template)
        case .notInFront:
            throw APIError(
                409, "notInFront",
                "\(app) has no event stream open with foreground=true; its willPresent answer is not asked for")
        case .notAwaited:
            throw APIError.notFound(
                "no delivery of \(identifier) waits for \(app)'s willPresent answer (its time ran out, it was answered, or it was not delivered while the app was in front)",
                field: "identifier")
        case .full:
            var error = APIError(
                429, "tooManyAnswers",
                "\(app)'s stream already keeps the most willPresent answers for deliveries not yet asked; answer them in order as they arrive"
            )
            error.headers = [("Retry-After", "1")]
            throw error
        }
    }
}
