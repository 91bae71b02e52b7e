import ChimeCore
import Foundation
import TestThreads
import Testing

@testable import ChimeServer

/// A request and what the route table makes of it.
struct RoutingCase: Sendable, CustomStringConvertible {
    var method = "GET"
    var path: String
    var badQuery = false
    /// `operationId` of the entry, `404`, `405 <Allow>`, or `400 <field>`.
    var outcome: String
    var template: String
    var parameters: [String: String] = [:]
    var description: String { "\(method) \(path)\(badQuery ? "?%zz" : "")" }
}

let routingCases: [RoutingCase] = [
    RoutingCase(path: "/healthz", outcome: "health", template: "/healthz"),
    RoutingCase(path: "/healthz/", outcome: "health", template: "/healthz"),
    RoutingCase(method: "get", path: "/healthz", outcome: "health", template: "/healthz"),
    RoutingCase(path: "/healthz//", outcome: "404", template: "unmatched"),
    RoutingCase(path: "/", outcome: "webCenter", template: "/"),
    RoutingCase(path: "/center.js", outcome: "webAsset", template: "/{asset}", parameters: ["asset": "center.js"]),
    RoutingCase(method: "POST", path: "/center.js", outcome: "405 GET", template: "/{asset}"),
    RoutingCase(path: "/nothing.js", outcome: "404", template: "unmatched"),
    RoutingCase(path: "/.env", outcome: "404", template: "unmatched"),
    RoutingCase(path: "/v1", outcome: "404", template: "unmatched"),
    RoutingCase(path: "/v1/apps/", outcome: "listApps", template: "/v1/apps"),
    RoutingCase(
        method: "HEAD", path: "/v1/apps/a", outcome: "getApp", template: "/v1/apps/{app}", parameters: ["app": "a"]),
    RoutingCase(method: "PUT", path: "/v1/apps/a", outcome: "405 DELETE, GET, PATCH", template: "/v1/apps/{app}"),
    RoutingCase(method: "HEAD", path: "/v1/session/links", outcome: "405 POST", template: "/v1/session/links"),
    RoutingCase(
        method: "OPTIONS", path: "/v1/apps/a/requests", outcome: "405 DELETE, GET, POST",
        template: "/v1/apps/{app}/requests"),
    RoutingCase(path: "/v1/apps//settings", outcome: "404", template: "unmatched"),
    RoutingCase(method: "POST", path: "/v1/apps/a/notifications//responses", outcome: "404", template: "unmatched"),
    RoutingCase(path: "/v1/apps/a/nothing", outcome: "404", template: "unmatched"),
    RoutingCase(
        method: "POST", path: "/v1/apps/com.example.chat/notifications/chat%2F42%20%C3%BC/responses",
        outcome: "respond",
        template: "/v1/apps/{app}/notifications/{identifier}/responses",
        parameters: ["app": "com.example.chat", "identifier": "chat/42 ü"]),
    RoutingCase(
        method: "POST", path: "/v1/apps/a/notifications/n/presentation", outcome: "reportPresentation",
        template: "/v1/apps/{app}/notifications/{identifier}/presentation", parameters: ["app": "a", "identifier": "n"]),
    RoutingCase(
        method: "POST", path: "/v1/apps/a/responses/7/ack", outcome: "acknowledge",
        template: "/v1/apps/{app}/responses/{id}/ack",
        parameters: ["app": "a", "id": "7"]),
    RoutingCase(
        method: "POST", path: "/v1/apps/a/service-extension/p1", outcome: "serviceExtensionContent",
        template: "/v1/apps/{app}/service-extension/{id}", parameters: ["id": "p1"]),
    RoutingCase(
        method: "POST", path: "/v1/apps/a/authorization/answer", outcome: "answerAuthorization",
        template: "/v1/apps/{app}/authorization/answer"),
    RoutingCase(path: "/v1/apps/%zz/settings", outcome: "400 path", template: "unmatched"),
    RoutingCase(path: "/v1/apps/a/settings", badQuery: true, outcome: "400 q", template: "/v1/apps/{app}/settings"),
    RoutingCase(path: "/nothing", badQuery: true, outcome: "400 q", template: "unmatched"),
    // Everything under /3/ is the push endpoint's, which answers bad paths, methods and queries itself.
    RoutingCase(method: "POST", path: "/3/device/abc", badQuery: true, outcome: "push", template: "/3/device/{token}"),
    RoutingCase(method: "PATCH", path: "/3/x/%zz", outcome: "push", template: "/3/device/{token}"),
    // `/3` itself is not under `/3/`: a 404 like any unknown path (schemathesis found `GET /3`
    // answered in APNs' error shape where the document promises Chime's).
    RoutingCase(path: "/3", outcome: "404", template: "unmatched"),
    RoutingCase(path: "/3x", outcome: "404", template: "unmatched"),
]

