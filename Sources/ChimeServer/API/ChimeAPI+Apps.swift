import ChimeCore
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
        let object = try Fields(try jsonBody(request), accepted: ["bundleIdentifier", "launch"])
        let bundle = try object.requiredString("bundleIdentifier")
        let launch = try object.object["launch"].flatMap { value throws(ChimeError) in try LaunchCommand.decode(value) }
        try Validation.validateBundleIdentifier(bundle)
        if let existing = try await lookup(bundle), existing.tokenHash != nil {
            throw APIError(409, "appExists", "\(bundle) is already registered; rotate its token with POST /v1/apps/\(bundle)/token",
                           field: "bundleIdentifier")
        }
        let token = Tokens.make()
        var record = try await storeTokenHash(Tokens.hash(token), app: bundle, create: true)
        if let launch { record = try await engine.setLaunchCommand(launch, app: bundle) }
        guard case .object(var object) = record.json else { throw APIError(500, "internal", "unexpected app encoding") }
        object["token"] = .string(token)
        return json(.object(object), status: 201, route: route)
    }

    func getApp(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        json(try await engine.app(route["app"]).json, route: route)
    }

    /// `PATCH /v1/apps/{app}` `{"launch": …}`: sets or clears the background-launch command.
    func updateApp(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        let object = try Fields(try jsonBody(request), accepted: ["launch"])
        guard let value = object.object["launch"] else {
            throw APIError.badRequest("invalidValue", "launch is missing; give a command line, an array of words, or null to remove it",
                                      field: "launch")
        }
        return json(try await engine.setLaunchCommand(try LaunchCommand.decode(value), app: route["app"]).json, route: route)
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
        return json(["bundleIdentifier": .string(app), "token": .string(token)], route: route)
    }

    func deviceToken(_ request: HTTPRequest, route: Route) async throws -> HTTPResponse {
        json(["deviceToken": .string(try await engine.app(route["app"]).deviceToken)], route: route)
    }

    /// Writes the app's token hash, creating the record if asked, in one engine operation (through
    /// the engine's write-through app cache, so a later settings write keeps the new hash). The
    /// token index takes the new hash in the same operation, so the old token fails from the
    /// moment the change commits.
    private func storeTokenHash(_ hash: String, app: String, create: Bool) async throws -> AppRecord {
        let deviceToken = Tokens.make()
        try await loadTokens()
        let tokens = self.tokens
        do {
            return try await engine.perform { core in
                var record: AppRecord
                if let existing = try core.store.app(app) {
                    record = existing
                } else if create {
                    record = AppRecord(bundleIdentifier: app, created: core.clock.now, deviceToken: deviceToken)
                } else {
                    throw ChimeError(.notFound, field: "app", "no app \(app)")
                }
                record.tokenHash = hash
                try core.putApp(record)
                tokens.set(app: app, hash: hash)
                return record
            }
        } catch {
            // The transaction may have failed after the index took the hash: read the store again.
            engine.submit({ core in tokens.set(app: app, hash: try core.store.app(app)?.tokenHash) }, completion: { _ in })
            throw error
        }
    }

    /// The app's record without creating it.
    func lookup(_ app: String) async throws -> AppRecord? {
        try await engine.perform { try $0.store.app(app) }
    }
}
