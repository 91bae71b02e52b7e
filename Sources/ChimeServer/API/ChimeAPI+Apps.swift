import ChimeCore
import ChimeCrypto
import Foundation

/// The app routes: registering, reading, changing and removing apps, their tokens.
extension ChimeAPI {
    /// `GET /v1/apps`, a page at a time.
    func listApps(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let page = try Page(request)
        let apps = try await engine.apps(after: page.after, limit: page.limit + 1)
        return page.response(apps.map { ($0.json, $0.bundleIdentifier) }, request: request, route: route)
    }

    /// `POST /v1/apps` `{"bundleIdentifier": …, "launch": …}`: the record, with the app's token (shown once).
    func createApp(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        typealias Field = JSONFieldName.App
        let object = try JSONObjectReader(try jsonBody(request), what: "a new app", accepted: Field.given)
        let bundle = try object.requiredString(Field.bundleIdentifier, hint: " such as com.example.alarm")
        let launch = try object.object[Field.launch].flatMap { value throws(ChimeError) in
            try LaunchCommand.decode(value)
        }
        try Validation.validateBundleIdentifier(bundle)
        if let existing = try await lookup(bundle), existing.tokenHash != nil {
            throw APIError(
                409, "appExists",
                "\(bundle) is already registered; rotate its token with POST /v1/apps/\(bundle)/token",
                field: Field.bundleIdentifier)
        }
        let token = Tokens.make()
        var record = try await storeTokenHash(Tokens.hash(token), app: bundle, create: true)
        if let launch { record = try await engine.setLaunchCommand(launch, app: bundle) }
        guard case .object(var object) = record.json else { throw APIError(500, "internal", "unexpected app encoding") }
        object[Field.token] = .string(token)
        return json(.object(object), status: 201, route: route)
    }

    func getApp(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        json(try await engine.app(route["app"]).json, route: route)
    }

    /// `PATCH /v1/apps/{app}` `{"launch": …, "apns": …}`: sets or clears the background-launch
    /// command and the APNs provider team and key (either or both).
    func updateApp(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        typealias Field = JSONFieldName.App
        let object = try JSONObjectReader(try jsonBody(request), what: "a change of the app", accepted: Field.changes)
        let launch = object.object[Field.launch]
        let apns = object.object[Field.apns]
        let certificate = object.object[Field.apnsCertificate]
        guard launch != nil || apns != nil || certificate != nil else {
            throw APIError.badRequest(
                "invalidValue",
                "launch is missing, and so are apns and apnsCertificate: give launch (a command line, an array of words, or null to remove it), "
                    + "apns ({\"teamId\", \"keyId\", \"key\"}, {\"teamId\"}, or null) or apnsCertificate (a PEM certificate, or null), or more",
                field: Field.launch)
        }
        let command = try launch.map { value throws(ChimeError) in try LaunchCommand.decode(value) }
        let provider = try apns.map { try Self.decodeAPNsProvider($0) }
        let pinned = try certificate.map { try Self.decodeAPNsCertificate($0) }
        let app = route["app"]
        let record = try await engine.changeApp(app) { record in
            if let command { record.launchCommand = command }
            if let provider { record.apnsProvider = provider }
            if let pinned { record.apnsCertificate = pinned }
        }
        if certificate != nil || apns != nil { try await indexProvider(app: app) }
        return json(record.json, route: route)
    }

    /// `apnsCertificate`: a provider certificate in PEM (its first certificate is pinned: its
    /// SHA-256, its key's SHA-256 and its dates; a private key in the text is ignored, never kept),
    /// or null (none).
    static func decodeAPNsCertificate(_ value: JSONValue) throws -> CertificateFingerprint? {
        switch value {
        case .null: return nil
        case .string(let pem):
            guard let fingerprint = TLSContext.fingerprint(certificatePEM: pem) else {
                throw APIError.badRequest(
                    "invalidValue",
                    "apnsCertificate must be an X.509 certificate in PEM (-----BEGIN CERTIFICATE-----), as the provider's .pem file holds it",
                    field: "apnsCertificate")
            }
            return fingerprint
        default:
            throw APIError.badRequest(
                "invalidValue", "apnsCertificate must be a PEM certificate as a string, or null",
                field: "apnsCertificate")
        }
    }

    /// The index takes the app's certificate and team key as the store has them before the change
    /// is answered, so a push right after it is authorized by the new certificate or key (and no
    /// longer by the old); TLS clients are asked for certificates while any app has one (a browser
    /// is then offered the choice of the user's certificates, so only then).
    private func indexProvider(app: String) async throws {
        try await loadTokens()
        let tokens = self.tokens
        try await engine.withAppNow(app) { record in tokens.update(app: app, record: record) }
    }

