// Chime web center: notifications that repeat until answered (escalation, Chime's addition). Each
// one's receipt — alerts so far, the next alert, and once it ended, how — is read from the service
// (GET …/notifications/{id}/receipt) when the page first sees it, again when a `realerted` event
// names it or it leaves the list (answered, removed), and at the end of its window (which no event
// announces). Its card is
// marked with the receipt and can open it; once it leaves the list, its receipt stays in the
// Receipts list below (the last 20 this page saw end).
import * as F from "./format.js";
import { api, appPath } from "./api.js";
import { $, cached, h, icon, reconcile, timeElement } from "./dom.js";
import { appName, DEFAULT_ACTION, DISMISS_ACTION, enc, hooks, state } from "./state.js";

/** How many ended receipts the Receipts list keeps. */
const ENDED_KEPT = 20;

/**
 * "app\u0001identifier" → { app, identifier, date (the delivery's), title, receipt (as the service
 * answered, or null until read), ended (the notification left the list), endedAt (when the page saw
 * it leave), reading, again, timer }.
 */
const tracked = new Map();
/** Receipt views the user opened: a card's by `tracked`'s key, a Receipts row's by "row\u0001" and it. */
const opened = new Set();

function rkey(app, identifier) { return `${app}\u0001${identifier}`; }

/** Whether a delivered notification (as the API lists it) repeats until answered. */
export function escalates(n) {
  return !!n && typeof n.escalateEvery === "number" && typeof n.escalateFor === "number";
}

/** Follows what the lists now hold: a new escalating notification is read, one that left is read once more. */
export function trackEscalations() {
  const live = new Set();
  for (const [app, list] of state.delivered) {
    for (const n of list) {
      if (!escalates(n)) continue;
      const key = rkey(app, n.identifier);
      live.add(key);
      let entry = tracked.get(key);
      // A repeating request's next occurrence is another delivery with a receipt of its own.
      if (!entry || entry.date !== n.date || entry.ended) {
        if (entry) clearTimeout(entry.timer);
        entry = { app, identifier: n.identifier, date: n.date, title: n.title || n.body || n.identifier, receipt: null, ended: false };
        tracked.set(key, entry);
        read(entry);
      }
    }
  }
  if (!state.loaded) return;
  for (const [key, entry] of tracked) {
    if (entry.ended || live.has(key)) continue;
    if (!state.apps.has(entry.app)) { forget(key); continue; }
    entry.ended = true;
    entry.endedAt = Date.now();
    read(entry);
  }
  const ended = [...tracked].filter(([, entry]) => entry.ended).sort((a, b) => b[1].endedAt - a[1].endedAt);
  for (const [key] of ended.slice(ENDED_KEPT)) forget(key);
}

function forget(key) {
  const entry = tracked.get(key);
  if (entry) clearTimeout(entry.timer);
  tracked.delete(key);
  opened.delete(key);
  opened.delete(`row\u0001${key}`);
}

/**
 * A `realerted` event: the alert count and time it carries are shown at once, and the receipt is
 * read again for its next alert.
 */
export function applyRealert(app, data) {
  const n = data.notification;
  if (!n || typeof n.identifier !== "string") return;
  const entry = tracked.get(rkey(app, n.identifier));
  if (!entry || entry.date !== n.date) return; // trackEscalations reads it when the list has it
  if (entry.receipt && typeof data.alert === "number" && data.alert > entry.receipt.alerts) {
    entry.receipt = { ...entry.receipt, alerts: data.alert, lastAlertedAt: data.date };
  }
  read(entry);
}

