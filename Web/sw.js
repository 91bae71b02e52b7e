/*
 * Chime's service worker: shows the notifications the service pushes (Web Push, RFC 8030) while
 * no tab of the web center is open, and answers them from the notification itself.
 *
 * - `push`: the decrypted payload is Chime's WebPushMessage (Sources/ChimeServer/WebPush):
 *   `{"v": 1, "kind": "show", app, id, title, subtitle, body, badge, level, category, dismiss,
 *   actions: [{id, title, options, input?}], truncated, ...}` is shown with the category's actions
 *   (as many as the browser shows), tag = app and identifier, so a replacement replaces; a
 *   trimmed one (`truncated: true`) is completed from the service first. `{"kind": "close", app,
 *   ids}` closes what the service removed.
 * - `notificationclick`: the answer (the action, the default action for the body, the typed text
 *   where the browser has inline reply) goes to the same route the web center posts to; a
 *   text-input action the browser cannot type into opens the center at that reply field.
 * - `notificationclose`: the dismiss action, when the category asked for customDismissAction.
 *
 * Nothing is cached: there is no fetch handler, so every request goes to the service.
 */
"use strict";

const DISMISS_ACTION = "com.apple.UNNotificationDismissActionIdentifier";
const DEFAULT_ACTION = "com.apple.UNNotificationDefaultActionIdentifier";
const CENTER_URL = new URL("/", self.location).href;

self.addEventListener("install", () => { self.skipWaiting(); });
self.addEventListener("activate", (event) => { event.waitUntil(self.clients.claim()); });

self.addEventListener("push", (event) => {
  let message = null;
  try { message = event.data ? event.data.json() : null; } catch (e) { message = null; }
  event.waitUntil(handlePush(message));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  event.waitUntil(handleClick(event.notification, event.action || "", typeof event.reply === "string" ? event.reply : null));
});

self.addEventListener("notificationclose", (event) => {
  event.waitUntil(handleClose(event.notification));
});

/** The tag of an app's notification: one per identifier, so a later one replaces it. */
function tagFor(app, identifier) {
  return JSON.stringify([app, identifier]);
}

/** Shows or closes what one push carries. */
async function handlePush(message) {
  if (!message || message.v !== 1 || typeof message.app !== "string") return;
  if (message.kind === "close") {
    const ids = Array.isArray(message.ids) ? message.ids : [];
    for (const id of ids) {
      for (const shown of await self.registration.getNotifications({ tag: tagFor(message.app, id) })) shown.close();
    }
    return;
  }
  if (message.kind !== "show" || typeof message.id !== "string") return;
  if (message.truncated) message = await completed(message);
  await self.registration.showNotification(message.title || message.app, showOptions(message));
  if (typeof message.badge === "number" && self.navigator.setAppBadge) {
    try {
      if (message.badge > 0) await self.navigator.setAppBadge(message.badge);
      else await self.navigator.clearAppBadge();
    } catch (e) { /* a badge is a nicety */ }
  }
}

/** The options of `showNotification` for a pushed notification. */
function showOptions(message) {
  const most = typeof Notification !== "undefined" && Notification.maxActions ? Notification.maxActions : 2;
  const actions = (Array.isArray(message.actions) ? message.actions : []).slice(0, most).map((action) => {
    const shown = { action: action.id, title: action.title };
    if (action.input) {
      shown.type = "text";
      shown.placeholder = action.input.placeholder || "";
    }
    return shown;
  });
  const lines = [message.subtitle, message.body].filter((text) => typeof text === "string" && text !== "");
  const options = {
    body: lines.join("\n"),
    tag: tagFor(message.app, message.id),
    renotify: true,
    icon: "/icon-192.png",
    badge: "/icon-192.png",
    silent: message.level === "passive" || message.sound === false,
    requireInteraction: message.level === "critical" || message.alert > 1,
    actions,
    data: {
      app: message.app, id: message.id, category: message.category || "", dismiss: message.dismiss === true,
      actions: Array.isArray(message.actions) ? message.actions : [],
    },
  };
  const date = Date.parse(message.date || "");
  if (!Number.isNaN(date)) options.timestamp = date;
  return options;
}

/** A trimmed push completed with the delivered notification the service keeps. */
async function completed(message) {
  try {
    let next = `/v1/apps/${encodeURIComponent(message.app)}/notifications?limit=500`;
    for (let pages = 0; next && pages < 20; pages += 1) {
      const response = await fetch(next, { credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" } });
      if (!response.ok) break;
      const found = (await response.json()).find((n) => n.identifier === message.id);
      if (found) {
        return Object.assign({}, message, {
          title: found.title || message.title, subtitle: found.subtitle || "", body: found.body || "", truncated: false,
        });
      }
      const link = /<([^>]+)>\s*;\s*rel="?next"?/.exec(response.headers.get("link") || "");
      next = link ? link[1] : null;
    }
  } catch (e) { /* shown as pushed */ }
  return message;
}

/** A click on the notification (`action` ""), or on one of its actions. */
async function handleClick(notification, action, reply) {
  const data = notification.data || {};
  if (typeof data.app !== "string" || typeof data.id !== "string") return openCenter("");
  const described = (data.actions || []).find((a) => a.id === action);
  if (action !== "" && described && described.input && reply === null) {
    // A text field the browser does not offer: the center opens at this notification's.
    return openCenter(`#reply=${[data.app, data.id, action].map(encodeURIComponent).join("/")}`, { reply: [data.app, data.id, action] });
  }
  const answer = { actionIdentifier: action === "" ? DEFAULT_ACTION : action, surface: "webPush" };
  if (action !== "" && described && described.input) answer.userText = reply;
  const posted = await postResponse(data.app, data.id, answer);
  const foreground = action === "" || !posted || (described && (described.options || []).includes("foreground"));
  if (foreground) return openCenter("");
  return focusCenter();
}

/** The user closed the notification: the app hears of it when its category asked to. */
async function handleClose(notification) {
  const data = notification.data || {};
  if (data.dismiss === true && typeof data.app === "string" && typeof data.id === "string") {
    await postResponse(data.app, data.id, { actionIdentifier: DISMISS_ACTION, surface: "webPush" });
  }
}

/** Posts an answer with the session's cookie and CSRF token; false when it did not go through. */
async function postResponse(app, identifier, answer) {
  try {
    const session = await fetch("/v1/session", { credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" } });
    if (!session.ok) return false;
    const { csrfToken } = await session.json();
    const response = await fetch(`/v1/apps/${encodeURIComponent(app)}/notifications/${encodeURIComponent(identifier)}/responses`, {
      method: "POST", credentials: "same-origin", cache: "no-store",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRF-Token": csrfToken },
      body: JSON.stringify(answer),
    });
    return response.ok;
  } catch (e) {
    return false;
  }
}

async function centerWindows() {
  const all = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  return all.filter((client) => client.url.startsWith(CENTER_URL));
}

/** Brings an open center to the front, if there is one. */
async function focusCenter() {
  const [open] = await centerWindows();
  if (open && open.focus) {
    try { await open.focus(); } catch (e) { /* only allowed during a click */ }
  }
}

/** Brings the center to the front (told what to open), or opens it. */
async function openCenter(hash, message) {
  const [open] = await centerWindows();
  if (open) {
    if (message) open.postMessage(message);
    try { await open.focus(); } catch (e) { /* only allowed during a click */ }
    return;
  }
  if (self.clients.openWindow) await self.clients.openWindow(CENTER_URL + hash);
}

// For the browser tests, which call the handlers in the worker through DevTools.
self.ChimeWorker = { handlePush, handleClick, handleClose, showOptions, tagFor };
