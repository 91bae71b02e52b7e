import Foundation

/// A refusal of an APNs request header, with Apple's reason and status.
public struct APNsHeaderError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Apple's reason string: one of ``APNsRequestHeaders/reasons``.
    public var reason: String
    /// The HTTP status Apple answers with: 400 for every header reason.
    public var status: Int
    /// The header at fault (`apns-priority`, …).
    public var header: String
    /// What is wrong, for a person.
    public var message: String

    public init(reason: String, header: String, message: String, status: Int = 400) {
        self.reason = reason
        self.status = status
        self.header = header
        self.message = message
    }

    public var description: String { "\(reason) (\(status), \(header)): \(message)" }
}

/// The APNs request headers of `POST /3/device/{token}` other than `authorization`, read as Apple
/// documents them ("Sending notification requests to APNs"):
///
/// | header | accepted | refused with |
/// |---|---|---|
/// | `apns-id` | a UUID, 8-4-4-4-12 hexadecimal digits (echoed back; made when absent) | `BadMessageId` |
/// | `apns-push-type` | ``PushType`` (absent: `alert`) | `InvalidPushType` |
/// | `apns-priority` | `10`, `5`, `1` (absent: 10, or 5 for `background`); `background` only with 5 or 1 | `BadPriority` |
/// | `apns-expiration` | UNIX seconds, `0` for "now or never" | `BadExpirationDate` |
/// | `apns-collapse-id` | 1 to 64 bytes | `BadCollapseId` |
/// | `apns-topic` | kept as given; the endpoint checks it against the apps | |
///
/// ```swift
/// let headers = try APNsRequestHeaders.parse { ["apns-push-type": "background", "apns-priority": "5"][$0] }
/// headers.effectivePushType   // .background
/// headers.rendered            // [("apns-push-type", "background"), ("apns-priority", "5")]
/// ```
///
/// Every value that parses renders back (``rendered``) to headers that parse to the same value.
public struct APNsRequestHeaders: Sendable, Hashable {
    /// `apns-push-type`'s values.
    public enum PushType: String, Sendable, CaseIterable {
        case alert, background, location, voip, complication, fileprovider, mdm, liveactivity, pushtotalk, widgets,
            controls
    }

    /// `apns-priority`'s values.
    public enum Priority: Int, Sendable, CaseIterable {
        /// 10: send at once.
        case immediate = 10
        /// 5: send with the device's power considerations.
        case power = 5
        /// 1: the device's power considerations first; never wakes the device.
        case low = 1
    }

    /// `apns-expiration`: a UNIX time in seconds.
    public enum Expiration: Sendable, Hashable {
        /// `0`: delivered now or never; not stored for a later try.
        case immediately
        /// A date: tried again until it, then dropped.
        case at(seconds: Int64)

        /// The date after which the push is dropped; `nil` for ``immediately``.
        public var date: Date? {
            if case .at(let seconds) = self { return Date(timeIntervalSince1970: TimeInterval(seconds)) }
            return nil
        }

        /// The header's text.
        public var headerValue: String {
            switch self {
            case .immediately: "0"
            case .at(let seconds): String(seconds)
            }
        }
    }

    /// Apple's reasons for the headers this type reads.
    public static let reasons: Set<String> = [
        "BadMessageId", "InvalidPushType", "BadPriority", "BadExpirationDate", "BadCollapseId",
    ]

    /// Apple's bound on `apns-collapse-id`, in bytes.
    public static let maximumCollapseIDBytes = 64

    /// `apns-id` as given (a UUID), or `nil`.
    public var id: String?
    /// `apns-push-type`, or `nil` when absent.
    public var pushType: PushType?
    /// `apns-priority`, or `nil` when absent.
    public var priority: Priority?
    /// `apns-expiration`, or `nil` when absent.
    public var expiration: Expiration?
    /// `apns-collapse-id`, or `nil` when absent.
    public var collapseID: String?
    /// `apns-topic` as given (not checked here), or `nil`.
    public var topic: String?

    public init(
        id: String? = nil, pushType: PushType? = nil, priority: Priority? = nil, expiration: Expiration? = nil,
        collapseID: String? = nil, topic: String? = nil
    ) {
        self.id = id
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.topic = topic
    }

