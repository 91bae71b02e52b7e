/// The `Link` header of a paged list answer (RFC 8288): where the next page is.
///
/// ```swift
/// LinkHeader.next(#"</v1/apps?limit=100&after=com.b>; rel="next""#)   // "/v1/apps?limit=100&after=com.b"
/// LinkHeader.header(next: "/v1/apps?limit=100&after=com.b")            // the same header
/// ```
public enum LinkHeader {
    /// The header for a link to the next page: `<target>; rel="next"`. `target` is a path and query
    /// as Chime's lists write them (percent-encoded, so without `<`, `>`, `,`, `;` or spaces).
    public static func header(next target: String) -> String { "<\(target)>; rel=\"next\"" }

    /// The target of the link with `rel="next"`, as written (a path and query for Chime's lists).
    public static func next(_ header: String?) -> String? {
        guard let header else { return nil }
        for link in header.split(separator: ",") {
            let parts = link.split(separator: ";").map { $0.trimmingCharacters(in: [" ", "\t"]) }
            guard let target = parts.first, target.hasPrefix("<"), target.hasSuffix(">") else { continue }
            let relations = parts.dropFirst().compactMap { parameter -> [Substring]? in
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].lowercased() == "rel" else { return nil }
                return pair[1].trimmingCharacters(in: ["\""]).split(separator: " ")
            }.flatMap { $0 }
            if relations.contains("next") { return String(target.dropFirst().dropLast()) }
        }
        return nil
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: Set<Character>) -> Substring {
        var text = self
        while let first = text.first, set.contains(first) { text.removeFirst() }
        while let last = text.last, set.contains(last) { text.removeLast() }
        return text
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: Set<Character>) -> Substring {
        Substring(self).trimmingCharacters(in: set)
    }
}