    /// `apns`: `{"teamId": T, "keyId": K, "key": PEM}` (a `.p8` private key or a SubjectPublicKeyInfo
    /// public key; only the public key is kept), `{"teamId": T}` (an app of team T, with no key of
    /// its own), or null (neither: nil).
    static func decodeAPNsProvider(_ value: JSONValue) throws -> APNsProvider? {
        typealias Field = JSONFieldName.Provider
        if case .null = value { return nil }
        let apns = JSONFieldName.App.apns
        let object = try JSONObjectReader(value, path: apns, what: "the APNs provider", accepted: Field.given)
        let team = try object.string(Field.teamId)
        guard let team, APNsProvider.isIdentifier(team) else {
            throw APIError.badRequest(
                "invalidValue",
                "\(apns).\(Field.teamId) must be the team id: 1 to 64 letters and digits (Apple's are 10, as ABCDE12345)",
                field: "\(apns).\(Field.teamId)")
        }
        var provider = APNsProvider(teamID: team)
        switch (try object.string(Field.keyId), try object.string(Field.key)) {
        case (nil, nil):
            break
        case (let id?, let pem?):
            guard APNsProvider.isIdentifier(id) else {
                throw APIError.badRequest(
                    "invalidValue",
                    "\(apns).\(Field.keyId) must be the key id: 1 to 64 letters and digits (Apple's are 10)",
                    field: "\(apns).\(Field.keyId)")
            }
            let publicKey: P256PublicKey
            if let key = try? P256PrivateKey(pemRepresentation: pem) {
                publicKey = key.publicKey
            } else if let key = try? P256PublicKey(pemRepresentation: pem) {
                publicKey = key
            } else {
                throw APIError.badRequest(
                    "invalidValue",
                    "\(apns).\(Field.key) must be a P-256 key in PEM: the .p8 file's text (-----BEGIN PRIVATE KEY-----) "
                        + "or its public key (-----BEGIN PUBLIC KEY-----)", field: "\(apns).\(Field.key)")
            }
            provider.key = APNsProvider.Key(id: id, publicKey: publicKey.rawRepresentation)
        case (nil, _?):
            throw APIError.badRequest(
                "invalidValue", "\(apns).\(Field.keyId) is missing: give the key id with the key",
                field: "\(apns).\(Field.keyId)")
        case (_?, nil):
            throw APIError.badRequest(
                "invalidValue", "\(apns).\(Field.key) is missing: give the key (the .p8 file's text) with its id",
                field: "\(apns).\(Field.key)")
        }
        return provider
    }

    func removeApp(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        // The index drops the app (and the app's event streams end) as the removal is announced.
        try await engine.removeApp(route["app"])
        return HTTPResponse(status: 204, route: route.template)
    }

    func rotateToken(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let app = route["app"]
        let token = Tokens.make()
        _ = try await storeTokenHash(Tokens.hash(token), app: app, create: false)
        return json(
            [JSONFieldName.App.bundleIdentifier: .string(app), JSONFieldName.App.token: .string(token)], route: route)
    }

    func deviceToken(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        json(try await engine.app(route["app"]).deviceTokenJSON, route: route)
    }

    func registerDevice(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        json(try await engine.registerForRemoteNotifications(app: route["app"]).deviceTokenJSON, route: route)
    }

    func unregisterDevice(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        json(try await engine.unregisterForRemoteNotifications(app: route["app"]).deviceTokenJSON, route: route)
    }

    /// Writes the app's token hash, creating the record if asked, in one engine operation (through
    /// the engine's write-through app cache, so a later settings write keeps the new hash). The
    /// token index takes the new hash in the same operation, so the old token fails from the
    /// moment the change commits.
    private func storeTokenHash(_ hash: String, app: String, create: Bool) async throws -> AppRecord {
        try await loadTokens()
        let tokens = self.tokens
        do {
            return try await engine.setTokenHash(hash, app: app, create: create) { hash in
                tokens.set(app: app, hash: hash)
            }
        } catch {
            // The transaction may have failed after the index took the hash: read the store again.
            engine.withApp(app) { record in tokens.update(app: app, record: record) }
            throw error
        }
    }

    /// The app's record without creating it.
    func lookup(_ app: String) async throws -> AppRecord? {
        try await engine.registeredApp(app)
    }
}
