// Chime web center: DOM helpers. Every piece of data is put on the page with textContent or
// setAttribute, never parsed as HTML (the page's CSP allows no inline script).
import * as F from "./format.js";
import { appName, state } from "./state.js";

const SVG_NS = "http://www.w3.org/2000/svg";

export const $ = (id) => document.getElementById(id);

/** Creates an element. Props: class, text, dataset, on<event> (functions); others are attributes. */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  if (props) {
    for (const [name, value] of Object.entries(props)) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "class") el.className = value;
      else if (name === "text") el.textContent = value;
      else if (name === "dataset") Object.assign(el.dataset, value);
      else if (name.startsWith("on")) { if (typeof value === "function") el.addEventListener(name.slice(2), value); }
      else el.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

const ICONS = {
  bell: ["M12 3.5a5.5 5.5 0 0 0-5.5 5.5v3.8L4.8 15.6c-.3.5 0 1.1.6 1.1h13.2c.6 0 .9-.6.6-1.1l-1.7-2.8V9A5.5 5.5 0 0 0 12 3.5z", "M9.8 19.2a2.3 2.3 0 0 0 4.4 0"],
  x: ["M7 7l10 10", "M17 7L7 17"],
  soundOn: ["M4 9.5h3.5L12 5.5v13l-4.5-4H4z", "M15.5 9a4 4 0 0 1 0 6", "M18 6.5a7.5 7.5 0 0 1 0 11"],
  device: ["M8 3.5h8a1.5 1.5 0 0 1 1.5 1.5v14a1.5 1.5 0 0 1-1.5 1.5H8A1.5 1.5 0 0 1 6.5 19V5A1.5 1.5 0 0 1 8 3.5z", "M11 17.5h2"],
  soundOff: ["M4 9.5h3.5L12 5.5v13l-4.5-4H4z", "M16 9.5l5 5", "M21 9.5l-5 5"],
  clock: ["M12 3.5a8.5 8.5 0 1 1 0 17a8.5 8.5 0 1 1 0-17", "M12 7.5V12l3 2"],
  alert: ["M12 4L2.8 19.5h18.4z", "M12 10v4.2", "M12 17v.2"],
  lock: ["M6.5 11h11v8.5h-11z", "M8.8 11V8.2a3.2 3.2 0 0 1 6.4 0V11"],
  open: ["M8 16L16.5 7.5", "M10 7.5h6.5V14"],
  chevron: ["M7 10l5 5 5-5"],
  trash: ["M5 7h14", "M10 7V4.8h4V7", "M7 7l.9 12.2h8.2L17 7"],
  signOut: ["M14 4.5h4.5v15H14", "M10 8.5L6.5 12l3.5 3.5", "M6.5 12H15"],
  reply: ["M9.5 7.5L5 12l4.5 4.5", "M5 12h9a5 5 0 0 1 5 5v1"],
  eye: ["M2.5 12S6 5.5 12 5.5 21.5 12 21.5 12 18 18.5 12 18.5 2.5 12 2.5 12z", "M12 9.2a2.8 2.8 0 1 1 0 5.6a2.8 2.8 0 1 1 0-5.6"],
  check: ["M5.5 12.5l4 4 9-9.5"],
  pin: ["M12 20.5s-6.5-5.6-6.5-10.5a6.5 6.5 0 0 1 13 0c0 4.9-6.5 10.5-6.5 10.5z", "M12 7.8a2.2 2.2 0 1 1 0 4.4a2.2 2.2 0 1 1 0-4.4"],
  calendar: ["M5 6.5h14v13H5z", "M5 10.5h14", "M9 4v4", "M15 4v4"],
  repeat: ["M17 4.5l2.5 2.5L17 9.5", "M5 12V10a3 3 0 0 1 3-3h11.5", "M7 19.5L4.5 17 7 14.5", "M19 12v2a3 3 0 0 1-3 3H4.5"],
  push: ["M12 19V6", "M7 10.5L12 5.5l5 5"],
  moon: ["M19.5 14.2A7.8 7.8 0 0 1 9.8 4.5a7.8 7.8 0 1 0 9.7 9.7z"],
};

export function icon(name, extraClass) {
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  svg.setAttribute("class", `icon${extraClass ? " " + extraClass : ""}`);
  for (const d of ICONS[name] || []) {
    const path = document.createElementNS(SVG_NS, "path");
    path.setAttribute("d", d);
    svg.append(path);
  }
  return svg;
}

