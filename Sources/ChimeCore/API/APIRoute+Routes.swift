/// Every route of the HTTP API, declared once: what the service matches and documents
/// (`ChimeAPI.routes` adds access and handler to each, and a test holds `docs/openapi.json` to
/// them) and what the clients send. The name of each is its `operationId`.
///
/// ```swift
/// APIRoute.addRequests.description                     // "POST /v1/apps/{app}/requests"
/// APIRoute.getSettings.path(["app": "com.example.alarm"])  // "/v1/apps/com.example.alarm/settings"
/// ```
extension APIRoute {
    // The service
    public static let health = APIRoute(.get, "/healthz", operationID: "health", summary: "Liveness")
    public static let metrics = APIRoute(.get, "/metrics", operationID: "metrics", summary: "Prometheus metrics")
    public static let openapi = APIRoute(.get, "/openapi.json", operationID: "openapi", summary: "This document")
    public static let push = APIRoute(
        .post, "/3/device/{token}", operationID: "push", summary: "APNs provider API: a remote notification")

    // Apps
    public static let listApps = APIRoute(.get, "/v1/apps", operationID: "listApps", summary: "List apps (owner)")
    public static let createApp = APIRoute(
        .post, "/v1/apps", operationID: "createApp",
        summary: "Register an app (owner); its token is returned once")
    public static let getApp = APIRoute(.get, "/v1/apps/{app}", operationID: "getApp", summary: "The app's record")
    public static let updateApp = APIRoute(
        .patch, "/v1/apps/{app}", operationID: "updateApp",
        summary:
            "Set or clear the app's background-launch command, APNs provider key and APNs provider certificate (owner)")
    public static let removeApp = APIRoute(
        .delete, "/v1/apps/{app}", operationID: "removeApp",
        summary: "Remove an app and everything it owns (owner)")
    public static let rotateToken = APIRoute(
        .post, "/v1/apps/{app}/token", operationID: "rotateToken", summary: "Replace the app's token (owner)")
    public static let deviceToken = APIRoute(
        .get, "/v1/apps/{app}/device-token", operationID: "deviceToken",
        summary: "The app's device token and whether it is registered")
    public static let registerDevice = APIRoute(
        .post, "/v1/apps/{app}/device-token", operationID: "registerForRemoteNotifications",
        summary: "registerForRemoteNotifications: the app's device token, taking pushes again")
    public static let unregisterDevice = APIRoute(
        .delete, "/v1/apps/{app}/device-token", operationID: "unregisterForRemoteNotifications",
        summary: "unregisterForRemoteNotifications: pushes to the device token are answered 410 Unregistered")

    // Permission, settings, badge
    public static let requestAuthorization = APIRoute(
        .post, "/v1/apps/{app}/authorization", operationID: "requestAuthorization",
        summary: "requestAuthorization: ask the user once")
    public static let answerAuthorization = APIRoute(
        .post, "/v1/apps/{app}/authorization/answer", operationID: "answerAuthorization",
        summary: "The user's answer (owner)")
    public static let getSettings = APIRoute(
        .get, "/v1/apps/{app}/settings", operationID: "getSettings", summary: "getNotificationSettings")
    public static let updateSettings = APIRoute(
        .patch, "/v1/apps/{app}/settings", operationID: "updateSettings",
        summary: "The user changes an app's settings (owner)")
    public static let setBadge = APIRoute(
        .put, "/v1/apps/{app}/badge", operationID: "setBadge", summary: "setBadgeCount")

