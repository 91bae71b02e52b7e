import Foundation

/// An identifier as a dictionary key or set member, compared by its UTF-8 bytes — as NSString's
/// `isEqual`, SQLite and PostgreSQL compare it — never by Unicode canonical equivalence, which is
/// what Swift's `String ==` and `String` hashing use.
///
/// Under canonical equivalence U+212A KELVIN SIGN equals `K`, and a precomposed "café" equals a
/// decomposed one; the stores keep them apart, so an in-memory table that merged them would disagree
/// with the store it caches. Every table keyed by an identifier (bundle, request, category, action,
/// thread) uses this key.
///
/// ```swift
/// let precomposed = "caf\u{E9}", decomposed = "cafe\u{301}"
/// precomposed == decomposed                                   // true: String's rule
/// LiteralKey(precomposed) == LiteralKey(decomposed)           // false: two identifiers, as on iOS
/// ```
public struct LiteralKey: Hashable, Sendable, CustomStringConvertible {
    public let text: String

    public init(_ text: String) { self.text = text }

    public static func == (a: LiteralKey, b: LiteralKey) -> Bool { a.text.isLiterally(b.text) }

    public func hash(into hasher: inout Hasher) {
        var text = self.text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    public var description: String { text }
}

extension String {
    /// Whether the two strings have the same Unicode scalars (the same UTF-8 bytes): the comparison
    /// identifiers get everywhere in Chime, unlike `==` (canonical equivalence). See ``LiteralKey``.
    public func isLiterally(_ other: String) -> Bool {
        var a = self
        var b = other
        return a.withUTF8 { x in
            b.withUTF8 { y in
                x.count == y.count && (x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0)
            }
        }
    }
}
