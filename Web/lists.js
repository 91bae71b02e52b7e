// Chime web center: the lists the page holds (apps, categories, delivered, pending) — read from the
// service, and changed in place by the events the stream brings: a delivery (a repeating request's
// with its next date), a removal, new settings, scheduled requests and an app's changed or removed
// record carry all the page needs, so they cost no request.
import { api, apiList, appPath } from "./api.js";
import { toast } from "./dom.js";
import { refreshFocus } from "./focus.js";
import { hooks, nkey, state } from "./state.js";

/** Deliveries and removals taken from the stream so far: orders them against list reads in flight. */
let listEvents = 0;
/** "app\u0001identifier" → the removal (its listEvents count) that took it from the delivered or the
 *  pending list, until a read sent after it covers it (a read sent before may still hold it). */
const removedDelivered = new Map();
const removedPending = new Map();
/** Notification key → the delivery (its listEvents count) that put it in the delivered list, until a
 *  read sent after it covers it. */
const arrived = new Map();
/** "app\u0001identifier" → the scheduled event (its listEvents count) that put the request in the
 *  pending list, until a read sent after it covers it. */
const scheduledPending = new Map();
/** app → the settings event (its listEvents count) last applied to its record. */
const settingsApplied = new Map();
/** app → the categories event (its listEvents count) last applied to its lists. */
const categoriesApplied = new Map();

/** Puts a delivery from the event stream into the state; returns whether the pending list needs a read
 *  (only a repeating request's whose event names no next date, or one the page does not list). */
export function applyDelivery(app, data) {
  // The event carries each field once: the item the list keeps takes its category's actions and
  // the event's presentation (what GET .../notifications gives each item).
  const item = data.notification;
  if (data.category && Array.isArray(data.category.actions)) item.actions = data.category.actions;
  if (Array.isArray(data.presentation)) item.presentation = data.presentation;
  arrived.set(nkey(app, item), ++listEvents);
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
  const pending = state.pending.get(app);
  if (trigger.repeats || trigger.type === "recurrence") return !movePending(app, item.identifier, data.nextTriggerDate);
  if (pending) state.pending.set(app, pending.filter((request) => request.identifier !== item.identifier));
  return false;
}

/**
 * Moves a repeating request the page lists to the next date its delivered event names (it stays
 * pending), as a scheduled event would; returns false when the event names none (its repeats ended,
 * or an earlier service's event) or the page does not list it: then the pending list is read.
 */
function movePending(app, identifier, next) {
  const pending = state.pending.get(app);
  if (typeof next !== "string" || !pending) return false;
  const index = pending.findIndex((request) => request.identifier === identifier);
  if (index < 0) return false;
  // A list read sent before this event is older than it (mergePending keeps this one).
  scheduledPending.set(`${app}\u0001${identifier}`, ++listEvents);
  state.pending.set(app, pending.map((request, at) => (at === index ? { ...request, nextTriggerDate: next } : request)));
  return true;
}

/** Takes what a `removed` event names out of the delivered or the pending list (it names every one). */
export function applyRemoval(app, data) {
  const identifiers = new Set(Array.isArray(data.identifiers) ? data.identifiers : []);
  const count = ++listEvents;
  const pending = data.scope === "pending";
  for (const identifier of identifiers) (pending ? removedPending : removedDelivered).set(`${app}\u0001${identifier}`, count);
  if (pending) {
    const list = state.pending.get(app);
    if (list) state.pending.set(app, list.filter((request) => !identifiers.has(request.identifier)));
    return;
  }
  const list = state.delivered.get(app);
  // One being answered here stays a moment to show it was sent (answering takes it out then).
  if (list) {
    state.delivered.set(app, list.filter((n) => !identifiers.has(n.identifier) || state.sent.has(nkey(app, n)) || state.busy.has(nkey(app, n))));
  }
}

/**
 * Puts a `scheduled` event's requests in the app's pending list, each in place of the one of its
 * identifier: the event carries them as GET .../requests lists them (with their next dates). It
 * carries none for an add too large to carry (more than 100 requests, or large ones) or another
 * node's commit: then, and only then, the list is read. An app the page does not know is left to
 * its `app` event, which reads its lists.
 */
export function applyScheduled(app, data) {
  if (!Array.isArray(data.requests)) return { pending: true };
  if (!state.apps.has(app)) return {};
  const count = ++listEvents;
  const added = new Map();
  for (const request of data.requests) {
    if (!request || typeof request.identifier !== "string") continue;
    added.set(request.identifier, request);
    scheduledPending.set(`${app}\u0001${request.identifier}`, count);
  }
  const kept = (state.pending.get(app) || []).filter((request) => !added.has(request.identifier));
  state.pending.set(app, kept.concat([...added.values()]));
  return {};
}

