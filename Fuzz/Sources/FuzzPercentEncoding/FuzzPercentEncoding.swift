import ChimeCore
import FuzzSupport

// Fuzz target: percent-encoding of paths and queries — PercentEncoding.decode (every path segment
// and query name and value the server receives), PercentEncoding.segments(ofPath:) (how the server
// splits a request's path), escapingNonASCII (what it does to raw bytes in a request line), and the
// encoders the clients and the Link header use (APIRoute.path, PercentEncoding.query). Checks:
// - what decodes re-encodes to text that decodes to the same string; bytes without `%` decode to
//   themselves; a refusal shows the text it refused;
// - escaping non-ASCII bytes keeps an ASCII request line that decodes exactly as the raw bytes do;
// - a path split into segments and encoded again splits into the same segments;
// - any values filled into any declared route's template come back out of its path, in place;
// - any name=value pairs written as a query string come back out of the server's way of reading
//   one (split at `&` and the first `=`, `+` as a space, then decoded), and a query string that
//   reads reads the same once written again.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPercentEncoding(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = fuzzBytes(start, count)
    checkDecoding(bytes)
    checkPath(bytes)
    checkRoute(bytes)
    checkQuery(bytes)
    return 0
}

func decoded(_ bytes: [UInt8]) -> String? {
    do { return try PercentEncoding.decode(bytes: bytes) } catch {
        require(!error.description.isEmpty, "a decoding error without a description")
        require(
            bytes.starts(with: Array(error.text.utf8.prefix(while: { $0 < 0x80 }))),
            "the error shows '\(error.text)', not the text given")
        return nil
    }
}

func checkDecoding(_ bytes: [UInt8]) {
    let text = decoded(bytes)
    if let text {
        require(
            decoded(Array(PercentEncoding.encode(text).utf8)) == text,
            "encode then decode differs for \(text.debugDescription)")
        if !bytes.contains(UInt8(ascii: "%")) {
            require(Array(text.utf8) == bytes, "bytes without % decoded to something else")
        }
        if let string = String(validating: bytes, as: UTF8.self) {
            require((try? PercentEncoding.decode(string)) == text, "decode(String) differs from decode(bytes:)")
        }
    }
    let escaped = PercentEncoding.escapingNonASCII(bytes)
    require(escaped.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "escapingNonASCII left \(escaped.debugDescription)")
    require(decoded(Array(escaped.utf8)) == text, "escaping non-ASCII bytes changed what \(bytes) decodes to")
}

func checkPath(_ bytes: [UInt8]) {
    let path = PercentEncoding.escapingNonASCII(bytes)
    let segments: [String]
    do { segments = try PercentEncoding.segments(ofPath: path) } catch { return }
    require(!segments.isEmpty, "a path of no segments")
    let again = (path.hasPrefix("/") ? "/" : "") + segments.map(PercentEncoding.encode).joined(separator: "/")
    require(
        (try? PercentEncoding.segments(ofPath: again)) == segments,
        "segments of \(path) encoded as \(again) split differently")
}

func checkRoute(_ bytes: [UInt8]) {
    guard let first = bytes.first else { return }
    let route = APIRoute.all[Int(first) % APIRoute.all.count]
    var values = fuzzStrings(bytes.dropFirst())
    var filled: [String: String] = [:]
    for name in route.parameters { filled[name] = values.isEmpty ? "" : values.removeFirst() }
    let path = route.path(filled)
    require(path.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "\(route) made a path that is not plain ASCII: \(path)")
    let segments: [String]
    do { segments = try PercentEncoding.segments(ofPath: path) } catch {
        fatalError("\(route) made \(path), which does not decode: \(error)")
    }
    require(
        segments.count == route.segments.count,
        "\(route) with \(filled) splits into \(segments.count) segments: \(path)")
    for (segment, declared) in zip(segments, route.segments) {
        switch declared {
        case .literal(let text): require(segment == text, "\(route): literal \(text) came back as \(segment)")
        case .parameter(let name):
            require(
                segment == filled[name],
                "\(route): \(name) = \(filled[name]!.debugDescription) came back as \(segment.debugDescription)")
        }
    }
}

/// A query string as the server reads one: libmicrohttpd splits it at `&` and the first `=` and
/// turns `+` into a space; the server decodes each name and value. Nil when one does not decode.
func readQuery(_ query: some Collection<UInt8>) -> [(name: String, value: String)]? {
    guard !query.isEmpty else { return [] }
    var pairs: [(name: String, value: String)] = []
    for argument in query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
        let spaced = argument.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: " ") : $0 }
        let parts = spaced.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
        guard let name = decoded(Array(parts[0])), let value = decoded(parts.count > 1 ? Array(parts[1]) : []) else {
            return nil
        }
        pairs.append((name, value))
    }
    return pairs
}

func same(_ a: [(name: String, value: String)]?, _ b: [(name: String, value: String)]) -> Bool {
    guard let a, a.count == b.count else { return false }
    return zip(a, b).allSatisfy { $0.name == $1.name && $0.value == $1.value }
}

func checkQuery(_ bytes: [UInt8]) {
    let strings = fuzzStrings(bytes)
    let pairs = stride(from: 0, to: strings.count - 1, by: 2).map { (name: strings[$0], value: strings[$0 + 1]) }
        .filter { !$0.name.isEmpty || !$0.value.isEmpty }
    let written = PercentEncoding.query(pairs)
    require(same(readQuery(Array(written.utf8)), pairs), "the query \(written) does not read back as \(pairs)")

    guard let read = readQuery(bytes), !read.isEmpty else { return }
    let again = PercentEncoding.query(read)
    require(
        same(readQuery(Array(again.utf8)), read),
        "the query read from the input, written as \(again), reads differently")
}
