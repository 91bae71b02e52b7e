// Chime web center: signing in (a one-time link's code for a session cookie and its CSRF token),
// signing out, the sign-in screen, and sign-in links for another device.
import { api } from "./api.js";
import { $, h, icon, toast } from "./dom.js";
import { stopEvents } from "./events.js";
import { banners, hideBanner } from "./notifications.js";
import { state } from "./state.js";

/** What runs once signed in (set by beginSignIn). */
let onSignedIn = () => {};

/** Signs in with the one-time code in the address (now, or when a link opens this page again) or
 * with the session cookie, then runs `start`; the sign-in screen when neither works. */
export function beginSignIn(start) {
  onSignedIn = start;
  window.addEventListener("hashchange", () => { if (loginCode()) signInWithLink(); });
  if (loginCode()) return signInWithLink();
  return checkSession();
}

function loginCode() {
  const match = /(?:^#|[#&])login=([^&]*)/.exec(location.hash);
  return match ? decodeURIComponent(match[1]) : null;
}

/** The reply field a sign-in link opens (`&reply=APP/NOTIFICATION/ACTION`, each percent-encoded):
 * the desktop's way to type a reply where its notification server has no reply field. */
function replyTarget() {
  const match = /[#&]reply=([^&]*)/.exec(location.hash);
  if (!match) return null;
  const parts = match[1].split("/");
  if (parts.length !== 3) return null;
  try {
    const [app, identifier, action] = parts.map(decodeURIComponent);
    return { app, identifier, action };
  } catch (e) {
    return null;
  }
}

async function signInWithLink() {
  const code = loginCode();
  state.requestedReply = replyTarget();
  // The code works once: take it out of the address bar and history before using it.
  history.replaceState(null, "", location.pathname + location.search);
  setScreen(state.screen === "center" ? "center" : "loading");
  try {
    const session = await api("POST", "/v1/session", { code });
    state.csrf = session.csrfToken;
    onSignedIn();
  } catch (e) {
    if (state.screen === "center") { toast(`Sign-in link not accepted: ${e.message}`, "error"); return; }
    showSignIn(e.status === 401 ? e.message : `Could not sign in: ${e.message}`);
  }
}

async function checkSession() {
  try {
    const session = await api("GET", "/v1/session");
    state.csrf = session.csrfToken;
    // The service worker opens the center at a reply field (#reply=APP/NOTIFICATION/ACTION).
    state.requestedReply = replyTarget();
    if (state.requestedReply) history.replaceState(null, "", location.pathname + location.search);
    onSignedIn();
  } catch (e) {
    showSignIn(e.status === 401 ? null : `The Chime service cannot be reached (${e.message}).`);
  }
}

export function setScreen(screen) {
  state.screen = screen;
  document.body.dataset.screen = screen;
  $("loading").hidden = screen !== "loading";
  $("signin").hidden = screen !== "signin";
  $("shell").hidden = screen !== "center";
}

function showSignIn(message) {
  stopEvents();
  resetData();
  setScreen("signin");
  const section = $("signin");
  const command = h("code", { class: "command", text: "chime open" });
  section.replaceChildren(h("div", { class: "signin-card" },
    h("div", { class: "signin-mark" }, icon("bell")),
    h("h1", { id: "signin-title", text: "Sign in to Chime" }),
    h("p", { class: "signin-lead", text: "Your notification center opens with a one-time link." }),
    h("ol", { class: "signin-steps" },
      h("li", {}, "On the machine that runs Chime, run ", command, "."),
      h("li", {}, "Open the link it prints in this browser.")),
    h("p", { class: "signin-note", text: "A link signs in once and expires after 2 minutes. Keep it private: it opens your notification center." }),
    message ? h("p", { class: "signin-error", role: "alert", text: message }) : null,
    h("button", { class: "button", type: "button", onclick: () => checkSession() }, "I signed in elsewhere — check again")));
  document.title = "Sign in · Chime";
}

export function sessionEnded(message) {
  if (state.screen !== "center") return;
  showSignIn(message);
}

/** A one-time link for another device (a phone) to the address this page is open at, with its QR code. */
let deviceTimer = null;
export async function signInAnotherDevice() {
  const dialog = $("device");
  if (dialog.open) return;
  let link;
  try {
    link = await api("POST", "/v1/session/links", { base: location.origin });
  } catch (e) {
    if (e.status !== 401) toast(`Could not make a sign-in link: ${e.message}`, "error");
    return;
  }
  $("device-qr").src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(link.qrSVG)}`;
  $("device-qr").alt = `QR code of the sign-in link ${link.url}`;
  const anchor = $("device-link");
  anchor.textContent = link.url;
  anchor.href = link.url;
  const expires = Date.parse(link.expires);
  const tick = () => {
    const left = Math.max(0, Math.round((expires - Date.now()) / 1000));
    $("device-expiry").textContent = left > 0 ? `Valid for ${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")} more` : "This link has expired; close and try again.";
    if (left === 0) { clearInterval(deviceTimer); $("device-qr").src = ""; }
  };
  tick();
  clearInterval(deviceTimer);
  deviceTimer = setInterval(tick, 1000);
  dialog.addEventListener("close", () => { clearInterval(deviceTimer); $("device-qr").src = ""; }, { once: true });
  dialog.showModal();
  $("device-close").focus();
}

export async function signOut() {
  try {
    await api("DELETE", "/v1/session");
  } catch (e) {
    if (e.status !== 401) { toast(`Could not sign out: ${e.message}`, "error"); return; }
  }
  state.csrf = null;
  showSignIn("You are signed out.");
}

function resetData() {
  for (const map of [state.apps, state.categories, state.delivered, state.pending, state.busy, state.sent, state.errors, state.fresh, state.drafts]) map.clear();
  state.announced.clear();
  state.loaded = false;
  state.reply = null;
  for (const key of [...banners.keys()]) hideBanner(key, true);
}
