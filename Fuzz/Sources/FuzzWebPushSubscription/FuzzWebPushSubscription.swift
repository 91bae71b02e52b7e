import ChimeCore
import Foundation
import FuzzSupport

// Fuzz target: Web Push subscriptions as a browser registers them (`PushSubscription.toJSON()`:
// WebPushRegistration.decode, the body of POST /v1/web-push/subscriptions) and as the store keeps
// them (WebPushSubscription.storedRecord / init(storedRecord:)). The first byte chooses the allowed
// endpoints (the public services only, or also listed prefixes); the rest is the body. Checks:
// - a refusal is a ChimeError naming its field: one of the subscription's (endpoint, keys,
//   keys.p256dh, keys.auth, expirationTime, name, apps, apps[N]) or a member given that is not one
//   (none only for a body that is not an object);
// - nothing is accepted that the checks it relies on refuse: the endpoint passes
//   WebPushEndpoints.check and parses, p256dh is 65 bytes starting with 4, auth 16 bytes, every app
//   is a bundle identifier Validation takes (each once), the name passes validateName;
// - the registration written back as a browser's JSON (keys in base64url) decodes equal; the
//   subscription made of it survives the store's record, and the API's JSON has no keys.

let listed: WebPushEndpoints = {
    do { return try WebPushEndpoints(listed: ["http://127.0.0.1:8765", "https://up.example.org/push/"]) } catch {
        fatalError("\(error)")
    }
}()
let fields: Set<String> = ["endpoint", "keys", "keys.p256dh", "keys.auth", "expirationTime", "name", "apps"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebPushSubscription(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = fuzzBytes(start, count)
    guard let mode = bytes.first else { return 0 }
    let endpoints = mode & 1 == 0 ? WebPushEndpoints.publicServicesOnly : listed
    guard let value = try? JSONValue.parse(bytes.dropFirst()) else { return 0 }
    let registration: WebPushRegistration
    do {
        registration = try WebPushRegistration.decode(value, endpoints: endpoints)
    } catch {
        require(!error.message.isEmpty, "a refusal without a message: \(error)")
        if case .object(let body) = value {
            let field = error.field ?? ""
            let base = field.firstIndex(of: "[").map { String(field[..<$0]) } ?? field
            // Or a member that was given and is not one of them, named as given.
            var given = Array(body.keys)
            if case .object(let keys)? = body["keys"] { given += keys.keys.map { "keys." + $0 } }
            require(
                fields.contains(base) || given.contains(field) && error.message.contains("is not a field of"),
                "a refusal naming \(field.debugDescription), not a field of the subscription: \(error.message)")
        }
        return 0
    }
    do { try endpoints.check(registration.endpoint, field: "endpoint") } catch {
        fatalError("an endpoint check refuses an accepted endpoint: \(error)")
    }
    require(
        WebPushEndpoints.parse(registration.endpoint) != nil,
        "an accepted endpoint does not parse: \(registration.endpoint)")
    require(
        registration.p256dh.count == 65 && registration.p256dh.first == 4,
        "p256dh of \(registration.p256dh.count) bytes accepted")
    require(registration.auth.count == 16, "auth of \(registration.auth.count) bytes accepted")
    if case .some(.some(let apps)) = registration.apps {
        require(Set(apps).count == apps.count, "apps listed twice: \(apps)")
        for app in apps {
            do { try Validation.validateBundleIdentifier(app, field: "apps") } catch {
                fatalError("app \(app.debugDescription) accepted, Validation refuses: \(error)")
            }
        }
    }
    if let name = registration.name {
        do { try WebPushSubscription.validateName(name, field: "name") } catch {
            fatalError("name accepted, validateName refuses: \(error)")
        }
    }

    // Written back as a browser writes it.
    var object: JSONObject = [
        "endpoint": .string(registration.endpoint),
        "keys": [
            "p256dh": .string(Base64URL.encode(registration.p256dh)),
            "auth": .string(Base64URL.encode(registration.auth)),
        ],
    ]
    if let expires = registration.expires { object["expirationTime"] = .number(expires.timeIntervalSince1970 * 1000) }
    if let name = registration.name { object["name"] = .string(name) }
    if let apps = registration.apps { object["apps"] = apps.map { .array($0.map(JSONValue.string)) } ?? .null }
    let again: WebPushRegistration
    do {
        again = try WebPushRegistration.decode(
            JSONValue.parse(JSONValue.object(object).serializedBytes()), endpoints: endpoints)
    } catch {
        fatalError("the registration written back is refused: \(error)")
    }
    var expected = registration
    expected.expires = again.expires
    require(again == expected, "written back, the registration reads differently: \(again) vs \(registration)")
    if let a = again.expires, let b = registration.expires {
        require(
            abs(a.timeIntervalSince(b)) <= max(1e-6, abs(b.timeIntervalSince1970) * 1e-15),
            "expires \(b) came back as \(a)")
    }

    let subscription = WebPushSubscription(
        id: WebPushSubscription.makeID(), endpoint: registration.endpoint, p256dh: registration.p256dh,
        auth: registration.auth, apps: registration.apps ?? nil, name: registration.name ?? "",
        userAgent: "fuzz", created: Date(timeIntervalSince1970: 1_800_000_000), expires: registration.expires)
    do {
        let stored = try WebPushSubscription(storedRecord: subscription.storedRecord)
        require(stored == subscription, "the store's record reads differently: \(stored) vs \(subscription)")
    } catch {
        fatalError("the store's record is refused: \(error)")
    }
    if case .object(let listedJSON) = subscription.json {
        require(
            listedJSON["keys"] == nil && listedJSON["p256dh"] == nil && listedJSON["auth"] == nil,
            "the API's JSON shows the keys")
    }
    return 0
}
