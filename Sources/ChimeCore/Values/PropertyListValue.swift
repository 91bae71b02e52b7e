import Foundation

/// A property-list value: what a notification's `userInfo` may hold.
///
/// ```swift
/// let info: [String: PropertyListValue] = ["task": .data(encodedTask), "count": .integer(3)]
/// ```
public enum PropertyListValue: Sendable, Hashable {
    case string(String)
    case integer(Int64)
    case double(Double)
    case bool(Bool)
    case data(Data)
    case date(Date)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])
}

extension PropertyListValue {
    /// Converts a Foundation value (`String`, any integer or floating-point number, `Bool`, `Data`,
    /// `Date`, `NSNumber`, arrays and string-keyed dictionaries of these) into a property-list value.
    ///
    /// - Parameter path: where the value sits, used in the error (`userInfo.items[2]`).
    /// - Throws: ``ChimeError`` with code `invalidUserInfo` naming the path and the type found.
    public init(foundation value: Any, path: String) throws {
        try self.init(foundation: value, at: { path })
    }

    /// ``init(foundation:path:)`` with the path made only when it is needed: for an error, or for
    /// the values inside an array or dictionary (each add converts its whole `userInfo`, and a
    /// path string per key was most of the cost).
    init(foundation value: Any, at path: () -> String) throws {
        let type = Swift.type(of: value)
        // The common exact types first: a cast that succeeds at once is cheap, one that fails
        // searches for bridges and conformances.
        if type == String.self {
            self = .string(value as! String)
            return
        }
        if type == Int.self {
            self = .integer(Int64(value as! Int))
            return
        }
        if type == Bool.self {
            self = .bool(value as! Bool)
            return
        }
        if type == Double.self {
            self = .double(value as! Double)
            return
        }
        if type is NSNumber.Type, let number = value as? NSNumber {
            self = Self.fromNumber(number)
            return
        }
        switch value {
        case let v as String: self = .string(v)
        case let v as Int: self = .integer(Int64(v))
        case let v as Int8: self = .integer(Int64(v))
        case let v as Int16: self = .integer(Int64(v))
        case let v as Int32: self = .integer(Int64(v))
        case let v as Int64: self = .integer(v)
        case let v as UInt8: self = .integer(Int64(v))
        case let v as UInt16: self = .integer(Int64(v))
        case let v as UInt32: self = .integer(Int64(v))
        case let v as UInt where v <= UInt(Int64.max): self = .integer(Int64(v))
        case let v as UInt64 where v <= UInt64(Int64.max): self = .integer(Int64(v))
        case let v as Double: self = .double(v)
        case let v as Float: self = .double(Double(v))
        case let v as Data: self = .data(v)
        case let v as Date: self = .date(v)
        case let v as [Any]:
            self = .array(
                try v.enumerated().map { item in
                    try PropertyListValue(foundation: item.element, at: { "\(path())[\(item.offset)]" })
                })
        case let v as [String: Any]:
            var out: [String: PropertyListValue] = [:]
            out.reserveCapacity(v.count)
            for (key, element) in v {
                out[key] = try PropertyListValue(foundation: element, at: { "\(path()).\(key)" })
            }
            self = .dictionary(out)
        case let v as [AnyHashable: Any]:
            self = .dictionary(try [String: PropertyListValue](userInfo: v, at: path))
        case let v as PropertyListValue:
            // Not a value of the types above, so trying it last changes no answer.
            self = v
        default:
            let path = path()
            throw ChimeError(
                .invalidUserInfo, field: path,
                "\(path) is a \(type), which is not a property-list type; accepted: String, integer and floating-point numbers, Bool, Data, Date, and arrays and dictionaries (with String keys) of these"
            )
        }
    }

    private static func fromNumber(_ number: NSNumber) -> PropertyListValue {
        switch String(cString: number.objCType) {
        case "f", "d": return .double(number.doubleValue)
        case "c" where number.int64Value == 0 || number.int64Value == 1: return .bool(number.boolValue)
        case "Q" where number.uint64Value > UInt64(Int64.max): return .double(number.doubleValue)
        default: return .integer(number.int64Value)
        }
    }
}

extension Dictionary where Key == String, Value == PropertyListValue {
    /// Converts Apple's `[AnyHashable: Any]` user info, naming the first offending key on failure.
    public init(userInfo: [AnyHashable: Any], field: String = JSONFieldName.Content.userInfo) throws {
        try self.init(userInfo: userInfo, at: { field })
    }

    /// ``init(userInfo:field:)`` with the field's name made only when it is needed.
    init(userInfo: [AnyHashable: Any], at field: () -> String) throws {
        self.init(minimumCapacity: userInfo.count)
        for (key, value) in userInfo {
            guard let key = key.base as? String else {
                let field = field()
                throw ChimeError(
                    .invalidUserInfo, field: field,
                    "\(field) has a key of type \(type(of: key.base)); property-list dictionary keys must be strings")
            }
            self[key] = try PropertyListValue(foundation: value, at: { "\(field()).\(key)" })
        }
    }
}
