import ChimeCore
import ChimeHTTP
import Foundation
import Synchronization

/// A center's backend that is a `chime serve` service: the app's requests, categories and answers
/// live in the service, which fires them, shows them in the web center and on the desktop, and
/// sends the user's answers back over its event stream.
///
/// Selected by `UNUserNotificationCenter.current()` when `CHIME_SERVICE` is set:
///
/// ```sh
/// chime apps add com.example.alarm            # prints the app's token once
/// CHIME_SERVICE=http://127.0.0.1:7878 CHIME_APP_TOKEN=<token> \
///   CHIME_BUNDLE_IDENTIFIER=com.example.alarm swift run alarm
/// ```
///
/// `CHIME_SERVICE` may also be `unix:/path` for a service on a Unix socket. Requests and the event
/// stream go through ``HTTPClient`` (libcurl): the stream's thread sleeps until bytes arrive.
///
/// Operations run one at a time in call order, as with the embedded engine; each completes when
/// the service has committed it. Events (deliveries, answers) arrive over a server-sent event
/// stream that resumes where it stopped after a reconnect; answers given while the app was away
/// wait in the service's outbox.
package final class ServiceBackend: CenterBackend {
    /// The service: `http://127.0.0.1:7878` or `unix:/path`.
    package var endpoint: HTTPEndpoint { client.endpoint }
    private let token: String
    private let client: HTTPClient
    /// Names this backend's event-stream connections to the service.
    private let clientID = UUID().uuidString.lowercased()
    package let clock: any NotificationClock = SystemClock()
    /// The app's events as the service's stream brings them, for the center and its surfaces.
    package let hub = NotificationHub()

    private struct State {
        var tail: Task<Void, Never>?
        var stream: Task<Void, Never>?
        var lastEventID: String?
        var deviceToken: String?
        /// The app's notification service extension, run when the service asks.
        var serviceExtension: ServiceExtensionHandler?
        /// Whether the app is in front (the service then waits for its `willPresent` answers).
        var foreground = false
        /// The event stream's connection now, to reconnect when what the app declares changes.
        var connection: Task<Void, any Error>?
        var reconnectAtOnce = false
        /// The app whose stream this is.
        var app: String?
    }

    private let state = Mutex(State())

    /// - Parameters:
    ///   - endpoint: the service, as `chime serve` prints it (`http://127.0.0.1:7878`), or its Unix socket.
    ///   - token: the app's token from `chime apps add`.
    ///   - caFile: CA certificates to trust for a service with a self-signed certificate (`CHIME_CA_FILE`).
    package init(endpoint: HTTPEndpoint, token: String, caFile: String? = nil) {
        self.token = token
        self.client = HTTPClient(endpoint: endpoint, timeout: 30, caFile: caFile)
    }

    deinit { state.withLock { $0.stream?.cancel() } }

    // MARK: Ordering

    /// Runs `operation` after every operation started before it, then `completion`.
    private func enqueue<T: Sendable>(
        _ operation: @escaping @Sendable () async throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        state.withLock { state in
            let previous = state.tail
            state.tail = Task {
                await previous?.value
                do { completion(.success(try await operation())) } catch { completion(.failure(error)) }
            }
        }
    }

    package func barrier() async {
        let tail = state.withLock { $0.tail }
        await tail?.value
    }

    // MARK: HTTP

    /// Sends a request to a declared route (its template filled with `parameters`, then `query`) and
    /// returns the JSON answer (`nil` for an empty body); an error answer becomes the error Apple's
    /// API or Chime's would throw.
    @discardableResult
    private func call(
        _ route: APIRoute, _ parameters: [String: String], query: String = "", json: JSONValue? = nil,
        body: [UInt8]? = nil, headers: [(String, String)] = []
    ) async throws -> JSONValue? {
        try await exchange(
            route.method.rawValue, route.path(parameters) + query, json: json, body: body, headers: headers
        ).answer
    }

    /// A whole list from a GET route: every page of a paged answer, following its `Link: rel="next"`.
    private func list(_ route: APIRoute, app: String) async throws -> JSONValue {
        var items: [JSONValue] = []
        var next: String? = route.path(["app": app]) + "?limit=1000"
        while let page = next {
            let (answer, link) = try await exchange(route.method.rawValue, page)
            guard case .array(let values)? = answer else { return answer ?? .array(items) }
            items += values
            next = LinkHeader.next(link)
        }
        return .array(items)
    }

    private func exchange(
        _ method: String, _ target: String, json: JSONValue? = nil, body: [UInt8]? = nil,
        headers: [(String, String)] = []
    ) async throws -> (answer: JSONValue?, link: String?) {
        var fields = [("Authorization", "Bearer \(token)")]
        let bytes = json?.serializedBytes() ?? body
        if bytes != nil { fields.append(("Content-Type", "application/json")) }
        let response: HTTPClient.Response
        do {
            response = try await client.request(method, target, headers: fields + headers, body: bytes)
        } catch let error as HTTPClientError {
            throw ChimeError(
                .serviceUnavailable, field: error.code == .badRequest ? nil : "CHIME_SERVICE", error.message)
        }
        guard response.isSuccess else { throw Self.error(response, target: target) }
        return (response.json, response.headers["link"])
    }

    static func error(_ response: HTTPClient.Response, target: String) -> any Error {
        let status = response.status
        let answer = response.serviceError
        if let reason = answer?.reason {
            return APNsPayloadError(reason: reason, status: status, message: "the service refused the push: \(reason)")
        }
        let code = answer?.code ?? ""
        let message = answer?.message ?? "the Chime service answered HTTP \(status) to \(target)"
        let field = answer?.field
        switch (status, code) {
        case (_, "notificationsNotAllowed"): return UNError(.notificationsNotAllowed, message)
        case (_, "badgeInputInvalid"): return UNError(.badgeInputInvalid, message)
        case (401, _):
            return ChimeError(
                .notPermitted, field: "CHIME_APP_TOKEN",
                "the service refused the app's token (\(message)); use the token `chime apps add` printed")
        case (403, _): return ChimeError(.notPermitted, message)
        case (500..., _): return ChimeError(.serviceUnavailable, field: field, message)
        default:
            return ChimeError(code.isEmpty ? .invalidValue : ChimeError.Code(rawValue: code), field: field, message)
        }
    }

    private static func items<T>(_ answer: JSONValue?, _ decode: (JSONValue, String) throws(ChimeError) -> T) throws
        -> [T]
    {
        guard case .array(let values)? = answer else {
            throw ChimeError(.malformedInput, "the service's answer is not a list")
        }
        var result: [T] = []
        for (index, value) in values.enumerated() { result.append(try decode(value, "[\(index)]")) }
        return result
    }

    private static func removed(_ answer: JSONValue?) -> [String] {
        // The shared reader; an answer it cannot read removed nothing the app can name.
        (try? JSONMapping.removedIdentifiers(answer)) ?? []
    }

    // MARK: Operations

    package func requestAuthorization(
        app: String, options: UNAuthorizationOptions,
        completion: @escaping @Sendable (Result<Bool, any Error>) -> Void
    ) {
        enqueue(
            { [self] in
                let names = options.names(from: UNAuthorizationOptions.names).map(JSONValue.string)
                var status = try AuthorizationAnswer(
                    json: try await call(
                        .requestAuthorization, ["app": app],
                        json: [JSONFieldName.options: .array(names)]) ?? .null
                ).status
                // The user has not answered yet (the web center or `chime apps allow|deny` asks): wait
                // for the answer, as iOS waits for its alert.
                while status == .notDetermined {
                    try await Sleep.for(.milliseconds(500))
                    status = try NotificationSettings(json: try await call(.getSettings, ["app": app]) ?? .null)
                        .authorizationStatus
                }
                return status.allowsDelivery
            }, completion: completion)
    }

    package func settings(
        app: String, completion: @escaping @Sendable (Result<NotificationSettings, any Error>) -> Void
    ) {
        enqueue(
            { [self] in try NotificationSettings(json: try await call(.getSettings, ["app": app]) ?? .null) },
            completion: completion)
    }

    package func setCategories(
        _ categories: [NotificationCategory], app: String,
        completion: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        enqueue(
            { [self] in _ = try await call(.setCategories, ["app": app], json: .array(categories.map(\.json))) },
            completion: completion)
    }

    package func categories(
        app: String, completion: @escaping @Sendable (Result<[NotificationCategory], any Error>) -> Void
    ) {
        enqueue(
            { [self] in
                try Self.items(try await list(.getCategories, app: app)) { value, field throws(ChimeError) in
                    try NotificationCategory(json: value, field: field)
                }
            }, completion: completion)
    }

    package func add(
        _ requests: [NotificationRequest], app: String,
        completion: @escaping @Sendable (Result<[Date?], any Error>) -> Void
    ) {
        enqueue(
            { [self] in
                let answer = try await call(.addRequests, ["app": app], json: .array(requests.map(\.json)))
                return try Self.items(answer) { value, field throws(ChimeError) in
                    try PendingRequest(json: value, field: field).nextFireDate
                }
            }, completion: completion)
    }

    package func fail(_ error: any Error, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        enqueue({ throw error }, completion: completion)
    }

    package func pending(app: String, completion: @escaping @Sendable (Result<[PendingRequest], any Error>) -> Void) {
        enqueue(
            { [self] in
                try Self.items(try await list(.listRequests, app: app)) { value, field throws(ChimeError) in
                    try PendingRequest(json: value, field: field)
                }
            }, completion: completion)
    }

    private func query(_ identifiers: [String]) -> String {
        "?" + PercentEncoding.query(identifiers.map { (name: "identifier", value: $0) })
    }

    /// Removes by identifier (all when nil) in calls of at most 100 identifiers: the service takes
    /// at most 128 query arguments a request.
    private func remove(_ route: APIRoute, app: String, identifiers: [String]?) async throws -> [String] {
        guard let identifiers else { return Self.removed(try await call(route, ["app": app])) }
        var removed: [String] = []
        for start in stride(from: 0, to: identifiers.count, by: 100) {
            let batch = Array(identifiers[start..<min(identifiers.count, start + 100)])
            removed += Self.removed(try await call(route, ["app": app], query: query(batch)))
        }
        return removed
    }

    package func removePending(
        app: String, identifiers: [String]?, completion: @escaping @Sendable (Result<[String], any Error>) -> Void
    ) {
        if identifiers?.isEmpty == true { return enqueue({ [] }, completion: completion) }
        enqueue(
            { [self] in try await remove(.removeRequests, app: app, identifiers: identifiers) }, completion: completion)
    }

    package func delivered(
        app: String, completion: @escaping @Sendable (Result<[DeliveredNotification], any Error>) -> Void
    ) {
        enqueue(
            { [self] in
                try Self.items(try await list(.listNotifications, app: app)) { value, field throws(ChimeError) in
                    try DeliveredNotification(json: value, field: field)
                }
            }, completion: completion)
    }

    package func removeDelivered(
        app: String, identifiers: [String]?, completion: @escaping @Sendable (Result<[String], any Error>) -> Void
    ) {
        if identifiers?.isEmpty == true { return enqueue({ [] }, completion: completion) }
        enqueue(
            { [self] in try await remove(.removeNotifications, app: app, identifiers: identifiers) },
            completion: completion)
    }

    package func setBadge(_ count: Int, app: String, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)
    {
        enqueue(
            { [self] in _ = try await call(.setBadge, ["app": app], json: [JSONFieldName.badge: .integer(Int64(count))])
            }, completion: completion)
    }

    package func outbox(app: String) async throws -> [NotificationResponse] {
        try Self.items(try await list(.outbox, app: app)) { value, field throws(ChimeError) in
            try NotificationResponse(json: value, field: field)
        }
    }

    package func acknowledgeResponse(_ id: Int64, app: String) async throws {
        try await call(.acknowledge, ["app": app, "id": String(id)])
    }

    package func answer(app: String, notification: String, action: String, userText: String?) async throws -> Bool {
        throw ChimeError(
            .notPermitted, field: "actionIdentifier",
            "answers come from the user, on the service's surfaces (the web center, `chime respond`), not from the app")
    }

    package func receipt(app: String, notification: String) async throws -> EscalationReceipt? {
        do {
            guard let answer = try await call(.receipt, ["app": app, "identifier": notification]) else { return nil }
            return try EscalationReceipt(json: answer)
        } catch let error as ChimeError where error.code == .notFound {
            return nil
        }
    }

    /// The service runs the app's extension on the push through the app's event stream (see
    /// ``serviceExtensionChanged(_:app:)``), so `serviceExtension` is not used here.
    package func push(_ payload: Data, identifier: String, app: String, serviceExtension: ServiceExtensionHandler?)
        async throws
    {
        let decoded = try APNsPayload.decode(payload)
        let device: String
        if let known = state.withLock({ $0.deviceToken }) {
            device = known
        } else {
            guard case .string(let fetched)? = try await call(.deviceToken, ["app": app])?["deviceToken"] else {
                throw ChimeError(.malformedInput, "the service did not give the app's device token")
            }
            state.withLock { $0.deviceToken = fetched }
            device = fetched
        }
        var headers = [
            ("apns-topic", app), ("apns-push-type", decoded.isSilent ? "background" : "alert"),
            ("apns-priority", decoded.isSilent ? "5" : "10"),
        ]
        if identifier.utf8.count <= 64 { headers.append(("apns-collapse-id", identifier)) }
        try await call(.push, ["token": device], body: Array(payload), headers: headers)
    }

    package func registerDevice(app: String) async throws -> String {
        guard case .string(let token)? = try await call(.registerDevice, ["app": app])?["deviceToken"] else {
            throw ChimeError(.malformedInput, "the service did not give the app's device token")
        }
        state.withLock { $0.deviceToken = token }
        return token
    }

    package func unregisterDevice(app: String) async throws {
        try await call(.unregisterDevice, ["app": app])
    }

    package func serviceExtensionChanged(_ handler: ServiceExtensionHandler?, app: String) {
        let changed = state.withLock { state -> Bool in
            defer { state.serviceExtension = handler }
            return (state.serviceExtension == nil) != (handler == nil)
        }
        if changed { reconnect() }
    }

    package func foregroundChanged(_ inFront: Bool, app: String) {
        let changed = state.withLock { state -> Bool in
            defer { state.foreground = inFront }
            return state.foreground != inFront
        }
        if changed { reconnect() }
    }

    package func reportPresentation(_ options: UNNotificationPresentationOptions, for identifier: String, app: String) {
        let names = options.names(from: UNNotificationPresentationOptions.names).map(JSONValue.string)
        // In order with the app's other operations; a refusal (the service no longer waits) is fine.
        enqueue(
            { [self] in
                _ = try? await call(
                    .reportPresentation, ["app": app, "identifier": identifier], json: ["options": .array(names)])
            }, completion: { _ in })
    }

    /// Opens the event stream again at once, declaring what the app now does (a running stream
    /// resumes where it stopped).
    private func reconnect() {
        let connection = state.withLock { state -> Task<Void, any Error>? in
            guard state.stream != nil else { return nil }
            state.reconnectAtOnce = true
            return state.connection
        }
        connection?.cancel()
    }

    package func moveDevice(to coordinate: Coordinate) async throws {
        throw ChimeError(
            .notPermitted, field: "location",
            "the device's location belongs to the user: the service takes it from the owner (POST /v1/location), not from an app"
        )
    }

    // MARK: Events

    /// Follows the app's event stream until stopped, reconnecting with `Last-Event-ID` (1 s, then
    /// up to 10 s apart while the service is away).
    package func start(app: String) {
        state.withLock { state in
            guard state.stream == nil else { return }
            state.app = app
            state.stream = Task { [weak self] in
                var delay = 1.0
                while !Task.isCancelled {
                    guard let self else { return }
                    let received = await self.follow(app: app)
                    delay = received ? 1 : min(delay * 2, 10)
                    if self.state.withLock({ state in
                        defer { state.reconnectAtOnce = false }
                        return state.reconnectAtOnce
                    }) {
                        continue
                    }
                    try? await Sleep.for(.seconds(delay))
                }
            }
        }
    }

    package func stop(app: String) {
        state.withLock { state in
            state.stream?.cancel()
            state.stream = nil
        }
    }

    /// One connection of the event stream; returns whether any event arrived.
    private func follow(app: String) async -> Bool {
        let (serviceExtension, foreground) = state.withLock { ($0.serviceExtension != nil, $0.foreground) }
        // `client` names this process's connection, so the next one replaces it on the service.
        var query = ["client=" + clientID]
        if serviceExtension { query.append("serviceExtension=true") }
        if foreground { query.append("foreground=true") }
        let target = APIRoute.appEvents.path(["app": app]) + "?" + query.joined(separator: "&")
        var fields = [("Authorization", "Bearer \(token)")]
        if let last = state.withLock({ $0.lastEventID }) { fields.append(("Last-Event-ID", last)) }
        let (headers, client) = (fields, self.client)
        let received = Atomic<Bool>(false)
        let onEvent: @Sendable (ServerSentEventParser.Event) -> Void = { [weak self] event in
            received.store(true, ordering: .relaxed)
            self?.dispatch(kind: event.kind, id: event.id, data: event.data)
        }
        // The connection as a task of its own, so `reconnect()` can cancel just it.
        let connection = Task { try await client.events(target, headers: headers, onEvent: onEvent) }
        state.withLock { $0.connection = connection }
        await withTaskCancellationHandler {
            _ = try? await connection.value
        } onCancel: {
            connection.cancel()
        }
        return received.load(ordering: .relaxed)
    }

    private func dispatch(kind: String, id: String?, data: String) {
        if let id { state.withLock { $0.lastEventID = id } }
        guard let json = try? JSONValue.parse(Array(data.utf8)) else { return }
        if kind == "serviceExtension" {
            runServiceExtension(json)
            return
        }
        guard let event = try? EngineEvent(json: json) else { return }
        hub.publish([event])
    }

    /// The service asks for the app's extension on a push: run it, post what it gives.
    private func runServiceExtension(_ json: JSONValue) {
        guard case .string(let callID)? = json["id"], case .string(let identifier)? = json["identifier"],
            let app = state.withLock({ $0.app }),
            let content = json["content"].flatMap({ try? NotificationContent(json: $0) })
        else { return }
        var limit: TimeInterval?
        switch json["timeLimit"] {
        case .number(let seconds)?: limit = seconds
        case .integer(let seconds)?: limit = TimeInterval(seconds)
        default: break
        }
        let handler = state.withLock { $0.serviceExtension }
        Task { [self] in
            let request = NotificationRequest(identifier: identifier, content: content, trigger: .push)
            let changed = await handler?(request, limit) ?? content
            _ = try? await call(.serviceExtensionContent, ["app": app, "id": callID], json: changed.json)
        }
    }
}