/** Puts exactly `nodes` in `parent`, in order, moving only what is out of place. */
export function reconcile(parent, nodes) {
  let index = 0;
  for (const node of nodes) {
    const current = parent.childNodes[index];
    if (current !== node) parent.insertBefore(node, current || null);
    index++;
  }
  while (parent.childNodes.length > nodes.length) parent.lastChild.remove();
}

// Elements are reused between renders when what they show has not changed, so focus, open
// fields and the browser tests' element handles survive live updates.
let cache = new Map();
let nextCache = new Map();

/** One drawing of the page: the elements `cached` hands out during it are the ones kept for the next. */
export function renderPass(draw) {
  nextCache = new Map();
  draw();
  cache = nextCache;
}

export function cached(kind, signature, build) {
  const id = `${kind}\u0002${signature}`;
  let el = nextCache.get(id) || cache.get(id);
  if (!el) el = build();
  nextCache.set(id, el);
  return el;
}

export function byFocusKey(key) {
  return key ? document.querySelector(`[data-fk="${CSS.escape(key)}"]`) : null;
}

/** Runs `change`, then gives focus back to the element (or its replacement) that had it. */
export function keepingFocus(change) {
  const active = document.activeElement;
  const key = active && active.dataset ? active.dataset.fk : null;
  const hint = state.focusHint;
  state.focusHint = null;
  let selection = null;
  if (active && active.tagName === "INPUT") {
    try { selection = [active.selectionStart, active.selectionEnd]; } catch (e) { selection = null; }
  }
  change();
  if (!active || active === document.body) return;
  const stillFocused = active.isConnected && document.activeElement === active;
  let target = hint ? byFocusKey(hint) : null;
  if (!target && !stillFocused) target = byFocusKey(key) || (active.isConnected ? null : $("center-title"));
  if (target && target !== document.activeElement) {
    target.focus({ preventScroll: true });
    if (selection && target.setSelectionRange) {
      try { target.setSelectionRange(selection[0], selection[1]); } catch (e) { /* not a text field */ }
    }
  }
}

export function timeElement(date, extraClass) {
  return h("time", {
    class: `reltime${extraClass ? " " + extraClass : ""}`, datetime: date, title: F.exactTime(date), "data-rel": date,
    text: F.relativeTime(date),
  });
}

export function updateTimes() {
  for (const el of document.querySelectorAll("time[data-rel]")) {
    const text = F.relativeTime(el.dataset.rel);
    if (el.textContent !== text) el.textContent = text;
  }
}

export function appIcon(app, size, badge) {
  const name = appName(app);
  const letters = name.split(" ").slice(0, 2).map((w) => w.charAt(0)).join("").toUpperCase() || "?";
  return h("span", { class: `app-icon ${size || ""} hue-${F.hue(app, 8)}`, "aria-hidden": "true" }, letters,
    badge > 0 ? h("span", { class: "app-badge", text: badge > 99 ? "99+" : String(badge) }) : null);
}

export function confirmDialog({ title, message, ok, destructive }) {
  return new Promise((resolve) => {
    const dialog = $("confirm");
    if (dialog.open) { resolve(false); return; }
    const opener = document.activeElement;
    const openerKey = opener && opener.dataset ? opener.dataset.fk : null;
    $("confirm-title").textContent = title;
    $("confirm-message").textContent = message;
    const okButton = $("confirm-ok");
    okButton.textContent = ok || "OK";
    okButton.className = `button ${destructive ? "danger" : "primary"}`;
    dialog.returnValue = "";
    dialog.addEventListener("close", () => {
      resolve(dialog.returnValue === "ok");
      let target = opener && opener.isConnected ? opener : null;
      if (!target && openerKey) target = document.querySelector(`[data-fk="${CSS.escape(openerKey)}"]`);
      if (target && document.activeElement !== target && dialog.returnValue !== "ok") target.focus({ preventScroll: true });
    }, { once: true });
    dialog.showModal();
    (destructive ? $("confirm-cancel") : okButton).focus();
  });
}

export function toast(text, kind) {
  const box = $("toasts");
  const el = h("div", { class: `toast ${kind || "info"}` }, kind === "ok" ? icon("check") : kind === "error" ? icon("alert") : null,
    h("span", { text }));
  box.append(el);
  while (box.children.length > 3) box.firstChild.remove();
  setTimeout(() => {
    el.classList.add("leaving");
    setTimeout(() => el.remove(), 300);
  }, kind === "error" ? 8000 : 3500);
}
