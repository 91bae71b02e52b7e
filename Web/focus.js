// Chime web center: focus modes (quiet hours, Chime's addition; GET /v1/focus). The Focus panel
// lists every mode — on or off, by its schedule or by hand, until when, how many notifications it
// has held — with a switch each (POST /v1/focus/{name}/on|off); the top bar says which are on; a
// notification a focus held is marked on its card. The owner's `focus` event carries every mode
// whenever one changes (added, replaced, removed, turned by hand, or by its schedule), so nothing
// is polled; a held delivery adds one to its mode's count until the next event or read.
import { api } from "./api.js";
import { $, cached, h, icon, reconcile, toast } from "./dom.js";
import * as F from "./format.js";
import { appName, enc, hooks, nkey, state } from "./state.js";

/** The modes as the service last said (null until read), switches being sent, a read's failure. */
const focus = { modes: null, busy: new Map(), error: null };
/** `focus` events applied: a read sent before one is older than it. */
let focusEvents = 0;
/** Notification key → what a focus did to it, as its delivered event said (the lists do not carry
 *  it, so a card keeps its mark while the page is open). */
const decisions = new Map();

/** Reads every mode (at start, and with every full reload of the lists). */
export async function refreshFocus() {
  const since = focusEvents;
  let modes;
  try {
    modes = await api("GET", "/v1/focus");
  } catch (e) {
    focus.error = e.message;
    hooks.render();
    return;
  }
  focus.error = null;
  if (focusEvents > since && focus.modes) return;
  focus.modes = Array.isArray(modes) ? modes : [];
  hooks.render();
}

/** A `focus` event: every mode as it is now. */
export function applyFocusEvent(data) {
  if (!Array.isArray(data.modes)) return;
  focusEvents++;
  focus.modes = data.modes;
  focus.error = null;
  hooks.render();
}

/** A delivered or realerted event: what a focus did to it is kept for its card, and a delivery held
 *  quietly (`counting`: not a re-alert) counts toward its mode's spell. */
export function noteFocus(app, data, counting) {
  const decision = data.focus;
  if (!decision || typeof decision.name !== "string" || !data.notification) return;
  decisions.set(nkey(app, data.notification), decision);
  if (!counting || !decision.quiet || !focus.modes) return;
  focus.modes = focus.modes.map((mode) => {
    if (mode.name !== decision.name) return mode;
    const held = { ...(mode.held || {}) };
    held[app] = (held[app] || 0) + 1;
    return { ...mode, held, heldTotal: (mode.heldTotal || 0) + 1 };
  });
}

/** What a card's focus mark draws from, for the card's signature. */
export function focusSignature(app, n) {
  return decisions.get(nkey(app, n)) || null;
}

const REASONS = {
  timeSensitive: "time sensitive", critical: "critical", allowedApp: "an allowed app",
  allowedThread: "an allowed thread", allowedFilterCriteria: "an allowed focus filter",
};

/** The chip on a card a focus was on for: held quietly by it, or let through and why; null otherwise. */
export function focusChip(app, n) {
  const decision = decisions.get(nkey(app, n));
  if (!decision) return null;
  if (decision.quiet) {
    return h("span", {
      class: "chip focus-held", "data-focus": decision.name,
      title: `Delivered quietly during ${decision.name}: no banner, no sound, no pop-up or push`,
    }, icon("moon"), `Held by ${decision.name}`);
  }
  const why = REASONS[decision.reason] || decision.reason;
  return h("span", {
    class: "chip focus-through", "data-focus": decision.name, title: `${decision.name} was on; let through as ${why}`,
  }, icon("moon"), `Through ${decision.name}`);
}

const DAY_NAMES = { mon: "Mon", tue: "Tue", wed: "Wed", thu: "Thu", fri: "Fri", sat: "Sat", sun: "Sun" };
const DAY_ORDER = Object.keys(DAY_NAMES);