/**
 * Puts a `settings` event's settings in the app's record. The event says whether the app's delivered
 * notifications are listed under them (`listed`, the `list` of their presentation: the service
 * decides it, the page does not repeat the rule), so the delivered list is changed where it is;
 * whether a prompt waits and what the app asked for come with the `app` event the same change
 * brings. Only an app the page did not know yet is read.
 */
export function applySettings(app, data) {
  const record = state.apps.get(app);
  if (!record) return { record: true, categories: true, notifications: true, pending: true };
  record.settings = data.settings;
  settingsApplied.set(app, ++listEvents);
  if (typeof data.listed === "boolean") {
    const list = state.delivered.get(app);
    if (list) state.delivered.set(app, list.map((n) => withListed(n, data.listed)));
  }
  return {};
}

/** The notification with `list` in its presentation or not. */
function withListed(n, listed) {
  if (!Array.isArray(n.presentation) || n.presentation.includes("list") === listed) return n;
  return { ...n, presentation: listed ? [...n.presentation, "list"] : n.presentation.filter((option) => option !== "list") };
}

/**
 * A `categories` event carries all the app's categories: they replace the page's, and each delivered
 * notification's buttons become its category's, as the service lists them (a notification whose
 * category is gone has none).
 */
export function applyCategories(app, categories) {
  categoriesApplied.set(app, ++listEvents);
  state.categories.set(app, new Map(categories.filter((c) => c && typeof c.identifier === "string").map((c) => [c.identifier, c])));
  const list = state.delivered.get(app);
  if (list) state.delivered.set(app, withCategoryActions(app, list));
}

/** The notifications with the actions of their categories as the page now holds them. */
function withCategoryActions(app, list) {
  const categories = state.categories.get(app) || new Map();
  return list.map((n) => {
    if (!n.categoryIdentifier) return n;
    const category = categories.get(n.categoryIdentifier);
    const item = { ...n, actions: category ? category.actions || [] : [] };
    if (!category) delete item.actions;
    return item;
  });
}

/** Applies an `app` event: a removed app leaves the lists; a changed one's record is the event's
 *  (`record`, as GET /v1/apps/{app} answers), with the app's lists read when the page did not know
 *  it yet. An event without a record (a service before it carried one) has the record read. */
export function applyAppChange(app, data) {
  if (data.change === "removed") {
    forgetApp(app);
    return {};
  }
  const record = data.record;
  const known = state.apps.has(app);
  if (!record || typeof record !== "object" || record.bundleIdentifier !== app) {
    return known ? { record: true } : { record: true, categories: true, notifications: true, pending: true };
  }
  appliedRecord(app, record);
  return known ? {} : { categories: true, notifications: true, pending: true };
}

/** Puts an app's record in the state, keeping settings an event brought after `since` (newer than it). */
function appliedRecord(app, record, since) {
  const known = state.apps.get(app);
  if (known && since !== undefined && settingsApplied.get(app) > since) record.settings = known.settings;
  state.apps.set(app, record);
}

/** Takes an app out of every list (removed here, by an event, or found gone). */
export function forgetApp(app) {
  state.apps.delete(app);
  state.delivered.delete(app);
  state.pending.delete(app);
  state.categories.delete(app);
}

// Refreshes asked for by events are merged and run together, one batch at a time.
let queue = { perApp: new Map(), announce: [] };
let queueTimer = null;
let flushing = Promise.resolve();

/** Asks for reads of an app's lists (`record`, `categories`, `notifications`, `pending`; none just
 *  draws), merged with others into one batch; `announce` is a delivery to banner once read (`again`:
 *  an escalating one alerted again, bannered though it was before). */
export function enqueue(app, what, announce, again) {
  const entry = queue.perApp.get(app) || {};
  for (const [name, wanted] of Object.entries(what)) if (wanted) entry[name] = true;
  queue.perApp.set(app, entry);
  if (announce) queue.announce.push({ app, identifier: announce.identifier, date: announce.date, again: !!again });
  if (!queueTimer) queueTimer = setTimeout(() => { queueTimer = null; flushing = flushing.then(flush, flush); }, 15);
}

async function flush() {
  const batch = queue;
  queue = { perApp: new Map(), announce: [] };
  if (state.screen !== "center") return;
  try {
    await Promise.all([...batch.perApp].filter(([app, what]) => what.record || state.apps.has(app)).map(([app, what]) => refreshApp(app, what)));
  } catch (e) {
    if (state.screen === "center" && e.status !== 401) toast(`Could not update: ${e.message}`, "error");
  }
  const arrivals = [];
  for (const item of batch.announce) {
    const n = (state.delivered.get(item.app) || []).find((x) => x.identifier === item.identifier && x.date === item.date);
    if (!n) continue;
    const key = nkey(item.app, n);
    if (item.again) {
      arrivals.push({ app: item.app, n, again: true });
      continue;
    }
    if (state.announced.has(key)) continue;
    state.announced.add(key);
    state.fresh.set(key, Date.now());
    arrivals.push({ app: item.app, n });
  }
  hooks.render();
  hooks.announce(arrivals);
}

