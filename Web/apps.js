// Chime web center: the apps panel (permission prompts, settings, scheduled requests, removal).
import * as F from "./format.js";
import { api, appPath } from "./api.js";
import { $, append, appIcon, cached, confirmDialog, h, icon, reconcile, timeElement, toast } from "./dom.js";
import { applySettings, forgetApp, refreshApp } from "./lists.js";
import { appName, enc, hooks, state } from "./state.js";

/** A command's words as one line a shell would split back into them (for reading, never run here). */
function shellWords(words) {
  return words.map((word) => (/^[A-Za-z0-9/._=:,@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`)).join(" ");
}

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

export function renderApps() {
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
      onclick: () => { if (all) state.allPending.delete(app); else state.allPending.add(app); hooks.render(); },
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
  hooks.render();
  try {
    await work();
  } catch (e) {
    toast(`${appName(app)}: ${e.message}`, "error");
  } finally {
    state.appBusy.delete(id);
    hooks.render();
  }
}

function answerPrompt(app, allow) {
  return appChange(app, "answer", async () => {
    const answer = await api("POST", `${appPath(app)}/authorization/answer`, { allow });
    toast(allow ? `${appName(app)} may now send notifications` : `${appName(app)} will not send notifications`, "ok");
    // The answer's settings, applied as their settings event is; the prompt goes with the app event.
    if (answer && answer.settings) await refreshApp(app, applySettings(app, answer));
  });
}

function changeSetting(app, field, value) {
  return appChange(app, field, async () => {
    const settings = await api("PATCH", `${appPath(app)}/settings`, { [field]: value });
    if (settings) await refreshApp(app, applySettings(app, { settings }));
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
    forgetApp(app);
    toast(`Removed ${appName(app)}`, "ok");
  });
}
