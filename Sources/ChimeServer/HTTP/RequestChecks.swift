import Foundation

/// Why the server answers a request itself, without handing it to the handler: its head breaks
/// HTTP's framing rules (RFC 9112) or the server's limits. The connection is closed after the
/// answer, so nothing the client sent after the head can be read as another request.
public struct RequestProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// 400, 414, 431 or 501.
    public var status: Int
    /// A short name for the problem (`badFraming`, `uriTooLong`, `headerTooLarge`, `notImplemented`, `badHeader`).
    public var code: String
    /// What is wrong and what would be accepted.
    public var message: String

    public init(status: Int, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public var description: String { "\(status) \(code): \(message)" }
}

/// The server's limits on a request head. libmicrohttpd keeps a request's head in a 32 KiB buffer
/// per connection; these limits are below what that buffer holds, so a head over them gets a
/// clear answer from the server instead of the library's own.
public struct HeadLimits: Sendable, Equatable {
    /// The request target (path and query), in bytes: 414 over it.
    public var targetBytes: Int
    /// Query arguments: 414 over it.
    public var queryArguments: Int
    /// The whole head (request line and header fields), in bytes: 431 over it.
    public var headBytes: Int

    public init(targetBytes: Int = 8192, queryArguments: Int = 128, headBytes: Int = 16384) {
        self.targetBytes = targetBytes
        self.queryArguments = queryArguments
        self.headBytes = headBytes
    }
}

/// The rules a request head must follow before its body is read. Pure functions of the head as
/// libmicrohttpd parsed it; the server calls them on the first call of each request.
///
/// ```swift
/// let problem = RequestChecks.framing(version: "HTTP/1.1", fields: [("Host", "x"), ("Transfer-Encoding", "gzip")])
/// // 400: the transfer codings must end with chunked
/// ```
enum RequestChecks {
    /// The problem with a request target seen before its query was split, if any.
    static func target(bytes: Int, queryArguments: Int, limits: HeadLimits) -> RequestProblem? {
        if bytes > limits.targetBytes {
            return RequestProblem(
                status: 414, code: "uriTooLong",
                message: "the request target is \(bytes) bytes; at most \(limits.targetBytes) are accepted")
        }
        if queryArguments > limits.queryArguments {
            return RequestProblem(
                status: 414, code: "uriTooLong",
                message:
                    "the query has \(queryArguments) arguments; at most \(limits.queryArguments) are accepted (split the call)"
            )
        }
        return nil
    }

    /// The problem with the head's size, if any.
    static func head(bytes: Int, limits: HeadLimits) -> RequestProblem? {
        guard bytes > limits.headBytes else { return nil }
        return RequestProblem(
            status: 431, code: "headerTooLarge",
            message: "the request head is \(bytes) bytes; at most \(limits.headBytes) are accepted")
    }

    /// The method must be a token (RFC 9110 §9.1).
    static func method(_ method: String) -> RequestProblem? {
        guard method.isEmpty || !method.utf8.allSatisfy(isTokenByte) else { return nil }
        return RequestProblem(
            status: 400, code: "badRequest", message: "the method is not a token (letters, digits and !#$%&'*+-.^_`|~)")
    }

    /// An HTTP/2 request's target and authority (RFC 9113 §8.3.1), which nghttp2 leaves to the
    /// server: a `:path` from `/` (`*` only for OPTIONS; CONNECT, which has none, is not served), and
    /// Host, when sent beside `:authority`, once and naming the same authority (the handler's Host
    /// check must not see another host than the one the request is for).
    static func http2Target(method: String, path: String, authority: String?, hosts: [String]) -> RequestProblem? {
        if method == "CONNECT" {
            return RequestProblem(
                status: 501, code: "notImplemented", message: "CONNECT is not served; send requests for paths")
        }
        guard path.hasPrefix("/") || (path == "*" && method == "OPTIONS") else {
            return RequestProblem(
                status: 400, code: "badRequest",
                message: ":path \(quoted(path)) must start with / (or be * for OPTIONS)")
        }
        if hosts.count > 1 {
            return RequestProblem(
                status: 400, code: "badRequest",
                message: "the request has \(hosts.count) Host header fields; send one, or :authority alone")
        }
        if let authority, let host = hosts.first, host.lowercased() != authority.lowercased() {
            return RequestProblem(
                status: 400, code: "badRequest",
                message:
                    "the Host header field \(quoted(host)) names another authority than :authority \(quoted(authority))"
            )
        }
        return nil
    }

