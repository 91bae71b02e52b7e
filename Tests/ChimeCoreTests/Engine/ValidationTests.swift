import ChimeCore
import Foundation
import TestThreads
import Testing

/// The checks every entry point applies; the errors name the field and say what is accepted.
@Suite("Validation", .testThreads)
struct ValidationTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var request: NotificationRequest
        var code: ChimeError.Code
        var field: String
        var says: String
        var testDescription: String { name }
    }

    static func request(
        _ identifier: String = "id", trigger: NotificationTrigger? = nil,
        change: (inout NotificationContent) -> Void = { _ in }
    ) -> NotificationRequest {
        var content = NotificationContent(title: "t")
        change(&content)
        return NotificationRequest(identifier: identifier, content: content, trigger: trigger)
    }

    static func region(radius: Double = 100, latitude: Double = 52, entry: Bool = true, exit: Bool = true)
        -> CircularRegion
    {
        CircularRegion(
            identifier: "r", center: Coordinate(latitude: latitude, longitude: 13), radius: radius,
            notifyOnEntry: entry, notifyOnExit: exit)
    }

    static let cases: [Case] = [
        Case(
            name: "empty identifier", request: request(""), code: .invalidIdentifier, field: "identifier", says: "empty"
        ),
        Case(
            name: "identifier over 1024 bytes", request: request(String(repeating: "é", count: 600)),
            code: .invalidIdentifier,
            field: "identifier", says: "1200 bytes"),
        Case(
            name: "NUL in identifier", request: request("a\u{0}b"), code: .invalidIdentifier, field: "identifier",
            says: "NUL"),
        Case(
            name: "interval 0", request: request(trigger: .timeInterval(0, repeats: false)), code: .invalidTrigger,
            field: "trigger.timeInterval", says: "the time interval must be greater than 0"),
        Case(
            name: "repeating interval 30", request: request(trigger: .timeInterval(30, repeats: true)),
            code: .invalidTrigger,
            field: "trigger.timeInterval", says: "the time interval must be at least 60 if repeating"),
        Case(
            name: "no date components", request: request(trigger: .calendar(DateComponents(), repeats: false)),
            code: .invalidTrigger,
            field: "trigger.dateComponents", says: "no components"),
        Case(
            name: "hour 24", request: request(trigger: .calendar(DateComponents(hour: 24), repeats: true)),
            code: .invalidTrigger,
            field: "trigger.dateComponents.hour", says: "0 to 23"),
        Case(
            name: "weekday 8", request: request(trigger: .calendar(DateComponents(weekday: 8), repeats: true)),
            code: .invalidTrigger,
            field: "trigger.dateComponents.weekday", says: "1 to 7"),
        Case(
            name: "radius 0", request: request(trigger: .location(region(radius: 0), repeats: false)),
            code: .invalidTrigger,
            field: "trigger.region.radius", says: "greater than 0"),
        Case(
            name: "latitude 91", request: request(trigger: .location(region(latitude: 91), repeats: false)),
            code: .invalidTrigger,
            field: "trigger.region.latitude", says: "-90 to 90"),
        Case(
            name: "neither entry nor exit",
            request: request(trigger: .location(region(entry: false, exit: false), repeats: false)),
            code: .invalidTrigger, field: "trigger.region", says: "neither"),
        Case(
            name: "push trigger", request: request(trigger: .push), code: .invalidTrigger, field: "trigger",
            says: "push"),
        Case(
            name: "negative badge", request: request { $0.badge = -1 }, code: .invalidValue, field: "content.badge",
            says: "0 or more"),
        Case(
            name: "relevance 2", request: request { $0.relevanceScore = 2 }, code: .invalidValue,
            field: "content.relevanceScore",
            says: "0 to 1"),
        Case(
            name: "too large", request: request { $0.body = String(repeating: "x", count: 300_000) }, code: .tooLarge,
            field: "content",
            says: "bytes"),
    ]

    @Test("bad requests are refused with the field named and what is accepted", arguments: cases)
    func refused(_ c: Case) {
        let error = #expect(throws: ChimeError.self) { try Validation.validate(c.request) }
        #expect(error?.code == c.code)
        #expect(error?.field == c.field)
        #expect(error?.message.contains(c.says) == true, "\(error?.message ?? "")")
    }

    @Test(
        "good requests pass",
        arguments: [
            request(), request(trigger: .timeInterval(60, repeats: true)),
            request(trigger: .timeInterval(0.1, repeats: false)),
            request(trigger: .calendar(DateComponents(hour: 8, minute: 30), repeats: true)),
            request(trigger: .location(region(exit: false), repeats: true)), request { $0.badge = 0 },
        ])
    func accepted(_ request: NotificationRequest) throws {
        try Validation.validate(request)
    }

    static func category(_ identifier: String, _ actions: [String], text: Bool = false) -> NotificationCategory {
        NotificationCategory(
            identifier: identifier,
            actions: actions.map {
                NotificationAction(
                    identifier: $0, title: $0, textInput: text ? .init(buttonTitle: "Send", placeholder: "") : nil)
            })
    }

    @Test(
        "bad categories are refused naming the field",
        arguments: [
            ([category("a", ["x", "x"])], "categories[0].actions[1].identifier", "listed twice"),
            (
                [category("a", ["x"]), category("b", ["y", "z", "y"])], "categories[1].actions[2].identifier",
                "listed twice"
            ),
            ([category("a", []), category("a", [])], "categories[1].identifier", "listed twice"),
            ([category("", [])], "categories[0].identifier", "empty"),
            ([category("a", [""])], "categories[0].actions[0].identifier", "empty"),
            (
                [category("a", [UNNotificationDismissActionIdentifier])], "categories[0].actions[0].identifier",
                "reserved"
            ),
        ])
    func badCategories(categories: [NotificationCategory], field: String, says: String) {
        let error = #expect(throws: ChimeError.self) { try Validation.validate(categories) }
        #expect(error?.field == field)
        #expect(error?.message.contains(says) == true, "\(error?.message ?? "")")
    }

    @Test("the same action identifier in two different categories is fine")
    func sameActionInTwoCategories() throws {
        try Validation.validate([Self.category("a", ["ok"]), Self.category("b", ["ok"], text: true)])
    }
}
