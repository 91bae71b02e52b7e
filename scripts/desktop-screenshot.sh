#!/usr/bin/env bash
# A picture of a desktop pop-up for the README (`make screenshots`): `chime serve --desktop on` on a
# private session bus, with dunst on an Xvfb display, shows the alarm example's notification;
# ImageMagick's `import` takes the screen. Writes docs/images/desktop-dunst.png.
#
#   CHIME_BIN=.build/debug/chime scripts/desktop-screenshot.sh
#
# Needs `scripts/install-deps.sh screenshots` (dbus-daemon, xvfb, dunst, dmenu, imagemagick).
set -euo pipefail
cd "$(dirname "$0")/.."
chime="${CHIME_BIN:-.build/debug/chime}"
out="docs/images/desktop-dunst.png"
work="$(mktemp -d /tmp/chime-screenshot-XXXXXX)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$work/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
CONF
dbus-daemon --config-file="$work/bus.conf" --nofork --print-address=3 3>"$work/address" &
pids+=($!)
Xvfb -displayfd 3 -screen 0 760x300x24 -nolisten tcp -noreset 3>"$work/display" 2>/dev/null &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/address" ] && [ -s "$work/display" ] && break; sleep 0.1; done
export DBUS_SESSION_BUS_ADDRESS="$(head -n1 "$work/address")" DISPLAY=":$(head -n1 "$work/display")"
export HOME="$work" XDG_CONFIG_HOME="$work/config"

cat >"$work/dunstrc" <<'CONF'
[global]
    font = Inter 12
    width = 440
    origin = top-right
    offset = 24x24
    padding = 14
    horizontal_padding = 16
    frame_width = 1
    frame_color = "#d0d4dc"
    corner_radius = 10
    separator_height = 0
    format = "<span size='small' foreground='#6b7280'>%a</span>\n<b>%s</b>\n%b"
    show_indicators = yes
    markup = full
    dmenu = "/usr/bin/dmenu -b -l 3 -fn Inter-12 -nb '#ffffff' -nf '#111827' -sb '#2563eb' -sf '#ffffff' -p Actions:"
[urgency_normal]
    background = "#ffffff"
    foreground = "#111827"
    timeout = 0
CONF
dunst -config "$work/dunstrc" >"$work/dunst.log" 2>&1 &
pids+=($!)

# The root window: a quiet desktop colour behind the pop-up.
xsetroot_color() { command -v xsetroot >/dev/null && xsetroot -solid "#3b4252" || true; }
xsetroot_color

"$chime" serve --data "$work/data" --listen 127.0.0.1:0 --auto-allow --desktop on >"$work/serve.log" 2>&1 &
pids+=($!)
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
for _ in $(seq 100); do [ "$(dunstctl count displayed)" = "1" ] && break; sleep 0.1; done
[ "$(dunstctl count displayed)" = "1" ] || { echo "desktop-screenshot: no pop-up; see $work" >&2; cat "$work/serve.log" "$work/dunst.log" >&2; exit 1; }
# The pop-up's actions, as dunst offers them: its context menu (dmenu) at the bottom.
dunstctl context &
pids+=($!)
sleep 1
import -window root "$out"
echo "desktop-screenshot: wrote $out"
