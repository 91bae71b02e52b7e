// Chime web center: the notification list, banners, and answering (actions, replies, dismissals).
import * as F from "./format.js";
import { api, appPath } from "./api.js";
import { $, append, appIcon, byFocusKey, cached, confirmDialog, h, icon, reconcile, timeElement, toast } from "./dom.js";
import { escalationMark, escalationSignature } from "./escalation.js";
import { focusChip, focusSignature } from "./focus.js";
import { enqueue } from "./lists.js";
import { playChime } from "./sound.js";
import { appName, DEFAULT_ACTION, DISMISS_ACTION, enc, gkey, hooks, nkey, state } from "./state.js";

const BANNER_LIMIT = 3;
const BANNER_MAX_AGE_MS = 120000;

/** Opens the reply field the sign-in link asked for, once the lists are loaded. */
export function openRequestedReply() {
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

const LEVEL_RANK = { passive: 0, active: 1, timeSensitive: 2, critical: 3 };

/** Banners and a sound for what just arrived, as its presentation allows; `again`: an escalating
 *  notification alerted again (its banner comes back, however long ago it was delivered). */
export function announce(arrivals) {
  let loudest = null;
  for (const { app, n, again } of arrivals) {
    const presentation = n.presentation || ["banner", "list", "sound"];
    const recent = again || !(Date.now() - Date.parse(n.date) > BANNER_MAX_AGE_MS);
    if (!recent) continue;
    if (again && (state.busy.has(nkey(app, n)) || state.sent.has(nkey(app, n)))) continue;
    if (again) hideBanner(nkey(app, n), true);
    if (presentation.includes("banner")) showBanner(app, n);
    if (presentation.includes("sound")) {
      const level = n.interruptionLevel || "active";
      if (loudest === null || LEVEL_RANK[level] > LEVEL_RANK[loudest]) loudest = level;
    }
  }
  if (loudest !== null) playChime(loudest);
}

function visibleNotifications(app) {
  return (state.delivered.get(app) || []).filter((n) => {
    const key = nkey(app, n);
    return !n.presentation || n.presentation.includes("list") || state.sent.has(key) || state.busy.has(key);
  });
}

export function renderList() {
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
        onclick: () => { state.expanded.delete(key); state.focusHint = `more|${key}`; hooks.render(); },
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
        onclick: () => { state.expanded.add(key); state.focusHint = `less|${key}`; hooks.render(); },
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
    state.busy.get(key), state.sent.get(key), state.errors.get(key), reply, extra && extra.placeholderCount,
    ctx === "list" ? escalationSignature(app, n) : null, focusSignature(app, n)]);
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
  const focused = focusChip(app, n);
  const classes = ["note", `level-${level}`];
  if (ctx === "banner") classes.push("in-banner");
  else if (!chip && !focused) classes.push("compact");
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
    focused,
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
      onclick: () => { state.revealed.add(key); state.focusHint = `${prefix}body`; hooks.render(); },
    }, icon("eye"), "Show preview"));
  }

  if (ctx === "list") parts.push(escalationMark(app, n, prefix));

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

export function closeReply(returnFocus) {
  if (!state.reply) return;
  const { key, action, ctx } = state.reply;
  state.reply = null;
  if (returnFocus) state.focusHint = `${ctx === "banner" ? "b" : "l"}|${key}|a|${action}`;
  hooks.render();
}

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
    hooks.render();
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
  hooks.render();
  const body = { actionIdentifier, surface: "web" };
  if (userText !== null && userText !== undefined) body.userText = userText;
  try {
    await api("POST", `${appPath(app)}/notifications/${enc(n.identifier)}/responses`, body);
  } catch (e) {
    state.busy.delete(key);
    state.errors.set(key, `Could not send “${label}”: ${e.message}`);
    hooks.render();
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
  hooks.render();
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
  hooks.render();
}

/** Clears notifications: each is dismissed, as the close button does. The service decides who
 *  hears of it (only an app whose category has customDismissAction) and removes it either way. */
async function clearNotifications(app, items) {
  items = items.filter((n) => !state.busy.has(nkey(app, n)) && !state.sent.has(nkey(app, n)));
  if (items.length === 0) return;
  const keys = items.map((n) => nkey(app, n));
  for (const key of keys) state.busy.set(key, "Clear");
  hooks.render();
  const failures = [];
  const results = await Promise.allSettled(items.map((n) =>
    api("POST", `${appPath(app)}/notifications/${enc(n.identifier)}/responses`, { actionIdentifier: DISMISS_ACTION, surface: "web" })));
  for (const result of results) if (result.status === "rejected") failures.push(result.reason.message);
  for (const key of keys) state.busy.delete(key);
  if (failures.length > 0) {
    toast(`Could not clear everything: ${failures[0]}`, "error");
    enqueue(app, { notifications: true });
    hooks.render();
    return;
  }
  removeLocally(app, keys);
  enqueue(app, { notifications: true });
}

export async function clearAll() {
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

export const banners = new Map(); // key → {app, n, wrap, timer, deadline, remaining, paused}

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

export function hideBanner(key, instant) {
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

export function renderBanners() {
  for (const [key, banner] of [...banners]) {
    const n = (state.delivered.get(banner.app) || []).find((x) => nkey(banner.app, x) === key);
    if (!n) { hideBanner(key); continue; }
    banner.n = n;
    reconcile(banner.wrap, [noteCard(banner.app, n, "banner", { placeholderCount: 1 })]);
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
