import Foundation

/// The error domain of ``UNError``: `"UNErrorDomain"`, as on Apple's platforms.
public let UNErrorDomain = "UNErrorDomain"

/// Apple's UserNotifications error, with Apple's domain and codes.
///
/// `error as NSError` gives the domain `"UNErrorDomain"` and the code, so code written for iOS that
/// inspects the domain and code keeps working:
///
/// ```swift
/// do { try await center.add(request) }
/// catch UNError.notificationsNotAllowed { print("Turn notifications on in settings") }
/// ```
public struct UNError: Error, Hashable, Sendable, CustomNSError, CustomStringConvertible {
    /// Apple's `UNErrorCode`, with Apple's raw values.
    public enum Code: Int, Sendable, Hashable, CaseIterable {
        case notificationsNotAllowed = 1
        case attachmentInvalidURL = 100
        case attachmentUnrecognizedType = 101
        case attachmentInvalidFileSize = 102
        case attachmentNotInDataStore = 103
        case attachmentMoveIntoDataStoreFailed = 104
        case attachmentCorrupt = 105
        case notificationInvalidNoDate = 1400
        case notificationInvalidNoContent = 1401
        case contentProvidingObjectNotAllowed = 1500
        case contentProvidingInvalid = 1501
        case badgeInputInvalid = 1600
    }

    /// The code.
    public let code: Code
    /// What went wrong, in words.
    public let message: String

    public init(_ code: Code, _ message: String? = nil) {
        self.code = code
        self.message = message ?? Self.defaultMessage(code)
    }

    public static var errorDomain: String { UNErrorDomain }
    public var errorCode: Int { code.rawValue }
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: message] }
    public var localizedDescription: String { message }
    public var description: String { "UNError(\(code), \(code.rawValue)): \(message)" }

    public static let notificationsNotAllowed = Code.notificationsNotAllowed
    public static let attachmentInvalidURL = Code.attachmentInvalidURL
    public static let attachmentUnrecognizedType = Code.attachmentUnrecognizedType
    public static let attachmentInvalidFileSize = Code.attachmentInvalidFileSize
    public static let attachmentNotInDataStore = Code.attachmentNotInDataStore
    public static let attachmentMoveIntoDataStoreFailed = Code.attachmentMoveIntoDataStoreFailed
    public static let attachmentCorrupt = Code.attachmentCorrupt
    public static let notificationInvalidNoDate = Code.notificationInvalidNoDate
    public static let notificationInvalidNoContent = Code.notificationInvalidNoContent
    public static let contentProvidingObjectNotAllowed = Code.contentProvidingObjectNotAllowed
    public static let contentProvidingInvalid = Code.contentProvidingInvalid
    public static let badgeInputInvalid = Code.badgeInputInvalid

    fileprivate static func defaultMessage(_ code: Code) -> String {
        switch code {
        case .notificationsNotAllowed: "Notifications are not allowed for this app"
        case .attachmentInvalidURL: "The attachment's URL is not a file URL of a readable file"
        case .attachmentUnrecognizedType: "The attachment's file type is not supported"
        case .attachmentInvalidFileSize: "The attachment is too large"
        case .attachmentNotInDataStore: "The attachment is not in the notification data store"
        case .attachmentMoveIntoDataStoreFailed: "The attachment could not be moved into the data store"
        case .attachmentCorrupt: "The attachment's file is corrupt"
        case .notificationInvalidNoDate: "The notification has no date"
        case .notificationInvalidNoContent: "The notification has no user-facing content"
        case .contentProvidingObjectNotAllowed: "The content-providing object is not allowed"
        case .contentProvidingInvalid: "The content-providing object is invalid"
        case .badgeInputInvalid: "The badge count must be zero or greater"
        }
    }
}

/// Lets `catch UNError.notificationsNotAllowed` match, as with Apple's bridged error codes.
public func ~= (code: UNError.Code, error: any Error) -> Bool {
    (error as? UNError)?.code == code
}
