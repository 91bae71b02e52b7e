import Foundation
import Synchronization

extension NotificationEngine {
    // MARK: - Responses

    /// Records the user's answer: checks it against the notification's category, removes the
    /// notification from the delivered list, and stores the response in the app's outbox.
    ///
    /// - Returns: the stored response, or `nil` for a dismissal of a notification whose category
    ///   has no `.customDismissAction` (the app does not hear of it).
    /// - Throws: ``ChimeError`` `notFound` when the notification is not delivered, `unknownAction`
    ///   when the action is not in its category, `invalidValue` for text on a non-text action or a
    ///   `surface` that is not 1 to 64 letters, digits, `.`, `-` or `_` (``Validation/validateSurface(_:field:)``).
    /// - Parameter surface: where the answer came from (`web`, `desktop`, `webPush`, `api` …), kept
    ///   in an escalating notification's ``EscalationReceipt``.
    public func respond(
        app: String, notification identifier: String, action: String, userText: String? = nil,
        surface: String? = nil
    ) async throws -> NotificationResponse? {
        try await perform {
            try $0.respond(app: app, identifier: identifier, action: action, userText: userText, surface: surface)
        }
    }

    /// The receipt of the app's escalating notification with this identifier (its latest
    /// delivery's): alerts so far, whether and how it was answered, whether its window ended.
    /// Kept after the notification is removed, for ``Configuration/receiptRetentionAge`` after
    /// the escalation ended. `nil` when there is none.
    ///
    /// ```swift
    /// if let receipt = try await engine.receipt(app: "com.example.alarm", notification: "wake"), receipt.acknowledged {
    ///     print("answered with", receipt.actionIdentifier ?? "", "on", receipt.surface ?? "")
    /// }
    /// ```
    public func receipt(app: String, notification identifier: String) async throws -> EscalationReceipt? {
        try await read { try $0.receipt(app: app, identifier: identifier) }
    }

    /// The app's outbox: responses not yet acknowledged, oldest first.
    public func outbox(app: String) async throws -> [NotificationResponse] {
        try await read { try $0.responses(app: app) }
    }

    /// A page of the app's outbox: responses after `id`, oldest first, at most `limit`.
    public func outbox(app: String, after id: Int64, limit: Int) async throws -> [NotificationResponse] {
        try await read { try $0.responses(app: app, after: id, limit: limit) }
    }

    /// Acknowledges a response: it leaves the outbox and is never handed over again.
    @discardableResult
    public func acknowledge(response id: Int64, app: String) async throws -> Bool {
        try await perform { try $0.store.removeResponse(app: app, id: id) }
    }
}
