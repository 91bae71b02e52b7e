import ChimeCore
import Foundation
import TestThreads
import Testing

/// Apple's `userInfo` (`[AnyHashable: Any]`) into property-list values: each kind, and refusals
/// naming where the bad value sits (the path is made only for the error).
@Suite("PropertyListValue from Foundation values", .testThreads)
struct PropertyListValueTests {
    @Test(
        "exact types, other integer and floating-point types, NSNumbers and values already property-list values convert to their kind"
    )
    func kinds() throws {
        let info: [AnyHashable: Any] = [
            "string": "text", "int": 7, "bool": true, "double": 2.5,
            "int32": Int32(-3), "float": Float(0.5), "number": NSNumber(value: 9),
            "given": PropertyListValue.data(Data([1, 2])), "hashable": AnyHashable("wrapped"),
            "nested": ["list": [1, "two"] as [Any]] as [String: Any],
        ]
        let converted = try [String: PropertyListValue](userInfo: info)
        #expect(
            converted == [
                "string": .string("text"), "int": .integer(7), "bool": .bool(true), "double": .double(2.5),
                "int32": .integer(-3), "float": .double(0.5), "number": .integer(9),
                "given": .data(Data([1, 2])), "hashable": .string("wrapped"),
                "nested": .dictionary(["list": .array([.integer(1), .string("two")])]),
            ])
    }

    @Test(
        "a value that is not a property-list type is refused naming its path, however deep",
        arguments: [
            "content.userInfo.url", "content.userInfo.items[1].deep", "content.userInfo.outer.inner[0]",
            "content.userInfo",
        ])
    func paths(path: String) {
        let info: [AnyHashable: Any] =
            switch path {
            case "content.userInfo.url": ["url": URL(fileURLWithPath: "/tmp")]
            case "content.userInfo.items[1].deep": ["items": [1, ["deep": UUID()] as [String: Any]] as [Any]]
            case "content.userInfo.outer.inner[0]":
                ["outer": [AnyHashable("inner"): [NSObject()] as [Any]] as [AnyHashable: Any]]
            default: [AnyHashable(3): "a key that is not a string"]
            }
        let error = #expect(throws: ChimeError.self) {
            _ = try [String: PropertyListValue](userInfo: info, field: "content.userInfo")
        }
        #expect(error?.code == .invalidUserInfo)
        #expect(error?.field == path)
    }
}
