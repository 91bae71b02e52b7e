// Chime web center: pure text helpers (no DOM), an ES module the other modules import (the browser
// tests import it too).
const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
  "October", "November", "December"];

function pad2(n) { return String(n).padStart(2, "0"); }

function plural(n, word) { return `${n} ${word}${n === 1 ? "" : "s"}`; }

function ordinal(n) {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  return `${n}${{ 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th"}`;
}

/** 300 → "5 minutes", 5400 → "1 hour 30 minutes", 90061 → "1 day 1 hour 1 minute". */
function durationWords(seconds) {
  if (!(seconds > 0)) return "0 seconds";
  if (seconds < 60 && !Number.isInteger(seconds)) {
    const rounded = Math.round(seconds * 100) / 100;
    return `${rounded} second${rounded === 1 ? "" : "s"}`;
  }
  let rest = Math.round(seconds);
  const parts = [];
  for (const [size, word] of [[86400, "day"], [3600, "hour"], [60, "minute"], [1, "second"]]) {
    const count = Math.floor(rest / size);
    if (count > 0) parts.push(plural(count, word));
    rest -= count * size;
  }
  return parts.slice(0, 2).join(" ");
}

function has(value) { return value !== undefined && value !== null; }

/** "08:30", "08:30:15"; null when the components name no hour. */
function clockTime(dc) {
  if (!has(dc.hour)) return null;
  const seconds = has(dc.second) && dc.second !== 0 ? `:${pad2(dc.second)}` : "";
  return `${pad2(dc.hour)}:${pad2(dc.minute || 0)}${seconds}`;
}

/** A calendar trigger in words: "every Monday at 08:30, Europe/Berlin". */
function calendarWords(dc, repeats) {
  dc = dc || {};
  const weekday = has(dc.weekday) ? WEEKDAYS[((dc.weekday - 1) % 7 + 7) % 7] : null;
  const month = has(dc.month) && dc.month >= 1 && dc.month <= 12 ? MONTHS[dc.month - 1] : null;
  let time = clockTime(dc);
  let phrase;
  if (repeats && !has(dc.year)) {
    if (month && has(dc.day)) phrase = `every year on ${dc.day} ${month}`;
    else if (month) phrase = `every day in ${month}`;
    else if (has(dc.day)) phrase = `every month on the ${ordinal(dc.day)}`;
    else if (weekday && has(dc.weekdayOrdinal)) phrase = `every ${ordinal(dc.weekdayOrdinal)} ${weekday} of the month`;
    else if (weekday) phrase = `every ${weekday}`;
    else if (has(dc.hour)) phrase = "every day";
    else if (has(dc.minute)) {
      phrase = `every hour at :${pad2(dc.minute)}`;
      if (has(dc.second) && dc.second !== 0) phrase += `:${pad2(dc.second)}`;
    } else if (has(dc.second)) phrase = `every minute at ${dc.second} s`;
    else phrase = "repeatedly";
  } else {
    if (has(dc.year) && month && has(dc.day)) phrase = `on ${dc.day} ${month} ${dc.year}`;
    else if (month && has(dc.day)) phrase = `on ${dc.day} ${month}`;
    else if (has(dc.day)) phrase = `on the ${ordinal(dc.day)}`;
    else if (weekday) phrase = `next ${weekday}`;
    else if (time) phrase = "next";
    else if (has(dc.minute)) {
      phrase = `at the next :${pad2(dc.minute)}`;
    } else phrase = "once";
  }
  let words = time ? (phrase === "next" ? `next at ${time}` : `${phrase} at ${time}`) : phrase;
  if (dc.timeZone) words += `, ${dc.timeZone}`;
  return words;
}

/** A region trigger in words: "when you arrive at office", "when you leave office". */
function regionWords(region, repeats) {
  const place = (region && region.identifier) || "a place";
  const entry = !region || region.notifyOnEntry !== false;
  const exit = !!(region && region.notifyOnExit);
  const when = repeats ? "every time you" : "when you";
  if (entry && exit) return `${when} arrive at or leave ${place}`;
  if (exit) return `${when} leave ${place}`;
  if (entry) return `${when} arrive at ${place}`;
  return `at ${place} (neither arriving nor leaving is watched)`;
}

