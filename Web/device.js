// Chime web center: this device — the service worker, Web Push and installing the center.
import { api, apiList } from "./api.js";
import { $, h, toast } from "./dom.js";
import { openRequestedReply } from "./notifications.js";
import { enc, state } from "./state.js";

const push = { registration: null, subscription: null, record: null, busy: false, error: null, installEvent: null };

/** Registers the service worker (a secure context only: HTTPS, or 127.0.0.1 / localhost). */
async function registerWorker() {
  if (!("serviceWorker" in navigator)) return null;
  if (!push.registration) {
    navigator.serviceWorker.addEventListener("message", (event) => {
      const reply = event.data && event.data.reply;
      if (Array.isArray(reply) && reply.length === 3) {
        state.requestedReply = { app: reply[0], identifier: reply[1], action: reply[2] };
        openRequestedReply();
      }
    });
    window.addEventListener("beforeinstallprompt", (event) => {
      event.preventDefault();
      push.installEvent = event;
      renderDevice();
    });
    window.addEventListener("appinstalled", () => { push.installEvent = null; renderDevice(); });
  }
  try {
    push.registration = await navigator.serviceWorker.register("/sw.js", { scope: "/" });
  } catch (e) {
    push.error = `The service worker did not start: ${e.message}`;
  }
  return push.registration;
}

/** What this browser's subscription is, and the service's record of it. */
export async function refreshDevice() {
  const registration = await registerWorker();
  push.subscription = null;
  push.record = null;
  if (registration && registration.pushManager) {
    try {
      push.subscription = await registration.pushManager.getSubscription();
      if (push.subscription) {
        const records = await apiList("/v1/web-push/subscriptions");
        push.record = records.find((r) => r.endpoint === push.subscription.endpoint) || null;
      }
    } catch (e) {
      push.error = `Could not read this device's subscription: ${e.message}`;
    }
  }
  renderDevice();
}

function base64urlBytes(text) {
  const padded = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
}

function deviceName() {
  const ua = navigator.userAgent;
  const browser = /Firefox\//.test(ua) ? "Firefox" : /Edg\//.test(ua) ? "Edge" : /Chrom(e|ium)\//.test(ua) ? "Chrome" : /Safari\//.test(ua) ? "Safari" : "Browser";
  const system = /Android/.test(ua) ? "Android" : /iPhone|iPad/.test(ua) ? "iOS" : /Mac OS X/.test(ua) ? "macOS" : /Windows/.test(ua) ? "Windows" : /Linux/.test(ua) ? "Linux" : "";
  return system ? `${browser} on ${system}` : browser;
}

/** "Notify this device": asks for permission (only now, after the click), subscribes, registers. */
async function subscribeDevice() {
  if (push.busy) return;
  push.busy = true;
  push.error = null;
  renderDevice();
  try {
    const registration = push.registration || await registerWorker();
    if (!registration || !registration.pushManager) throw new Error("this browser has no Web Push here (it needs HTTPS, or the installed app on iOS)");
    const permission = await Notification.requestPermission();
    if (permission !== "granted") throw new Error("notifications are not allowed for this site in the browser's settings");
    const { publicKey } = await api("GET", "/v1/web-push/key");
    let subscription = await registration.pushManager.getSubscription();
    if (!subscription) {
      // A browser with no reachable push service may never answer: give up after 15 s.
      let timer;
      const silent = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("the browser's push service did not answer within 15 s")), 15000);
      });
      try {
        subscription = await Promise.race([
          registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: base64urlBytes(publicKey) }), silent]);
      } finally {
        clearTimeout(timer);
      }
    }
    push.subscription = subscription;
    push.record = await api("POST", "/v1/web-push/subscriptions", Object.assign(subscription.toJSON(), { name: deviceName() }));
    toast("This device gets notifications now, also with no tab open", "ok");
  } catch (e) {
    push.error = `Could not turn on notifications: ${e.message}`;
  } finally {
    push.busy = false;
    renderDevice();
  }
}

/** Removes this device's subscription on the service and in the browser. */
async function unsubscribeDevice() {
  if (push.busy) return;
  push.busy = true;
  push.error = null;
  renderDevice();
  try {
    if (push.record) await api("DELETE", `/v1/web-push/subscriptions/${enc(push.record.id)}`);
    if (push.subscription) await push.subscription.unsubscribe();
    push.record = null;
    push.subscription = null;
    toast("This device gets no more notifications", "ok");
  } catch (e) {
    push.error = `Could not remove this device: ${e.message}`;
  } finally {
    push.busy = false;
    renderDevice();
  }
}

function installHint() {
  if (window.matchMedia && window.matchMedia("(display-mode: standalone)").matches) return null;
  if (push.installEvent) {
    return h("button", { id: "install-app", class: "button", type: "button", text: "Install Chime",
      onclick: async () => { const event = push.installEvent; push.installEvent = null; await event.prompt(); renderDevice(); } });
  }
  const ios = /iPhone|iPad/.test(navigator.userAgent);
  return h("p", { id: "install-hint", class: "device-hint",
    text: ios ? "On iPhone and iPad (iOS 16.4 or later): Share, then Add to Home Screen; open Chime from there to turn on notifications."
      : "Install Chime from the browser's menu (Install app, or Add to Home screen) to open it like an app." });
}

function renderDevice() {
  const box = $("device-push");
  if (!box) return;
  const rows = [h("h3", { class: "block-title", text: "This device" })];
  const supported = "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
  if (!window.isSecureContext || !supported) {
    rows.push(h("p", { class: "device-hint", text: window.isSecureContext
      ? "This browser cannot receive notifications with no tab open."
      : "Notifications with no tab open need HTTPS: open the center through the TLS proxy (see the README's On your phone)." }));
  } else if (push.record) {
    rows.push(h("div", { class: "device-row", id: "device-subscription", "data-id": push.record.id },
      h("span", { class: "device-name", text: push.record.name || deviceName() }),
      h("span", { class: "device-service", text: push.record.pushService || "" }),
      h("button", { id: "device-remove", class: "text-button", type: "button", text: "Remove", disabled: push.busy ? true : null,
        onclick: unsubscribeDevice })));
  } else {
    rows.push(h("button", { id: "notify-device", class: "button primary", type: "button", disabled: push.busy ? true : null,
      text: push.busy ? "Turning on…" : "Notify this device", onclick: subscribeDevice }));
  }
  if (push.error) rows.push(h("p", { class: "device-error", role: "alert", text: push.error }));
  const hint = installHint();
  if (hint) rows.push(hint);
  box.replaceChildren(...rows);
}