@Suite("Route table", .testThreads)
struct RouteTableTests {
    @Test("a request finds its entry, or a 404, 405 or 400, from the templates alone", arguments: routingCases)
    func routing(_ test: RoutingCase) {
        var request = HTTPRequest(method: test.method, path: test.path)
        if test.badQuery {
            request.queryError = QueryDecodingError(
                name: "q", problem: PercentDecodingError(text: "%zz", problem: .invalidEscape("%zz")))
        }
        let route = ChimeAPI.routes.match(request)
        let outcome =
            switch route.outcome {
            case .handler(let entry): entry.route.operationID
            case .notFound: "404"
            case .methodNotAllowed(let allowed): "405 " + allowed.joined(separator: ", ")
            case .invalidEncoding(_, let field): "400 " + field
            }
        #expect(outcome == test.outcome)
        #expect(route.template == test.template)
        for (name, value) in test.parameters { #expect(route[name] == value, "{\(name)}") }
    }

    @Test("each declared route has exactly one entry, and each entry a declared route")
    func oneEntryPerDeclaration() {
        let entries = ChimeAPI.routes.entries
        for route in APIRoute.all {
            let count = entries.count { $0.route == route }
            #expect(
                count == 1, "\(route) (APIRoute.\(route.operationID)) has \(count) entries in ChimeAPI+Routes.swift")
        }
        for entry in entries where !APIRoute.all.contains(entry.route) {
            Issue.record(
                "\(entry.route) (\(entry.route.operationID)) is in the route table but not in APIRoute.all (APIRoute+Routes.swift)"
            )
        }
    }

    @Test(
        "a path a client fills from a declaration reaches that route's entry with the same parameters, however odd the values"
    )
    func clientPathsRoundTrip() {
        let values = [
            "app": "com.example.chat", "identifier": "chat/42 ü?#%+&=", "id": "7",
            "token": String(repeating: "ab", count: 32),
            "asset": "center.js", "name": "Do Not Disturb",
        ]
        for route in APIRoute.all {
            let given = values.filter { route.parameters.contains($0.key) }
            for method in [route.method.rawValue] + (route.method == .get ? ["HEAD"] : []) {
                let matched = ChimeAPI.routes.match(HTTPRequest(method: method, path: route.path(given)))
                guard case .handler(let entry) = matched.outcome else {
                    Issue.record(
                        "\(method) \(route.path(given)) (\(route.operationID)) found no entry: \(matched.outcome)")
                    continue
                }
                #expect(entry.route == route, "\(method) \(route.path(given)) reached \(entry.route)")
                // The push endpoint reads its own path; every other route gets the values back decoded.
                guard !entry.ownsFirstSegment else { continue }
                for (name, value) in given { #expect(matched[name] == value, "\(route): {\(name)}") }
            }
        }
    }

    @Test(
        "each declaration is well formed: one per method and template, unique ids, {app} exactly on the app routes, no two templates alike"
    )
    func wellFormed() {
        let entries = ChimeAPI.routes.entries
        let routes = APIRoute.all
        #expect(Set(routes.map(\.operationID)).count == routes.count, "operationIds repeat")
        #expect(Set(routes.map(\.description)).count == routes.count, "a method and template repeat")
        var shapes: [String: String] = [:]
        for entry in entries {
            let route = entry.route
            for case .literal(let text) in route.segments {
                #expect(!text.contains("{") && !text.contains("}"), "\(route): a parameter is a whole segment, {name}")
            }
            #expect(Set(route.parameters).count == route.parameters.count, "\(route): a parameter name repeats")
            let scoped = entry.access == .app || entry.access == .ownerOnApp
            #expect(
                route.parameters.contains("app") == scoped,
                "\(route): {app} on the app routes (access .app or .ownerOnApp) and only there")
            let shape = route.segments.map { if case .literal(let text) = $0 { text } else { "{}" } }.joined(
                separator: "/")
            if let other = shapes[shape] {
                #expect(other == route.template, "\(route.template) and \(other) match the same paths")
            }
            shapes[shape] = route.template
        }
    }

    /// The document's operations by `METHOD /path`.
    static func documentedOperations() throws -> [String: JSONValue] {
        let document = try JSONValue.parse(OpenAPIDocument.json, maxDepth: 256)
        guard case .object(let paths)? = document["paths"] else {
            Issue.record("docs/openapi.json has no paths")
            return [:]
        }
        var operations: [String: JSONValue] = [:]
        let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
        for (path, item) in paths {
            guard case .object(let members) = item else { continue }
            for (method, operation) in members where methods.contains(method) {
                // The path's own parameters belong to each of its operations.
                var operation = operation
                if case .object(var object) = operation, case .array(let shared)? = members["parameters"] {
                    let own: [JSONValue] = if case .array(let list)? = object["parameters"] { list } else { [] }
                    object["parameters"] = .array(shared + own)
                    operation = .object(object)
                }
                operations["\(method.uppercased()) \(path)"] = operation
            }
        }
        return operations
    }

