import Foundation

/// JSON field names, declared once: of the settings, authorization and badge bodies and answers
/// (at the top level), of requests, their content, triggers and categories (``Request``,
/// ``Content``, ``Sound``, ``Attachment``, ``Trigger``, ``Region``, ``Category``, ``Action``), and
/// of events, responses, escalation receipts, scheduled summaries and focus modes (``Event``,
/// ``Response``, ``Receipt``, ``Summary``, ``Focus``: each with its encoder and tolerant decoder
/// beside it). The
/// encoders (``NotificationSettings/json``, ``AuthorizationAnswer/json``,
/// ``NotificationRequest/json``, ``NotificationCategory/json``), the strict decoders of request
/// bodies (``SettingsChange/init(json:)``, ``JSONMapping/authorizationOptions(_:)``,
/// ``JSONMapping/authorizationAllow(_:)``, ``JSONMapping/badgeCount(_:)``,
/// ``NotificationRequest/init(json:field:)``, ``NotificationCategory/init(json:field:)``), the
/// tolerant decoders of answers (``NotificationSettings/init(json:)``,
/// ``AuthorizationAnswer/init(json:)``, ``PendingRequest/init(json:field:)``) and the CLI all spell
/// a field through these.
///
/// ```swift
/// let status = settingsJSON[JSONFieldName.authorizationStatus]
/// let category = requestJSON[JSONFieldName.Content.categoryIdentifier]
/// ```
@usableFromInline package enum JSONFieldName {
    // `NotificationSettings`: Apple's `UNNotificationSettings` property names.
    package static let authorizationStatus = "authorizationStatus"
    package static let alertStyle = "alertStyle"
    package static let showPreviewsSetting = "showPreviewsSetting"
    package static let providesAppNotificationSettings = "providesAppNotificationSettings"

    // `POST /v1/apps/{app}/authorization` `{"options": […]}`, `…/authorization/answer` `{"allow": true}`,
    // and their answer `{"granted", "status", "settings"}`.
    @usableFromInline package static let options = "options"
    package static let allow = "allow"
    package static let granted = "granted"
    package static let status = "status"
    package static let settings = "settings"

    // `PUT /v1/apps/{app}/badge` `{"badge": 3}` and its answer.
    package static let badge = "badge"

    // What a removal answers (`{"removed": …}`): the identifiers of `DELETE …/requests` and
    // `…/notifications` (``JSONMapping/removedIdentifiers(_:)``), the id or name of the others.
    package static let removed = "removed"

    /// A request's own fields (beside its content fields, ``Content``), and what a listed or
    /// delivered request adds: the encoder (``NotificationRequest/json``), the strict decoder
    /// (``NotificationRequest/init(json:field:)``), the tolerant one (answers) and `chime add`.
    @usableFromInline package enum Request {
        package static let identifier = "identifier"
        /// The content fields nested in one object (the top level is canonical).
        @usableFromInline package static let content = "content"
        @usableFromInline package static let trigger = "trigger"
        package static let expiresIn = "expiresIn"
        package static let expirationDate = "expirationDate"
        package static let dismissIn = "dismissIn"
        package static let dismissAt = "dismissAt"
        package static let escalateEvery = "escalateEvery"
        package static let escalateFor = "escalateFor"
        /// A pending request's next fire date, and the next several when asked for.
        package static let nextTriggerDate = "nextTriggerDate"
        package static let nextTriggerDates = "nextTriggerDates"
        /// A delivered notification's delivery date, its category's actions and how it was presented.
        package static let date = "date"
        package static let actions = "actions"
        package static let presentation = "presentation"
    }

    /// A request's content fields: Apple's `UNNotificationContent` property names.
    @usableFromInline package enum Content {
        package static let title = "title"
        package static let subtitle = "subtitle"
        package static let body = "body"
        package static let badge = "badge"
        @usableFromInline package static let sound = "sound"
        package static let launchImageName = "launchImageName"
        @usableFromInline package static let userInfo = "userInfo"
        package static let attachments = "attachments"
        package static let categoryIdentifier = "categoryIdentifier"
        package static let threadIdentifier = "threadIdentifier"
        package static let targetContentIdentifier = "targetContentIdentifier"
        package static let summaryArgument = "summaryArgument"
        package static let summaryArgumentCount = "summaryArgumentCount"
        package static let interruptionLevel = "interruptionLevel"
        package static let relevanceScore = "relevanceScore"
        package static let filterCriteria = "filterCriteria"

        /// Every content field, in the encoder's output order.
        package static let all = [
            title, subtitle, body, badge, sound, launchImageName, userInfo, attachments, categoryIdentifier,
            threadIdentifier, targetContentIdentifier, summaryArgument, summaryArgumentCount, interruptionLevel,
            relevanceScore, filterCriteria,
        ]
    }

    /// A critical sound's object (`{"name", "critical", "volume"}`).
    @usableFromInline package enum Sound {
        package static let name = "name"
        package static let critical = "critical"
        @usableFromInline package static let volume = "volume"
        package static let all = [name, critical, volume]
    }

    /// An attachment and its thumbnail options.
    package enum Attachment {
        package static let identifier = "identifier"
        package static let url = "url"
        package static let type = "type"
        package static let thumbnailHidden = "thumbnailHidden"
        package static let thumbnailClippingRect = "thumbnailClippingRect"
        package static let thumbnailTime = "thumbnailTime"
        package static let all = [identifier, url, type, thumbnailHidden, thumbnailClippingRect, thumbnailTime]
        /// The clipping rectangle's members (unit coordinates).
        package static let x = "x"
        package static let y = "y"
        package static let width = "width"
        package static let height = "height"
        package static let rectangle = [x, y, width, height]
    }

    /// A trigger: `type` and the members of each type (a recurrence trigger's too), the names of
    /// the types, a calendar trigger's `timeZone` among its date components, and a location
    /// trigger's region.
    @usableFromInline package enum Trigger {
        package static let type = "type"
        package static let timeInterval = "timeInterval"
        @usableFromInline package static let dateComponents = "dateComponents"
        @usableFromInline package static let region = "region"
        package static let repeats = "repeats"
        package static let timeZone = "timeZone"
        package static let rrule = "rrule"
        package static let start = "start"
        package static let exceptionDates = "exceptionDates"

        /// The members of each type, `type` first.
        package static let timeIntervalFields = [type, timeInterval, repeats]
        package static let calendarFields = [type, dateComponents, repeats]
        package static let locationFields = [type, region, repeats]
        package static let recurrenceFields = [type, rrule, start, timeZone, exceptionDates]

        /// The values of `type`.
        package enum Kind {
            package static let timeInterval = "timeInterval"
            package static let calendar = "calendar"
            package static let location = "location"
            package static let recurrence = "recurrence"
            package static let push = "push"
            /// The kinds a request may give (`push` comes only from pushes).
            package static let given = [timeInterval, calendar, location, recurrence]
        }
    }

    /// A location trigger's region (`CircularRegion`) and a coordinate.
    package enum Region {
        package static let identifier = "identifier"
        package static let latitude = "latitude"
        package static let longitude = "longitude"
        package static let radius = "radius"
        package static let notifyOnEntry = "notifyOnEntry"
        package static let notifyOnExit = "notifyOnExit"
        package static let all = [identifier, latitude, longitude, radius, notifyOnEntry, notifyOnExit]
        /// A coordinate's members.
        package static let coordinate = [latitude, longitude]
    }

    /// A category: Apple's `UNNotificationCategory` property names.
    package enum Category {
        package static let identifier = "identifier"
        package static let actions = "actions"
        package static let intentIdentifiers = "intentIdentifiers"
        package static let options = "options"
        package static let hiddenPreviewsBodyPlaceholder = "hiddenPreviewsBodyPlaceholder"
        package static let categorySummaryFormat = "categorySummaryFormat"
        package static let all = [
            identifier, actions, intentIdentifiers, options, hiddenPreviewsBodyPlaceholder, categorySummaryFormat,
        ]
    }

    /// A category's action (`UNNotificationAction`, `UNTextInputNotificationAction`) and its icon.
    package enum Action {
        package static let identifier = "identifier"
        package static let title = "title"
        package static let options = "options"
        package static let icon = "icon"
        package static let textInputButtonTitle = "textInputButtonTitle"
        package static let textInputPlaceholder = "textInputPlaceholder"
        package static let all = [identifier, title, options, icon, textInputButtonTitle, textInputPlaceholder]
        /// The icon's one member.
        package static let systemImageName = "systemImageName"
        package static let templateImageName = "templateImageName"
        package static let iconFields = [systemImageName, templateImageName]
    }

    /// An event of the event streams: its own fields (`sequence`, `app`, `kind`, `date`) and what
    /// each kind carries. The encoder (``EngineEvent/json``), the tolerant decoder
    /// (``EngineEvent/init(json:)``) and `chime events`.
    package enum Event {
        package static let sequence = "sequence"
        package static let app = "app"
        package static let kind = "kind"
        package static let date = "date"
        package static let notification = "notification"
        package static let category = "category"
        package static let presentation = "presentation"
        package static let settings = JSONFieldName.settings
        package static let badge = JSONFieldName.badge
        package static let alert = "alert"
        package static let focus = "focus"
        /// A `delivered` event's repeating request's next date: the name the pending list gives it.
        package static let nextTriggerDate = JSONFieldName.Request.nextTriggerDate
        package static let response = "response"
        package static let identifiers = "identifiers"
        package static let scope = "scope"
        package static let reason = "reason"
        package static let listed = "listed"
        package static let requests = "requests"
        package static let categories = "categories"
        package static let change = "change"
        package static let record = "record"
        package static let quarantined = "quarantined"
        package static let request = "request"
        package static let dueDate = "dueDate"
        package static let modes = "modes"
        /// Every field an event may have (the Event schema of docs/openapi.json has these).
        package static let all = [
            sequence, app, kind, date, notification, category, presentation, settings, badge, alert, focus,
            nextTriggerDate, response, identifiers, scope, reason, listed, requests, categories, change, record,
            quarantined, request, dueDate, modes,
        ]
    }

    /// A response to a notification (``NotificationResponse/json``,
    /// ``NotificationResponse/init(json:field:)``), and the body that gives one
    /// (`POST …/responses`: `actionIdentifier`, `userText` and where the user answered, `surface`).
    @usableFromInline package enum Response {
        package static let id = "id"
        package static let notification = "notification"
        package static let actionIdentifier = "actionIdentifier"
        package static let userText = "userText"
        package static let date = "date"
        @usableFromInline package static let surface = "surface"
        /// A response's fields, and the fields of the body that gives one.
        package static let all = [id, notification, actionIdentifier, userText, date]
        package static let answerFields = [actionIdentifier, userText, surface]
    }

    /// An escalation receipt (``EscalationReceipt/json``, ``EscalationReceipt/init(json:field:)``);
    /// its escalation is the request's (`escalateEvery`, `escalateFor`).
    package enum Receipt {
        package static let app = "app"
        package static let identifier = "identifier"
        package static let acknowledged = "acknowledged"
        package static let acknowledgedAt = "acknowledgedAt"
        package static let actionIdentifier = "actionIdentifier"
        package static let surface = Response.surface
        package static let alerts = "alerts"
        package static let deliveredAt = "deliveredAt"
        package static let lastAlertedAt = "lastAlertedAt"
        package static let nextAlertAt = "nextAlertAt"
        package static let endsAt = "endsAt"
        package static let expired = "expired"
        package static let removedAt = "removedAt"
        package static let escalateEvery = Request.escalateEvery
        package static let escalateFor = Request.escalateFor
        package static let all = [
            app, identifier, acknowledged, acknowledgedAt, actionIdentifier, surface, alerts, deliveredAt,
            lastAlertedAt,
            nextAlertAt, endsAt, expired, removedAt, escalateEvery, escalateFor,
        ]
    }

    /// A scheduled summary (`{"times", "timeZone"}`) and its status (`app`, `nextDelivery`, `held`):
    /// ``ScheduledSummary/init(json:)``, ``ScheduledSummary/json``, ``ScheduledSummaryStatus`` and
    /// `chime summary`.
    package enum Summary {
        package static let times = "times"
        package static let timeZone = "timeZone"
        package static let app = "app"
        package static let nextDelivery = "nextDelivery"
        package static let held = "held"
        /// A status's fields; a client sends ``ScheduledSummary/fields``.
        package static let all = [app, times, timeZone, nextDelivery, held]
    }

    /// A focus mode (``FocusMode/json``, ``FocusMode/init(json:name:)``), its schedule and manual
    /// setting, its status (``FocusStatus``), a delivery's focus decision (``FocusDecision``), and
    /// `chime focus`.
    @usableFromInline package enum Focus {
        @usableFromInline package static let name = "name"
        package static let schedule = "schedule"
        package static let allowedApps = "allowedApps"
        package static let allowedThreads = "allowedThreads"
        package static let allowedFilterCriteria = "allowedFilterCriteria"
        package static let manual = "manual"
        /// What a client sends (`manual` is set by `POST /v1/focus/{name}/on|off`, not in a body).
        package static let given = [name, schedule, allowedApps, allowedThreads, allowedFilterCriteria]

        /// The schedule's members.
        package static let from = "from"
        package static let to = "to"
        @usableFromInline package static let days = "days"
        package static let timeZone = "timeZone"
        package static let scheduleFields = [from, to, days, timeZone]

        /// The manual setting's members.
        package static let on = "on"
        package static let since = "since"

        /// What a status adds to the mode.
        package static let active = "active"
        package static let byHand = "byHand"
        package static let nextChange = "nextChange"
        package static let held = "held"
        package static let heldTotal = "heldTotal"
        package static let status = given + [manual, active, byHand, nextChange, held, heldTotal]

        /// A focus decision: the focus's name, whether it held the notification quietly, and why.
        package static let quiet = "quiet"
        package static let reason = "reason"
        package static let decision = [name, quiet, reason]
    }

    /// An app's record (``AppRecord/json``, `GET /v1/apps/{app}`), the bodies that register or
    /// change one, the token of a registration or rotation, and the device token's state
    /// (``AppRecord/deviceTokenJSON``); `chime apps`, `status`, `device-token`, `push`.
    @usableFromInline package enum App {
        @usableFromInline package static let bundleIdentifier = "bundleIdentifier"
        package static let created = "created"
        package static let deviceToken = "deviceToken"
        package static let badge = JSONFieldName.badge
        package static let promptPending = "promptPending"
        package static let requestedOptions = "requestedOptions"
        package static let settings = JSONFieldName.settings
        @usableFromInline package static let launch = "launch"
        package static let apns = "apns"
        package static let deviceTokenUnregistered = "deviceTokenUnregistered"
        package static let apnsCertificate = "apnsCertificate"
        package static let all = [
            bundleIdentifier, created, deviceToken, badge, promptPending, requestedOptions, settings, launch, apns,
            deviceTokenUnregistered, apnsCertificate,
        ]
        /// `POST /v1/apps`'s body, and `PATCH /v1/apps/{app}`'s.
        package static let given = [bundleIdentifier, launch]
        package static let changes = [launch, apns, apnsCertificate]
        /// The app's token, in a registration's and a rotation's answer (shown once).
        package static let token = "token"
        /// The device token's state: whether pushes to it are taken, and when it was unregistered.
        package static let registered = "registered"
        package static let unregistered = "unregistered"
        package static let deviceTokenFields = [deviceToken, registered, unregistered]
    }

    /// An app's APNs provider as listed (``APNsProvider/json``, ``APNsProvider/init(json:field:)``), and
    /// as `PATCH /v1/apps/{app}` and `chime apps set` give it (`key`: the key in PEM, not its point).
    package enum Provider {
        package static let teamId = "teamId"
        package static let keyId = "keyId"
        package static let publicKey = "publicKey"
        package static let key = "key"
        package static let all = [teamId, keyId, publicKey]
        package static let given = [teamId, keyId, key]
    }

    /// A pinned certificate (``CertificateFingerprint/json``, ``CertificateFingerprint/init(json:field:)``):
    /// an app's `apnsCertificate`.
    package enum Certificate {
        package static let sha256 = "sha256"
        package static let publicKeySha256 = "publicKeySha256"
        package static let notBefore = "notBefore"
        package static let notAfter = "notAfter"
        package static let all = [sha256, publicKeySha256, notBefore, notAfter]
    }

    /// A quarantined request (``QuarantinedRequest/json``, its tolerant decoder, an event's
    /// `quarantined`): the entry's id, app, the request's identifier, why it was set aside, when, and
    /// the request as a pending one is listed.
    package enum Quarantine {
        package static let id = "id"
        package static let app = "app"
        package static let identifier = "identifier"
        package static let reason = "reason"
        package static let date = "date"
        package static let request = "request"
        package static let all = [id, app, identifier, reason, date, request]
    }

    /// A browser or phone subscribed to Web Push as listed (``WebPushSubscription/json``,
    /// ``WebPushSubscription/init(json:field:)``, `chime devices`) and as stored (the listed fields
    /// but `pushService`, and the keys), and the body that changes one (`PATCH
    /// /v1/web-push/subscriptions/{id}`: `apps`, `name`).
    package enum Device {
        package static let id = "id"
        package static let name = "name"
        package static let endpoint = "endpoint"
        package static let pushService = "pushService"
        package static let apps = "apps"
        package static let userAgent = "userAgent"
        package static let created = "created"
        package static let lastSuccess = "lastSuccess"
        package static let lastFailure = "lastFailure"
        package static let lastFailureReason = "lastFailureReason"
        package static let expires = "expires"
        package static let all = [
            id, name, endpoint, pushService, apps, userAgent, created, lastSuccess, lastFailure, lastFailureReason,
            expires,
        ]
        package static let changes = [apps, name]
        /// The subscriber's keys, kept in the store only.
        package static let p256dh = "p256dh"
        package static let auth = "auth"
        /// The body that registers one (`POST /v1/web-push/subscriptions`: `PushSubscription.toJSON()`
        /// as the web center sends it, with `name` and `apps`), and its `keys` member.
        package static let keys = "keys"
        package static let expirationTime = "expirationTime"
        package static let registration = [endpoint, expirationTime, keys, name, apps]
        package static let keyFields = [p256dh, auth]
    }

    /// The service's Web Push key (`GET /v1/web-push/key`), the `applicationServerKey` the web center
    /// subscribes with.
    package enum WebPushKey {
        package static let publicKey = "publicKey"
    }

    /// What a Web Push carries to the web center's service worker (`WebPushMessage` in ChimeServer;
    /// Web/sw.js reads it): a notification to show (`kind` `show`: the content's texts and the
    /// delivery date under the delivered list's names, and these) or the identifiers to close
    /// (`close`, `ids`). `v` is the format's version, 1.
    package enum PushMessage {
        package static let version = "v"
        package static let kind = "kind"
        package static let app = "app"
        package static let id = "id"
        package static let ids = "ids"
        package static let badge = JSONFieldName.badge
        package static let level = "level"
        package static let thread = "thread"
        package static let sound = "sound"
        package static let banner = "banner"
        package static let category = "category"
        package static let dismiss = "dismiss"
        package static let actions = "actions"
        package static let alert = "alert"
        package static let truncated = "truncated"
        /// An action's text field (`input`: its `button` and `placeholder`).
        package static let input = "input"
        package static let button = "button"
        package static let placeholder = "placeholder"
        /// The kinds.
        package static let show = "show"
        package static let close = "close"

        /// A push as queued in the store until it is sent: its message and RFC 8030 headers.
        package enum Queued {
            package static let payload = "payload"
            package static let ttl = "ttl"
            package static let urgency = "urgency"
            package static let topic = "topic"
            package static let created = "created"
        }
    }

    /// A web session as the web center reads it (`POST` and `GET /v1/session`: its CSRF token and
    /// when it ends), the body that starts one (`code`, the sign-in link's one-time code) and the
    /// body that asks for a link to the address the center is open at (`POST /v1/session/links`).
    package enum Session {
        package static let csrfToken = "csrfToken"
        package static let expires = "expires"
        package static let code = LoginLink.code
        package static let base = "base"
        package static let all = [csrfToken, expires]
        package static let login = [code]
    }

    /// A one-time sign-in link (`LoginLink` in ChimeServer: `POST /v1/session/links`, `chime open`).
    package enum LoginLink {
        package static let code = "code"
        package static let path = "path"
        package static let expires = "expires"
        package static let url = "url"
        package static let qrSVG = "qrSVG"
        package static let all = [code, path, expires, url, qrSVG]
    }
}

extension NotificationSettings {
    /// The settings' switches (``UNNotificationSetting`` values) by JSON name, in the encoder's order.
    package static let switchFields:
        [(name: String, keyPath: WritableKeyPath<NotificationSettings, UNNotificationSetting> & Sendable)] = [
            ("soundSetting", \.soundSetting),
            ("badgeSetting", \.badgeSetting),
            ("alertSetting", \.alertSetting),
            ("notificationCenterSetting", \.notificationCenterSetting),
            ("lockScreenSetting", \.lockScreenSetting),
            ("carPlaySetting", \.carPlaySetting),
            ("criticalAlertSetting", \.criticalAlertSetting),
            ("announcementSetting", \.announcementSetting),
            ("timeSensitiveSetting", \.timeSensitiveSetting),
            ("scheduledDeliverySetting", \.scheduledDeliverySetting),
            ("directMessagesSetting", \.directMessagesSetting),
        ]

    /// The JSON name of the switch at `keyPath`.
    package static func fieldName(of keyPath: WritableKeyPath<NotificationSettings, UNNotificationSetting>) -> String {
        switchFields.first { $0.keyPath == keyPath }!.name
    }
}