async function read(entry) {
  if (entry.reading) { entry.again = true; return; }
  entry.reading = true;
  try {
    const receipt = await api("GET", `${appPath(entry.app)}/notifications/${enc(entry.identifier)}/receipt`);
    // One receipt per identifier: after a repeating request's next delivery it is that one's.
    if (receipt && typeof receipt.alerts === "number" && (!receipt.deliveredAt || Date.parse(receipt.deliveredAt) === Date.parse(entry.date))) {
      entry.receipt = receipt;
    }
  } catch (e) {
    // None (pruned with the event log, or the app is gone): the card keeps its plain mark.
    if (e.status !== 404) entry.failed = e.message;
  } finally {
    entry.reading = false;
  }
  if (tracked.get(rkey(entry.app, entry.identifier)) !== entry) return;
  if (entry.again) { entry.again = false; read(entry); return; }
  atWindowEnd(entry);
  hooks.render();
}

/** The end of the window comes with no event: the receipt is read again once it has passed. */
function atWindowEnd(entry) {
  clearTimeout(entry.timer);
  const receipt = entry.receipt;
  if (!receipt || !receipt.nextAlertAt || !receipt.endsAt) return;
  const next = Date.parse(receipt.nextAlertAt);
  if (next < Date.parse(receipt.endsAt)) return; // a realerted event comes first
  entry.timer = setTimeout(() => read(entry), Math.max(1000, next - Date.now() + 1000));
}

function ended(receipt) {
  return !!receipt && (receipt.acknowledged || receipt.expired || !!receipt.removedAt || !receipt.nextAlertAt);
}

/** "Opened", "Dismissed", "“Snooze”": an answer's action as the user chose it. */
function actionWords(app, receipt) {
  const action = receipt.actionIdentifier;
  if (action === DEFAULT_ACTION) return "Opened";
  if (action === DISMISS_ACTION) return "Dismissed";
  for (const category of (state.categories.get(app) || new Map()).values()) {
    const found = (category.actions || []).find((a) => a.identifier === action);
    if (found && found.title) return `“${found.title}”`;
  }
  return `“${action}”`;
}

const SURFACES = {
  web: "in the web center", webPush: "on a phone (Web Push)", desktop: "on the desktop", cli: "from the command line",
  terminal: "in the terminal", api: "through the API", app: "in the app", simulator: "in the simulator",
};

/** "in the web center", "on the desktop", or "on NAME" for a surface the page does not know. */
function surfaceWords(surface) {
  return SURFACES[surface] || (surface ? `on ${surface}` : "");
}

/** The one line a card or a Receipts row shows: how it stands, or how it ended. */
function outcome(app, receipt) {
  if (receipt.acknowledged) return [`${actionWords(app, receipt)} ${surfaceWords(receipt.surface)} `.replace(/\s+$/, " "), timeElement(receipt.acknowledgedAt, "receipt-time")];
  if (receipt.expired) return ["Not answered: its window ended ", timeElement(receipt.endsAt, "receipt-time")];
  if (receipt.removedAt) return ["Removed unanswered ", timeElement(receipt.removedAt, "receipt-time")];
  if (receipt.nextAlertAt) return ["Not answered yet · next alert ", timeElement(receipt.nextAlertAt, "receipt-time")];
  return ["Not answered"];
}

/** Every field of a receipt, as a definition list. */
function receiptDetails(app, receipt) {
  const row = (term, ...value) => [h("dt", { text: term }), h("dd", {}, ...value)];
  const when = (date) => (date ? timeElement(date, "receipt-time") : "—");
  return h("dl", { class: "receipt-fields" },
    row("Acknowledged", receipt.acknowledged ? "Yes" : "No"),
    receipt.acknowledged ? row("Answered", when(receipt.acknowledgedAt)) : null,
    receipt.acknowledged ? row("With", actionWords(app, receipt)) : null,
    receipt.acknowledged ? row("Where", receipt.surface || "—") : null,
    row("Alerts", `${receipt.alerts}`),
    row("Last alerted", when(receipt.lastAlertedAt)),
    ended(receipt) ? null : row("Next alert", when(receipt.nextAlertAt)),
    row("Repeats", F.escalationWords(receipt.escalateEvery, receipt.escalateFor)),
    row("Expired", receipt.expired ? "Yes" : "No"),
    receipt.removedAt ? row("Removed", when(receipt.removedAt)) : null);
}

