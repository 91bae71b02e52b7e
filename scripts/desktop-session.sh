# A private desktop for the README's pictures of pop-ups, sourced by scripts/desktop-screenshot.sh
# and scripts/push-screenshot.sh (not run on its own):
#
#   source scripts/desktop-session.sh
#   desktop_session 560x266 3   # a session bus, an Xvfb screen of that size, dunst on both
#                               # (its menu of actions 3 lines high)
#   session_pids+=($!)          # more processes to stop on exit
#
# It exports DBUS_SESSION_BUS_ADDRESS, DISPLAY, HOME and XDG_CONFIG_HOME for what runs next, sets
# `work` to a temporary directory (removed on exit), and stops what it started on exit.
# Needs `scripts/install-deps.sh screenshots` (dbus-daemon, xvfb, dunst, dmenu, xdotool, imagemagick).

work="$(mktemp -d /tmp/chime-screenshot-XXXXXX)"
session_pids=()
session_cleanup() {
  for pid in "${session_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap session_cleanup EXIT

desktop_session() {
  local size="$1" menu_lines="${2:-3}"
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
  session_pids+=($!)
  Xvfb -displayfd 3 -screen 0 "${size}x24" -nolisten tcp -noreset 3>"$work/display" 2>/dev/null &
  session_pids+=($!)
  for _ in $(seq 100); do [ -s "$work/address" ] && [ -s "$work/display" ] && break; sleep 0.1; done
  if ! [ -s "$work/address" ] || ! [ -s "$work/display" ]; then
    echo "desktop-session: the session bus or Xvfb did not start" >&2
    return 1
  fi
  export DBUS_SESSION_BUS_ADDRESS="$(head -n1 "$work/address")" DISPLAY=":$(head -n1 "$work/display")"
  export HOME="$work" XDG_CONFIG_HOME="$work/config"

  cat >"$work/dunstrc" <<CONF
[global]
    font = Inter 12
    width = 440
    origin = top-left
    offset = 24x24
    padding = 14
    horizontal_padding = 16
    frame_width = 1
    frame_color = "#d0d4dc"
    corner_radius = 10
    min_icon_size = 48
    max_icon_size = 48
    separator_height = 0
    format = "<span size='small' foreground='#6b7280'>%a</span>\n<b>%s</b>\n%b"
    show_indicators = yes
    markup = full
    dmenu = "/usr/bin/dmenu -b -l $menu_lines -fn Inter-12 -nb '#ffffff' -nf '#111827' -sb '#2563eb' -sf '#ffffff' -p Actions:"
[urgency_normal]
    background = "#ffffff"
    foreground = "#111827"
    timeout = 0
CONF
  dunst -config "$work/dunstrc" >"$work/dunst.log" 2>&1 &
  session_pids+=($!)

  # The root window: a quiet desktop colour behind the pop-up.
  if command -v xsetroot >/dev/null; then xsetroot -solid "#3b4252"; fi
}

# Waits (up to 10 s) until dunst shows `count` pop-ups; false if it does not.
wait_popups() {
  local count="$1"
  for _ in $(seq 100); do [ "$(dunstctl count displayed 2>/dev/null)" = "$count" ] && return 0; sleep 0.1; done
  [ "$(dunstctl count displayed 2>/dev/null)" = "$count" ]
}

# Opens the pop-up's context menu (its actions, in dmenu at the bottom of the screen) and waits
# (up to 10 s) until it is on the screen.
show_actions_menu() {
  dunstctl context &
  session_pids+=($!)
  for _ in $(seq 100); do xdotool search --onlyvisible --class dmenu >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "desktop-session: dunst's menu did not open" >&2
  return 1
}

# Takes the screen into $1, cut at the right to the pop-up and a margin as wide as the one dunst
# keeps above it and to its left (offset); the menu, when open, spans the bottom.
shoot() {
  local out="$1" geometry x width
  geometry="$(xdotool search --onlyvisible --class Dunst getwindowgeometry --shell)"
  x="$(sed -n 's/^X=//p' <<<"$geometry" | head -n1)"
  width="$(sed -n 's/^WIDTH=//p' <<<"$geometry" | head -n1)"
  if [ -z "$x" ] || [ -z "$width" ]; then
    echo "desktop-session: no pop-up on the screen" >&2
    return 1
  fi
  import -window root "$work/screen.png"
  convert "$work/screen.png" -crop "$((x + width + 24))x0+0+0" +repage "$out"
}
