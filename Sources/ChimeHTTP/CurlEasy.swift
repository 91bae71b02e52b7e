import CCurl

/// What every curl easy handle of Chime's does the same way: the request's header fields, the
/// answer's.
enum CurlEasy {
    /// Appends the header fields to curl's list, checked: names single words, values one line.
    /// `Expect:` and `Content-Type:` with no value stop curl adding its own; another field with an
    /// empty value is sent as one (`Name;`, curl's spelling).
    static func appendHeaders(_ given: [(String, String)], to list: inout UnsafeMutablePointer<curl_slist>?)
        -> HTTPClientError?
    {
        var fields = given
        if !fields.contains(where: { $0.0.lowercased() == "content-type" }) { fields.append(("Content-Type", "")) }
        fields.append(("Expect", ""))
        for (name, value) in fields {
            guard !name.isEmpty, name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }),
                !value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 })
            else {
                return HTTPClientError(
                    .badRequest, "the header \(name) cannot be sent: names are single words, values one line")
            }
            let line =
                value.isEmpty && name.lowercased() != "content-type" && name.lowercased() != "expect"
                ? "\(name);" : "\(name): \(value)"
            guard let appended = curl_slist_append(list, line) else { return HTTPClientError(.failed, "out of memory") }
            list = appended
        }
        return nil
    }

    /// The last answer's header fields, as curl parsed them, by lowercased name (repeated ones joined with ", ").
    static func responseHeaders(_ easy: UnsafeMutableRawPointer) -> [String: String] {
        var headers: [String: String] = [:]
        var previous: UnsafeMutablePointer<curl_header>?
        while let header = curl_easy_nextheader(easy, UInt32(CURLH_HEADER), -1, previous) {
            previous = header
            guard let name = header.pointee.name, let value = header.pointee.value else { continue }
            let key = String(cString: name).lowercased()
            let text = String(cString: value)
            headers[key] = headers[key].map { "\($0), \(text)" } ?? text
        }
        return headers
    }
}