    /// The push type Apple uses: the header's, else `alert`.
    public var effectivePushType: PushType { pushType ?? .alert }

    /// The priority Apple uses: the header's, else 10 (5 for a `background` push, the only
    /// priorities Apple allows it; see docs/differences-from-apple.md).
    public var effectivePriority: Priority { priority ?? (effectivePushType == .background ? .power : .immediate) }

    /// The identifier of the notification request a push becomes: the collapse id (a later push
    /// with the same one replaces it), else the push's `apns-id`.
    public func requestIdentifier(apnsID: String) -> String { collapseID ?? apnsID }

    /// The headers again, in Apple's names, each given value in its canonical text.
    public var rendered: [(name: String, value: String)] {
        var out: [(name: String, value: String)] = []
        if let id { out.append(("apns-id", id)) }
        if let pushType { out.append(("apns-push-type", pushType.rawValue)) }
        if let priority { out.append(("apns-priority", String(priority.rawValue))) }
        if let expiration { out.append(("apns-expiration", expiration.headerValue)) }
        if let collapseID { out.append(("apns-collapse-id", collapseID)) }
        if let topic { out.append(("apns-topic", topic)) }
        return out
    }

    /// Reads the headers; `header` gives a header's value by its lower-case name.
    ///
    /// - Throws: ``APNsHeaderError`` with Apple's reason, in the order `apns-push-type`, `apns-id`,
    ///   `apns-expiration`, `apns-priority`, `apns-collapse-id`.
    public static func parse(header: (String) -> String?) throws(APNsHeaderError) -> APNsRequestHeaders {
        var headers = APNsRequestHeaders(topic: header("apns-topic"))
        if let text = header("apns-push-type") {
            guard let type = PushType(rawValue: text) else {
                throw APNsHeaderError(
                    reason: "InvalidPushType", header: "apns-push-type",
                    message:
                        "apns-push-type \(text.prefix(40)) is not one of \(PushType.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            headers.pushType = type
        }
        if let text = header("apns-id") {
            guard isUUID(text) else {
                throw APNsHeaderError(
                    reason: "BadMessageId", header: "apns-id",
                    message: "apns-id \(text.prefix(60)) is not a UUID (8-4-4-4-12 hexadecimal digits)")
            }
            headers.id = text
        }
        if let text = header("apns-expiration") {
            guard let seconds = unixSeconds(text) else {
                throw APNsHeaderError(
                    reason: "BadExpirationDate", header: "apns-expiration",
                    message: "apns-expiration must be a UNIX time in seconds (decimal digits), or 0")
            }
            headers.expiration = seconds == 0 ? .immediately : .at(seconds: seconds)
        }
        if let text = header("apns-priority") {
            guard text.utf8.count <= 2, let number = Int(text), String(number) == text,
                let priority = Priority(rawValue: number)
            else {
                throw APNsHeaderError(
                    reason: "BadPriority", header: "apns-priority", message: "apns-priority must be 10, 5 or 1")
            }
            headers.priority = priority
        }
        if headers.effectivePushType == .background, headers.priority == .immediate {
            throw APNsHeaderError(
                reason: "BadPriority", header: "apns-priority",
                message: "a background push must have apns-priority 5 or 1, not 10")
        }
        if let text = header("apns-collapse-id") {
            guard !text.isEmpty, text.utf8.count <= maximumCollapseIDBytes else {
                throw APNsHeaderError(
                    reason: "BadCollapseId", header: "apns-collapse-id",
                    message: "apns-collapse-id must be 1 to \(maximumCollapseIDBytes) bytes (it has \(text.utf8.count))"
                )
            }
            headers.collapseID = text
        }
        return headers
    }

    /// `8-4-4-4-12` hexadecimal digits, any case.
    public static func isUUID(_ text: String) -> Bool {
        let groups = text.utf8.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        guard groups.map(\.count) == [8, 4, 4, 4, 12] else { return false }
        return groups.allSatisfy { $0.allSatisfy(isHexDigit) }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    /// Decimal digits only (no sign, no space), at most what an `Int64` holds.
    private static func unixSeconds(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return nil
        }
        return Int64(text)
    }
}