    @Test(
        "the fields of events, responses, receipts, summaries, focus modes, apps, devices, sessions and sign-in links in docs/openapi.json are those JSONFieldName declares",
        arguments: [
            ("Event", JSONFieldName.Event.all), ("NotificationResponse", JSONFieldName.Response.all),
            ("ResponseInput", JSONFieldName.Response.answerFields), ("EscalationReceipt", JSONFieldName.Receipt.all),
            ("ScheduledSummaryStatus", JSONFieldName.Summary.all), ("ScheduledSummaryInput", ScheduledSummary.fields),
            ("FocusStatus", JSONFieldName.Focus.status), ("FocusModeInput", FocusMode.fields),
            ("FocusSchedule", JSONFieldName.Focus.scheduleFields), ("FocusDecision", JSONFieldName.Focus.decision),
            ("App", JSONFieldName.App.all), ("NewApp", JSONFieldName.App.given),
            ("AppUpdate", JSONFieldName.App.changes),
            ("TokenRotated", [JSONFieldName.App.bundleIdentifier, JSONFieldName.App.token]),
            ("DeviceToken", JSONFieldName.App.deviceTokenFields), ("APNsProvider", JSONFieldName.Provider.all),
            ("APNsProviderUpdate", JSONFieldName.Provider.given),
            ("CertificateFingerprint", JSONFieldName.Certificate.all),
            ("WebPushSubscription", JSONFieldName.Device.all), ("LoginLink", JSONFieldName.LoginLink.all),
            ("WebPushRegistration", JSONFieldName.Device.registration),
            ("WebPushKey", [JSONFieldName.WebPushKey.publicKey]), ("Session", JSONFieldName.Session.all),
            ("SessionLogin", JSONFieldName.Session.login),
            ("QuarantinedRequest", JSONFieldName.Quarantine.all), ("Removed", [JSONFieldName.removed]),
            ("QuarantineRemoved", [JSONFieldName.removed]), ("FocusRemoved", [JSONFieldName.removed]),
            ("SummaryRemoved", [JSONFieldName.removed]),
        ])
    func schemaFieldsAreDeclared(schema: String, declared: [String]) throws {
        let document = try JSONValue.parse(OpenAPIDocument.json, maxDepth: 256)
        guard case .object(let properties)? = document["components"]?["schemas"]?[schema]?["properties"] else {
            Issue.record("docs/openapi.json has no schema \(schema) with properties")
            return
        }
        #expect(Set(properties.keys) == Set(declared), "\(schema)")
        #expect(declared.count == Set(declared).count, "\(schema): a field declared twice")
    }

    @Test(
        "docs/openapi.json documents exactly the table's routes, with its operationIds, summaries, path parameters and security"
    )
    func documentMatchesTable() throws {
        let operations = try Self.documentedOperations()
        let entries = ChimeAPI.routes.entries
        let declared = Set(entries.map(\.route.description))
        for name in Set(operations.keys).subtracting(declared).sorted() {
            Issue.record(
                "\(name) is in docs/openapi.json but not in the route table (APIRoute+Routes.swift, ChimeAPI+Routes.swift)"
            )
        }
        for entry in entries {
            let route = entry.route
            let name = entry.route.description
            guard let operation = operations[name] else {
                Issue.record("\(name) (\(route.operationID)) is in the route table but not in docs/openapi.json")
                continue
            }
            #expect(
                operation["operationId"] == .string(route.operationID),
                "\(name): operationId is \(operation["operationId"]?.serialized() ?? "missing") in docs/openapi.json, \"\(route.operationID)\" in APIRoute"
            )
            #expect(
                operation["summary"] == .string(route.summary),
                "\(name): summary is \(operation["summary"]?.serialized() ?? "missing") in docs/openapi.json, \"\(route.summary)\" in APIRoute"
            )
            switch entry.access {
            case .public, .session:
                #expect(
                    operation["security"] == .array([]),
                    "\(name) needs no credential: give it \"security\": [] in docs/openapi.json")
            case .owner, .app, .ownerOnApp, .provider:
                #expect(
                    operation["security"] == nil,
                    "\(name) needs a credential: no \"security\" of its own in docs/openapi.json")
            }
            let ownerOnly = entry.access == .owner || entry.access == .ownerOnApp
            #expect(
                route.summary.contains("owner") == ownerOnly,
                "\(name): the summary says \"owner\" exactly when only the owner may call it")
            var documented: Set<String> = []
            if case .array(let parameters)? = operation["parameters"] {
                for parameter in parameters where parameter["in"] == .string("path") {
                    if case .string(let parameterName)? = parameter["name"] { documented.insert(parameterName) }
                }
            }
            let templated = Set(route.parameters)
            #expect(
                documented == templated,
                "\(name): path parameters \(documented.sorted()) in docs/openapi.json, \(templated.sorted()) in the template"
            )
        }
    }
}
