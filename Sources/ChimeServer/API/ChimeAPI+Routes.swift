import Foundation

/// The HTTP API, one entry per route: method, path template, the OpenAPI `operationId` and
/// `summary`, who may call it, and its handler. Nothing else declares a route: ``ChimeAPI/handle(_:)``
/// matches a request here, checks the entry's access and calls its handler, and a test holds
/// `docs/openapi.json` to these entries (paths, methods, ids, summaries, `security: []` for the
/// public and session routes).
extension ChimeAPI {
    static let routes = RouteTable([
        // The service
        .init(.get, "/healthz", "health", "Liveness", .public, ChimeAPI.health),
        .init(.get, "/metrics", "metrics", "Prometheus metrics", .public, ChimeAPI.metricsText),
        .init(.get, "/openapi.json", "openapi", "This document", .public, ChimeAPI.openAPIDocument),
        .init(.post, "/3/device/{token}", "push", "APNs provider API: a remote notification", .provider,
              matching: .everythingUnderFirstSegment, ChimeAPI.push),

        // Apps
        .init(.get, "/v1/apps", "listApps", "List apps (owner)", .owner, ChimeAPI.listApps),
        .init(.post, "/v1/apps", "createApp", "Register an app (owner); its token is returned once", .owner, ChimeAPI.createApp),
        .init(.get, "/v1/apps/{app}", "getApp", "The app's record", .app, ChimeAPI.getApp),
        .init(.patch, "/v1/apps/{app}", "updateApp", "Set or clear the app's background-launch command (owner)", .ownerOnApp,
              ChimeAPI.updateApp),
        .init(.delete, "/v1/apps/{app}", "removeApp", "Remove an app and everything it owns (owner)", .ownerOnApp, ChimeAPI.removeApp),
        .init(.post, "/v1/apps/{app}/token", "rotateToken", "Replace the app's token (owner)", .ownerOnApp, ChimeAPI.rotateToken),
        .init(.get, "/v1/apps/{app}/device-token", "deviceToken", "The app's device token, as from registerForRemoteNotifications", .app,
              ChimeAPI.deviceToken),

        // Permission, settings, badge
        .init(.post, "/v1/apps/{app}/authorization", "requestAuthorization", "requestAuthorization: ask the user once", .app,
              ChimeAPI.requestAuthorization),
        .init(.post, "/v1/apps/{app}/authorization/answer", "answerAuthorization", "The user's answer (owner)", .ownerOnApp,
              ChimeAPI.answerAuthorization),
        .init(.get, "/v1/apps/{app}/settings", "getSettings", "getNotificationSettings", .app, ChimeAPI.getSettings),
        .init(.patch, "/v1/apps/{app}/settings", "updateSettings", "The user changes an app's settings (owner)", .ownerOnApp,
              ChimeAPI.updateSettings),
        .init(.put, "/v1/apps/{app}/badge", "setBadge", "setBadgeCount", .app, ChimeAPI.setBadge),

        // Categories, requests, notifications, answers
        .init(.get, "/v1/apps/{app}/categories", "getCategories", "getNotificationCategories", .app, ChimeAPI.getCategories),
        .init(.put, "/v1/apps/{app}/categories", "setCategories", "setNotificationCategories: replace the set", .app, ChimeAPI.setCategories),
        .init(.get, "/v1/apps/{app}/requests", "listRequests", "getPendingNotificationRequests", .app, ChimeAPI.listRequests),
        .init(.post, "/v1/apps/{app}/requests", "addRequests", "add: one request, or an array (bulk)", .app, ChimeAPI.addRequests),
        .init(.delete, "/v1/apps/{app}/requests", "removeRequests", "removePendingNotificationRequests (all without identifier)", .app,
              ChimeAPI.removeRequests),
        .init(.post, "/v1/apps/{app}/send", "send", "A one-line send: the body is the text (curl -d \"Backup done\")", .app, ChimeAPI.send),
        .init(.get, "/v1/apps/{app}/notifications", "listNotifications", "getDeliveredNotifications, newest first", .app,
              ChimeAPI.listNotifications),
        .init(.delete, "/v1/apps/{app}/notifications", "removeNotifications",
              "removeDeliveredNotifications (all, or of a thread, without identifier)", .app, ChimeAPI.removeNotifications),
        .init(.post, "/v1/apps/{app}/notifications/{identifier}/responses", "respond", "The user's answer to a delivered notification (owner)",
              .ownerOnApp, ChimeAPI.respond),
        .init(.get, "/v1/apps/{app}/responses", "outbox", "The outbox: responses not yet acknowledged, oldest first", .app, ChimeAPI.outbox),
        .init(.post, "/v1/apps/{app}/responses/{id}/ack", "acknowledge", "Acknowledge a response (it leaves the outbox)", .app,
              ChimeAPI.acknowledge),
        .init(.post, "/v1/location", "updateLocation", "The device's location, for location triggers (owner)", .owner, ChimeAPI.updateLocation),

        // Event streams, and a connected app's answers
        .init(.get, "/v1/apps/{app}/events", "appEvents", "The app's events as server-sent events", .app, ChimeAPI.appEvents),
        .init(.get, "/v1/events", "allEvents", "Every app's events (owner)", .owner, ChimeAPI.allEvents),
        .init(.post, "/v1/apps/{app}/service-extension/{id}", "serviceExtensionContent",
              "The app's notification service extension hands over a push's content", .app, ChimeAPI.serviceExtensionContent),
        .init(.post, "/v1/apps/{app}/notifications/{identifier}/presentation", "reportPresentation",
              "The app in front answers willPresent for a delivery", .app, ChimeAPI.reportPresentation),

        // The web center: its files, signing in
        .init(.get, "/", "webCenter", "The web notification center's page", .public, ChimeAPI.webPage),
        .init(.get, "/{asset}", "webAsset", "A file of the web notification center", .public,
              matching: .segmentsWhere { WebAssets.file(named: $0) != nil }, ChimeAPI.webAsset),
        .init(.get, "/v1/session", "getSession", "Whether this browser is signed in, and its CSRF token (session cookie)", .session,
              ChimeAPI.currentSession),
        .init(.post, "/v1/session", "createSession",
              "Sign in: trade a one-time login code for a session cookie (HttpOnly, SameSite=Strict)", .session, ChimeAPI.createSession),
        .init(.delete, "/v1/session", "deleteSession", "Sign out (session cookie and X-CSRF-Token)", .session, ChimeAPI.deleteSession),
        .init(.post, "/v1/session/links", "createLoginLink", "A one-time login link for the web center (owner token; what `chime open` prints)",
              .owner, ChimeAPI.createLoginLink),
    ])
}
