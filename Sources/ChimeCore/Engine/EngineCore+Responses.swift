import Foundation

extension EngineCore {
    // MARK: Responses

    package func respond(app: String, identifier: String, action: String, userText: String?, surface: String? = nil)
        throws -> NotificationResponse?
    {
        if let surface { try Validation.validateSurface(surface) }
        guard let notification = try store.delivered(app: app, identifier: identifier) else {
            let delivered = try store.delivered(app: app, thread: nil).prefix(10).map { "'\($0.request.identifier)'" }
            throw ChimeError(
                .notFound, field: "identifier",
                "no delivered notification '\(identifier)' for \(app); delivered: \(delivered.isEmpty ? "none" : delivered.joined(separator: ", "))"
            )
        }
        let categoryIdentifier = notification.request.content.categoryIdentifier
        let category = try self.category(categoryIdentifier, app: app)
        var respondsToApp = true
        // The system identifiers by their scalars (a look-alike is an ordinary, unknown action).
        if action.isLiterally(UNNotificationDefaultActionIdentifier) {
            if userText != nil {
                throw ChimeError(
                    .invalidValue, field: JSONFieldName.Response.userText,
                    "the default action takes no text; send userText only with a text-input action")
            }
        } else if action.isLiterally(UNNotificationDismissActionIdentifier) {
            if userText != nil {
                throw ChimeError(
                    .invalidValue, field: JSONFieldName.Response.userText,
                    "a dismissal takes no text; send userText only with a text-input action")
            }
            respondsToApp = category?.options.contains(.customDismissAction) ?? false
        } else {
            guard let found = category?.action(action) else {
                let available =
                    (category?.actions.map { "'\($0.identifier)'" } ?? []) + ["the default action", "dismiss"]
                let which =
                    categoryIdentifier.isEmpty
                    ? "it has no category"
                    : category == nil
                        ? "its category '\(categoryIdentifier)' is not registered"
                        : "category '\(categoryIdentifier)' has"
                throw ChimeError(
                    .unknownAction, field: JSONFieldName.Response.actionIdentifier,
                    "notification '\(identifier)' has no action '\(action)': \(which); accepted: \(available.joined(separator: ", "))"
                )
            }
            if found.textInput != nil && userText == nil {
                throw ChimeError(
                    .invalidValue, field: JSONFieldName.Response.userText,
                    "action '\(action)' is a text-input action; give the typed text as userText")
            }
            if found.textInput == nil && userText != nil {
                throw ChimeError(
                    .invalidValue, field: JSONFieldName.Response.userText,
                    "action '\(action)' has no text field; send userText only with a text-input action")
            }
        }
        let now = clock.now
        if notification.request.escalation != nil {
            try acknowledge(app: app, identifier: identifier, action: action, surface: surface, now: now)
        }
        _ = try removeDelivered(app: app, identifiers: [identifier], thread: nil)
        guard respondsToApp else { return nil }
        var response = NotificationResponse(
            notification: notification, actionIdentifier: action, userText: userText, date: now)
        response.id = try store.appendResponse(response, app: app)
        try log(.response(response), app: app, date: now)
        return response
    }
}
