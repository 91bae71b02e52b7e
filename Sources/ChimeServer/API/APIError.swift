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
        var response = HTTPResponse(status: status, contentType: "application/json", body: json.serializedBytes(), route: route)
        response.headers += headers
        return response
    }

    static func unauthorized(_ message: String) -> APIError {
        var error = APIError(401, "unauthorized", message)
        error.headers = [("WWW-Authenticate", "Bearer realm=\"chime\"")]
        return error
    }

    static func forbidden(_ message: String) -> APIError { APIError(403, "forbidden", message) }
    static func notFound(_ message: String, field: String? = nil) -> APIError { APIError(404, "notFound", message, field: field) }
    static func badRequest(_ code: String = "invalidValue", _ message: String, field: String? = nil) -> APIError {
        APIError(400, code, message, field: field)
    }

    /// The answer for an error thrown by the engine or the codecs. Never a stack trace: unknown
    /// errors become a 500 with a generic message (the details go to the log).
    static func from(_ error: any Error) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let error as ChimeError:
            let status: Int
            switch error.code {
            case .notFound: status = 404
            case .tooLarge: status = 413
            case .shutDown: status = 503
            case .storeFailure, .storeTooNew, .notAStore: status = 500
            case .storageFull:
                return APIError(507, "insufficientStorage",
                                "the server's disk is full, so nothing was stored; free space on the server (or raise its quota) and retry")
            default: status = 400
            }
            let message = status == 500 ? "the store failed; see the server log" : error.message
            return APIError(status, error.code.rawValue, message, field: error.field)
        case let error as UNError:
            switch error.code {
            case .notificationsNotAllowed:
                return APIError(409, "notificationsNotAllowed",
                                "\(error.message) (POST /v1/apps/{app}/authorization, then the user allows it: the web center or `chime apps allow`)")
            case .badgeInputInvalid:
                return APIError(400, "badgeInputInvalid", error.message, field: "badge")
            default:
                return APIError(400, "\(error.code)", error.message)
            }
        default:
            return APIError(500, "internal", "the server failed to handle the request; see the server log")
        }
    }
}
