import ChimeCore
import Foundation

/// An error answer: `{"error": {"code": "...", "message": "...", "field": "..."}}` with its status.
struct APIError: Error, Sendable {
    var status: Int
    var code: String
    var message: String
    var field: String?
    var headers: [(name: String, value: String)] = []

    init(_ status: Int, _ code: String, _ message: String, field: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
    }

    var json: JSONValue {
        var error: JSONObject = ["code": .string(code), "message": .string(message)]
        error["field"] = field.map(JSONValue.string) ?? .null
        return ["error": .object(error)]
    }

    func response(route: String) -> HTTPResponse {
        var response = HTTPResponse(
            status: status, contentType: "application/json", body: json.serializedBytes(), route: route)
        response.headers += headers
        return response
    }

    static func unauthorized(_ message: String) -> APIError {
        var error = APIError(401, "unauthorized", message)
        error.headers = [("WWW-Authenticate", "Bearer realm=\"chime\"")]
        return error
    }

    static func forbidden(_ message: String) -> APIError { APIError(403, "forbidden", message) }
    static func notFound(_ message: String, field: String? = nil) -> APIError {
        APIError(404, "notFound", message, field: field)
    }
    static func badRequest(_ code: String = "invalidValue", _ message: String, field: String? = nil) -> APIError {
        APIError(400, code, message, field: field)
    }

    /// The answer for an error thrown by the engine or the codecs, as the error table says
    /// (`ErrorTable`: status, code, whether the error's own text may be shown, a retry hint). Never
    /// a stack trace or a database's text: those go to the log.
    static func from(_ error: any Error) -> APIError {
        if let error = error as? APIError { return error }
        let entry = ErrorTable.entry(for: error)
        var answer: APIError
        switch error {
        case let error as ChimeError:
            answer = APIError(
                entry.status, entry.apiCode ?? error.code.rawValue, entry.message ?? error.message,
                field: error.field ?? entry.field)
        case let error as UNError:
            answer = APIError(
                entry.status, entry.apiCode ?? "\(error.code)", entry.message ?? error.message,
                field: entry.field)
        default:
            answer = APIError(
                entry.status, entry.apiCode ?? "internal", entry.message ?? "the server failed; see the server log")
        }
        if let hint = entry.hint { answer.message += " " + hint }
        if let seconds = entry.retryAfter { answer.headers.append(("Retry-After", String(seconds))) }
        return answer
    }
}
