import ChimeCore
import ChimeHTTP
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

/// Web Push sent for real to a loopback push service (`push_service.py`): every payload decrypted
/// by http_ece with the subscriber's private key, every VAPID token verified by PyJWT, the RFC 8030
/// headers, and the push service's answers — 201, 404/410 (the subscription goes), 429 with
/// Retry-After (tried again) — and a restart with pushes still queued.
@Suite("Web Push sending, to a loopback push service", .testThreads, .timeLimit(.minutes(3)))
struct WebPushSendingTests {
    static let app = "com.example.alarm"

    /// Registers the alarm app with Alarm's category, and a subscriber of the double.
    static func prepare(_ harness: ServiceHarness, _ double: PushServiceDouble, subscribers: Int = 1) async throws -> (
        token: String, ids: [String]
    ) {
        let token = try await harness.createApp(app)
        let client = harness.client(token: token)
        #expect(
            try await client.post(
                "/v1/apps/\(app)/authorization", json: #"{"options": ["alert", "sound", "badge", "timeSensitive"]}"#
            ).status == 200)
        #expect(try await client.put("/v1/apps/\(app)/categories", json: alarmCategory).status == 200)
        var ids: [String] = []
        for _ in 0..<subscribers {
            let subscription = try await double.subscribe()
            let registered = try await harness.owner.request(.createWebPushSubscription, json: subscription)
            #expect(registered.status == 201, "\(registered.text)")
            guard case .string(let endpoint)? = try JSONValue.parse(subscription)["endpoint"] else {
                throw TestClientError(description: subscription)
            }
            ids.append(String(endpoint.split(separator: "/").last ?? ""))
        }
        return (token, ids)
    }

    static func deliver(
        _ client: TestClient, identifier: String = "Alarm", body: String = "Wake up", level: String = "timeSensitive"
    ) async throws {
        let request: JSONValue = [
            "identifier": .string(identifier), "title": "Alarm", "subtitle": "Kitchen", "body": .string(body),
            "categoryIdentifier": "alarm.category", "interruptionLevel": .string(level), "badge": 1,
        ]
        let added = try await client.post("/v1/apps/\(app)/requests", json: request.serialized())
        #expect(added.status == 201, "\(added.text)")
    }

    @Test(
        "a delivery reaches the subscriber encrypted for it, with a VAPID token PyJWT verifies, TTL, Urgency and Topic; a removal sends a close"
    )
    func delivered() async throws {
        let double = try await PushServiceDouble.start()
        defer { Task { await double.stop() } }
        try await ServiceHarness.with(webPushEndpoints: [double.origin]) { harness in
            let (token, _) = try await Self.prepare(harness, double)
            let client = harness.client(token: token)
            try await Self.deliver(client)
            let pushes = try await double.requests(atLeast: 1)
            let push = try #require(pushes.first)
            #expect(push["decryptError"] == nil, "\(push)")
            let payload = try #require(push["payload"])
            #expect(payload["kind"] == "show")
            #expect(payload["app"] == .string(Self.app))
            #expect(payload["id"] == "Alarm")
            #expect(payload["title"] == "Alarm" && payload["subtitle"] == "Kitchen" && payload["body"] == "Wake up")
            #expect(payload["badge"] == 1)
            #expect(payload["level"] == "timeSensitive")
            #expect(payload["dismiss"] == true)
            guard case .array(let actions)? = payload["actions"] else {
                Issue.record("no actions in \(payload)")
                return
            }
            #expect(actions.map { $0["title"] } == ["Snooze 5 Sec", "Add Comment"])
            #expect(actions[1]["input"]?["placeholder"] == "Add Comment Here")
            #expect(push["vapid"]?["ok"] == true, "\(push["vapid"] ?? .null)")
            #expect(push["vapid"]?["claims"]?["aud"] == .string(double.origin))
            #expect(push["vapid"]?["header"]?["alg"] == "ES256")
            #expect(
                push["vapid"]?["k"]
                    == .string(try await harness.owner.request(.webPushKey).json?["publicKey"]?.text ?? "?"))
            let headers = try #require(push["headers"])
            #expect(headers["content-encoding"] == "aes128gcm")
            #expect(headers["urgency"] == "high")
            #expect(
                headers["ttl"].flatMap(\.text).flatMap(Int.init).map { $0 > 600_000 && $0 <= 604_800 } == true,
                "\(headers)")
            #expect(headers["topic"]?.text?.count == 32)
            // Removed on the service: closed on the device, under the same topic.
            #expect(try await client.delete("/v1/apps/\(Self.app)/notifications?identifier=Alarm").status == 200)
            let close = try #require(try await double.requests(atLeast: 2).last)
            #expect(close["payload"]?["kind"] == "close")
            #expect(close["payload"]?["ids"] == .array(["Alarm"]))
            #expect(close["headers"]?["topic"] == headers["topic"])
            await harness.service.webPush.idle()
            #expect(try await harness.service.engine.queuedWebPushCount() == 0)
            #expect(try await harness.service.engine.webPushSubscriptions().first?.lastSuccess != nil)
        }
    }

    @Test(
        "a notification that expires within the week is pushed with the seconds it has left as its TTL; apns-expiration 0 with TTL 0"
    )
    func ttlFromExpiration() async throws {
        let double = try await PushServiceDouble.start()
        defer { Task { await double.stop() } }
        try await ServiceHarness.with(webPushEndpoints: [double.origin]) { harness in
            let (token, _) = try await Self.prepare(harness, double)
            let client = harness.client(token: token)
            let request: JSONValue = ["identifier": "ride", "title": "Your ride is here", "expiresIn": 600]
            #expect(try await client.post("/v1/apps/\(Self.app)/requests", json: request.serialized()).status == 201)
            let ride = try #require(try await double.requests(atLeast: 1).first)
            #expect(ride["payload"]?["id"] == "ride")
            #expect(
                ride["headers"]?["ttl"].flatMap(\.text).flatMap(Int.init).map { $0 > 500 && $0 <= 600 } == true,
                "\(ride["headers"] ?? .null)")
            guard
                case .string(let device)? = try await client.get("/v1/apps/\(Self.app)/device-token").json?[
                    "deviceToken"]
            else {
                throw TestClientError(description: "no device token")
            }
            let pushed = try await client.request(
                "POST", "/3/device/\(device)",
                headers: [
                    ("apns-topic", Self.app), ("apns-expiration", "0"),
                    ("apns-collapse-id", "score"),
                ],
                body: Array(#"{"aps": {"alert": "Score"}}"#.utf8))
            #expect(pushed.status == 200, "\(pushed.text)")
            let score = try #require(try await double.requests(atLeast: 2).last)
            #expect(score["payload"]?["id"] == "score")
            #expect(score["headers"]?["ttl"] == "0", "\(score["headers"] ?? .null)")
        }
    }

    @Test(
        "an escalating notification alerted again is queued as a show again: high urgency, its alert number, and closing it answers it"
    )
    func realertedShownAgain() throws {
        let now = Date(timeIntervalSince1970: 1_780_000_000)
        var content = NotificationContent(title: "Wake up")
        content.sound = .default
        let notification = DeliveredNotification(
            request: NotificationRequest(
                identifier: "wake", content: content,
                escalation: NotificationEscalation(every: 60, for: 1800)),
            date: now)
        var delivery = Delivery(
            notification: notification, category: nil, settings: NotificationSettings(),
            presentation: [.banner, .sound, .list])
        delivery.alert = 3
        let subscription = WebPushSubscription(
            id: "phone", endpoint: "https://push.example.org/1", p256dh: [4], auth: [1], created: now)
        let event = EngineEvent(
            sequence: 9, app: Self.app, date: now.addingTimeInterval(120), payload: .realerted(delivery))
        let entry = try #require(
            WebPushSurface.entry(for: event, subscriptions: [subscription], now: now.addingTimeInterval(120)))
        #expect(entry.subscriptions == ["phone"] && entry.messages.count == 1)
        let stored = try JSONValue.parse(entry.messages[0])
        #expect(stored["urgency"] == .string("high"))
        #expect(stored["payload"]?["kind"] == .string("show") && stored["payload"]?["id"] == .string("wake"))
        #expect(stored["payload"]?["alert"] == .integer(3) && stored["payload"]?["dismiss"] == .bool(true))
        // The first alert: its own urgency, no alert number; closing it still answers it.
        delivery.alert = 1
        let first = try JSONValue.parse(WebPushMessage.show(delivery, app: Self.app, now: now).storedRecord)
        #expect(
            first["urgency"] == .string("normal") && first["payload"]?["alert"] == nil
                && first["payload"]?["dismiss"] == .bool(true))
    }

    @Test("a delivery a focus held is not pushed; one it let through (time-sensitive) is, as usual")
    func focusHeldNotPushed() throws {
        let now = Date(timeIntervalSince1970: 1_780_000_000)
        let subscription = WebPushSubscription(
            id: "phone", endpoint: "https://push.example.org/1", p256dh: [4], auth: [1], created: now)
        func event(_ identifier: String, _ level: UNNotificationInterruptionLevel, focus: FocusDecision) -> EngineEvent
        {
            var content = NotificationContent(title: identifier)
            content.interruptionLevel = level
            var delivery = Delivery(
                notification: DeliveredNotification(
                    request: NotificationRequest(identifier: identifier, content: content), date: now),
                category: nil, settings: NotificationSettings(),
                presentation: focus.quiet ? [.list] : [.banner, .sound, .list])
            delivery.focus = focus
            return EngineEvent(sequence: 1, app: Self.app, date: now, payload: .delivered(delivery))
        }
        #expect(
            WebPushSurface.entry(
                for: event("quiet", .active, focus: FocusDecision(focus: "Sleep", quiet: true, reason: .focus)),
                subscriptions: [subscription], now: now) == nil)
        let through = try #require(
            WebPushSurface.entry(
                for: event(
                    "urgent", .timeSensitive, focus: FocusDecision(focus: "Sleep", quiet: false, reason: .timeSensitive)
                ),
                subscriptions: [subscription], now: now))
        let stored = try JSONValue.parse(through.messages[0])
        #expect(stored["payload"]?["id"] == .string("urgent") && stored["payload"]?["banner"] == .bool(true))
        #expect(stored["urgency"] == .string("high"))
    }

    /// Chime's own queue may hold a push a few seconds on a busy machine; a TTL 0 push ("now or
    /// never" to the push service) must still get its one try then (it was dropped after 1 s).
    @Test("a TTL 0 push is tried once even when Chime's queue held it seconds, not again, and not when it is stale")
    func nowOrNeverHeld() async throws {
        let double = try await PushServiceDouble.start()
        defer { Task { await double.stop() } }
        try await ServiceHarness.with(webPushEndpoints: [double.origin]) { harness in
            _ = try await Self.prepare(harness, double)
            let surface = harness.service.webPush
            let subscription = try #require(try await harness.service.engine.webPushSubscriptions().first)
            func job(age: TimeInterval, attempts: Int) -> WebPushSurface.Job {
                let message = WebPushMessage(
                    payload: ["id": "score", "title": "Score"], ttl: 0, urgency: "high", topic: nil,
                    created: harness.service.engine.clock.now.addingTimeInterval(-age))
                return WebPushSurface.Job(
                    push: QueuedWebPush(
                        message: 1, subscription: subscription.id, app: Self.app, body: message.storedRecord,
                        attempts: attempts, notBefore: .distantPast),
                    subscription: subscription)
            }
            #expect(await surface.attempt(job(age: 5, attempts: 0)) == .sent)
            let pushed = try #require(try await double.requests(atLeast: 1).last)
            #expect(pushed["headers"]?["ttl"] == "0", "\(pushed["headers"] ?? .null)")
            #expect(
                await surface.attempt(job(age: 5, attempts: 1)) == .failed("expired before it could be sent (TTL 0 s)"))
            #expect(
                await surface.attempt(job(age: Double(WebPushSurface.nowOrNeverGrace), attempts: 0))
                    == .failed("expired before it could be sent (TTL 0 s)"))
        }
    }

    @Test(
        "a notification with an end of relevance is pushed with the seconds it has left as its TTL, and closed on the device when it comes"
    )
    func autoDismissClosesOnDevice() async throws {
        let double = try await PushServiceDouble.start()
        defer { Task { await double.stop() } }
        try await ServiceHarness.with(webPushEndpoints: [double.origin]) { harness in
            let (token, _) = try await Self.prepare(harness, double)
            let client = harness.client(token: token)
            let request: JSONValue = ["identifier": "bus", "title": "Bus 42 in 3 minutes", "dismissIn": 3]
            #expect(try await client.post("/v1/apps/\(Self.app)/requests", json: request.serialized()).status == 201)
            let show = try #require(try await double.requests(atLeast: 1).first)
            #expect(show["payload"]?["kind"] == "show")
            #expect(
                show["headers"]?["ttl"].flatMap(\.text).flatMap(Int.init).map { $0 >= 0 && $0 <= 3 } == true,
                "\(show["headers"] ?? .null)")
            // Three seconds after the delivery the service removes it; the device is told to close it.
            let close = try #require(try await double.requests(atLeast: 2).last)
            #expect(close["payload"]?["kind"] == "close")
            #expect(close["payload"]?["ids"] == .array(["bus"]))
            #expect(close["headers"]?["topic"] == show["headers"]?["topic"])
        }
    }

    @Test(
        "410 and 404 remove the subscription; 429 with Retry-After is tried again; a long body is trimmed to fit 4096 bytes"
    )
    func answers() async throws {
        let double = try await PushServiceDouble.start()
        defer { Task { await double.stop() } }
        try await ServiceHarness.with(webPushEndpoints: [double.origin]) { harness in
            let (token, ids) = try await Self.prepare(harness, double, subscribers: 3)
            try await double.answer(ids[0], [410])
            try await double.answer(ids[1], [404])
            try await double.answer(ids[2], [429], retryAfter: "1")
            try await Self.deliver(
                harness.client(token: token), body: String(repeating: "Long line of text. ", count: 400),
                level: "passive")
            let pushes = try await double.requests(atLeast: 4)
            #expect(pushes.map { $0["status"] }.filter { $0 == 201 }.count == 1, "\(pushes.map { $0["status"] })")
            for push in pushes {
                #expect(push["decryptError"] == nil)
                #expect((push["size"]?.integer ?? 5000) <= 4096)
                #expect(push["payload"]?["truncated"] == true)
                #expect(push["headers"]?["urgency"] == "low")
            }
            let retried = pushes.filter { $0["subscription"] == .string(ids[2]) }
            #expect(retried.map { $0["status"] } == [429, 201])
            if retried.count == 2, case .number(let first)? = retried[0]["time"],
                case .number(let second)? = retried[1]["time"]
            {
                #expect(second - first >= 0.9, "retried \(second - first) s after a Retry-After of 1 s")
            }
            await harness.service.webPush.idle()
            let left = try await harness.service.engine.webPushSubscriptions()
            #expect(left.count == 1)
            #expect(left.first?.lastFailureReason?.contains("HTTP 429") == true)
            #expect(try await harness.service.engine.queuedWebPushCount() == 0)
        }
    }

    @Test("a push still queued when the service stops is sent after the next start")
    func restart() async throws {
        let double = try await PushServiceDouble.start()
        defer { Task { await double.stop() } }
        let directory = ServiceHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var subscriber = ""
        try await ServiceHarness.with(webPushEndpoints: [double.origin], directory: directory) { harness in
            let (token, ids) = try await Self.prepare(harness, double)
            subscriber = ids[0]
            try await double.answer(subscriber, [503], retryAfter: "3600")
            try await Self.deliver(harness.client(token: token))
            _ = try await double.requests(atLeast: 1)
            await harness.service.webPush.idle()
            #expect(try await harness.service.engine.queuedWebPushCount() == 1)
        }
        try await ServiceHarness.with(webPushEndpoints: [double.origin], directory: directory) { harness in
            let pushes = try await double.requests(atLeast: 2)
            #expect(pushes.map { $0["status"] } == [503, 201])
            #expect(pushes.last?["payload"]?["id"] == "Alarm")
            await harness.service.webPush.idle()
            #expect(try await harness.service.engine.queuedWebPushCount() == 0)
        }
    }

    @Test("the pool refuses an address its check refuses: nothing reaches the service")
    func addressRefused() async throws {
        let double = try await PushServiceDouble.start()
        defer { Task { await double.stop() } }
        let pool = HTTPPool(addressCheck: { _, address in WebPushEndpoints.isPublic(address) })
        defer { pool.shutdown() }
        let error = await #expect(throws: HTTPClientError.self) {
            _ = try await pool.send(HTTPPool.Request(url: double.origin + "/push/s1", body: [1, 2, 3]))
        }
        #expect(error?.code == .permissionDenied)
        #expect(error?.message.contains("127.0.0.1") == true)
        #expect(try await double.requests(atLeast: 0).isEmpty)
    }
}

extension JSONValue {
    var integer: Int64? { if case .integer(let value) = self { value } else { nil } }
}
