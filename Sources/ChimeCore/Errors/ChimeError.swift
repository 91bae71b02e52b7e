import Foundation

/// Chime's error for what Apple's ``UNError`` has no code for: invalid input, unknown identifiers,
/// store failures. Its message names the field and says what is accepted.
///
/// ```swift
/// do { try await center.add(request) }
/// catch let error as ChimeError where error.code == .invalidIdentifier { print(error.message) }
/// ```
public struct ChimeError: Error, Hashable, Sendable, CustomNSError, CustomStringConvertible {
    /// What kind of failure this is. Extensible: new codes may be added in later versions.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// An identifier is empty, too long, or otherwise unusable.
        public static let invalidIdentifier = Code(rawValue: "invalidIdentifier")
        /// A `userInfo` value is not a property-list value.
        public static let invalidUserInfo = Code(rawValue: "invalidUserInfo")
        /// A trigger's parameters are out of range.
        public static let invalidTrigger = Code(rawValue: "invalidTrigger")
        /// A field has a value that is not accepted.
        public static let invalidValue = Code(rawValue: "invalidValue")
        /// A category is malformed (for example, an action identifier listed twice).
        public static let invalidCategory = Code(rawValue: "invalidCategory")
        /// Text is not in the encoding it must be in (a body that is not UTF-8).
        public static let invalidEncoding = Code(rawValue: "invalidEncoding")
        /// Input could not be parsed (malformed JSON, for example).
        public static let malformedInput = Code(rawValue: "malformedInput")
        /// Something is too large.
        public static let tooLarge = Code(rawValue: "tooLarge")
        /// No such notification, request, app or response.
        public static let notFound = Code(rawValue: "notFound")
        /// The action is not one of the notification's category.
        public static let unknownAction = Code(rawValue: "unknownAction")
        /// The store could not be opened, read or written.
        public static let storeFailure = Code(rawValue: "storeFailure")
        /// The store file was written by a newer Chime.
        public static let storeTooNew = Code(rawValue: "storeTooNew")
        /// The file is not a Chime store, or is corrupt.
        public static let notAStore = Code(rawValue: "notAStore")
        /// The store could not be written because its disk (or quota) is full; nothing was stored.
        public static let storageFull = Code(rawValue: "storageFull")
        /// The app keeps as much in the store as its quota allows (``StorageQuota``); nothing was
        /// stored. The message names the app and the bound.
        public static let quotaExceeded = Code(rawValue: "quotaExceeded")
        /// Another process sharing the store changed the same records in the meantime (a shared
        /// store's write conflict or deadlock); the engine runs the transaction again.
        public static let storeConflict = Code(rawValue: "storeConflict")
        /// The engine was shut down.
        public static let shutDown = Code(rawValue: "shutDown")
        /// The Chime service (`chime serve`) could not be reached, or failed.
        public static let serviceUnavailable = Code(rawValue: "serviceUnavailable")
        /// The service refused the app's token, or the operation is not the app's to make.
        public static let notPermitted = Code(rawValue: "notPermitted")
    }

    /// The kind of failure.
    public let code: Code
    /// What went wrong and what would be accepted.
    public let message: String
    /// The field at fault, as a path (`content.userInfo.task`, `trigger.timeInterval`), if any.
    public let field: String?

    public init(_ code: Code, field: String? = nil, _ message: String) {
        self.code = code
        self.field = field
        self.message = message
    }

    public static var errorDomain: String { "ChimeErrorDomain" }
    /// A stable number for the code (an FNV-1a hash of its name, folded into 1...9999).
    public var errorCode: Int {
        var hash: UInt32 = 2_166_136_261
        for byte in code.rawValue.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return Int(hash % 9_999) + 1
    }
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: message, "code": code.rawValue]
        if let field { info["field"] = field }
        return info
    }
    public var localizedDescription: String { message }
    public var description: String { message }
}

extension ChimeError {
    /// The codes that are the store's failure rather than the operation's: the store could not be
    /// read or written, is not a Chime store, is full, or (shared) conflicted with another engine.
    /// An operation that meets one fails with the whole transaction it ran in. Derived from the one
    /// error table (`ErrorTable` in `Errors/ErrorTable.swift`).
    public static let storeCodes: Set<Code> = Set(ErrorTable.chime.filter { $0.value.kind == .store }.keys)

    /// The error with its field moved under another path: `trigger.rrule.BYDAY` from `trigger` to
    /// `[3].trigger` is `[3].trigger.rrule.BYDAY` (for rules that name fields from a fixed root and
    /// are used inside larger documents). The message is kept.
    package func movingField(from root: String, to path: String) -> ChimeError {
        guard root != path, let field, field == root || field.hasPrefix(root + ".") else { return self }
        return ChimeError(code, field: path + field.dropFirst(root.count), message)
    }

    /// Whether this error is the store's (see ``storeCodes``).
    public var isStoreError: Bool { Self.storeCodes.contains(code) }

    /// The message of any error: a ``ChimeError``'s or ``UNError``'s own, else its description.
    package static func message(of error: any Error) -> String {
        if let error = error as? ChimeError { return error.message }
        if let error = error as? UNError { return error.message }
        return String(describing: error)
    }
}
