import ChimeCore
import Foundation

/// Cursor paging for every list: `?limit=N&after=CURSOR`. An answer is a JSON array as before; when
/// more follow, a `Link: <…?limit=N&after=CURSOR>; rel="next"` header says where (RFC 8288), and a
/// client follows it until there is none. A page holds at most `limit` items (default 100, at most
/// 1,000) and stops early past about 1 MiB of JSON (always at least one item), so no answer holds a
/// whole large list in memory. Cursors are opaque; a client only passes them back.
///
/// ```
/// GET /v1/apps/com.example.alarm/requests?limit=2
/// Link: </v1/apps/com.example.alarm/requests?limit=2&after=17>; rel="next"
/// ```
struct Page: Sendable {
    /// Items when `limit` is not given.
    static let defaultLimit = 100
    /// The largest `limit` accepted.
    static let maximumLimit = 1000
    /// A page ends early once its JSON passes this many bytes.
    static let byteLimit = 1 << 20

    var limit: Int
    /// The cursor of the last item of the previous page, or nil for the first page.
    var after: String?

    /// The page a request asks for.
    ///
    /// - Throws: ``APIError`` 400 naming `limit` or `after` when they are not usable.
    init(_ request: HTTPRequest) throws {
        limit = Self.defaultLimit
        if let text = request.queryValues("limit").last {
            guard let value = Int(text), (1...Self.maximumLimit).contains(value) else {
                throw APIError.badRequest(
                    "invalidValue",
                    "limit is \"\(text.prefix(20))\"; give a whole number from 1 to \(Self.maximumLimit)",
                    field: "limit")
            }
            limit = value
        }
        let after = request.queryValues("after").last
        self.after = after?.isEmpty == false ? after : nil
    }

    /// `after` as a number (a sequence or an id); 0 on the first page.
    func number() throws -> Int64 {
        guard let after else { return 0 }
        guard let value = Int64(after), value >= 0 else { throw Self.badCursor(after) }
        return value
    }

    /// `after` as a delivered-list position, or nil on the first page.
    func deliveredCursor() throws -> DeliveredCursor? {
        guard let after else { return nil }
        let parts = after.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let bits = UInt64(parts[0], radix: 16), let sequence = Int64(parts[1]) else {
            throw Self.badCursor(after)
        }
        return DeliveredCursor(date: Date(timeIntervalSince1970: Double(bitPattern: bits)), sequence: sequence)
    }

    /// The cursor of a delivered notification (its date exactly, and its sequence).
    static func cursor(_ notification: DeliveredNotification) -> String {
        String(notification.date.timeIntervalSince1970.bitPattern, radix: 16) + "." + String(notification.sequence)
    }

    static func badCursor(_ text: String) -> APIError {
        APIError.badRequest(
            "invalidValue",
            "after \"\(text.prefix(40))\" is not a cursor of this list; pass back the after= of a Link: rel=\"next\"",
            field: "after")
    }

    /// The answer for one page, from up to `limit + 1` items (one more than asked tells whether
    /// more follow), each with its cursor.
    func response(_ items: [(json: JSONValue, cursor: String)], request: HTTPRequest, route: Route) -> HTTPResponse {
        var body: [UInt8] = [UInt8(ascii: "[")]
        var count = 0
        var last: String?
        var more = items.count > limit
        for item in items.prefix(limit) {
            let encoded = item.json.serializedBytes()
            if count > 0, body.count + encoded.count > Self.byteLimit {
                more = true
                break
            }
            if count > 0 { body.append(UInt8(ascii: ",")) }
            body += encoded
            count += 1
            last = item.cursor
        }
        body.append(UInt8(ascii: "]"))
        var response = HTTPResponse(status: 200, contentType: "application/json", body: body, route: route.template)
        if more, let last { response.headers.append(("Link", LinkHeader.header(next: next(request, after: last)))) }
        return response
    }

    /// The request's path and query with `limit` and `after` set for the next page.
    private func next(_ request: HTTPRequest, after cursor: String) -> String {
        let query =
            request.query.filter { $0.name != "limit" && $0.name != "after" }
            + [(name: "limit", value: String(limit)), (name: "after", value: cursor)]
        return request.path + "?" + PercentEncoding.query(query)
    }
}
