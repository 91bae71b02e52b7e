import ChimeCore
import Foundation

/// `POST /3/device/{token}`: Apple's provider API, answered as Apple answers. The payload becomes a
/// delivered notification through the same decoder as the simulator's `push`.
///
/// Checks, in order: path (`BadPath`), method (`MethodNotAllowed`), the Bearer token
/// (`MissingProviderToken`, `InvalidProviderToken`), the topic (`MissingTopic`, `TopicDisallowed`;
/// ``APNsTopic``: a bundle identifier with Apple's suffix for a push type of its own),
/// a provider token (`InvalidProviderToken`, `ExpiredProviderToken`, `TopicDisallowed`,
/// `TooManyProviderTokenUpdates`: ``ProviderTokens``), the topic's app (`BadTopic`), the device token (`BadDeviceToken`, `DeviceTokenNotForTopic`;
/// 410 `Unregistered` with its `timestamp` after `unregisterForRemoteNotifications`), the headers
/// (``APNsRequestHeaders``: `InvalidPushType`, `BadMessageId`, `BadExpirationDate`, `BadPriority`,
/// `BadCollapseId`; `InvalidPushType` for a push type the topic is not for), and the
/// payload (`PayloadEmpty`, `PayloadTooLarge`).
struct APNsEndpoint {
    /// The route's name in metrics and the access log: its declaration's template.
    static let route = APIRoute.push.template

    let api: ChimeAPI

    static func reason(
        _ reason: String, status: Int, message: String? = nil, apnsID: String? = nil, timestamp: Int64? = nil
    ) -> HTTPResponse {
        var object: JSONObject = ["reason": .string(reason)]
        if let timestamp { object["timestamp"] = .integer(timestamp) }
        if let message { object["message"] = .string(message) }
        var response = HTTPResponse(
            status: status, contentType: "application/json", body: JSONValue.object(object).serializedBytes(),
            route: route)
        if let apnsID { response.headers.append(("apns-id", apnsID)) }
        return response
    }

    func handle(_ request: HTTPRequest) async -> HTTPResponse {
        let apnsID = request.header("apns-id")
        let echo = apnsID.flatMap { Self.isUUID($0) ? $0 : nil }
        do {
            return try await deliver(request, echo: echo)
        } catch let failure as Failure {
            return Self.reason(
                failure.reason, status: failure.status, message: failure.message, apnsID: echo,
                timestamp: failure.timestamp)
        } catch {
            // The error table's reason; the message is the service's answer's (never a store's text).
            let apiError = APIError.from(error)
            let entry =
                error is APIError
                ? (apiError.status >= 500 ? ErrorTable.unknown : .refusal) : ErrorTable.entry(for: error)
            if apiError.status >= 500 {
                api.logger.error("push failed", ["route": Self.route, "error": String(describing: error)])
            }
            var response = Self.reason(
                entry.apnsReason, status: entry.apnsStatus, message: apiError.message, apnsID: echo)
            response.headers += apiError.headers
            return response
        }
    }

    struct Failure: Error {
        var reason: String
        var status: Int
        var message: String
        /// 410 `Unregistered`'s `timestamp`: when the token stopped being valid, in milliseconds since 1970 (rounded as JSON dates are).
        var timestamp: Int64?
        init(_ reason: String, _ status: Int, _ message: String, timestamp: Int64? = nil) {
            self.reason = reason
            self.status = status
            self.message = message
            self.timestamp = timestamp
        }
    }