function toggle(key) {
  if (opened.has(key)) opened.delete(key); else opened.add(key);
  hooks.render();
}

/** What a card's escalation mark draws from, for the card's signature. */
export function escalationSignature(app, n) {
  if (!escalates(n)) return null;
  const key = rkey(app, n.identifier);
  const entry = tracked.get(key);
  return [entry && entry.date === n.date ? entry.receipt : null, opened.has(key)];
}

/** The mark on an escalating notification's card: its repetition, alerts so far, the next one, and its receipt on demand. */
export function escalationMark(app, n, prefix) {
  if (!escalates(n)) return null;
  const key = rkey(app, n.identifier);
  const entry = tracked.get(key);
  const receipt = entry && entry.date === n.date ? entry.receipt : null;
  const open = opened.has(key);
  const id = `receipt-${F.hue(`${key}\u0001${prefix}`, 1e9)}`;
  return h("div", { class: "note-escalation", "data-alerts": receipt ? receipt.alerts : null },
    h("p", { class: "escalation-line" },
      icon("repeat"),
      h("span", { class: "escalation-every", text: `Alerts ${F.escalationWords(n.escalateEvery, n.escalateFor)} until answered` }),
      receipt ? h("span", { class: "escalation-alerts", text: ` · alert ${receipt.alerts}` }) : null,
      receipt && receipt.nextAlertAt && !ended(receipt) ? [" · next ", timeElement(receipt.nextAlertAt, "escalation-next")] : null,
      h("button", {
        class: "text-button receipt-toggle", type: "button", "aria-expanded": open ? "true" : "false", "aria-controls": id,
        "data-fk": `${prefix}receipt`, onclick: () => toggle(key),
      }, open ? "Hide receipt" : "Receipt")),
    open ? h("div", { class: "receipt", id, role: "region", "aria-label": "Receipt" },
      receipt ? receiptDetails(app, receipt) : h("p", { class: "receipt-reading", text: entry && entry.failed ? `Could not read it: ${entry.failed}` : "Reading…" })) : null);
}

/** The Receipts list: escalations this page saw end, newest first. */
export function renderReceipts() {
  const holder = $("receipts");
  if (!holder) return;
  const rows = [...tracked.entries()].filter(([, entry]) => entry.ended && entry.receipt).sort((a, b) => b[1].endedAt - a[1].endedAt);
  holder.hidden = rows.length === 0;
  const items = rows.map(([key, entry]) => {
    // Its own view, opened or not, apart from the card's.
    const view = `row\u0001${key}`;
    const open = opened.has(view);
    const sig = JSON.stringify([key, entry.receipt, entry.title, open]);
    return cached("receipt-row", sig, () => {
      const id = `receipt-row-${F.hue(key, 1e9)}`;
      return h("li", { class: "receipt-row", "data-app": entry.app, "data-identifier": entry.identifier },
        h("div", { class: "receipt-head" },
          h("span", { class: "receipt-title", text: `${appName(entry.app)}: ${entry.title}` }),
          h("span", { class: "spacer" }),
          h("button", {
            class: "text-button receipt-toggle", type: "button", "aria-expanded": open ? "true" : "false", "aria-controls": id,
            "data-fk": `receipt|${key}`, onclick: () => toggle(view),
          }, open ? "Hide" : "Details"),
          h("button", {
            class: "icon-button small", type: "button", "aria-label": `Forget the receipt of “${entry.title}”`, title: "Forget",
            "data-fk": `receipt-forget|${key}`, onclick: () => { forget(key); hooks.render(); },
          }, icon("x"))),
        h("p", { class: "receipt-outcome" }, outcome(entry.app, entry.receipt), ` · ${entry.receipt.alerts === 1 ? "alerted once" : `alerted ${entry.receipt.alerts} times`}`),
        open ? h("div", { class: "receipt", id }, receiptDetails(entry.app, entry.receipt)) : null);
    });
  });
  reconcile($("receipts-list"), items);
}
