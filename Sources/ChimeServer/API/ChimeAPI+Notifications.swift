import ChimeCore
import Foundation

/// An app's categories, pending requests, delivered notifications and the answers to them (the
/// outbox), and the device's location.
extension ChimeAPI {
    // MARK: Categories

    func getCategories(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        // Categories are few and replaced together; the cursor is a position.
        let page = try Page(request)
        let start = Int(try page.number())
        let categories = try await engine.categories(app: route["app"]).enumerated().dropFirst(start).prefix(
            page.limit + 1)
        return page.response(
            categories.map { ($0.element.json, String($0.offset + 1)) }, request: request, route: route)
    }

    func setCategories(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let categories = try JSONMapping.categories(try jsonBody(request))
        try await engine.setCategories(categories, app: route["app"])
        return json(.array(categories.map(\.json)), route: route)
    }

    // MARK: Pending requests

    /// `POST /v1/apps/{app}/requests`: one request object, or an array of them. Read and checked
    /// on the server's thread, answered 201 from the add's commit (``RouteTable/Starter``).
    func addRequests(_ request: HTTPRequest, route: Route, answer: @escaping HTTPAnswer) throws -> HTTPResponse? {
        let body = try jsonBody(request)
        let now = engine.clock.now
        // Expirations given as durations count from now: the answer shows the dates kept.
        let requests = try JSONMapping.requests(body).map { $0.added(at: now) }
        if requests.isEmpty {
            throw APIError.badRequest(
                "invalidValue", "the array is empty; send one request object or a non-empty array")
        }
        let array = if case .array = body { true } else { false }
        try startAdd(requests, at: now, route: route, array: array, answer: answer)
        return nil
    }

    /// Hands checked requests to the engine's writer (a refusal of the checks is thrown here) and
    /// answers 201 with the requests as added, or the error, once the add commits; the answer is
    /// encoded on the server's thread, not the writer's. `refusal` words an error of the add in
    /// the route's own terms.
    func startAdd(
        _ requests: [NotificationRequest], at now: Date, route: Route, array: Bool,
        refusal: @escaping @Sendable (any Error) -> any Error = { $0 }, answer: @escaping HTTPAnswer
    ) throws {
        do {
            try engine.enqueueAdd(requests, app: route["app"]) { result in
                answer {
                    do {
                        // Written straight into bytes: what `.json` of each, serialized, gives.
                        var body: [UInt8] = []
                        body.reserveCapacity(1024 * requests.count)
                        if array { body.append(UInt8(ascii: "[")) }
                        for (i, (request, date)) in zip(requests, try result.get()).enumerated() {
                            if i > 0 { body.append(UInt8(ascii: ",")) }
                            PendingRequest(request: request, nextFireDate: date, anchor: now).appendJSON(to: &body)
                        }
                        if array { body.append(UInt8(ascii: "]")) }
                        return HTTPResponse(
                            status: 201, contentType: "application/json", body: body, route: route.template)
                    } catch {
                        return self.failure(refusal(error), route: route)
                    }
                }
            }
        } catch {
            throw refusal(error)
        }
    }

    /// `GET /v1/apps/{app}/requests[?next=N]`: with `next`, each request's next N fire dates as
    /// `nextTriggerDates`.
    func listRequests(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let page = try Page(request)
        var upcoming: Int?
        if let text = request.queryValues("next").last {
            guard let value = Int(text), (1...FireDates.maximumUpcoming).contains(value) else {
                throw APIError.badRequest(
                    "invalidValue",
                    "next is \"\(text.prefix(20))\"; give how many upcoming dates to list, a whole number from 1 to \(FireDates.maximumUpcoming)",
                    field: "next")
            }
            upcoming = value
        }
        let pending = try await engine.pending(app: route["app"], after: try page.number(), limit: page.limit + 1)
        guard let upcoming else {
            return page.response(pending.map { ($0.json, String($0.sequence)) }, request: request, route: route)
        }
        let zone = try await engine.timeZone()
        return page.response(
            pending.map { ($0.json(upcoming: upcoming, timeZone: zone), String($0.sequence)) }, request: request,
            route: route)
    }

