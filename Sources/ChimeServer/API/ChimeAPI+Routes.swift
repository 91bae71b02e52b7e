import ChimeCore
import Foundation

/// The HTTP API, one entry per route: its declaration (an ``APIRoute``, in ChimeCore, which the
/// clients use too: method, path template, the OpenAPI `operationId` and `summary`), who may call
/// it, and its handler. ``ChimeAPI/handle(_:)`` matches a request here, checks the entry's access and
/// calls its handler; a test holds `docs/openapi.json` to these entries (paths, methods, ids,
/// summaries, `security: []` for the public and session routes) and gives every declared route
/// exactly one entry.
extension ChimeAPI {
    static let routes = RouteTable([
        // The service
        .init(.health, .public, now: ChimeAPI.health),
        .init(.metrics, .public, ChimeAPI.metricsText),
        .init(.openapi, .public, now: ChimeAPI.openAPIDocument),
        .init(.push, .provider, matching: .everythingUnderFirstSegment, ChimeAPI.push),

        // Apps
        .init(.listApps, .owner, ChimeAPI.listApps),
        .init(.createApp, .owner, ChimeAPI.createApp),
        .init(.getApp, .app, ChimeAPI.getApp),
        .init(.updateApp, .ownerOnApp, ChimeAPI.updateApp),
        .init(.removeApp, .ownerOnApp, ChimeAPI.removeApp),
        .init(.rotateToken, .ownerOnApp, ChimeAPI.rotateToken),
        .init(.deviceToken, .app, ChimeAPI.deviceToken),
        .init(.registerDevice, .app, ChimeAPI.registerDevice),
        .init(.unregisterDevice, .app, ChimeAPI.unregisterDevice),

        // Permission, settings, badge
        .init(.requestAuthorization, .app, ChimeAPI.requestAuthorization),
        .init(.answerAuthorization, .ownerOnApp, ChimeAPI.answerAuthorization),
        .init(.getSettings, .app, ChimeAPI.getSettings),
        .init(.updateSettings, .ownerOnApp, ChimeAPI.updateSettings),
        .init(.setBadge, .app, ChimeAPI.setBadge),

        // Categories, requests, notifications, answers
        .init(.getCategories, .app, ChimeAPI.getCategories),
        .init(.setCategories, .app, ChimeAPI.setCategories),
        .init(.listRequests, .app, ChimeAPI.listRequests),
        .init(.addRequests, .app, starting: ChimeAPI.addRequests),
        .init(.removeRequests, .app, ChimeAPI.removeRequests),
        .init(.send, .app, starting: ChimeAPI.send),
        .init(.listNotifications, .app, ChimeAPI.listNotifications),
        .init(.removeNotifications, .app, ChimeAPI.removeNotifications),
        .init(.respond, .ownerOnApp, ChimeAPI.respond),
        .init(.receipt, .app, ChimeAPI.receipt),
        .init(.outbox, .app, ChimeAPI.outbox),
        .init(.acknowledge, .app, ChimeAPI.acknowledge),
        .init(.updateLocation, .owner, ChimeAPI.updateLocation),

        // The quarantine
        .init(.listQuarantine, .owner, ChimeAPI.listQuarantine),
        .init(.removeQuarantined, .owner, ChimeAPI.removeQuarantined),

        // Focus modes
        .init(.listFocus, .owner, ChimeAPI.listFocus),
        .init(.getFocus, .owner, ChimeAPI.getFocus),
        .init(.putFocus, .owner, ChimeAPI.putFocus),
        .init(.removeFocus, .owner, ChimeAPI.removeFocus),
        .init(.focusOn, .owner, ChimeAPI.focusOn),
        .init(.focusOff, .owner, ChimeAPI.focusOff),

        // Scheduled summaries
        .init(.listSummaries, .owner, ChimeAPI.listSummaries),
        .init(.getSummary, .ownerOnApp, ChimeAPI.getSummary),
        .init(.putSummary, .ownerOnApp, ChimeAPI.putSummary),
        .init(.removeSummary, .ownerOnApp, ChimeAPI.removeSummary),

        // Web Push
        .init(.webPushKey, .owner, ChimeAPI.webPushKey),
        .init(.listWebPushSubscriptions, .owner, ChimeAPI.listWebPushSubscriptions),
        .init(.createWebPushSubscription, .owner, ChimeAPI.createWebPushSubscription),
        .init(.updateWebPushSubscription, .owner, ChimeAPI.updateWebPushSubscription),
        .init(.removeWebPushSubscription, .owner, ChimeAPI.removeWebPushSubscription),

        // Event streams, and a connected app's answers
        .init(.appEvents, .app, ChimeAPI.appEvents),
        .init(.allEvents, .owner, ChimeAPI.allEvents),
        .init(.serviceExtensionContent, .app, ChimeAPI.serviceExtensionContent),
        .init(.reportPresentation, .app, ChimeAPI.reportPresentation),

        // The web center: its files, signing in
        .init(.webCenter, .public, now: ChimeAPI.webPage),
        .init(
            .webAsset, .public, matching: .segmentsWhere { WebAssets.file(named: $0) != nil }, now: ChimeAPI.webAsset),
        .init(.getSession, .session, ChimeAPI.currentSession),
        .init(.createSession, .session, ChimeAPI.createSession),
        .init(.deleteSession, .session, ChimeAPI.deleteSession),
        .init(.createLoginLink, .owner, ChimeAPI.createLoginLink),
    ])
}