function setApps(list) {
  state.apps = new Map(list.map((record) => [record.bundleIdentifier, record]));
  for (const map of [state.categories, state.delivered, state.pending]) {
    for (const app of [...map.keys()]) if (!state.apps.has(app)) map.delete(app);
  }
}

/**
 * Reads every list again, and the focus modes. `delivered: false` after the stream resumed with Last-Event-ID: its replay
 * brought every delivery and removal, so only what the unlogged hints (scheduled, categories, app)
 * would have said is read, and the delivered list only of apps the page did not know.
 */
export async function refreshAll({ delivered = true } = {}) {
  // The focus modes too: their events are hints, never replayed.
  const modes = refreshFocus();
  const list = await apiList("/v1/apps");
  setApps(list);
  await Promise.all(list.map((record) => refreshApp(record.bundleIdentifier,
    { categories: true, notifications: delivered || !state.delivered.has(record.bundleIdentifier), pending: true })));
  await modes;
  hooks.render();
}

export async function refreshApp(app, what) {
  const base = appPath(app);
  const jobs = [];
  const since = listEvents;
  if (what.record) {
    jobs.push(api("GET", base).then((record) => {
      // Settings an event brought after the read was sent are newer than the answer's.
      if (record && record.bundleIdentifier === app) appliedRecord(app, record, since);
    }));
  }
  if (what.categories) {
    jobs.push(apiList(`${base}/categories`).then((list) => {
      // Categories an event brought after the read was sent are newer than the answer.
      if (!(categoriesApplied.get(app) > since)) state.categories.set(app, new Map(list.map((category) => [category.identifier, category])));
    }));
  }
  if (what.notifications) {
    jobs.push(apiList(`${base}/notifications`).then((list) => state.delivered.set(app, mergeDelivered(app, list, since))));
  }
  if (what.pending) jobs.push(apiList(`${base}/requests`).then((list) => state.pending.set(app, mergePending(app, list, since))));
  const results = await Promise.allSettled(jobs);
  for (const result of results) {
    if (result.status !== "rejected") continue;
    if (result.reason && result.reason.status === 404) {
      forgetApp(app);
      return;
    }
    throw result.reason;
  }
}

/** A list read (sent when `since` events had been taken) without what a later removal took; the
 *  removals it covers are forgotten. */
function withoutRemoved(removed, app, list, since) {
  const prefix = `${app}\u0001`;
  for (const [key, count] of removed) if (count <= since && key.startsWith(prefix)) removed.delete(key);
  return list.filter((item) => !(removed.get(prefix + item.identifier) > since));
}

/** The pending list read from the service (sent when `since` events had been taken), without what
 *  a later removal took, and with the requests a later scheduled event brought in place of its own
 *  (the answer is older than them). */
function mergePending(app, read, since) {
  const prefix = `${app}\u0001`;
  const list = withoutRemoved(removedPending, app, read, since);
  const newer = (state.pending.get(app) || []).filter((request) => scheduledPending.get(prefix + request.identifier) > since);
  for (const [key, count] of scheduledPending) if (count <= since && key.startsWith(prefix)) scheduledPending.delete(key);
  if (newer.length === 0) return list;
  const identifiers = new Set(newer.map((request) => request.identifier));
  return list.filter((request) => !identifiers.has(request.identifier)).concat(newer);
}

/**
 * The list read from the service, without what a removal took after the read was sent, plus what
 * it cannot know yet: notifications being answered, and those whose delivered event came after the
 * read was sent (the answer is older than them).
 */
function mergeDelivered(app, read, since) {
  let list = withoutRemoved(removedDelivered, app, read, since);
  // Buttons from before a categories event that came after the read was sent are out of date.
  if (categoriesApplied.get(app) > since) list = withCategoryActions(app, list);
  const keys = new Set(list.map((n) => nkey(app, n)));
  const kept = (state.delivered.get(app) || []).filter((n) => {
    const key = nkey(app, n);
    if (keys.has(key)) return false;
    const came = arrived.get(key);
    if (came !== undefined && came <= since) arrived.delete(key);
    return state.sent.has(key) || state.busy.has(key) || (came !== undefined && came > since);
  });
  for (const key of keys) if ((arrived.get(key) ?? Infinity) <= since) arrived.delete(key);
  if (kept.length === 0) return list;
  return list.concat(kept).sort((a, b) => Date.parse(b.date) - Date.parse(a.date));
}