    /// `DELETE /v1/apps/{app}/requests[?identifier=…]`: all of them without an identifier.
    func removeRequests(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let identifiers = request.queryValues("identifier")
        let removed = try await engine.removePending(
            app: route["app"], identifiers: identifiers.isEmpty ? nil : identifiers)
        return json([JSONFieldName.removed: .array(removed.map(JSONValue.string))], route: route)
    }

    // MARK: Delivered notifications

    func listNotifications(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let app = route["app"]
        let thread = request.queryValues("thread").last
        let categories = Dictionary(
            try await engine.categories(app: app).map { ($0.identifier, $0) }, uniquingKeysWith: { a, _ in a })
        let page = try Page(request)
        let delivered = try await engine.delivered(
            app: app, thread: thread, after: try page.deliveredCursor(), limit: page.limit + 1)
        let settings = try await engine.settings(app: app)
        // Each with the presentation a surface gives it now (the app is not in front): what
        // the web center uses to decide on a banner and a sound.
        return page.response(
            delivered.map { notification in
                (
                    notification.json(
                        category: categories[notification.request.content.categoryIdentifier],
                        presentation: Presentation.background(for: notification.request.content, settings: settings)),
                    Page.cursor(notification)
                )
            }, request: request, route: route)
    }

    /// `DELETE /v1/apps/{app}/notifications[?identifier=…][&thread=…]`.
    func removeNotifications(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let identifiers = request.queryValues("identifier")
        let thread = request.queryValues("thread").last
        let removed = try await engine.removeDelivered(
            app: route["app"], identifiers: identifiers.isEmpty ? nil : identifiers, thread: thread)
        return json([JSONFieldName.removed: .array(removed.map(JSONValue.string))], route: route)
    }

    // MARK: Answers

    /// `POST /v1/apps/{app}/notifications/{identifier}/responses` `{"actionIdentifier": …, "userText": …,
    /// "surface": …}`: the user's answer; 204 when the action only dismisses. `surface` (default
    /// `api`) names where the user answered, for an escalating notification's receipt.
    func respond(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        typealias Field = JSONFieldName.Response
        let object = try JSONObjectReader(
            try jsonBody(request), what: "the user's answer",
            accepted: Field.answerFields)
        let action = try object.requiredString(
            Field.actionIdentifier,
            hint: " naming the action (com.apple.UNNotificationDefaultActionIdentifier for a tap)")
        let text = try object.string(Field.userText)
        // The engine checks the name (Validation.validateSurface).
        let surface = try object.string(Field.surface) ?? "api"
        guard
            let response = try await engine.respond(
                app: route["app"], notification: route["identifier"], action: action, userText: text,
                surface: surface)
        else {
            return HTTPResponse(status: 204, route: route.template)
        }
        return json(response.json, status: 201, route: route)
    }

    /// `GET /v1/apps/{app}/notifications/{identifier}/receipt`: the escalating notification's
    /// receipt, kept after it left the delivered list; 404 when it has none.
    func receipt(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let app = route["app"]
        let identifier = route["identifier"]
        guard let receipt = try await engine.receipt(app: app, notification: identifier) else {
            throw APIError.notFound(
                "no receipt for '\(identifier)' in \(app): only a notification added with escalateEvery and escalateFor has one, kept as long as the event log keeps events (--event-log-max-days)",
                field: "identifier")
        }
        return json(receipt.json, route: route)
    }

    func outbox(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let page = try Page(request)
        let responses = try await engine.outbox(app: route["app"], after: try page.number(), limit: page.limit + 1)
        return page.response(responses.map { ($0.json, String($0.id)) }, request: request, route: route)
    }

    func acknowledge(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let app = route["app"]
        let idText = route["id"]
        guard let id = Int64(idText) else {
            throw APIError.notFound(
                "response id \(idText) is not a number; use the id from GET /v1/apps/\(app)/responses", field: "id")
        }
        guard try await engine.acknowledge(response: id, app: app) else {
            throw APIError.notFound("no response \(id) in \(app)'s outbox (already acknowledged?)", field: "id")
        }
        return json(["acknowledged": .integer(id)], route: route)
    }

    // MARK: Location

    /// `POST /v1/location` `{"latitude": …, "longitude": …}`: what location triggers it fires.
    func updateLocation(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let coordinate = try Coordinate(json: try jsonBody(request), field: "")
        let delivered = try await engine.updateLocation(coordinate)
        return json(["delivered": .array(delivered.map { $0.json })], route: route)
    }
}