const RRULE_DAYS = { MO: "Monday", TU: "Tuesday", WE: "Wednesday", TH: "Thursday", FR: "Friday", SA: "Saturday", SU: "Sunday" };
const UNITS = { SECONDLY: "second", MINUTELY: "minute", HOURLY: "hour", DAILY: "day", WEEKLY: "week", MONTHLY: "month", YEARLY: "year" };

/** 1 → "first", -1 → "last", -2 → "second to last". */
function ordinalWord(n) {
  const words = ["", "first", "second", "third", "fourth", "fifth"];
  if (n === -1) return "last";
  if (n < 0) return `${Math.abs(n) <= 5 ? words[-n] : ordinal(-n)} to last`;
  return n <= 5 ? words[n] : ordinal(n);
}

/** ["a"] → "a", ["a", "b"] → "a and b", ["a", "b", "c"] → "a, b and c". */
function andList(items) {
  return items.length <= 1 ? (items[0] || "") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}

/** "every", "every other", "every 3" for an interval, with the unit. */
function everyUnit(interval, unit) {
  if (interval === 1) return `every ${unit}`;
  if (interval === 2) return `every other ${unit}`;
  return `every ${interval} ${unit}s`;
}

/** A recurrence trigger in words: "every last Friday, 09:00", "every other Tuesday and Thursday, 09:00, until 31 Dec 2027". */
function recurrenceWords(trigger) {
  const parts = {};
  for (const part of String(trigger.rrule || "").replace(/^RRULE:/i, "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0) parts[part.slice(0, at).toUpperCase()] = part.slice(at + 1).toUpperCase();
  }
  const unit = UNITS[parts.FREQ];
  if (!unit) return `by the rule ${trigger.rrule}`;
  const interval = Math.max(1, parseInt(parts.INTERVAL || "1", 10) || 1);
  const list = (name) => (parts[name] ? parts[name].split(",").filter((x) => x !== "") : []);
  const days = list("BYDAY").map((text) => {
    const match = /^([+-]?\d+)?([A-Z]{2})$/.exec(text);
    return match ? { ordinal: match[1] ? parseInt(match[1], 10) : null, day: match[2] } : null;
  }).filter((day) => day && RRULE_DAYS[day.day]);
  const plainDays = days.filter((d) => d.ordinal === null).map((d) => d.day);
  const workdays = plainDays.length === 5 && ["MO", "TU", "WE", "TH", "FR"].every((d) => plainDays.includes(d));
  const positions = list("BYSETPOS").map((x) => parseInt(x, 10));
  const monthDays = list("BYMONTHDAY").map((x) => parseInt(x, 10));
  const months = list("BYMONTH").map((x) => MONTHS[parseInt(x, 10) - 1]).filter(Boolean);
  const dayWords = workdays && days.length === 5 ? ["workday"] : days.map((d) => (d.ordinal === null ? "" : `${ordinalWord(d.ordinal)} `) + RRULE_DAYS[d.day]);
  const monthDayWords = monthDays.map((n) => (n === -1 ? "last day" : n < 0 ? `${ordinalWord(n)} day` : ordinal(n)));
  let phrase;
  if (positions.length && days.length && (unit === "month" || unit === "year" || unit === "week")) {
    const which = andList(positions.map(ordinalWord));
    phrase = `the ${which} ${andList(dayWords)} of ${everyUnit(interval, unit)}`;
  } else if (days.length && (unit === "week" || unit === "day" || (unit === "month" && interval === 1 && !monthDays.length))) {
    phrase = `${interval === 1 || unit !== "week" ? "every" : everyUnit(interval, "").trim()} ${andList(dayWords)}`;
    if (unit === "day" && interval > 1) phrase = `${everyUnit(interval, unit)}, on ${andList(dayWords)}`;
  } else if (days.length) {
    phrase = `${everyUnit(interval, unit)} on the ${andList(dayWords)}`;
  } else if (monthDays.length) {
    phrase = `${everyUnit(interval, unit)} on the ${andList(monthDayWords)}`;
  } else {
    phrase = everyUnit(interval, unit);
  }
  if (months.length) phrase += ` in ${andList(months)}`;
  const start = /T(\d{2}):(\d{2})(?::(\d{2}))?/.exec(trigger.start || "");
  const hours = list("BYHOUR"), minutes = list("BYMINUTE");
  if (["day", "week", "month", "year"].includes(unit)) {
    const hour = hours.length === 1 ? pad2(hours[0]) : start ? start[1] : null;
    const minute = minutes.length === 1 ? pad2(minutes[0]) : start ? start[2] : "00";
    if (hours.length > 1) phrase += `, at ${andList(hours.map((h) => `${pad2(h)}:${minute}`))}`;
    else if (hour !== null) phrase += `, ${hour}:${minute}`;
  }
  if (parts.COUNT) phrase += `, ${parts.COUNT === "1" ? "once" : `${parts.COUNT} times`}`;
  if (parts.UNTIL) {
    const m = /^(\d{4})(\d{2})(\d{2})/.exec(parts.UNTIL);
    if (m) phrase += `, until ${parseInt(m[3], 10)} ${MONTHS[parseInt(m[2], 10) - 1].slice(0, 3)} ${m[1]}`;
  }
  let here = null;
  try { here = Intl.DateTimeFormat().resolvedOptions().timeZone; } catch (e) { here = null; }
  if (trigger.timeZone && trigger.timeZone !== here) phrase += `, ${trigger.timeZone}`;
  return phrase;
}

/** An escalation in words: (60, 1800) → "every minute for 30 minutes", (90, 3600) → "every 1 minute 30 seconds for 1 hour". */
export function escalationWords(every, forSeconds) {
  const often = durationWords(every);
  const each = often.startsWith("1 ") && !often.includes(" ", 2) ? often.slice(2) : often;
  return `every ${each} for ${durationWords(forSeconds)}`;
}

/** Any trigger (as the API returns it) in words. */
export function triggerWords(trigger) {
  if (!trigger) return "at once";
  switch (trigger.type) {
    case "timeInterval":
      if (trigger.repeats) {
        const words = durationWords(trigger.timeInterval);
        return `every ${words.startsWith("1 ") && !words.includes(" ", 2) ? words.slice(2) : words}`;
      }
      return `in ${durationWords(trigger.timeInterval)}`;
    case "calendar": return calendarWords(trigger.dateComponents, !!trigger.repeats);
    case "location": return regionWords(trigger.region, !!trigger.repeats);
    case "recurrence": return recurrenceWords(trigger);
    case "push": return "from a push";
    default: return "by an unknown trigger";
  }
}

const shortDate = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short" });
const shortDateYear = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short", year: "numeric" });
const exactFormat = new Intl.DateTimeFormat(undefined, {
  weekday: "long", year: "numeric", month: "long", day: "numeric", hour: "2-digit", minute: "2-digit",
  second: "2-digit", hour12: false, timeZoneName: "short",
});

/** "now", "2 min ago", "3 h ago", "yesterday", "4 days ago", "12 Mar"; "in 5 min", "tomorrow"… */
export function relativeTime(date, now) {
  const when = date instanceof Date ? date.getTime() : new Date(date).getTime();
  if (!Number.isFinite(when)) return "";
  const reference = now === undefined ? Date.now() : now; // the clock is read once
  const seconds = Math.round((when - reference) / 1000);
  const future = seconds > 0;
  const abs = Math.abs(seconds);
  if (abs < 45) return future ? (abs < 2 ? "now" : `in ${abs} s`) : "now";
  if (abs < 3570) {
    const m = Math.max(1, Math.round(abs / 60));
    return future ? `in ${m} min` : `${m} min ago`;
  }
  if (abs < 86400 - 1800) {
    const h = Math.round(abs / 3600);
    return future ? `in ${h} h` : `${h} h ago`;
  }
  const days = Math.round(abs / 86400);
  if (days === 1) return future ? "tomorrow" : "yesterday";
  if (days < 7) return future ? `in ${days} days` : `${days} days ago`;
  const d = new Date(when);
  return (d.getFullYear() === new Date(reference).getFullYear() ? shortDate : shortDateYear).format(d);
}

/** "Saturday, 29 November 2026 at 13:12:18 UTC" (the tooltip of every relative time). */
export function exactTime(date) {
  const d = date instanceof Date ? date : new Date(date);
  return Number.isFinite(d.getTime()) ? exactFormat.format(d) : "";
}

let listFormat = null;
/** ["Alice", "Bob", "Carol"] → "Alice, Bob, and Carol". */
function joinList(items) {
  if (!listFormat) {
    try { listFormat = new Intl.ListFormat("en", { style: "long", type: "conjunction" }); } catch (e) { listFormat = null; }
  }
  if (listFormat) return listFormat.format(items);
  return items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}

const SPECIFIER = /%(?:(\d+)\$)?(l{0,2}[udi]|@|%)/g;

/** Fills a format with `%u` (count) and `%@` (text) as Apple's format strings do; `%%` is `%`. */
function fillFormat(format, count, text) {
  return format.replace(SPECIFIER, (match, position, spec) => {
    if (spec === "%") return "%";
    if (spec === "@") return text;
    return String(count);
  });
}

function usesArgument(format) {
  SPECIFIER.lastIndex = 0;
  for (const match of format.matchAll(SPECIFIER)) if (match[2] === "@") return true;
  return false;
}

/**
 * The line under a collapsed group, for the notifications behind the one on top: the category's
 * categorySummaryFormat with %u = how many (each notification counts its summaryArgumentCount,
 * or 1) and %@ = their summary arguments as a list; otherwise "N more notifications".
 */
export function groupSummary(format, hidden) {
  let count = 0;
  const names = [];
  for (const n of hidden) {
    count += n.summaryArgumentCount > 0 ? n.summaryArgumentCount : 1;
    if (n.summaryArgument && !names.includes(n.summaryArgument)) names.push(n.summaryArgument);
  }
  if (format && (!usesArgument(format) || names.length > 0)) return fillFormat(format, count, joinList(names));
  return `${count} more notification${count === 1 ? "" : "s"}`;
}

/** The text shown instead of the body while previews are hidden. */
export function hiddenPlaceholder(format, count) {
  if (!format) return "Notification";
  return fillFormat(format, count, "");
}

/** "com.example.drinking-reminder" → "Drinking Reminder"; "com.example.alarm" → "Alarm". */
export function appDisplayName(bundle) {
  const last = String(bundle || "").split(".").filter(Boolean).pop() || String(bundle || "");
  const words = last.replace(/([a-z0-9])([A-Z])/g, "$1 $2").split(/[-_\s]+/).filter(Boolean);
  if (words.length === 0) return String(bundle || "");
  return words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(" ");
}

/** A stable small number for a string (picks an app's icon colour). */
export function hue(text, buckets) {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return (h >>> 0) % buckets;
}

const OPTION_WORDS = {
  alert: "alerts", sound: "sounds", badge: "icon badges", criticalAlert: "critical alerts", timeSensitive: "time-sensitive alerts",
  provisional: "quiet delivery", carPlay: "CarPlay", announcement: "announcements",
};

/** ["badge", "sound", "alert"] → "alerts, sounds, and icon badges". */
export function requestedWords(options) {
  const order = ["alert", "sound", "badge", "timeSensitive", "criticalAlert", "provisional"];
  const list = (options || []).filter((o) => OPTION_WORDS[o]).sort((a, b) => {
    const ia = order.indexOf(a), ib = order.indexOf(b);
    return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib);
  }).map((o) => OPTION_WORDS[o]);
  return list.length ? joinList(list) : "alerts";
}
