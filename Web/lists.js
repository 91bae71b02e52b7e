// Chime web center: the lists the page holds (apps, categories, delivered, pending) — read from the
// service, and changed by the events the stream brings.
import { apiList, appPath } from "./api.js";
import { toast } from "./dom.js";
import { hooks, nkey, state } from "./state.js";

/** Delivered events taken so far (orders them against list reads in flight). */
let deliveredEvents = 0;

/** Puts a delivery from the event stream into the state; returns whether the pending list needs a read. */
export function applyDelivery(app, data) {
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

// Refreshes asked for by events are merged and run together, one batch at a time.
let queue = { apps: false, perApp: new Map(), announce: [] };
let queueTimer = null;
let flushing = Promise.resolve();

export function enqueue(app, what, announce) {
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
  hooks.render();
  hooks.announce(arrivals);
}

export function setApps(list) {
  state.apps = new Map(list.map((record) => [record.bundleIdentifier, record]));
  for (const map of [state.categories, state.delivered, state.pending]) {
    for (const app of [...map.keys()]) if (!state.apps.has(app)) map.delete(app);
  }
}

export async function refreshAll() {
  const list = await apiList("/v1/apps");
  setApps(list);
  await Promise.all(list.map((record) => refreshApp(record.bundleIdentifier, { categories: true, notifications: true, pending: true })));
  hooks.render();
}

export async function refreshApp(app, what) {
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