    // Categories, requests, notifications, answers
    public static let getCategories = APIRoute(
        .get, "/v1/apps/{app}/categories", operationID: "getCategories",
        summary: "getNotificationCategories")
    public static let setCategories = APIRoute(
        .put, "/v1/apps/{app}/categories", operationID: "setCategories",
        summary: "setNotificationCategories: replace the set")
    public static let listRequests = APIRoute(
        .get, "/v1/apps/{app}/requests", operationID: "listRequests",
        summary: "getPendingNotificationRequests")
    public static let addRequests = APIRoute(
        .post, "/v1/apps/{app}/requests", operationID: "addRequests",
        summary: "add: one request, or an array (bulk)")
    public static let removeRequests = APIRoute(
        .delete, "/v1/apps/{app}/requests", operationID: "removeRequests",
        summary: "removePendingNotificationRequests (all without identifier)")
    public static let send = APIRoute(
        .post, "/v1/apps/{app}/send", operationID: "send",
        summary: "A one-line send: the body is the text (curl -d \"Backup done\")")
    public static let listNotifications = APIRoute(
        .get, "/v1/apps/{app}/notifications", operationID: "listNotifications",
        summary: "getDeliveredNotifications, newest first")
    public static let removeNotifications = APIRoute(
        .delete, "/v1/apps/{app}/notifications", operationID: "removeNotifications",
        summary: "removeDeliveredNotifications (all, or of a thread, without identifier)")
    public static let respond = APIRoute(
        .post, "/v1/apps/{app}/notifications/{identifier}/responses", operationID: "respond",
        summary: "The user's answer to a delivered notification (owner)")
    public static let receipt = APIRoute(
        .get, "/v1/apps/{app}/notifications/{identifier}/receipt", operationID: "receipt",
        summary:
            "An escalating notification's receipt: alerts so far, whether and how it was answered (Chime's addition)")
    public static let outbox = APIRoute(
        .get, "/v1/apps/{app}/responses", operationID: "outbox",
        summary: "The outbox: responses not yet acknowledged, oldest first")
    public static let acknowledge = APIRoute(
        .post, "/v1/apps/{app}/responses/{id}/ack", operationID: "acknowledge",
        summary: "Acknowledge a response (it leaves the outbox)")
    public static let updateLocation = APIRoute(
        .post, "/v1/location", operationID: "updateLocation",
        summary: "The device's location, for location triggers (owner)")

    // The quarantine: due requests the scheduler could not deliver, set aside
    public static let listQuarantine = APIRoute(
        .get, "/v1/quarantine", operationID: "listQuarantine",
        summary: "Requests the scheduler could not deliver and set aside, oldest first (owner)")
    public static let removeQuarantined = APIRoute(
        .delete, "/v1/quarantine/{id}", operationID: "removeQuarantined",
        summary: "Remove a quarantined request (owner)")

    // Scheduled summaries (iOS 15's): per app, set by the owner
    public static let listSummaries = APIRoute(
        .get, "/v1/summaries", operationID: "listSummaries",
        summary: "Every app in a scheduled summary, with its next time and what it holds (owner)")
    public static let getSummary = APIRoute(
        .get, "/v1/apps/{app}/summary", operationID: "getSummary",
        summary: "An app's scheduled summary: times, time zone, next delivery, held (owner)")
    public static let putSummary = APIRoute(
        .put, "/v1/apps/{app}/summary", operationID: "putSummary",
        summary: "Put an app in a scheduled summary at the times given, or change them (owner)")
    public static let removeSummary = APIRoute(
        .delete, "/v1/apps/{app}/summary", operationID: "removeSummary",
        summary: "Take an app out of its scheduled summary; what it held comes at once (owner)")

    // Focus modes (quiet hours): the owner's, for every app (Chime's addition)
    public static let listFocus = APIRoute(
        .get, "/v1/focus", operationID: "listFocus",
        summary: "Focus modes, with whether each is on now (owner; Chime's addition)")
    public static let getFocus = APIRoute(
        .get, "/v1/focus/{name}", operationID: "getFocus", summary: "A focus mode (owner)")
    public static let putFocus = APIRoute(
        .put, "/v1/focus/{name}", operationID: "putFocus",
        summary: "Add or replace a focus mode: schedule, allowed apps, threads and filterCriteria (owner)")
    public static let removeFocus = APIRoute(
        .delete, "/v1/focus/{name}", operationID: "removeFocus",
        summary: "Remove a focus mode; what it held is summarized at once (owner)")
    public static let focusOn = APIRoute(
        .post, "/v1/focus/{name}/on", operationID: "focusOn",
        summary: "Turn a focus mode on by hand, until its schedule's next start or end (owner)")
    public static let focusOff = APIRoute(
        .post, "/v1/focus/{name}/off", operationID: "focusOff",
        summary:
            "Turn a focus mode off by hand, until its schedule's next start or end; its summary comes at once (owner)")

