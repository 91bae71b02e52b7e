import ChimeCore
import Foundation
import TestThreads
import Testing

@Suite("APNs request headers", .testThreads)
struct APNsRequestHeadersTests {
    static func parse(_ headers: [String: String]) throws(APNsHeaderError) -> APNsRequestHeaders {
        try APNsRequestHeaders.parse { headers[$0] }
    }

    @Test("accepted values, their defaults, and their rendering parsing back equal")
    func accepted() throws {
        let all = try Self.parse([
            "apns-id": "123E4567-e89b-12d3-a456-426614174000", "apns-push-type": "background", "apns-priority": "5",
            "apns-expiration": "1800000000", "apns-collapse-id": "score", "apns-topic": "com.example.push",
        ])
        #expect(
            all
                == APNsRequestHeaders(
                    id: "123E4567-e89b-12d3-a456-426614174000", pushType: .background, priority: .power,
                    expiration: .at(seconds: 1_800_000_000), collapseID: "score", topic: "com.example.push"))
        #expect(all.expiration?.date == Date(timeIntervalSince1970: 1_800_000_000))
        #expect(all.requestIdentifier(apnsID: "x") == "score")
        let none = try Self.parse([:])
        #expect(
            none.effectivePushType == .alert && none.effectivePriority == .immediate
                && none.requestIdentifier(apnsID: "x") == "x")
        #expect(try Self.parse(["apns-push-type": "background"]).effectivePriority == .power)
        #expect(try Self.parse(["apns-expiration": "0"]).expiration == .immediately)
        #expect(try Self.parse(["apns-expiration": "0000"]).expiration == .immediately)
        #expect(try Self.parse(["apns-collapse-id": String(repeating: "é", count: 32)]).collapseID?.utf8.count == 64)
        for type in APNsRequestHeaders.PushType.allCases where type != .background {
            #expect(try Self.parse(["apns-push-type": type.rawValue, "apns-priority": "10"]).pushType == type)
        }
        for headers in [all, none, try Self.parse(["apns-expiration": "007", "apns-priority": "1"])] {
            let rendered = Dictionary(uniqueKeysWithValues: headers.rendered.map { ($0.name, $0.value) })
            #expect(try Self.parse(rendered) == headers)
        }
    }

    @Test(
        "every refusal is Apple's reason, status 400, naming the header",
        arguments: [
            ("apns-id", "nope", "BadMessageId"), ("apns-id", "123e4567e89b12d3a456426614174000", "BadMessageId"),
            ("apns-id", "123e4567-e89b-12d3-a456-42661417400g", "BadMessageId"),
            ("apns-push-type", "Alert", "InvalidPushType"),
            ("apns-push-type", "", "InvalidPushType"), ("apns-priority", "7", "BadPriority"),
            ("apns-priority", "05", "BadPriority"),
            ("apns-priority", "+5", "BadPriority"), ("apns-priority", "", "BadPriority"),
            ("apns-expiration", "-1", "BadExpirationDate"),
            ("apns-expiration", "+1", "BadExpirationDate"), ("apns-expiration", "1.5", "BadExpirationDate"),
            ("apns-expiration", "", "BadExpirationDate"),
            ("apns-expiration", "99999999999999999999", "BadExpirationDate"), ("apns-collapse-id", "", "BadCollapseId"),
            ("apns-collapse-id", String(repeating: "c", count: 65), "BadCollapseId"),
        ])
    func refused(header: String, value: String, reason: String) {
        do {
            let accepted = try Self.parse([header: value])
            Issue.record("\(header): \(value) accepted: \(accepted)")
        } catch {
            #expect(
                error.reason == reason && error.header == header && error.status == 400 && !error.message.isEmpty,
                "\(error)")
        }
        #expect(APNsRequestHeaders.reasons.contains(reason))
    }

    @Test("a background push with priority 10 is BadPriority, as Apple allows it 5 or 1 only")
    func backgroundPriority() throws {
        #expect(throws: APNsHeaderError.self) {
            try Self.parse(["apns-push-type": "background", "apns-priority": "10"])
        }
        #expect(try Self.parse(["apns-push-type": "background", "apns-priority": "1"]).effectivePriority == .low)
    }
}
