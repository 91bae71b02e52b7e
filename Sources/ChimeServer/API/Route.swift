import Foundation

/// A request matched against a ``RouteTable``: the entry that handles it (or why none does), the
/// template used in metrics and the access log, the path parameters, and — once the entry's access
/// is checked — the caller.
struct Route: Sendable {
    enum Outcome: Sendable {
        case handler(RouteTable.Entry)
        /// No template fits the path: a 404.
        case notFound
        /// A template fits but has no entry for the method: a 405 with these methods in `Allow`.
        case methodNotAllowed([String])
        /// A path segment or query argument that is not valid percent-encoding: a 400 naming it.
        case invalidEncoding(message: String, field: String)
    }

    var outcome: Outcome
    /// The matched template (`/v1/apps/{app}/requests`), or `unmatched`.
    var template: String
    /// Who called: set by ``ChimeAPI/admit(_:to:route:)`` for the routes that authenticate; nil on
    /// public and web-session routes and on the push endpoint, which read no credential or their own.
    var caller: ChimeAPI.Caller?
    /// The path's decoded segments, and which of them are parameters.
    private let segments: [String]
    private let parameters: [RouteTable.Parameter]

    init(outcome: Outcome, template: String, segments: [String] = [], parameters: [RouteTable.Parameter] = []) {
        self.outcome = outcome
        self.template = template
        self.segments = segments
        self.parameters = parameters
    }

    /// The path parameter `name` of the matched template, percent-decoded (`route["app"]` on
    /// `/v1/apps/{app}`); empty when the template has no such parameter.
    subscript(name: String) -> String {
        guard let parameter = parameters.first(where: { $0.name == name }) else { return "" }
        return segments[parameter.index]
    }
}
