#!/usr/bin/env bash
# A picture of a desktop pop-up for the README (`make screenshots`): `chime serve --desktop on` on a
# private session bus, with dunst on an Xvfb display, shows the alarm example's notification;
# ImageMagick's `import` takes the screen. Writes docs/images/desktop-dunst.png.
#
#   CHIME_BIN=.build/debug/chime scripts/desktop-screenshot.sh
#
# Needs `scripts/install-deps.sh screenshots`; the desktop is scripts/desktop-session.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."
chime="${CHIME_BIN:-.build/debug/chime}"
out="docs/images/desktop-dunst.png"
source scripts/desktop-session.sh
desktop_session 560x266

"$chime" serve --data "$work/data" --listen 127.0.0.1:0 --auto-allow --desktop on >"$work/serve.log" 2>&1 &
session_pids+=($!)
for _ in $(seq 100); do [ -s "$work/data/server.json" ] && break; sleep 0.1; done
[ -s "$work/data/server.json" ] || { cat "$work/serve.log" >&2; exit 1; }

cat >"$work/alarm.json" <<'JSON'
[{"identifier": "alarm.category", "intentIdentifiers": [], "options": ["customDismissAction"],
  "actions": [{"identifier": "snooze", "title": "Snooze 5 Sec", "options": []},
              {"identifier": "comment", "title": "Add Comment", "options": [],
               "textInputButtonTitle": "Add", "textInputPlaceholder": "Add Comment Here"}]}]
JSON
"$chime" apps add com.example.alarm --data "$work/data" >/dev/null
"$chime" apps allow com.example.alarm --data "$work/data" >/dev/null
"$chime" categories set "$work/alarm.json" --app com.example.alarm --data "$work/data" >/dev/null
"$chime" add --app com.example.alarm --id Alarm --title Alarm --subtitle "First Alarm" \
  --body "Time to get up — Snooze, or add a comment from the pop-up's menu." --sound default \
  --category alarm.category --data "$work/data" >/dev/null
wait_popups 1 || { echo "desktop-screenshot: no pop-up; see $work" >&2; cat "$work/serve.log" "$work/dunst.log" >&2; exit 1; }
# The pop-up's actions, as dunst offers them: its context menu (dmenu) at the bottom.
show_actions_menu
shoot "$out"
echo "desktop-screenshot: wrote $out"
