import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Collects header fields and query arguments from libmicrohttpd's iterators, with where each
/// lies in the connection's buffer (see ``layoutProblem(method:url:version:headSize:)``).
final class HeadCollector {
    var headers: [String: String] = [:]
    /// Every header field in the order received, names as sent.
    var fields: [(name: String, value: String)] = []
    var arguments = QueryArguments()
    /// Where each collected string lies: its start and its length, in the order received.
    private var headerSpans: [(start: UnsafeRawPointer, count: Int)] = []
    private var argumentSpans: [(start: UnsafeRawPointer, count: Int)] = []

    func addHeader(key: UnsafePointer<CChar>, keySize: Int, value: UnsafePointer<CChar>?, valueSize: Int) {
        let name = String(decoding: UnsafeRawBufferPointer(start: key, count: keySize), as: UTF8.self)
        let text =
            value.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: valueSize), as: UTF8.self) } ?? ""
        headers[name.lowercased()] = text
        fields.append((name, text))
        headerSpans.append((UnsafeRawPointer(key), keySize))
        if let value { headerSpans.append((UnsafeRawPointer(value), valueSize)) }
    }

    /// Decodes a query argument as libmicrohttpd hands it over: `+` already a space, `%HH` not yet
    /// decoded (see `keepEscapesCallback`). One that does not decode keeps its text as sent.
    func addArgument(key: UnsafePointer<CChar>, keySize: Int, value: UnsafePointer<CChar>?, valueSize: Int) {
        let rawKey = Array(UnsafeRawBufferPointer(start: key, count: keySize))
        let rawValue = value.map { Array(UnsafeRawBufferPointer(start: $0, count: valueSize)) } ?? []
        arguments.add(rawKey: rawKey, rawValue: rawValue)
        argumentSpans.append((UnsafeRawPointer(key), keySize))
        if let value { argumentSpans.append((UnsafeRawPointer(value), valueSize)) }
    }

    /// Finds bytes of the head that no parsed string accounts for: a NUL or a bare CR inside a
    /// field ends libmicrohttpd's copy of it there, so `Authorization: Bearer <token>\0junk`
    /// would reach the handler as a valid token.
    ///
    /// libmicrohttpd parses the head in place: the method, target, query arguments, version, and
    /// each field's name and value are NUL-terminated strings in the connection's buffer, in that
    /// order, separated only by what it replaced with NULs (spaces, `?`, `=`, `&`, the colon, line
    /// ends) and by the whitespace it skipped. So between one string's end and the next string's
    /// start there may only be NUL, space and tab bytes; anything else was cut off. A field outside
    /// the buffer was folded over several lines (obsolete line folding, refused as RFC 9112 §5.2
    /// allows).
    func layoutProblem(
        method: UnsafePointer<CChar>?, url: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?,
        headSize: Int
    ) -> RequestProblem? {
        guard let method, headSize > 0 else { return nil }
        let start = UnsafeRawPointer(method)
        let end = start + headSize
        func inside(_ pointer: UnsafeRawPointer) -> Bool { pointer >= start && pointer < end }
        var spans: [(start: UnsafeRawPointer, count: Int)] = [(start, strlen(method))]
        if let url, inside(UnsafeRawPointer(url)) { spans.append((UnsafeRawPointer(url), strlen(url))) }
        spans += argumentSpans.filter { inside($0.start) }
        if let version, inside(UnsafeRawPointer(version)) { spans.append((UnsafeRawPointer(version), strlen(version))) }
        if headerSpans.contains(where: { !inside($0.start) }) {
            return RequestProblem(
                status: 400, code: "badHeader",
                message: "a header field is folded over several lines; send each on one line")
        }
        spans += headerSpans
        var cursor = start
        for span in spans {
            guard span.start >= cursor else {
                return RequestProblem(
                    status: 400, code: "badHeader", message: "the request head could not be read as sent")
            }
            if let stray = Self.stray(from: cursor, to: span.start) { return stray }
            cursor = span.start + span.count
        }
        return cursor <= end ? Self.stray(from: cursor, to: end) : nil
    }

    private static func stray(from: UnsafeRawPointer, to: UnsafeRawPointer) -> RequestProblem? {
        var pointer = from
        while pointer < to {
            let byte = pointer.load(as: UInt8.self)
            guard byte == 0 || byte == 0x20 || byte == 0x09 else {
                return RequestProblem(
                    status: 400, code: "badHeader",
                    message: "the request head holds a NUL or CR byte inside the request line or a header field")
            }
            pointer += 1
        }
        return nil
    }
}
