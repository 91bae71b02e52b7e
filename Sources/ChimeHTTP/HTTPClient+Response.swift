import ChimeCore

extension HTTPClient {
    /// An answer: its status, header fields and body.
    ///
    /// ```swift
    /// let response = try await client.request("GET", "/healthz")
    /// if response.status == 200, let json = response.json { print(json) }
    /// ```
    public struct Response: Sendable {
        public var status: Int
        /// Lowercased names; a repeated field's values joined with `, `.
        public var headers: [String: String]
        public var body: [UInt8]

        public init(status: Int, headers: [String: String], body: [UInt8]) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        public var isSuccess: Bool { (200..<300).contains(status) }
        public var text: String { String(decoding: body, as: UTF8.self) }
        /// The body as JSON, or nil when it is empty or not JSON.
        public var json: JSONValue? { body.isEmpty ? nil : try? JSONValue.parse(body) }

        /// What a Chime error answer says: `{"error": {"code", "message", "field"}}`, or an APNs
        /// `{"reason"}` (then `reason` is set and the rest nil).
        public var serviceError: (code: String?, message: String?, field: String?, reason: String?)? {
            guard let json else { return nil }
            if case .object(let error)? = json["error"] {
                return (Self.string(error["code"]), Self.string(error["message"]), Self.string(error["field"]), nil)
            }
            if let reason = Self.string(json["reason"]) { return (nil, nil, nil, reason) }
            return nil
        }

        private static func string(_ value: JSONValue?) -> String? {
            if case .string(let text)? = value { return text }
            return nil
        }
    }
}
