// Chime web center: the live event stream (GET /v1/events), reconnecting by itself, and the
// once-a-minute safety reload.
import { api } from "./api.js";
import { applyRealert } from "./escalation.js";
import { applyFocusEvent, noteFocus } from "./focus.js";
import { applyAppChange, applyCategories, applyDelivery, applyRemoval, applyScheduled, applySettings, enqueue, refreshAll } from "./lists.js";
import { hooks, state } from "./state.js";

let events = null;
let reconnectTimer = null;
let reconnectDelay = 2000;
let pollTimer = null;

// Every change arrives as an event (new requests, categories and apps as the owner stream's
// refresh hints); a full reload once a minute only guards against a missed one.
async function poll() {
  if (state.screen !== "center" || document.hidden) return;
  try {
    await refreshAll();
  } catch (e) { /* shown by the connection state; tried again on the next poll */ }
}

/** Starts the once-a-minute safety reload (stopped with the stream). */
export function startPolling() {
  clearInterval(pollTimer);
  pollTimer = setInterval(poll, 60000);
}

export function stopEvents() {
  if (events) events.close();
  events = null;
  clearTimeout(reconnectTimer);
  clearInterval(pollTimer);
  state.everConnected = false;
}

export function connectEvents() {
  if (events) events.close();
  clearTimeout(reconnectTimer);
  setConnection(state.everConnected ? "reconnecting" : "connecting");
  const source = new EventSource("/v1/events");
  events = source;
  // Whether this source has seen a logged event (one with an id): when it reconnects by itself the
  // browser then sends Last-Event-ID, and the service replays every logged event after it.
  let seenId = false;
  let opened = false;
  source.onopen = () => {
    if (events !== source) return;
    reconnectDelay = 2000;
    const again = state.everConnected;
    const resumed = opened && seenId;
    opened = true;
    state.everConnected = true;
    setConnection("live");
    // After a gap (server restart, sleep), catch up on what no event told us: a resumed stream
    // replayed the deliveries and removals, but not the hints, which are never logged; a new one
    // (the browser gave up and this page opened another) lost everything in between.
    if (again) refreshAll({ delivered: !resumed }).catch(() => {});
  };
  source.onerror = () => {
    if (events !== source) return;
    if (source.readyState === EventSource.CLOSED) {
      setConnection("offline");
      scheduleReconnect();
    } else {
      setConnection("reconnecting");
    }
  };
  for (const kind of ["delivered", "removed", "response", "settings", "silentPush", "scheduled", "categories", "app", "expired", "realerted", "focus"]) {
    source.addEventListener(kind, (message) => {
      let data = null;
      if (message.lastEventId) seenId = true;
      try { data = JSON.parse(message.data); } catch (e) { return; }
      onEvent(kind, data);
    });
  }
}

function scheduleReconnect() {
  clearTimeout(reconnectTimer);
  reconnectTimer = setTimeout(async () => {
    try {
      await api("GET", "/v1/session");
    } catch (e) {
      if (e.status === 401) { hooks.sessionEnded("Your session has ended. Run chime open to sign in again."); return; }
      reconnectDelay = Math.min(reconnectDelay * 2, 30000);
      scheduleReconnect();
      return;
    }
    if (state.screen === "center") connectEvents();
  }, reconnectDelay);
}

function setConnection(value) {
  state.connection = value;
  hooks.renderHeader();
}

function onEvent(kind, data) {
  if (!data || typeof data.app !== "string") return;
  const app = data.app;
  switch (kind) {
    case "delivered":
      // The event carries everything: the notification, its category (with the actions), its
      // presentation, the app's badge and a repeating request's next date (it stays pending).
      if (data.notification) {
        const pending = applyDelivery(app, data);
        // A focus on: held quietly (its presentation has no banner or sound) or let through.
        noteFocus(app, data, true);
        enqueue(app, { pending }, data.notification);
      }
      break;
    case "realerted":
      // An escalating notification alerted again, unanswered: the event carries it as a delivery
      // does, with its alert number; its banner and sound come again.
      if (data.notification) {
        applyDelivery(app, data);
        noteFocus(app, data, false);
        applyRealert(app, data);
        enqueue(app, {}, data.notification, true);
      }
      break;
    // Removals, settings, scheduled requests, categories, expiries and apps changed or removed are
    // applied where they are (the flush only draws, and reads the lists of an app the page did not
    // know); a banner whose notification left goes with it.
    case "removed":
      applyRemoval(app, data);
      enqueue(app, {});
      break;
    case "settings":
      if (data.settings && typeof data.settings === "object") enqueue(app, applySettings(app, data));
      break;
    case "scheduled":
      // It carries the requests as the pending list has them; only an add too large to carry them
      // (or another node's) has the list read.
      enqueue(app, applyScheduled(app, data));
      break;
    case "expired":
      // The request left the pending list undelivered (a repeating one ends).
      if (data.request && typeof data.request.identifier === "string") {
        applyRemoval(app, { scope: "pending", identifiers: [data.request.identifier] });
        enqueue(app, {});
      } else {
        enqueue(app, { pending: true });
      }
      break;
    case "categories":
      if (Array.isArray(data.categories)) {
        applyCategories(app, data.categories);
        enqueue(app, {});
      } else {
        enqueue(app, { categories: true, notifications: true });
      }
      break;
    case "app":
      enqueue(app, applyAppChange(app, data));
      break;
    case "focus":
      // The owner's (no app): every focus mode as it is now.
      applyFocusEvent(data);
      break;
    default:
      break;
  }
}
