import ChimeCore
import Foundation

// `userInfo` as iOS hands it to an app. There it is an `NSDictionary` decoded from the stored
// notification or from the push's JSON, so every number is an `NSNumber` and bridges to any
// numeric type that holds it exactly (SE-0170): `as? UInt`, `as? Int64`, `as? Double` of an
// integer, `as? Bool` of 0 and 1. A Swift `Int` in an `Any` does none of that (`as? UInt` is
// nil), so the Apple layer hands out `NSNumber`s: swift-corelibs-foundation bridges their casts
// as Darwin's Foundation does (measured in UserInfoBridgingTests).
extension PropertyListValue {
    /// The value as iOS hands it to an app: numbers and booleans as `NSNumber` (an integer's,
    /// a real's and a boolean's own kind), `String`, `Data`, `Date`, and arrays (`[Any]`) and
    /// dictionaries (`[String: Any]`) of these.
    var appleValue: Any {
        switch self {
        case .string(let v): v
        case .integer(let v): NSNumber(value: v)
        case .double(let v): NSNumber(value: v)
        case .bool(let v): NSNumber(value: v)
        case .data(let v): v
        case .date(let v): v
        case .array(let v): v.map(\.appleValue)
        case .dictionary(let v): v.mapValues(\.appleValue)
        }
    }
}

extension Dictionary where Key == String, Value == PropertyListValue {
    /// The dictionary as Apple's `userInfo` (see ``PropertyListValue/appleValue``).
    var appleUserInfo: [AnyHashable: Any] {
        var out: [AnyHashable: Any] = [:]
        out.reserveCapacity(count)
        for (key, value) in self { out[key] = value.appleValue }
        return out
    }
}
