"use strict";
// Chime web notification center. Plain DOM: every piece of data is put on the page with
// textContent or setAttribute, never parsed as HTML (the page's CSP allows no inline script).
(function () {
  const F = window.ChimeFormat;
  const DEFAULT_ACTION = "com.apple.UNNotificationDefaultActionIdentifier";
  const DISMISS_ACTION = "com.apple.UNNotificationDismissActionIdentifier";
  const BANNER_LIMIT = 3;
  const BANNER_MAX_AGE_MS = 120000;
  /** The most items of one list the page reads (in pages of up to 500). */
  const LIST_MOST = 2000;
  const SVG_NS = "http://www.w3.org/2000/svg";

  // ---------------------------------------------------------------------------------------------
  // State

  const state = {
    screen: "loading",
    csrf: null,
    apps: new Map(), // bundle → app record
    categories: new Map(), // bundle → Map(category identifier → category)
    delivered: new Map(), // bundle → notifications, newest first
    pending: new Map(), // bundle → pending requests
    loaded: false,
    expanded: new Set(), // expanded thread groups
    revealed: new Set(), // notifications whose hidden preview the user chose to show
    announced: new Set(), // notifications already bannered (or there before the page loaded)
    fresh: new Map(), // notification key → time it arrived (slide-in)
    reply: null, // {key, action, ctx}
    drafts: new Map(),
    busy: new Map(), // notification key → label being sent
    sent: new Map(), // notification key → label answered (shown briefly)
    arrived: new Map(), // notification key → when its delivered event came (a count), until a list read covers it
    errors: new Map(), // notification key → message
    appBusy: new Set(), // "bundle|what" being changed
    openApps: new Map(), // bundle → open (the user's choice; otherwise open when few apps or asking)
    allPending: new Set(),
    connection: "connecting",
    everConnected: false,
    view: "list",
    focusHint: null,
    requestedReply: null, // {app, identifier, action} from a sign-in link
  };

  const $ = (id) => document.getElementById(id);

  function nkey(app, n) { return `${app}\u0001${n.identifier}\u0001${n.date}`; }
  function gkey(app, thread) { return `${app}\u0001${thread}`; }
  function enc(text) { return encodeURIComponent(text); }
  function appName(app) { return F.appDisplayName(app); }

  // ---------------------------------------------------------------------------------------------
  // DOM helpers

  /** Creates an element. Props: class, text, dataset, on<event> (functions); others are attributes. */
  function h(tag, props, ...children) {
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

  function append(el, children) {
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
  };

  function icon(name, extraClass) {
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
  function reconcile(parent, nodes) {
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
  function cached(kind, signature, build) {
    const id = `${kind}\u0002${signature}`;
    let el = nextCache.get(id) || cache.get(id);
    if (!el) el = build();
    nextCache.set(id, el);
    return el;
  }

  function byFocusKey(key) {
    return key ? document.querySelector(`[data-fk="${CSS.escape(key)}"]`) : null;
  }

  /** Runs `change`, then gives focus back to the element (or its replacement) that had it. */
  function keepingFocus(change) {
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

  function timeElement(date, extraClass) {
    return h("time", {
      class: `reltime${extraClass ? " " + extraClass : ""}`, datetime: date, title: F.exactTime(date), "data-rel": date,
      text: F.relativeTime(date),
    });
  }

  function updateTimes() {
    for (const el of document.querySelectorAll("time[data-rel]")) {
      const text = F.relativeTime(el.dataset.rel);
      if (el.textContent !== text) el.textContent = text;
    }
  }

  function appIcon(app, size, badge) {
    const name = appName(app);
    const letters = name.split(" ").slice(0, 2).map((w) => w.charAt(0)).join("").toUpperCase() || "?";
    return h("span", { class: `app-icon ${size || ""} hue-${F.hue(app, 8)}`, "aria-hidden": "true" }, letters,
      badge > 0 ? h("span", { class: "app-badge", text: badge > 99 ? "99+" : String(badge) }) : null);
  }

  // ---------------------------------------------------------------------------------------------
  // API

  class ApiError extends Error {
    constructor(status, code, message, field) {
      super(message);
      this.status = status;
      this.code = code;
      this.field = field;
    }
  }

  /** The target of a Link header's rel="next" (the next page of a list), or null. */
  function nextLink(header) {
    if (!header) return null;
    for (const link of header.split(",")) {
      const match = /^\s*<([^>]*)>(.*)$/.exec(link);
      if (match && /;\s*rel="?(?:[^";]*\s)?next(?:\s[^";]*)?"?/.test(match[2])) return match[1];
    }
    return null;
  }

  /**
   * A whole list (or its first `most` items): the service answers lists a page at a time and
   * says where the next page is in a Link header.
   */
  async function apiList(path, most = LIST_MOST) {
    const items = [];
    let next = `${path}${path.includes("?") ? "&" : "?"}limit=${Math.min(most, 500)}`;
    while (next && items.length < most) {
      const page = await api("GET", next, undefined, true);
      items.push(...(page.data || []));
      next = nextLink(page.link);
    }
    return items.slice(0, most);
  }

  async function api(method, path, body, withLink = false) {
    const headers = { Accept: "application/json" };
    const init = { method, headers, credentials: "same-origin", cache: "no-store" };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    if (method !== "GET" && method !== "HEAD" && state.csrf) headers["X-CSRF-Token"] = state.csrf;
    let response;
    try {
      response = await fetch(path, init);
    } catch (e) {
      throw new ApiError(0, "network", "the Chime service cannot be reached");
    }
    let data = null;
    const type = response.headers.get("content-type") || "";
    if (response.status !== 204 && type.includes("json")) {
      try { data = await response.json(); } catch (e) { data = null; }
    }
    if (!response.ok) {
      const error = (data && data.error) || {};
      const failure = new ApiError(response.status, error.code || `http${response.status}`,
        error.message || `the service answered ${response.status}`, error.field);
      if (response.status === 401 && state.screen === "center" && !path.startsWith("/v1/session")) {
        sessionEnded("Your session has ended. Run chime open to sign in again.");
      }
      throw failure;
    }
    return withLink ? { data, link: response.headers.get("link") } : data;
  }

  const appPath = (app) => `/v1/apps/${enc(app)}`;

  // ---------------------------------------------------------------------------------------------
  // Signing in

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

  /** Opens the reply field the sign-in link asked for, once the lists are loaded. */
  function openRequestedReply() {
    const target = state.requestedReply;
    state.requestedReply = null;
    if (!target) return;
    const n = (state.delivered.get(target.app) || []).find((item) => item.identifier === target.identifier);
    const action = n && (n.actions || []).find((a) => a.identifier === target.action && typeof a.textInputButtonTitle === "string");
    if (!n || !action) {
      toast(`That notification was already answered or removed`, "error");
      return;
    }
    runAction(target.app, n, action, "list");
    const input = byFocusKey(`l|${nkey(target.app, n)}|reply-input`);
    if (input) input.scrollIntoView({ block: "center" });
  }

  async function boot() {
    buildStaticParts();
    window.addEventListener("hashchange", () => { if (loginCode()) signInWithLink(); });
    if (loginCode()) return signInWithLink();
    return checkSession();
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
      startCenter();
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
      startCenter();
    } catch (e) {
      showSignIn(e.status === 401 ? null : `The Chime service cannot be reached (${e.message}).`);
    }
  }

  function setScreen(screen) {
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

  function sessionEnded(message) {
    if (state.screen !== "center") return;
    showSignIn(message);
  }

  /** A one-time link for another device (a phone) to the address this page is open at, with its QR code. */
  let deviceTimer = null;
  async function signInAnotherDevice() {
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

  async function signOut() {
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

  // ---------------------------------------------------------------------------------------------
  // Loading and live events

  let events = null;
  let reconnectTimer = null;
  let reconnectDelay = 2000;
  let pollTimer = null;

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
    clearInterval(pollTimer);
    pollTimer = setInterval(poll, 60000);
  }

  // Every change arrives as an event (new requests, categories and apps as the owner stream's
  // refresh hints); a full reload once a minute only guards against a missed one.
  async function poll() {
    if (state.screen !== "center" || document.hidden) return;
    try {
      await refreshAll();
    } catch (e) { /* shown by the connection state; tried again on the next poll */ }
  }

  function stopEvents() {
    if (events) events.close();
    events = null;
    clearTimeout(reconnectTimer);
    clearInterval(pollTimer);
    state.everConnected = false;
  }

  function connectEvents() {
    if (events) events.close();
    clearTimeout(reconnectTimer);
    setConnection(state.everConnected ? "reconnecting" : "connecting");
    const source = new EventSource("/v1/events");
    events = source;
    source.onopen = () => {
      if (events !== source) return;
      reconnectDelay = 2000;
      const again = state.everConnected;
      state.everConnected = true;
      setConnection("live");
      // After a gap (server restart, sleep), catch up on what no event told us.
      if (again) refreshAll().catch(() => {});
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
    for (const kind of ["delivered", "removed", "response", "settings", "silentPush", "scheduled", "categories", "app", "expired"]) {
      source.addEventListener(kind, (message) => {
        let data = null;
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
        if (e.status === 401) { sessionEnded("Your session has ended. Run chime open to sign in again."); return; }
        reconnectDelay = Math.min(reconnectDelay * 2, 30000);
        scheduleReconnect();
        return;
      }
      if (state.screen === "center") connectEvents();
    }, reconnectDelay);
  }

  function setConnection(value) {
    state.connection = value;
    renderHeader();
  }

  function onEvent(kind, data) {
    if (!data || typeof data.app !== "string") return;
    const app = data.app;
    switch (kind) {
      case "delivered":
        // The event carries everything: the notification with its actions and presentation, its
        // category and the app's badge. Only a repeating request's next date needs a read.
        if (data.notification) enqueue(app, { pending: applyDelivery(app, data) }, data.notification);
        break;
      case "removed":
        if (data.scope === "pending") enqueue(app, { pending: true });
        else {
          for (const identifier of data.identifiers || []) {
            for (const [key, banner] of banners) if (banner.app === app && banner.n.identifier === identifier && !state.sent.has(key)) hideBanner(key);
          }
          enqueue(app, { notifications: true });
        }
        break;
      case "settings":
        enqueue(app, { apps: true, notifications: true, categories: true, pending: true });
        break;
      case "scheduled":
      case "expired":
        // An expired request left the pending list undelivered.
        enqueue(app, { pending: true });
        break;
      case "categories":
        enqueue(app, { categories: true, notifications: true });
        break;
      case "app":
        enqueue(app, { apps: true, notifications: true, categories: true, pending: true });
        break;
      default:
        break;
    }
  }

  /** Delivered events taken so far (orders them against list reads in flight). */
  let deliveredEvents = 0;

  /** Puts a delivery from the event stream into the state; returns whether the pending list needs a read. */
  function applyDelivery(app, data) {
    const item = data.notification;
    state.arrived.set(nkey(app, item), ++deliveredEvents);
    const others = (state.delivered.get(app) || []).filter((n) => n.identifier !== item.identifier);
    state.delivered.set(app, [item, ...others].sort((a, b) => Date.parse(b.date) - Date.parse(a.date)));
    if (data.category && typeof data.category.identifier === "string") {
      const categories = state.categories.get(app) || new Map();
      categories.set(data.category.identifier, data.category);
      state.categories.set(app, categories);
    }
    const record = state.apps.get(app);
    if (record && typeof data.badge === "number") record.badge = data.badge;
    const trigger = item.trigger;
    if (!trigger || trigger.type === "push") return false;
    if (trigger.repeats || trigger.type === "recurrence") return true;
    const pending = state.pending.get(app);
    if (pending) state.pending.set(app, pending.filter((request) => request.identifier !== item.identifier));
    return false;
  }

  /** A command's words as one line a shell would split back into them (for reading, never run here). */
  function shellWords(words) {
    return words.map((word) => (/^[A-Za-z0-9/._=:,@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`)).join(" ");
  }

  // Refreshes asked for by events are merged and run together, one batch at a time.
  let queue = { apps: false, perApp: new Map(), announce: [] };
  let queueTimer = null;
  let flushing = Promise.resolve();

  function enqueue(app, what, announce) {
    if (what.apps) queue.apps = true;
    const entry = queue.perApp.get(app) || {};
    for (const [name, wanted] of Object.entries(what)) if (wanted && name !== "apps") entry[name] = true;
    queue.perApp.set(app, entry);
    if (announce) queue.announce.push({ app, identifier: announce.identifier, date: announce.date });
    if (!queueTimer) queueTimer = setTimeout(() => { queueTimer = null; flushing = flushing.then(flush, flush); }, 15);
  }

  async function flush() {
    const batch = queue;
    queue = { apps: false, perApp: new Map(), announce: [] };
    if (state.screen !== "center") return;
    try {
      if (batch.apps) setApps(await apiList("/v1/apps"));
      await Promise.all([...batch.perApp].filter(([app]) => state.apps.has(app)).map(([app, what]) => refreshApp(app, what)));
    } catch (e) {
      if (state.screen === "center" && e.status !== 401) toast(`Could not update: ${e.message}`, "error");
    }
    const arrivals = [];
    for (const item of batch.announce) {
      const n = (state.delivered.get(item.app) || []).find((x) => x.identifier === item.identifier && x.date === item.date);
      if (!n) continue;
      const key = nkey(item.app, n);
      if (state.announced.has(key)) continue;
      state.announced.add(key);
      state.fresh.set(key, Date.now());
      arrivals.push({ app: item.app, n });
    }
    render();
    announce(arrivals);
  }

  const LEVEL_RANK = { passive: 0, active: 1, timeSensitive: 2, critical: 3 };

  /** Banners and a sound for what just arrived, as its presentation allows. */
  function announce(arrivals) {
    let loudest = null;
    for (const { app, n } of arrivals) {
      const presentation = n.presentation || ["banner", "list", "sound"];
      const recent = !(Date.now() - Date.parse(n.date) > BANNER_MAX_AGE_MS);
      if (!recent) continue;
      if (presentation.includes("banner")) showBanner(app, n);
      if (presentation.includes("sound")) {
        const level = n.interruptionLevel || "active";
        if (loudest === null || LEVEL_RANK[level] > LEVEL_RANK[loudest]) loudest = level;
      }
    }
    if (loudest !== null) playChime(loudest);
  }

  function setApps(list) {
    state.apps = new Map(list.map((record) => [record.bundleIdentifier, record]));
    for (const map of [state.categories, state.delivered, state.pending]) {
      for (const app of [...map.keys()]) if (!state.apps.has(app)) map.delete(app);
    }
  }

  async function refreshAll() {
    const list = await apiList("/v1/apps");
    setApps(list);
    await Promise.all(list.map((record) => refreshApp(record.bundleIdentifier, { categories: true, notifications: true, pending: true })));
    render();
  }

  async function refreshApp(app, what) {
    const base = appPath(app);
    const jobs = [];
    if (what.categories) {
      jobs.push(apiList(`${base}/categories`).then((list) => {
        state.categories.set(app, new Map(list.map((category) => [category.identifier, category])));
      }));
    }
    if (what.notifications) {
      const since = deliveredEvents;
      jobs.push(apiList(`${base}/notifications`).then((list) => state.delivered.set(app, mergeDelivered(app, list, since))));
    }
    if (what.pending) jobs.push(apiList(`${base}/requests`).then((list) => state.pending.set(app, list)));
    const results = await Promise.allSettled(jobs);
    for (const result of results) {
      if (result.status !== "rejected") continue;
      if (result.reason && result.reason.status === 404) {
        state.apps.delete(app);
        state.delivered.delete(app);
        state.pending.delete(app);
        state.categories.delete(app);
        return;
      }
      throw result.reason;
    }
  }

  /** The server's list, plus notifications just answered here that stay visible a moment. */
  /**
   * The list read from the service, plus what it cannot know yet: notifications being answered, and
   * those whose delivered event came after the read was sent (the answer is older than them).
   */
  function mergeDelivered(app, list, since) {
    const keys = new Set(list.map((n) => nkey(app, n)));
    const kept = (state.delivered.get(app) || []).filter((n) => {
      const key = nkey(app, n);
      if (keys.has(key)) return false;
      const arrived = state.arrived.get(key);
      if (arrived !== undefined && arrived <= since) state.arrived.delete(key);
      return state.sent.has(key) || state.busy.has(key) || (arrived !== undefined && arrived > since);
    });
    for (const key of keys) if ((state.arrived.get(key) ?? Infinity) <= since) state.arrived.delete(key);
    if (kept.length === 0) return list;
    return list.concat(kept).sort((a, b) => Date.parse(b.date) - Date.parse(a.date));
  }

  // ---------------------------------------------------------------------------------------------
  // Rendering

  function render() {
    if (state.screen !== "center") return;
    nextCache = new Map();
    keepingFocus(() => {
      renderHeader();
      renderList();
      renderBanners();
      renderApps();
    });
    cache = nextCache;
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

  function visibleNotifications(app) {
    return (state.delivered.get(app) || []).filter((n) => {
      const key = nkey(app, n);
      return !n.presentation || n.presentation.includes("list") || state.sent.has(key) || state.busy.has(key);
    });
  }

  function renderList() {
    const sections = [];
    let total = 0;
    const apps = [...state.apps.keys()]
      .map((app) => [app, visibleNotifications(app)])
      .filter(([, list]) => list.length > 0)
      .sort((a, b) => Date.parse(b[1][0].date) - Date.parse(a[1][0].date));
    for (const [app, list] of apps) {
      total += list.length;
      sections.push(appSection(app, list));
    }
    const listEl = $("list");
    if (sections.length === 0) {
      sections.push(cached("empty", state.loaded ? "loaded" : "loading", () => emptyState()));
    }
    reconcile(listEl, sections);
    $("center-count").textContent = total === 0 ? "" : `${total} notification${total === 1 ? "" : "s"}`;
    $("clear-all").hidden = total === 0;
    document.title = total > 0 ? `(${total}) Chime` : "Chime";
    pruneState();
  }

  function emptyState() {
    if (!state.loaded) return h("div", { class: "empty" }, h("p", { text: "Loading…" }));
    return h("div", { class: "empty" },
      h("div", { class: "empty-mark" }, icon("bell")),
      h("p", { class: "empty-title", text: "No notifications" }),
      h("p", { class: "empty-text", text: "What your apps deliver shows up here as it happens, with its buttons and reply fields." }),
      h("p", { class: "empty-hint" }, "Try ", h("code", { text: "chime add --app com.example.alarm --title Hello --in 10s" })));
  }

  function appSection(app, list) {
    const record = state.apps.get(app) || {};
    const section = cached("section", app, () => h("section", { class: "app-section", "data-app": app }));
    section.setAttribute("aria-label", `${appName(app)}, ${list.length} notification${list.length === 1 ? "" : "s"}`);
    const headSig = JSON.stringify([app, record.badge, list.length]);
    const head = cached("section-head", headSig, () => h("div", { class: "app-section-head" },
      appIcon(app, "small", record.badge),
      h("h2", { class: "app-section-title", text: appName(app) }),
      h("span", { class: "count", text: `${list.length}` }),
      h("span", { class: "spacer" }),
      h("button", {
        class: "text-button", type: "button", "data-fk": `clear-app|${app}`, "aria-label": `Clear all notifications of ${appName(app)}`,
        onclick: () => clearNotifications(app, visibleNotifications(app)),
      }, "Clear")));
    const groups = new Map();
    for (const n of list) {
      const thread = n.threadIdentifier || "";
      if (!groups.has(thread)) groups.set(thread, []);
      groups.get(thread).push(n);
    }
    const children = [head];
    for (const [thread, items] of groups) children.push(threadGroup(app, thread, items, groups.size === 1));
    reconcile(section, children);
    return section;
  }

  function categoryOf(app, n) {
    const categories = state.categories.get(app);
    return (categories && categories.get(n.categoryIdentifier)) || null;
  }

  function threadGroup(app, thread, items, only) {
    const key = gkey(app, thread);
    const many = items.length > 1;
    // A group with an open reply field stays open, so the field does not vanish under the stack.
    const replying = state.reply && state.reply.ctx === "list" && items.some((n) => nkey(app, n) === state.reply.key);
    const expanded = many && (state.expanded.has(key) || replying);
    // The only thread of an app needs no heading of its own while collapsed: the app's has a Clear.
    const withHead = many && (expanded || !only);
    const group = cached("group", key, () => h("div", { class: "group", "data-thread": thread }));
    group.className = `group${many ? (expanded ? " expanded" : " collapsed") : " single"}`;
    const children = [];
    const groupId = `group-${F.hue(key, 1e9)}`;
    group.id = groupId;
    if (withHead) {
      const headSig = JSON.stringify([key, items.length, expanded]);
      children.push(cached("group-head", headSig, () => h("div", { class: "group-head" },
        h("span", { class: "group-label" },
          h("span", { class: "group-count", text: `${items.length} notifications` }),
          thread ? h("span", { class: "group-thread", title: "Thread identifier", text: thread }) : null),
        h("span", { class: "spacer" }),
        expanded ? h("button", {
          class: "text-button", type: "button", "aria-expanded": "true", "aria-controls": groupId, "data-fk": `less|${key}`,
          onclick: () => { state.expanded.delete(key); state.focusHint = `more|${key}`; render(); },
        }, "Show less") : null,
        h("button", {
          class: "text-button", type: "button", "data-fk": `clear|${key}`, "aria-label": `Clear these ${items.length} notifications`,
          onclick: () => clearNotifications(app, visibleNotifications(app).filter((x) => (x.threadIdentifier || "") === thread)),
        }, "Clear"))));
    }
    const shown = expanded || !many ? items : items.slice(0, 1);
    for (const [index, n] of shown.entries()) {
      const count = !expanded && many && index === 0 ? items.reduce((sum, x) => sum + (x.summaryArgumentCount > 0 ? x.summaryArgumentCount : 1), 0)
        : (n.summaryArgumentCount > 0 ? n.summaryArgumentCount : 1);
      children.push(noteCard(app, n, "list", { placeholderCount: count }));
    }
    if (many && !expanded) {
      const hidden = items.slice(1);
      const category = categoryOf(app, items[0]);
      const summary = F.groupSummary(category ? category.categorySummaryFormat : "", hidden);
      const sig = JSON.stringify([key, summary, hidden.length]);
      children.push(cached("stack", sig, () => h("div", { class: "stack" },
        h("span", { class: "stack-peek one", "aria-hidden": "true" }),
        hidden.length > 1 ? h("span", { class: "stack-peek two", "aria-hidden": "true" }) : null,
        h("button", {
          class: "stack-summary", type: "button", "aria-expanded": "false", "aria-controls": groupId, "data-fk": `more|${key}`,
          onclick: () => { state.expanded.add(key); state.focusHint = `less|${key}`; render(); },
        }, h("span", { class: "summary-text", text: summary }), icon("chevron")))));
    }
    reconcile(group, children);
    return group;
  }

  function previewsHidden(app, key) {
    const record = state.apps.get(app);
    const mode = record && record.settings ? record.settings.showPreviewsSetting : "always";
    if (mode === "never") return "never";
    if (mode === "whenAuthenticated" && !state.revealed.has(key)) return "whenAuthenticated";
    return null;
  }

  function levelChip(level) {
    if (level === "timeSensitive") return h("span", { class: "chip time-sensitive" }, icon("clock"), "Time Sensitive");
    if (level === "critical") return h("span", { class: "chip critical" }, icon("alert"), "Critical");
    if (level === "passive") return h("span", { class: "chip passive", title: "Passive: delivered quietly, to the list only" }, "Quiet");
    return null;
  }

  /** One notification, in the list or as a banner. */
  function noteCard(app, n, ctx, extra) {
    const key = nkey(app, n);
    const category = categoryOf(app, n);
    const hidden = previewsHidden(app, key);
    const reply = state.reply && state.reply.key === key && state.reply.ctx === ctx ? state.reply.action : null;
    // A card slides in the first time the list draws it after it arrived, and never again: the
    // mark is taken here, whether the card is built now or comes from the cache (it may have been
    // drawn before its arrival was announced), so a later redraw (a reply field opening) does not
    // slide it in a second time, hidden while it fades in.
    const fresh = ctx === "list" && state.fresh.has(key) && Date.now() - state.fresh.get(key) < 700;
    if (ctx === "list") state.fresh.delete(key);
    const signature = JSON.stringify([ctx, key, n, category && category.options, category && category.hiddenPreviewsBodyPlaceholder, hidden,
      state.busy.get(key), state.sent.get(key), state.errors.get(key), reply, extra && extra.placeholderCount]);
    return cached("note", signature, () => buildNote(app, n, ctx, { key, category, hidden, reply, fresh, count: extra && extra.placeholderCount }));
  }

  function buildNote(app, n, ctx, info) {
    const { key, category, hidden, reply } = info;
    const options = (category && category.options) || [];
    const level = n.interruptionLevel || "active";
    const busy = state.busy.get(key);
    const sent = state.sent.get(key);
    const error = state.errors.get(key);
    const prefix = `${ctx === "banner" ? "b" : "l"}|${key}|`;
    const showTitle = !hidden || options.includes("hiddenPreviewsShowTitle");
    const showSubtitle = !hidden || options.includes("hiddenPreviewsShowSubtitle");
    const title = showTitle ? n.title : "";
    const subtitle = showSubtitle ? n.subtitle : "";
    const text = hidden ? F.hiddenPlaceholder(category ? category.hiddenPreviewsBodyPlaceholder : "", info.count || 1) : n.body;
    const label = title || subtitle || text || n.identifier;

    const chip = levelChip(level);
    const classes = ["note", `level-${level}`];
    if (ctx === "banner") classes.push("in-banner");
    else if (!chip) classes.push("compact");
    if (info.fresh) classes.push("fresh");
    if (busy) classes.push("busy");
    if (sent) classes.push("sent");
    if (error) classes.push("failed");
    const article = h("article", {
      class: classes.join(" "), "data-app": app, "data-identifier": n.identifier, "data-level": level, "data-key": key,
      "aria-label": `${appName(app)}: ${label}`,
    });
    if (info.fresh) article.addEventListener("animationend", () => article.classList.remove("fresh"), { once: true });

    const closeButton = ctx === "banner"
      ? h("button", {
        class: "note-close icon-button small", type: "button", "aria-label": "Hide banner (keeps the notification in the list)",
        title: "Hide banner", "data-fk": `${prefix}close`, onclick: () => { hideBanner(key); },
      }, icon("x"))
      : h("button", {
        class: "note-close icon-button small", type: "button", "aria-label": `Dismiss “${label}”`, title: "Dismiss",
        "data-fk": `${prefix}close`, "aria-disabled": busy || sent ? "true" : null,
        onclick: () => answer(app, n, DISMISS_ACTION, null, "Dismiss"),
      }, icon("x"));

    const head = h("div", { class: "note-head" },
      ctx === "banner" ? [appIcon(app, "tiny"), h("span", { class: "note-app", text: appName(app) })] : null,
      chip,
      h("span", { class: "spacer" }),
      timeElement(n.date, "note-time"));

    const body = h("button", {
      class: "note-body", type: "button", "data-fk": `${prefix}body`, "aria-disabled": busy || sent ? "true" : null,
      title: "Open (the notification's default action)",
      onclick: () => answer(app, n, DEFAULT_ACTION, null, "Open"),
    },
    title ? h("span", { class: "note-title", text: title }) : null,
    subtitle ? h("span", { class: "note-subtitle", text: subtitle }) : null,
    text ? h("span", { class: `note-text${hidden ? " placeholder" : ""}`, text }) : null,
    !title && !subtitle && !text ? h("span", { class: "note-title muted", text: n.identifier }) : null);

    const parts = [head, body];
    if (hidden === "whenAuthenticated") {
      parts.push(h("button", {
        class: "text-button reveal", type: "button", "data-fk": `${prefix}reveal`,
        onclick: () => { state.revealed.add(key); state.focusHint = `${prefix}body`; render(); },
      }, icon("eye"), "Show preview"));
    }

    const actions = n.actions || [];
    if (reply) {
      const action = actions.find((a) => a.identifier === reply);
      if (action) parts.push(replyForm(app, n, action, ctx, prefix));
    } else if (actions.length > 0) {
      parts.push(h("div", { class: "note-actions", role: "group", "aria-label": "Actions" },
        actions.map((action) => actionButton(app, n, action, ctx, prefix, busy || sent))));
    }
    if (busy) parts.push(h("p", { class: "note-status sending", role: "status" }, h("span", { class: "spinner", "aria-hidden": "true" }), `Sending “${busy}”…`));
    if (sent) parts.push(h("p", { class: "note-status done", role: "status" }, icon("check"), sent === "Dismiss" ? "Dismissed" : `Sent “${sent}”`));
    if (error) parts.push(h("p", { class: "note-status error", role: "alert", text: error }));
    // Last in the tab order (text, actions, then close), shown in the top corner.
    parts.push(closeButton);
    append(article, parts);
    return article;
  }

  function actionButton(app, n, action, ctx, prefix, disabled) {
    const options = action.options || [];
    const isText = typeof action.textInputButtonTitle === "string";
    const classes = ["action"];
    if (options.includes("destructive")) classes.push("destructive");
    if (isText) classes.push("text-input");
    const hints = [];
    if (options.includes("authenticationRequired")) hints.push("asks for confirmation");
    if (options.includes("foreground")) hints.push("opens the app");
    if (isText) hints.push("opens a reply field");
    return h("button", {
      class: classes.join(" "), type: "button", "data-action": action.identifier, "data-fk": `${prefix}a|${action.identifier}`,
      "aria-disabled": disabled ? "true" : null, title: hints.length ? `${action.title} (${hints.join(", ")})` : null,
      onclick: () => runAction(app, n, action, ctx),
    },
    isText ? icon("reply") : null,
    h("span", { class: "action-title", text: action.title }),
    options.includes("authenticationRequired") ? icon("lock", "hint") : null,
    options.includes("foreground") ? icon("open", "hint") : null);
  }

  function replyForm(app, n, action, ctx, prefix) {
    const key = nkey(app, n);
    const draftKey = `${key}|${action.identifier}`;
    const input = h("input", {
      class: "reply-input", type: "text", placeholder: action.textInputPlaceholder || "", "aria-label": action.title || "Reply",
      "data-fk": `${prefix}reply-input`, autocomplete: "off", enterkeyhint: "send",
    });
    input.value = state.drafts.get(draftKey) || "";
    const send = h("button", { class: "button primary small reply-send", type: "submit", "data-fk": `${prefix}reply-send` },
      action.textInputButtonTitle || "Send");
    const updateSend = () => { send.disabled = input.value.trim() === ""; };
    updateSend();
    input.addEventListener("input", () => { state.drafts.set(draftKey, input.value); updateSend(); });
    const form = h("form", { class: "reply", "aria-label": action.title || "Reply" },
      input, send,
      h("button", {
        class: "icon-button small reply-cancel", type: "button", "aria-label": "Cancel reply", title: "Cancel (Esc)",
        "data-fk": `${prefix}reply-cancel`, onclick: () => closeReply(true),
      }, icon("x")));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const text = input.value;
      if (text.trim() === "") { input.focus(); return; }
      if ((action.options || []).includes("authenticationRequired") && !(await confirmAction(app, action))) return;
      answer(app, n, action.identifier, text, action.title);
    });
    return form;
  }

  function closeReply(returnFocus) {
    if (!state.reply) return;
    const { key, action, ctx } = state.reply;
    state.reply = null;
    if (returnFocus) state.focusHint = `${ctx === "banner" ? "b" : "l"}|${key}|a|${action}`;
    render();
  }

  // ---------------------------------------------------------------------------------------------
  // Answering

  function confirmAction(app, action) {
    return confirmDialog({
      title: `“${action.title}” needs your confirmation`,
      message: `${appName(app)} marked this action as needing authentication. On a phone you would unlock first; here, confirm that you mean it.`,
      ok: action.title || "Continue",
      destructive: (action.options || []).includes("destructive"),
    });
  }

  async function runAction(app, n, action, ctx) {
    if (typeof action.textInputButtonTitle === "string") {
      const key = nkey(app, n);
      state.reply = { key, action: action.identifier, ctx };
      render();
      const input = byFocusKey(`${ctx === "banner" ? "b" : "l"}|${key}|reply-input`);
      if (input) input.focus();
      return;
    }
    if ((action.options || []).includes("authenticationRequired") && !(await confirmAction(app, action))) return;
    answer(app, n, action.identifier, null, action.title);
  }

  async function answer(app, n, actionIdentifier, userText, label) {
    const key = nkey(app, n);
    if (state.busy.has(key) || state.sent.has(key)) return;
    state.busy.set(key, label);
    state.errors.delete(key);
    render();
    const body = { actionIdentifier };
    if (userText !== null && userText !== undefined) body.userText = userText;
    try {
      await api("POST", `${appPath(app)}/notifications/${enc(n.identifier)}/responses`, body);
    } catch (e) {
      state.busy.delete(key);
      state.errors.set(key, `Could not send “${label}”: ${e.message}`);
      render();
      if (e.status === 404) enqueue(app, { notifications: true });
      return;
    }
    state.busy.delete(key);
    state.sent.set(key, label);
    if (state.reply && state.reply.key === key) {
      state.reply = null;
    }
    for (const draft of [...state.drafts.keys()]) if (draft.startsWith(`${key}|`)) state.drafts.delete(draft);
    const dismissal = actionIdentifier === DISMISS_ACTION;
    toast(dismissal ? `Dismissed “${n.title || n.identifier}”` : `Sent “${label}” to ${appName(app)}`, "ok");
    render();
    setTimeout(() => {
      state.sent.delete(key);
      removeLocally(app, [key]);
    }, dismissal ? 350 : 1100);
  }

  function removeLocally(app, keys) {
    const drop = new Set(keys);
    const list = state.delivered.get(app) || [];
    // Keep the keyboard user's place: focus moves to the next notification.
    const active = document.activeElement;
    const activeCard = active && active.closest ? active.closest("article.note") : null;
    if (activeCard && drop.has(activeCard.dataset.key)) {
      const cards = [...document.querySelectorAll("#list article.note")].filter((c) => !drop.has(c.dataset.key));
      const all = [...document.querySelectorAll("#list article.note")];
      const index = all.indexOf(activeCard);
      const next = all.slice(index + 1).find((c) => !drop.has(c.dataset.key)) || cards[cards.length - 1];
      state.focusHint = next ? `l|${next.dataset.key}|body` : null;
    }
    state.delivered.set(app, list.filter((n) => !drop.has(nkey(app, n))));
    for (const key of keys) if (banners.has(key)) hideBanner(key);
    render();
  }

  /** Clears notifications: each is dismissed, as the close button does. The service decides who
   *  hears of it (only an app whose category has customDismissAction) and removes it either way. */
  async function clearNotifications(app, items) {
    items = items.filter((n) => !state.busy.has(nkey(app, n)) && !state.sent.has(nkey(app, n)));
    if (items.length === 0) return;
    const keys = items.map((n) => nkey(app, n));
    for (const key of keys) state.busy.set(key, "Clear");
    render();
    const failures = [];
    const results = await Promise.allSettled(items.map((n) =>
      api("POST", `${appPath(app)}/notifications/${enc(n.identifier)}/responses`, { actionIdentifier: DISMISS_ACTION })));
    for (const result of results) if (result.status === "rejected") failures.push(result.reason.message);
    for (const key of keys) state.busy.delete(key);
    if (failures.length > 0) {
      toast(`Could not clear everything: ${failures[0]}`, "error");
      enqueue(app, { notifications: true });
      render();
      return;
    }
    removeLocally(app, keys);
    enqueue(app, { notifications: true });
  }

  async function clearAll() {
    const apps = [...state.apps.keys()].map((app) => [app, visibleNotifications(app)]).filter(([, list]) => list.length);
    const total = apps.reduce((sum, [, list]) => sum + list.length, 0);
    if (total === 0) return;
    const ok = await confirmDialog({
      title: "Clear all notifications?",
      message: `${total} notification${total === 1 ? "" : "s"} from ${apps.length} app${apps.length === 1 ? "" : "s"} leave the center. Apps that asked to hear of dismissals are told.`,
      ok: "Clear all", destructive: true,
    });
    if (!ok) return;
    await Promise.all(apps.map(([app, list]) => clearNotifications(app, list)));
  }

  // ---------------------------------------------------------------------------------------------
  // Banners

  const banners = new Map(); // key → {app, n, wrap, timer, deadline, remaining, paused}

  function bannerDuration(n) {
    if (n.interruptionLevel === "critical") return Infinity;
    if (n.interruptionLevel === "timeSensitive") return 12000;
    return 6500;
  }

  function showBanner(app, n) {
    const key = nkey(app, n);
    if (banners.has(key)) return;
    const wrap = h("div", { class: `banner-wrap entering level-${n.interruptionLevel || "active"}`, "data-key": key });
    wrap.addEventListener("animationend", () => wrap.classList.remove("entering"), { once: true });
    const banner = { app, n, key, wrap, timer: null, remaining: bannerDuration(n), started: 0 };
    // A banner stays while the pointer is over it or focus is in it.
    let hovered = false;
    let focused = false;
    const update = () => { if (!banners.has(key)) return; if (hovered || focused) pauseBanner(banner); else resumeBanner(banner); };
    wrap.addEventListener("mouseenter", () => { hovered = true; update(); });
    wrap.addEventListener("mouseleave", () => { hovered = false; update(); });
    wrap.addEventListener("focusin", () => { focused = true; update(); });
    wrap.addEventListener("focusout", (event) => { focused = wrap.contains(event.relatedTarget); update(); });
    banners.set(key, banner);
    $("banners").prepend(wrap);
    resumeBanner(banner);
    const keys = [...banners.keys()];
    for (const old of keys.slice(0, Math.max(0, keys.length - BANNER_LIMIT))) hideBanner(old);
    renderBanners();
  }

  function pauseBanner(banner) {
    if (!banner.timer) return;
    clearTimeout(banner.timer);
    banner.timer = null;
    banner.remaining -= Date.now() - banner.started;
  }

  function resumeBanner(banner) {
    if (banner.timer || !Number.isFinite(banner.remaining)) return;
    banner.started = Date.now();
    banner.timer = setTimeout(() => hideBanner(banner.key), Math.max(1500, banner.remaining));
  }

  function hideBanner(key, instant) {
    const banner = banners.get(key);
    if (!banner) return;
    banners.delete(key);
    clearTimeout(banner.timer);
    const hadFocus = banner.wrap.contains(document.activeElement);
    if (state.reply && state.reply.key === key && state.reply.ctx === "banner") state.reply = null;
    if (instant) banner.wrap.remove();
    else {
      banner.wrap.classList.add("leaving");
      setTimeout(() => banner.wrap.remove(), 260);
    }
    if (hadFocus) {
      const target = document.querySelector(`[data-fk="${CSS.escape(`l|${key}|body`)}"]`) || $("center-title");
      target.focus({ preventScroll: true });
    }
  }

  function renderBanners() {
    for (const [key, banner] of [...banners]) {
      const n = (state.delivered.get(banner.app) || []).find((x) => nkey(banner.app, x) === key);
      if (!n) { hideBanner(key); continue; }
      banner.n = n;
      reconcile(banner.wrap, [noteCard(banner.app, n, "banner", { placeholderCount: 1 })]);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Sound: a short synthesized chime; the AudioContext starts only after a user gesture.

  const sound = { on: readSetting("chime.sound") !== "off", context: null, blocked: false, requested: 0 };

  function readSetting(name) {
    try { return localStorage.getItem(name); } catch (e) { return null; }
  }

  function writeSetting(name, value) {
    try { localStorage.setItem(name, value); } catch (e) { /* private mode */ }
  }

  function unlockAudio() {
    if (!sound.on) return;
    const Context = window.AudioContext || window.webkitAudioContext;
    if (!Context) return;
    try {
      if (!sound.context) sound.context = new Context();
      if (sound.context.state === "suspended") sound.context.resume().then(() => { if (sound.blocked) { sound.blocked = false; renderHeader(); } });
      else if (sound.blocked) { sound.blocked = false; renderHeader(); }
    } catch (e) { /* no audio device */ }
  }

  function playChime(level) {
    if (!sound.on) return;
    sound.requested++;
    document.body.dataset.chimes = String(sound.requested);
    document.body.dataset.lastChime = level || "active";
    const context = sound.context;
    if (!context || context.state !== "running") {
      if (!sound.blocked) {
        sound.blocked = true;
        renderHeader();
        toast("A notification wanted to play a sound: click anywhere on the page once to allow sounds.", "info");
      }
      return;
    }
    const notes = level === "critical"
      ? [[1568, 0], [1175, 0.16], [1568, 0.32], [1175, 0.48], [1568, 0.64]]
      : level === "timeSensitive" ? [[988, 0], [1319, 0.1], [1760, 0.2]] : [[1319, 0], [1760, 0.13]];
    const start = context.currentTime + 0.02;
    const master = context.createGain();
    master.gain.value = level === "critical" ? 0.42 : 0.26;
    master.connect(context.destination);
    for (const [frequency, at] of notes) tone(context, master, frequency, start + at, level === "critical" ? 0.3 : 0.9);
  }

  function tone(context, output, frequency, start, length) {
    for (const [multiple, level, type] of [[1, 1, "sine"], [2.76, 0.12, "sine"], [5.4, 0.04, "sine"]]) {
      const oscillator = context.createOscillator();
      const gain = context.createGain();
      oscillator.type = type;
      oscillator.frequency.value = frequency * multiple;
      gain.gain.setValueAtTime(0.0001, start);
      gain.gain.exponentialRampToValueAtTime(level, start + 0.006);
      gain.gain.exponentialRampToValueAtTime(0.0001, start + length / multiple);
      oscillator.connect(gain);
      gain.connect(output);
      oscillator.start(start);
      oscillator.stop(start + length + 0.05);
    }
  }

  function toggleSound() {
    sound.on = !sound.on;
    writeSetting("chime.sound", sound.on ? "on" : "off");
    if (sound.on) {
      unlockAudio();
      sound.blocked = false;
      setTimeout(() => { if (sound.context && sound.context.state === "running") previewChime(); }, 30);
    }
    renderHeader();
  }

  function previewChime() {
    const before = sound.requested;
    playChime("active");
    sound.requested = before;
    document.body.dataset.chimes = String(before);
  }

  // ---------------------------------------------------------------------------------------------
  // Apps panel

  const SWITCHES = [
    ["alertSetting", "Banners"],
    ["soundSetting", "Sounds"],
    ["badgeSetting", "Badges"],
    ["notificationCenterSetting", "Notification Center"],
    ["lockScreenSetting", "Lock Screen"],
    ["timeSensitiveSetting", "Time Sensitive", "timeSensitive"],
    ["criticalAlertSetting", "Critical Alerts", "criticalAlert"],
  ];

  const STATUS_WORDS = {
    authorized: ["Allowed", "ok"], provisional: ["Delivered quietly", "quiet"], ephemeral: ["Allowed for now", "ok"],
    denied: ["Off", "off"], notDetermined: ["Not asked yet", "idle"],
  };

  function renderApps() {
    const records = [...state.apps.values()].sort((a, b) =>
      (b.promptPending - a.promptPending) || appName(a.bundleIdentifier).localeCompare(appName(b.bundleIdentifier)));
    const cards = records.map((record) => {
      record = { ...record, open: appOpen(record, records.length) };
      const app = record.bundleIdentifier;
      const signature = JSON.stringify([record, state.pending.get(app), appOpen(record, records.length), state.allPending.has(app),
        [...state.appBusy].filter((x) => x.startsWith(`${app}|`)), hiddenCount(app), (state.delivered.get(app) || []).length]);
      return cached("app", signature, () => appCard(record));
    });
    if (cards.length === 0) {
      cards.push(cached("apps-empty", state.loaded ? "1" : "0", () => h("div", { class: "empty small" },
        h("p", { class: "empty-title", text: state.loaded ? "No apps yet" : "Loading…" }),
        state.loaded ? h("p", { class: "empty-text" }, "Register one with ", h("code", { text: "chime apps add com.example.alarm" }), ".") : null)));
    }
    reconcile($("apps-list"), cards);
    const prompts = records.filter((r) => r.promptPending).length;
    $("apps-count").textContent = records.length ? String(records.length) : "";
    const tab = $("tab-apps");
    tab.replaceChildren(...["Apps", prompts ? h("span", { class: "tab-dot", "aria-label": `${prompts} waiting for an answer`, text: String(prompts) }) : null].filter(Boolean));
  }

  function appOpen(record, count) {
    const chosen = state.openApps.get(record.bundleIdentifier);
    if (chosen !== undefined) return chosen;
    return record.promptPending || count <= 2;
  }

  function hiddenCount(app) {
    return (state.delivered.get(app) || []).filter((n) => n.presentation && !n.presentation.includes("list")).length;
  }

  function appCard(record) {
    const app = record.bundleIdentifier;
    const settings = record.settings || {};
    const status = settings.authorizationStatus || "notDetermined";
    const [statusText, statusClass] = record.promptPending ? ["Asking", "ask"] : (STATUS_WORDS[status] || [status, "idle"]);
    const details = h("details", { class: "app-card", "data-app": app, open: record.open ? true : null });
    details.addEventListener("toggle", () => {
      if (details.open !== record.open) state.openApps.set(app, details.open);
    });
    const summary = h("summary", { class: "app-summary", "data-fk": `app|${app}|summary` },
      appIcon(app, "medium", record.badge),
      h("span", { class: "app-names" },
        h("span", { class: "app-name", text: appName(app) }),
        h("span", { class: "app-bundle", text: app }),
        appMeta(app)),
      h("span", { class: `status-chip ${statusClass}`, text: statusText }),
      icon("chevron", "disclosure"));
    const parts = [summary];
    const body = h("div", { class: "app-body" });
    if (record.promptPending) body.append(promptBox(record));
    if (record.badge > 0) {
      body.append(h("p", { class: "app-line" }, "Icon badge", h("span", { class: "badge-pill", text: String(record.badge) })));
    }
    if (Array.isArray(record.launch) && record.launch.length > 0) {
      body.append(h("p", { class: "app-line launch-line" }, "Answers while it is not running start",
        h("code", { class: "launch-command", text: shellWords(record.launch) })));
    }
    body.append(pendingBlock(app));
    if (["authorized", "provisional", "ephemeral"].includes(status)) body.append(settingsBlock(record));
    else if (status === "denied") {
      body.append(h("p", { class: "app-note", text: "Notifications are off: the user said Don't Allow. The app cannot ask again; remove it to start over." }));
    } else if (!record.promptPending) {
      body.append(h("p", { class: "app-note", text: "This app has not asked to send notifications yet." }));
    }
    const hidden = hiddenCount(app);
    if (hidden > 0) {
      body.append(h("p", { class: "app-note", text: `${hidden} delivered notification${hidden === 1 ? " is" : "s are"} hidden from the list while Notification Center is off.` }));
    }
    body.append(h("div", { class: "app-footer" },
      h("button", {
        class: "text-button danger", type: "button", "data-fk": `app|${app}|remove`, "aria-disabled": state.appBusy.has(`${app}|remove`) ? "true" : null,
        onclick: () => removeApp(app),
      }, icon("trash"), "Remove app")));
    parts.push(body);
    append(details, parts);
    return details;
  }

  function appMeta(app) {
    const scheduled = (state.pending.get(app) || []).length;
    const delivered = (state.delivered.get(app) || []).length;
    const parts = [];
    if (delivered) parts.push(`${delivered} in the center`);
    if (scheduled) parts.push(`${scheduled} scheduled`);
    return parts.length ? h("span", { class: "app-meta", text: parts.join(" · ") }) : null;
  }

  function promptBox(record) {
    const app = record.bundleIdentifier;
    const busy = state.appBusy.has(`${app}|answer`);
    return h("div", { class: "prompt", role: "group", "aria-label": `${appName(app)} asks for permission` },
      h("p", { class: "prompt-title", text: `“${appName(app)}” would like to send you notifications` }),
      h("p", { class: "prompt-text", text: `Notifications may include ${F.requestedWords(record.requestedOptions)}. You can change this later in its settings.` }),
      h("div", { class: "prompt-buttons" },
        h("button", {
          class: "button", type: "button", "data-fk": `app|${app}|deny`, "data-answer": "deny", "aria-disabled": busy ? "true" : null,
          onclick: () => answerPrompt(app, false),
        }, "Don't Allow"),
        h("button", {
          class: "button primary", type: "button", "data-fk": `app|${app}|allow`, "data-answer": "allow", "aria-disabled": busy ? "true" : null,
          onclick: () => answerPrompt(app, true),
        }, "Allow")));
  }

  function settingsBlock(record) {
    const app = record.bundleIdentifier;
    const settings = record.settings || {};
    const rows = [];
    const requested = record.requestedOptions || [];
    for (const [field, label, option] of SWITCHES) {
      const value = settings[field];
      if (!value || value === "notSupported") continue;
      // Like iOS: the time-sensitive and critical switches exist for apps that asked for them.
      if (option && value !== "enabled" && !requested.includes(option)) continue;
      const on = value === "enabled";
      rows.push(h("div", { class: "setting" },
        h("span", { class: "setting-label", text: label }),
        h("button", {
          class: "switch", type: "button", role: "switch", "aria-checked": on ? "true" : "false", "aria-label": `${label} for ${appName(app)}`,
          "data-setting": field, "data-fk": `app|${app}|${field}`, "aria-disabled": state.appBusy.has(`${app}|${field}`) ? "true" : null,
          onclick: () => changeSetting(app, field, on ? "disabled" : "enabled"),
        }, h("span", { class: "switch-knob" }))));
    }
    const select = h("select", {
      class: "select", "data-setting": "showPreviewsSetting", "data-fk": `app|${app}|showPreviewsSetting`,
      "aria-label": `Show previews for ${appName(app)}`,
    },
    [["always", "Always"], ["whenAuthenticated", "When unlocked"], ["never", "Never"]].map(([value, text]) =>
      h("option", { value, selected: settings.showPreviewsSetting === value ? true : null, text })));
    select.addEventListener("change", () => changeSetting(app, "showPreviewsSetting", select.value));
    rows.push(h("div", { class: "setting" }, h("span", { class: "setting-label", text: "Show Previews" }), select));
    return h("div", { class: "settings", role: "group", "aria-label": `Settings of ${appName(app)}` },
      h("h3", { class: "block-title", text: "Settings" }), rows);
  }

  function pendingBlock(app) {
    const list = [...(state.pending.get(app) || [])].sort((a, b) => {
      const x = a.nextTriggerDate ? Date.parse(a.nextTriggerDate) : Infinity;
      const y = b.nextTriggerDate ? Date.parse(b.nextTriggerDate) : Infinity;
      return x - y;
    });
    const block = h("div", { class: "pending" },
      h("h3", { class: "block-title" }, "Scheduled", h("span", { class: "count", text: list.length ? String(list.length) : "" })));
    if (list.length === 0) {
      block.append(h("p", { class: "app-note", text: "Nothing scheduled." }));
      return block;
    }
    const shown = state.allPending.has(app) ? list : list.slice(0, 5);
    block.append(h("ul", { class: "pending-list" }, shown.map((request) => {
      const trigger = request.trigger;
      const kind = !trigger ? "push" : trigger.type === "location" ? "pin" : trigger.type === "calendar" ? "calendar" : trigger.repeats || trigger.type === "recurrence" ? "repeat" : "clock";
      const name = request.title || request.identifier;
      return h("li", { class: "pending-item", "data-identifier": request.identifier },
        h("span", { class: "pending-icon" }, icon(kind)),
        h("span", { class: "pending-main" },
          h("span", { class: "pending-name", text: name }),
          h("span", { class: "pending-trigger", text: F.triggerWords(trigger) }),
          request.nextTriggerDate
            ? h("span", { class: "pending-next" }, "Next: ", timeElement(request.nextTriggerDate), h("span", { class: "pending-exact", text: ` · ${shortExact(request.nextTriggerDate)}` }))
            : h("span", { class: "pending-next", text: trigger && trigger.type === "location" ? "Waits for your location" : "Delivering now" })),
        h("button", {
          class: "icon-button small", type: "button", "aria-label": `Cancel the scheduled notification “${name}”`, title: "Cancel",
          "data-fk": `pending|${app}|${request.identifier}`, onclick: () => cancelPending(app, request),
        }, icon("x")));
    })));
    if (list.length > 5) {
      const all = state.allPending.has(app);
      block.append(h("button", {
        class: "text-button", type: "button", "data-fk": `pending-all|${app}`, "aria-expanded": all ? "true" : "false",
        onclick: () => { if (all) state.allPending.delete(app); else state.allPending.add(app); render(); },
      }, all ? "Show fewer" : `Show all ${list.length}`));
    }
    return block;
  }

  const shortExactFormat = new Intl.DateTimeFormat(undefined, { weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit", hour12: false });
  function shortExact(date) {
    const d = new Date(date);
    return Number.isFinite(d.getTime()) ? shortExactFormat.format(d) : "";
  }

  async function appChange(app, what, work) {
    const id = `${app}|${what}`;
    if (state.appBusy.has(id)) return;
    state.appBusy.add(id);
    render();
    try {
      await work();
    } catch (e) {
      toast(`${appName(app)}: ${e.message}`, "error");
    } finally {
      state.appBusy.delete(id);
      render();
    }
  }

  function answerPrompt(app, allow) {
    return appChange(app, "answer", async () => {
      await api("POST", `${appPath(app)}/authorization/answer`, { allow });
      toast(allow ? `${appName(app)} may now send notifications` : `${appName(app)} will not send notifications`, "ok");
      setApps(await apiList("/v1/apps"));
      await refreshApp(app, { categories: true, notifications: true, pending: true });
    });
  }

  function changeSetting(app, field, value) {
    return appChange(app, field, async () => {
      const settings = await api("PATCH", `${appPath(app)}/settings`, { [field]: value });
      const record = state.apps.get(app);
      if (record && settings) record.settings = settings;
      await refreshApp(app, { notifications: true });
    });
  }

  async function cancelPending(app, request) {
    await appChange(app, `pending:${request.identifier}`, async () => {
      await api("DELETE", `${appPath(app)}/requests?identifier=${enc(request.identifier)}`);
      state.pending.set(app, (state.pending.get(app) || []).filter((r) => r.identifier !== request.identifier));
      toast(`Cancelled “${request.title || request.identifier}”`, "ok");
    });
  }

  async function removeApp(app) {
    const ok = await confirmDialog({
      title: `Remove ${appName(app)}?`,
      message: `${app} loses its token, its categories, its scheduled and delivered notifications and its answers. It can register again later.`,
      ok: "Remove", destructive: true,
    });
    if (!ok) return;
    await appChange(app, "remove", async () => {
      await api("DELETE", appPath(app));
      state.apps.delete(app);
      state.delivered.delete(app);
      state.pending.delete(app);
      state.categories.delete(app);
      toast(`Removed ${appName(app)}`, "ok");
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Dialog, toasts, keyboard

  function confirmDialog({ title, message, ok, destructive }) {
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

  function toast(text, kind) {
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

  function pruneState() {
    const live = new Set();
    for (const [app, list] of state.delivered) for (const n of list) live.add(nkey(app, n));
    for (const key of [...state.errors.keys()]) if (!live.has(key)) state.errors.delete(key);
    for (const key of [...state.fresh.keys()]) if (!live.has(key) || Date.now() - state.fresh.get(key) > 5000) state.fresh.delete(key);
    for (const key of [...state.revealed]) if (!live.has(key)) state.revealed.delete(key);
    if (state.reply && !live.has(state.reply.key)) state.reply = null;
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

  // For the browser tests and the curious: read-only views of what the page holds.
  // ---------------------------------------------------------------------------------------------
  // This device: the service worker, Web Push and installing the center

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
  async function refreshDevice() {
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

  window.ChimeCenter = Object.freeze({
    get connection() { return state.connection; },
    get chimes() { return sound.requested; },
    get bannerCount() { return banners.size; },
  });

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
  else boot();
})();