    /// Field names must be tokens (so `Transfer-Encoding : chunked`, with whitespace before the
    /// colon, is refused as RFC 9112 §5.1 requires), and values must not hold control characters
    /// other than tab (RFC 9110 §5.5).
    static func fields(_ fields: [(name: String, value: String)]) -> RequestProblem? {
        for (name, value) in fields {
            if name.isEmpty || !name.utf8.allSatisfy(isTokenByte) {
                return RequestProblem(
                    status: 400, code: "badHeader",
                    message: "the header field name \(quoted(name)) is not a token (no whitespace before the colon)")
            }
            if value.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) {
                return RequestProblem(
                    status: 400, code: "badHeader", message: "the value of \(name) holds a control character")
            }
        }
        return nil
    }

    /// Host and message framing (RFC 9112 §3.2, §6.1, §6.3): one Host in HTTP/1.1; Content-Length
    /// and Transfer-Encoding never together; Content-Length values that agree; transfer codings
    /// that end with `chunked` once, and none the server does not implement.
    static func framing(version: String, fields: [(name: String, value: String)]) -> RequestProblem? {
        // One pass over the fields, names compared without lowercased copies (every request).
        var hostCount = 0
        var lengthValues: [String] = []
        var codingValues: [String] = []
        for field in fields {
            if FieldText.equalsLowercase(field.name, "host") {
                hostCount += 1
            } else if FieldText.equalsLowercase(field.name, "content-length") {
                lengthValues.append(field.value)
            } else if FieldText.equalsLowercase(field.name, "transfer-encoding") {
                codingValues.append(field.value)
            }
        }
        if version == "HTTP/1.1", hostCount == 0 {
            return RequestProblem(
                status: 400, code: "badRequest", message: "an HTTP/1.1 request needs a Host header field")
        }
        if hostCount > 1 {
            return RequestProblem(
                status: 400, code: "badRequest", message: "the request has \(hostCount) Host header fields; send one")
        }
        let lengths = lengthValues.flatMap(listElements)
        if !codingValues.isEmpty {
            let codings = codingValues.flatMap(listElements).map { $0.lowercased() }
            if !lengths.isEmpty || !lengthValues.isEmpty {
                return RequestProblem(
                    status: 400, code: "badFraming",
                    message: "the request has both Content-Length and Transfer-Encoding; send one of them")
            }
            if version == "HTTP/1.0" {
                return RequestProblem(
                    status: 400, code: "badFraming", message: "Transfer-Encoding is not allowed in an HTTP/1.0 request")
            }
            guard codings.last == "chunked" else {
                return RequestProblem(
                    status: 400, code: "badFraming",
                    message: "the request's transfer codings (\(codings.joined(separator: ", "))) must end with chunked"
                )
            }
            let others = codings.dropLast()
            if others.contains("chunked") {
                return RequestProblem(status: 400, code: "badFraming", message: "chunked is applied more than once")
            }
            if let unknown = others.first {
                return RequestProblem(
                    status: 501, code: "notImplemented",
                    message:
                        "the transfer coding \(quoted(unknown)) is not implemented; send Transfer-Encoding: chunked alone"
                )
            }
        }
        if let first = lengths.first {
            guard lengths.allSatisfy({ $0 == first }) else {
                return RequestProblem(
                    status: 400, code: "badFraming",
                    message: "the request has Content-Length values that disagree (\(lengths.joined(separator: ", ")))")
            }
            guard first.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                return RequestProblem(
                    status: 400, code: "badFraming", message: "Content-Length \(quoted(first)) is not a number of bytes"
                )
            }
        }
        return nil
    }

    /// The non-empty elements of a comma-separated field value, trimmed.
    static func listElements(_ value: String) -> [String] {
        var elements: [String] = []
        for part in value.split(separator: ",", omittingEmptySubsequences: false) {
            let element = FieldText.trimmed(part)
            if !element.isEmpty { elements.append(String(element)) }
        }
        return elements
    }

    /// `tchar` of RFC 9110 §5.6.2.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        // A switch rather than a search of the punctuation's bytes: every byte of every field name
        // of every request comes here.
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"),
            UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// Text for a message: quoted, at most 40 characters, control characters shown as escapes.
    static func quoted(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars.prefix(40) {
            out +=
                scalar.value < 0x20 || scalar.value == 0x7F ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }
        return "\"\(out)\""
    }
}
