import Foundation

/// The one table that classifies errors: for every ``ChimeError/Code`` and ``UNError/Code``, whether
/// it is the store's failure (the whole transaction fails) or only the operation's, the HTTP status
/// the service answers with, and the reason its APNs-compatible push endpoint gives. The engine's
/// writer, ``ChimeError/isStoreError``, the service's error answers and the push endpoint all read
/// it; nothing else decides these.
///
/// ```swift
/// let entry = ErrorTable.entry(for: ChimeError(.storeConflict, "…"))
/// // entry.kind == .store, entry.status == 503, entry.retryAfter == 1, entry.apnsReason == "ServiceUnavailable"
/// ```
package enum ErrorTable {
    /// How one kind of error is answered.
    package struct Entry: Sendable, Hashable {
        /// Whose failure it is.
        package enum Kind: Sendable, Hashable {
            /// The operation's (bad input, a rule): only that operation fails; the others sharing its
            /// transaction commit.
            case operation
            /// The store's (or an unknown error): the transaction rolls back and every operation in it
            /// fails.
            case store
        }

        package var kind: Kind
        /// The HTTP status of the service's answer.
        package var status: Int
        /// The `code` of the service's error body, when not the error's own code.
        package var apiCode: String?
        /// The message answered instead of the error's own: for failures whose own text is the
        /// server's business (a database's message, a file path), which goes to the log instead.
        package var message: String?
        /// Said after the error's own message: what the caller can do.
        package var hint: String?
        /// The field named when the error names none.
        package var field: String?
        /// Seconds after which the same request may succeed (`Retry-After`), for passing failures.
        package var retryAfter: Int?
        /// The push endpoint's `reason` and status, from Apple's list of APNs reasons.
        package var apnsReason: String
        package var apnsStatus: Int

        init(
            _ kind: Kind, _ status: Int, apns: (reason: String, status: Int), apiCode: String? = nil,
            message: String? = nil,
            hint: String? = nil, field: String? = nil, retryAfter: Int? = nil
        ) {
            self.kind = kind
            self.status = status
            self.apiCode = apiCode
            self.message = message
            self.hint = hint
            self.field = field
            self.retryAfter = retryAfter
            apnsReason = apns.reason
            apnsStatus = apns.status
        }

        /// A refusal of the input: 400, and `PayloadEmpty`, APNs' reason for a payload it cannot use.
        package static let refusal = Entry(.operation, 400, apns: ("PayloadEmpty", 400))
    }

    /// Every ``ChimeError`` code. A code not listed (codes are extensible) is a ``Entry/refusal``.
    package static let chime: [ChimeError.Code: Entry] = [
        .invalidIdentifier: .refusal,
        .invalidUserInfo: .refusal,
        .invalidTrigger: .refusal,
        .invalidValue: .refusal,
        .invalidCategory: .refusal,
        .invalidEncoding: .refusal,
        .malformedInput: .refusal,
        .unknownAction: .refusal,
        .tooLarge: Entry(.operation, 413, apns: ("PayloadTooLarge", 413)),
        .notFound: Entry(.operation, 404, apns: ("BadTopic", 400)),
        .notPermitted: Entry(.operation, 403, apns: ("Forbidden", 403)),
        .shutDown: Entry(.operation, 503, apns: ("ServiceUnavailable", 503)),
        // The app's own bound (StorageQuota), not the store's failure: only that app's add fails.
        .quotaExceeded: Entry(.operation, 507, apns: ("ServiceUnavailable", 503)),
        .serviceUnavailable: Entry(.operation, 503, apns: ("ServiceUnavailable", 503)),
        .storeFailure: storeFailed,
        .storeTooNew: storeFailed,
        .notAStore: storeFailed,
        .storageFull: Entry(
            .store, 507, apns: ("ServiceUnavailable", 503), apiCode: "insufficientStorage",
            message:
                "the server's disk is full, so nothing was stored; free space on the server (or raise its quota) and retry"
        ),
        .storeConflict: Entry(
            .store, 503, apns: ("ServiceUnavailable", 503),
            message:
                "other nodes sharing the database kept changing the same records, so nothing was changed; retry in a moment",
            retryAfter: 1),
    ]

    /// Every ``UNError`` code: refusals, but for an app the user has not allowed (409: the user
    /// must answer first).
    package static let apple: [UNError.Code: Entry] = Dictionary(
        uniqueKeysWithValues: UNError.Code.allCases.map { code in
            switch code {
            case .notificationsNotAllowed:
                (
                    code,
                    Entry(
                        .operation, 409, apns: ("Forbidden", 403),
                        hint:
                            "(POST /v1/apps/{app}/authorization, then the user allows it: the web center or `chime apps allow`)"
                    )
                )
            case .badgeInputInvalid: (code, Entry(.operation, 400, apns: ("PayloadEmpty", 400), field: "badge"))
            default: (code, .refusal)
            }
        })

    /// A store that failed: 500 without the store's text, which names files and servers.
    static let storeFailed = Entry(
        .store, 500, apns: ("InternalServerError", 500), message: "the store failed; see the server log")

    /// Any other error (a bug): the store's kind (the transaction rolls back), 500 without details.
    package static let unknown = Entry(
        .store, 500, apns: ("InternalServerError", 500), apiCode: "internal",
        message: "the server failed to handle the request; see the server log")

    /// The entry of `error`: its code's for ``ChimeError`` and ``UNError``, else ``unknown``.
    package static func entry(for error: any Error) -> Entry {
        if let error = error as? ChimeError { return chime[error.code] ?? .refusal }
        if let error = error as? UNError { return apple[error.code] ?? .refusal }
        return unknown
    }
}
