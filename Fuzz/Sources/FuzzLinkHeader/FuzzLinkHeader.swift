import ChimeCore
import FuzzSupport

// Fuzz target: the `Link` header of a paged list (LinkHeader.next, what the CLI and the service's
// clients follow to the next page) and the header the server writes (LinkHeader.header(next:)).
// Checks:
// - whatever the header, a next target is one written between `<` and `>` in it, with no `,`;
// - the server's header for any list path and query (a declared route filled with any values, any
//   query pairs with limit and after) gives that target back, alone and among other links.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLinkHeader(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = fuzzBytes(start, count)
    let header = String(decoding: bytes, as: UTF8.self)
    if let target = LinkHeader.next(header) {
        require(
            header.contains("<" + target + ">"),
            "next target \(target.debugDescription) is not written as <…> in the header")
        require(!target.contains(","), "next target \(target.debugDescription) spans two links")
    }
    require(LinkHeader.next(nil) == nil, "a link without a header")

    guard let first = bytes.first else { return 0 }
    let route = APIRoute.all[Int(first) % APIRoute.all.count]
    var values = fuzzStrings(bytes.dropFirst())
    var filled: [String: String] = [:]
    for name in route.parameters { filled[name] = values.isEmpty ? "" : values.removeFirst() }
    var query = stride(from: 0, to: values.count - 1, by: 2).map { (name: values[$0], value: values[$0 + 1]) }
    query += [("limit", "100"), ("after", values.last ?? "")]
    let target = route.path(filled) + "?" + PercentEncoding.query(query)
    let written = LinkHeader.header(next: target)
    require(LinkHeader.next(written) == target, "\(written) does not lead to \(target)")
    for other in [#"</v1/apps?limit=1>; rel="prev""#, #"<https://example.com/a,b>; rel="first""#] {
        require(
            LinkHeader.next(other + ", " + written) == target,
            "after another link, \(written) does not lead to \(target)")
        require(
            LinkHeader.next(written + ",\t" + other) == target,
            "before another link, \(written) does not lead to \(target)")
    }
    return 0
}