    // Web Push: the key browsers subscribe with, the subscribed devices
    public static let webPushKey = APIRoute(
        .get, "/v1/web-push/key", operationID: "webPushKey",
        summary: "The VAPID public key browsers subscribe with, applicationServerKey (owner)")
    public static let listWebPushSubscriptions = APIRoute(
        .get, "/v1/web-push/subscriptions", operationID: "listWebPushSubscriptions",
        summary: "Devices subscribed to Web Push, oldest first (owner)")
    public static let createWebPushSubscription = APIRoute(
        .post, "/v1/web-push/subscriptions", operationID: "createWebPushSubscription",
        summary: "Subscribe a device: the browser's PushSubscription.toJSON() (owner)")
    public static let updateWebPushSubscription = APIRoute(
        .patch, "/v1/web-push/subscriptions/{id}", operationID: "updateWebPushSubscription",
        summary: "Choose a device's apps, or rename it (owner)")
    public static let removeWebPushSubscription = APIRoute(
        .delete, "/v1/web-push/subscriptions/{id}", operationID: "removeWebPushSubscription",
        summary: "Unsubscribe a device (owner)")

    // Event streams, and a connected app's answers
    public static let appEvents = APIRoute(
        .get, "/v1/apps/{app}/events", operationID: "appEvents", summary: "The app's events as server-sent events")
    public static let allEvents = APIRoute(
        .get, "/v1/events", operationID: "allEvents", summary: "Every app's events (owner)")
    public static let serviceExtensionContent = APIRoute(
        .post, "/v1/apps/{app}/service-extension/{id}", operationID: "serviceExtensionContent",
        summary: "The app's notification service extension hands over a push's content")
    public static let reportPresentation = APIRoute(
        .post, "/v1/apps/{app}/notifications/{identifier}/presentation",
        operationID: "reportPresentation",
        summary: "The app in front answers willPresent for a delivery")

    // The web center: its files, signing in
    public static let webCenter = APIRoute(
        .get, "/", operationID: "webCenter", summary: "The web notification center's page")
    public static let webAsset = APIRoute(
        .get, "/{asset}", operationID: "webAsset", summary: "A file of the web notification center")
    public static let getSession = APIRoute(
        .get, "/v1/session", operationID: "getSession",
        summary: "Whether this browser is signed in, and its CSRF token (session cookie)")
    public static let createSession = APIRoute(
        .post, "/v1/session", operationID: "createSession",
        summary: "Sign in: trade a one-time login code for a session cookie (HttpOnly, SameSite=Strict)")
    public static let deleteSession = APIRoute(
        .delete, "/v1/session", operationID: "deleteSession",
        summary: "Sign out (session cookie and X-CSRF-Token)")
    public static let createLoginLink = APIRoute(
        .post, "/v1/session/links", operationID: "createLoginLink",
        summary: "A one-time login link for the web center (owner token; what `chime open` prints)")

    /// Every route above, in this order. The service's table has one entry for each.
    public static let all: [APIRoute] = [
        health, metrics, openapi, push,
        listApps, createApp, getApp, updateApp, removeApp, rotateToken, deviceToken, registerDevice, unregisterDevice,
        requestAuthorization, answerAuthorization, getSettings, updateSettings, setBadge,
        getCategories, setCategories, listRequests, addRequests, removeRequests, send, listNotifications,
        removeNotifications,
        respond, receipt, outbox, acknowledge, updateLocation,
        listQuarantine, removeQuarantined,
        listFocus, getFocus, putFocus, removeFocus, focusOn, focusOff,
        listSummaries, getSummary, putSummary, removeSummary,
        webPushKey, listWebPushSubscriptions, createWebPushSubscription, updateWebPushSubscription,
        removeWebPushSubscription,
        appEvents, allEvents, serviceExtensionContent, reportPresentation,
        webCenter, webAsset, getSession, createSession, deleteSession, createLoginLink,
    ]
}