    private func deliver(_ request: HTTPRequest, echo: String?) async throws -> HTTPResponse {
        let segments: [String]
        do {
            segments = try request.pathSegments()
        } catch {
            throw Failure("BadDeviceToken", 400, "the path is not valid percent-encoding: \(error)")
        }
        guard segments.count == 3, segments[0] == "3", segments[1] == "device", !segments[2].isEmpty else {
            throw Failure("BadPath", 404, "the path must be /3/device/{64 hexadecimal characters}")
        }
        let deviceToken = segments[2].lowercased()
        guard request.method.uppercased() == "POST" else {
            throw Failure("MethodNotAllowed", 405, "only POST is allowed")
        }

        // Authentication: a provider token (an ES256 JWT: a registered team key's, for its team's
        // apps), the app's token (its own topic only) or the owner token (any topic). Chime's
        // tokens are hexadecimal, so a token with a '.' is a JWT. Without one, the TLS client's
        // certificate, for the apps it is registered for.
        let bearer = api.bearerToken(request)
        let certified = bearer == nil ? try await certifiedApps(request) : nil
        let token = bearer ?? ""
        let providerToken = token.contains(".")
        var caller: String?
        if certified == nil, !providerToken {
            let hash = Tokens.hash(token)
            if token.isEmpty || !Tokens.equal(hash, api.ownerTokenHash) {
                // The topic (whole, or without its push type's suffix) names the app whose token
                // another node may have just made.
                let named: [String] =
                    request.header("apns-topic").map { whole -> [String] in
                        let bare = APNsTopic(whole).bundleIdentifier
                        return bare.isLiterally(whole) ? [whole] : [whole, bare]
                    } ?? []
                guard !token.isEmpty, let app = try await api.owner(ofTokenHash: hash, candidates: named) else {
                    throw Failure(
                        "InvalidProviderToken", 403,
                        "the token is neither a provider token (a JWT) nor a registered app's token")
                }
                caller = app
            }
        }

        // As Apple: a certificate for one topic may leave the topic out.
        guard let topicText = request.header("apns-topic") ?? certified.flatMap({ $0.count == 1 ? $0.first : nil }),
            !topicText.isEmpty
        else {
            throw Failure(
                "MissingTopic", 400, "the apns-topic header is missing; set it to the app's bundle identifier")
        }
        // The topic names the app, with Apple's suffix for a push type of its own channel
        // (`.voip`, …); an app registered under the whole topic is that app.
        var apnsTopic = APNsTopic(topicText)
        var found = try await api.lookup(topicText)
        if found != nil {
            apnsTopic = APNsTopic(bundleIdentifier: topicText)
        } else if apnsTopic.suffixPushType != nil {
            found = try await api.lookup(apnsTopic.bundleIdentifier)
        }
        let topic = apnsTopic.bundleIdentifier
        if let caller, caller != topic {
            throw Failure("TopicDisallowed", 400, "this token may push only to \(caller)")
        }
        if let certified, !certified.contains(topic) {
            throw Failure(
                "TopicDisallowed", 400,
                "the client certificate is registered for \(certified.joined(separator: ", ")) only")
        }
        if providerToken {
            do {
                try await api.providerTokens.check(
                    token, topic: found, now: api.engine.clock.now, connection: request.connection
                ) { keyID in
                    try await registeredProviders(keyID: keyID)
                }
            } catch let refusal as ProviderTokens.Refusal {
                throw Failure(refusal.reason, refusal.status, refusal.message)
            }
        }
        guard let app = found else {
            throw Failure("BadTopic", 400, "no app \(topic.prefix(255)) is registered")
        }

        guard deviceToken.utf8.count == 64,
            deviceToken.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else {
            throw Failure(
                "BadDeviceToken", 400,
                "the device token must be 64 hexadecimal characters (GET /v1/apps/{app}/device-token)")
        }
        if app.deviceToken.lowercased() != deviceToken {
            try await api.loadTokens()
            if api.tokens.app(forDeviceToken: deviceToken) != nil {
                throw Failure("DeviceTokenNotForTopic", 400, "the device token belongs to another app than \(topic)")
            }
            throw Failure(
                "BadDeviceToken", 400,
                "no app has this device token; \(topic)'s is at GET /v1/apps/\(topic)/device-token")
        }
        if let unregistered = app.deviceTokenUnregistered {
            throw Failure(
                "Unregistered", 410,
                "\(topic) unregistered this device token (unregisterForRemoteNotifications) at \(JSONMapping.formatDate(unregistered)); it takes pushes again once the app registers",
                timestamp: Int64((unregistered.timeIntervalSince1970 * 1000).rounded()))
        }

        let headers: APNsRequestHeaders
        let pushType: APNsRequestHeaders.PushType
        do {
            headers = try APNsRequestHeaders.parse { request.header($0) }
            pushType = try apnsTopic.pushType(given: headers.pushType)
        } catch {
            throw Failure(error.reason, error.status, error.message)
        }
        if certified != nil, pushType == .liveactivity {
            // Apple takes Live Activity pushes on token-based connections only (certificates are
            // not supported for them); the reason it answers is not documented: ours, said in
            // differences-from-apple.md.
            throw Failure(
                "TopicDisallowed", 400,
                "a Live Activity push needs token-based authentication, as with Apple: send authorization: bearer <provider token>, not a client certificate"
            )
        }

        let payload: APNsPayload
        do {
            payload = try APNsPayload.decode(request.body)
        } catch {
            throw Failure(error.reason, error.status, error.message)
        }
        var content = payload.content
        let id = echo ?? UUID().uuidString.lowercased()
        let uniqueID = UUID().uuidString.lowercased()
        let success = HTTPResponse(
            status: 200, headers: [("apns-id", id), ("apns-unique-id", uniqueID)], body: .bytes([]), route: Self.route)
        let delivery = APNsTopic.delivery(of: pushType, payload: payload)
        if delivery == .dropped {
            // As on iOS: a background push without content-available wakes nothing.
            api.logger.warning("background push without content-available: 1 dropped", ["app": topic, "apns-id": id])
            return success
        }
        let silent = delivery == .toApp
        let identifier = headers.requestIdentifier(apnsID: id)
        if !silent && payload.goesThroughServiceExtension {
            // The app's service extension, when the app is connected; it has its time limit, and
            // the push is answered once delivered, so a 200 still means committed.
            let request = NotificationRequest(identifier: identifier, content: content, trigger: .push)
            content = await api.channels.runServiceExtension(app: topic, request: request) ?? content
        }
        do {
            // apns-expiration: APNs holds a push for an absent device until then; Chime delivers at
            // once, and the notification keeps it (its expirationDate).
            let expiration = headers.expiration.map { $0.date.map(NotificationDeadline.at) ?? .after(0) }
            try await api.engine.deliverPush(
                content, identifier: identifier, silent: silent, app: topic, expiration: expiration)
        } catch UNError.notificationsNotAllowed {
            // As on iOS: APNs accepts the push; the device does not show it.
            api.logger.info("push not shown: notifications are not allowed", ["app": topic, "apns-id": id])
        }
        return success
    }

    /// The team keys registered under `keyID` on any app, from the token index (no app record
    /// read). With a shared store, a key id the index does not know yet (registered through another
    /// node a moment ago, its change not yet announced by the feed) is looked for in every app
    /// record, so a key works on every node once its registration is answered.
    private func registeredProviders(keyID: String) async throws -> [APNsProvider] {
        try await api.loadTokens()
        let indexed = api.tokens.providers(keyID: keyID)
        guard indexed.isEmpty, api.engine.isStoreShared else { return indexed }
        return try await api.engine.apps().compactMap(\.apnsProvider).filter { $0.key?.id == keyID }
    }

    /// `8-4-4-4-12` hexadecimal digits, any case (``APNsRequestHeaders/isUUID(_:)``).
    static func isUUID(_ text: String) -> Bool { APNsRequestHeaders.isUUID(text) }
}
