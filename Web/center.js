// Chime web notification center: the entry module (index.html loads it as a module; it imports the
// rest). It draws the page from the state the other modules keep, wires the page's fixed controls,
// and starts the center once signed in.
//
//   state.js          what the page holds, and the hooks below
//   format.js         pure text helpers (words for triggers, relative times, summaries)
//   dom.js            DOM helpers, element reuse between renders, toasts and the confirmation dialog
//   api.js            requests with the session cookie and CSRF token; lists a page at a time
//   signin.js         signing in and out, the sign-in screen, links for another device
//   events.js         the live event stream, reconnection, the once-a-minute safety reload
//   lists.js          the lists (apps, categories, delivered, pending): read, and changed by events
//   notifications.js  the notification list, banners, answering
//   escalation.js     notifications that repeat until answered: their marks and receipts
//   focus.js          focus modes: the Focus panel and its switches, the top bar's indicator, held marks
//   apps.js           the apps panel: prompts, settings, scheduled requests
//   device.js         this device: service worker, Web Push, installing
//   sound.js          the chime
import { renderApps } from "./apps.js";
import { refreshDevice } from "./device.js";
import { $, h, icon, keepingFocus, renderPass, toast, updateTimes } from "./dom.js";
import { renderReceipts, trackEscalations } from "./escalation.js";
import { connectEvents, startPolling } from "./events.js";
import { renderFocus } from "./focus.js";
import { refreshAll } from "./lists.js";
import { announce, banners, clearAll, closeReply, hideBanner, openRequestedReply, renderBanners, renderList } from "./notifications.js";
import { beginSignIn, sessionEnded, setScreen, signInAnotherDevice, signOut } from "./signin.js";
import { sound, toggleSound, unlockAudio } from "./sound.js";
import { gkey, hooks, nkey, state } from "./state.js";

function boot() {
  buildStaticParts();
  return beginSignIn(startCenter);
}

async function startCenter() {
  setScreen("center");
  renderHeader();
  // Listen first, then load: nothing delivered in between is missed.
  connectEvents();
  try {
    await refreshAll();
  } catch (e) {
    if (state.screen !== "center") return;
    toast(`Could not load notifications: ${e.message}`, "error");
  }
  // Everything already there when the page opens goes to the list without a banner.
  for (const [app, list] of state.delivered) for (const n of list) state.announced.add(nkey(app, n));
  state.loaded = true;
  render();
  openRequestedReply();
  refreshDevice();
  startPolling();
}

function render() {
  if (state.screen !== "center") return;
  renderPass(() => keepingFocus(() => {
    renderHeader();
    trackEscalations();
    renderList();
    renderBanners();
    renderReceipts();
    renderFocus();
    renderApps();
  }));
}

function renderHeader() {
  const connection = $("connection");
  const words = { connecting: "Connecting…", live: "Live", reconnecting: "Reconnecting…", offline: "Offline — retrying" };
  connection.dataset.state = state.connection;
  connection.textContent = words[state.connection] || state.connection;
  connection.title = {
    connecting: "Connecting to the live event stream",
    live: "New notifications appear as they are delivered",
    reconnecting: "The connection to Chime was lost; reconnecting by itself",
    offline: "Chime cannot be reached; trying again",
  }[state.connection] || "";
  const toggle = $("sound-toggle");
  toggle.setAttribute("aria-pressed", sound.on ? "true" : "false");
  toggle.dataset.blocked = sound.on && sound.blocked ? "true" : "false";
  const label = sound.on ? (sound.blocked ? "Sound on — click anywhere to allow it in this browser" : "Sound on") : "Sound off";
  toggle.setAttribute("aria-label", label);
  toggle.title = label;
  if (toggle.dataset.icon !== (sound.on ? "on" : "off")) {
    toggle.dataset.icon = sound.on ? "on" : "off";
    toggle.replaceChildren(icon(sound.on ? "soundOn" : "soundOff"), h("span", { class: "button-label", text: "Sound" }));
  }
}

function onKeyDown(event) {
  if (event.key !== "Escape" || event.defaultPrevented) return;
  if ($("confirm").open) return;
  const target = event.target instanceof Element ? event.target : null;
  if (target && target.closest(".reply")) { event.preventDefault(); closeReply(true); return; }
  const wrap = target && target.closest(".banner-wrap");
  if (wrap) { event.preventDefault(); hideBanner(wrap.dataset.key); return; }
  if (state.reply) { event.preventDefault(); closeReply(true); return; }
  if (banners.size > 0) {
    event.preventDefault();
    const keys = [...banners.keys()];
    hideBanner(keys[keys.length - 1]);
    return;
  }
  const group = target && target.closest(".group.expanded");
  if (group) {
    const section = group.closest(".app-section");
    const key = gkey(section.dataset.app, group.dataset.thread);
    event.preventDefault();
    state.expanded.delete(key);
    state.focusHint = `more|${key}`;
    render();
  }
}

function setView(view, focus) {
  state.view = view;
  document.body.dataset.view = view;
  for (const [id, name] of [["tab-list", "list"], ["tab-apps", "apps"]]) {
    const tab = $(id);
    tab.setAttribute("aria-selected", name === view ? "true" : "false");
    tab.tabIndex = name === view ? 0 : -1;
    if (focus && name === view) tab.focus();
  }
}

function buildStaticParts() {
  $("brand-mark").append(icon("bell"));
  const signOutButton = $("sign-out");
  signOutButton.append(icon("signOut"), h("span", { class: "button-label", text: "Sign out" }));
  signOutButton.setAttribute("aria-label", "Sign out");
  signOutButton.title = "Sign out of this browser";
  signOutButton.addEventListener("click", signOut);
  const deviceButton = $("another-device");
  deviceButton.append(icon("device"), h("span", { class: "button-label", text: "Another device" }));
  deviceButton.setAttribute("aria-label", "Sign in another device");
  deviceButton.title = "Sign in another device (a QR code for a phone)";
  deviceButton.addEventListener("click", signInAnotherDevice);
  $("sound-toggle").addEventListener("click", toggleSound);
  $("clear-all").addEventListener("click", clearAll);
  $("center-title").tabIndex = -1;
  $("tab-list").addEventListener("click", () => setView("list"));
  $("tab-apps").addEventListener("click", () => setView("apps"));
  for (const id of ["tab-list", "tab-apps"]) {
    $(id).addEventListener("keydown", (event) => {
      if (event.key === "ArrowLeft" || event.key === "ArrowRight" || event.key === "Home" || event.key === "End") {
        event.preventDefault();
        setView(state.view === "list" ? "apps" : "list", true);
      }
    });
  }
  document.addEventListener("keydown", onKeyDown);
  // Autoplay rules: the audio context is created and resumed only inside a user gesture.
  for (const type of ["pointerdown", "keydown"]) document.addEventListener(type, unlockAudio, { capture: true });
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden && state.screen === "center") { updateTimes(); refreshAll().catch(() => {}); }
  });
  setInterval(updateTimes, 10000);
}

Object.assign(hooks, { render, renderHeader, announce, sessionEnded });

// For the browser tests and the curious: read-only views of what the page holds (the page's one
// global; the modules share nothing through window).
window.ChimeCenter = Object.freeze({
  get connection() { return state.connection; },
  get chimes() { return sound.requested; },
  get bannerCount() { return banners.size; },
});

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
else boot();