/** "every day", "Mon–Fri", "weekends", "Mon, Wed and Fri". */
function daysWords(days) {
  const list = DAY_ORDER.filter((day) => (days || []).includes(day));
  if (list.length === 7) return "every day";
  if (list.join() === "mon,tue,wed,thu,fri") return "Mon–Fri";
  if (list.join() === "sat,sun") return "weekends";
  const names = list.map((day) => DAY_NAMES[day]);
  return names.length <= 1 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

/** "22:00–07:00, Mon–Fri (Europe/Berlin)", or that it has no schedule. */
function scheduleWords(schedule) {
  if (!schedule) return "No schedule: on and off by hand";
  return `${schedule.from}–${schedule.to}, ${daysWords(schedule.days)} (${schedule.timeZone})`;
}

/** "lets through com.example.alarm, thread family" (empty when it lets nothing through but the rules). */
function allowedWords(mode) {
  const parts = [
    ...(mode.allowedApps || []).map((app) => appName(app)),
    ...(mode.allowedThreads || []).map((thread) => `thread ${thread}`),
    ...(mode.allowedFilterCriteria || []).map((value) => `filter ${value}`),
  ];
  return parts.length ? `Lets through ${parts.join(", ")}` : "";
}

const clockFormat = new Intl.DateTimeFormat(undefined, { weekday: "short", hour: "2-digit", minute: "2-digit", hour12: false });

/** "Tue 07:00", with the exact time as its tooltip. */
function clockTime(date) {
  const d = new Date(date);
  return h("time", { class: "focus-time", datetime: date, title: F.exactTime(d), text: clockFormat.format(d) });
}

/** How a mode stands: "On by hand · until Tue 07:00 · 3 held", "Off · starts Mon 22:00". */
function statusLine(mode) {
  const held = mode.heldTotal || 0;
  if (mode.active) {
    return [`On ${mode.byHand ? "by hand" : "by its schedule"}`,
      mode.nextChange ? [" · until ", clockTime(mode.nextChange)] : " · until turned off",
      ` · ${held === 0 ? "nothing held yet" : `${held} held`}`];
  }
  if (mode.byHand) return ["Off by hand", mode.nextChange ? [" · the schedule decides again ", clockTime(mode.nextChange)] : ""];
  return ["Off", mode.nextChange ? [" · starts ", clockTime(mode.nextChange)] : ""];
}

async function turn(mode) {
  const name = mode.name;
  if (focus.busy.has(name)) return;
  const on = !mode.active;
  focus.busy.set(name, on);
  hooks.render();
  try {
    const status = await api("POST", `/v1/focus/${enc(name)}/${on ? "on" : "off"}`);
    // The answer is the mode now (the `focus` event, sent before it, says the same).
    if (status && status.name === name && focus.modes) focus.modes = focus.modes.map((m) => (m.name === name ? status : m));
    toast(on ? `${name} is on: notifications arrive quietly` : `${name} is off`, "ok");
  } catch (e) {
    toast(`Could not turn ${name} ${on ? "on" : "off"}: ${e.message}`, "error");
    if (e.status === 404) refreshFocus();
  } finally {
    focus.busy.delete(name);
    hooks.render();
  }
}

function modeRow(mode) {
  const busy = focus.busy.has(mode.name);
  const on = !!mode.active;
  const allowed = allowedWords(mode);
  return h("li", { class: "focus-mode", "data-focus": mode.name, "data-active": on ? "true" : "false" },
    h("div", { class: "focus-mode-head" },
      h("span", { class: "focus-mark", "aria-hidden": "true" }, icon("moon")),
      h("span", { class: "focus-name", text: mode.name }),
      h("span", { class: "spacer" }),
      h("button", {
        class: "switch focus-switch", type: "button", "aria-pressed": on ? "true" : "false", "aria-label": `${mode.name} focus`,
        title: `Turn ${mode.name} ${on ? "off" : "on"}`, "data-fk": `focus|${mode.name}`, "aria-disabled": busy ? "true" : null,
        onclick: () => turn(mode),
      }, h("span", { class: "switch-knob" }))),
    h("p", { class: "focus-status" }, statusLine(mode)),
    h("p", { class: "focus-schedule", text: scheduleWords(mode.schedule) }),
    allowed ? h("p", { class: "focus-allowed", text: allowed }) : null);
}

/** Draws the Focus panel and the top bar's indicator. */
export function renderFocus() {
  const modes = focus.modes || [];
  const on = modes.filter((mode) => mode.active);
  const indicator = $("focus-indicator");
  indicator.hidden = on.length === 0;
  const words = on.length === 1 ? `${on[0].name} on` : `${on.length} focus modes on`;
  if (indicator.dataset.words !== words) {
    indicator.dataset.words = words;
    indicator.replaceChildren(icon("moon"), h("span", { class: "button-label", text: words }));
  }
  indicator.title = on.length ? `Focus: ${on.map((mode) => mode.name).join(", ")} on — notifications arrive quietly` : "";
  $("focus-count").textContent = modes.length ? `${on.length} of ${modes.length} on` : "";
  let items;
  if (!focus.modes) {
    items = [cached("focus-note", focus.error || "", () => h("p", { class: "focus-note", text: focus.error ? `Could not read the focus modes: ${focus.error}` : "Reading…" }))];
  } else if (modes.length === 0) {
    items = [cached("focus-note", "empty", () => h("p", { class: "focus-note" },
      "No focus modes. Add one with ", h("code", { text: "chime focus add Sleep --from 22:00 --to 07:00" })))];
  } else {
    items = modes.map((mode) => cached("focus-mode", JSON.stringify([mode, focus.busy.has(mode.name)]), () => modeRow(mode)));
  }
  reconcile($("focus-list"), items);
  if (state.loaded) pruneDecisions();
}

/** Forgets the marks of notifications that left the lists. */
function pruneDecisions() {
  if (decisions.size === 0) return;
  const live = new Set();
  for (const [app, list] of state.delivered) for (const n of list) live.add(nkey(app, n));
  for (const key of [...decisions.keys()]) if (!live.has(key)) decisions.delete(key);
}
