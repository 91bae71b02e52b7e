import ChimeCore
import Foundation

@testable import ChimeServer

/// Requests handed straight to the service's ``ChimeAPI/handle(_:)``, as the HTTP server hands
/// over each request it has read, with no socket, no HTTP framing and no client library: for the
/// service tests that are about what the API answers, not about the wire (which tests of framing,
/// connections, TLS, HTTP/2 and event streams keep, over TCP or a Unix socket).
///
/// The API's body limit is applied as the server applies it (``ChimeAPI/bodyLimit(for:)``, then
/// its 413 answer). What only the server does is not done here: connection limits and timeouts
/// (503), the head checks before a handler runs, `HEAD` without a body, and event streams (a
/// request that answers with one throws: read streams with ``SSEClient``).
/// `InProcessClientTests` holds its answers to the wire's.
enum InProcess {
    static func handle(
        _ api: ChimeAPI, host: String, method: String, target: String, headers: [(String, String)],
        body: [UInt8]?
    ) async throws -> TestResponse {
        let (path, rawQuery) =
            target.firstIndex(of: "?").map { (String(target[..<$0]), String(target[target.index(after: $0)...])) }
            ?? (target, "")
        var arguments = QueryArguments()
        for pair in rawQuery.split(separator: "&", omittingEmptySubsequences: true) {
            // As both servers hand them over: `+` already a space, escapes not yet decoded.
            let bytes = Array(pair.utf8).map { $0 == UInt8(ascii: "+") ? UInt8(ascii: " ") : $0 }
            let equals = bytes.firstIndex(of: UInt8(ascii: "="))
            arguments.add(
                rawKey: Array(bytes[..<(equals ?? bytes.endIndex)]),
                rawValue: equals.map { Array(bytes[bytes.index(after: $0)...]) } ?? [])
        }
        var fields = ["host": host]
        for (name, value) in headers { fields[name.lowercased()] = value }
        if let body { fields["content-length"] = String(body.count) }
        var request = HTTPRequest(
            method: method, path: path, query: arguments.query, headers: fields, body: body ?? [],
            remoteAddress: "in-process")
        request.queryError = arguments.error
        let limit = api.bodyLimit(for: request)
        let response =
            request.body.count > limit ? api.payloadTooLarge(request, limit: limit) : await api.handle(request)
        guard case .bytes(let bytes) = response.body else {
            throw TestClientError(
                description: "\(method) \(target) answered an event stream; read it over the wire with SSEClient")
        }
        var answered: [String: String] = [:]
        for (name, value) in response.headers { answered[name.lowercased()] = value }
        return TestResponse(status: response.status, headers: answered, body: bytes)
    }
}
