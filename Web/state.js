// Chime web center: what the page holds, shared by its modules (each imports what it uses; nothing
// is global), and the few calls back into the entry module (`hooks`), so no module imports one
// that imports it.
import { appDisplayName } from "./format.js";

export const DEFAULT_ACTION = "com.apple.UNNotificationDefaultActionIdentifier";
export const DISMISS_ACTION = "com.apple.UNNotificationDismissActionIdentifier";

export const state = {
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

export function nkey(app, n) { return `${app}\u0001${n.identifier}\u0001${n.date}`; }
export function gkey(app, thread) { return `${app}\u0001${thread}`; }
export function enc(text) { return encodeURIComponent(text); }
export function appName(app) { return appDisplayName(app); }

/**
 * Set once by center.js as the page starts: drawing the page and its header, showing what arrived
 * (`announce(arrivals)`), and a session that ended (`sessionEnded(message)`).
 */
export const hooks = {
  /** Draws the center from `state` (a no-op until signed in). */
  render() {},
  /** Draws the header alone (connection state, sound). */
  renderHeader() {},
  /** Shows banners and plays a sound for notifications that just arrived. */
  announce() {},
  /** The session is gone (a 401): back to the sign-in screen with this message. */
  sessionEnded() {},
};
