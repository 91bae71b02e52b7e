// Chime web center: the API layer. Every request goes with the session cookie (same origin) and,
// for a change, the session's CSRF token; lists are read a page at a time; a 401 ends the session.
import { enc, hooks, state } from "./state.js";

/** The most items of one list the page reads (in pages of up to 500). */
const LIST_MOST = 2000;

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
export async function apiList(path, most = LIST_MOST) {
  const items = [];
  let next = `${path}${path.includes("?") ? "&" : "?"}limit=${Math.min(most, 500)}`;
  while (next && items.length < most) {
    const page = await api("GET", next, undefined, true);
    items.push(...(page.data || []));
    next = nextLink(page.link);
  }
  return items.slice(0, most);
}

export async function api(method, path, body, withLink = false) {
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
      hooks.sessionEnded("Your session has ended. Run chime open to sign in again.");
    }
    throw failure;
  }
  return withLink ? { data, link: response.headers.get("link") } : data;
}

export const appPath = (app) => `/v1/apps/${enc(app)}`;
