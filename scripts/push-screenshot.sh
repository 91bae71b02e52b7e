#!/usr/bin/env bash
# A picture of a pushed notification for the README (`make screenshots`): the web center's service
# worker shows the alarm example's notification from a Web Push message, with no tab of the center
# open (scripts/push_screenshot.py), and dunst pops it up on an Xvfb display; ImageMagick's `import`
# takes the screen. Writes docs/images/push-notification.png.
#
# Chromium on Linux, headless too, shows web notifications through the desktop's notification
# server (org.freedesktop.Notifications on the session bus) by default, when one owns that name:
# here dunst on scripts/desktop-session.sh's private bus. No switch is needed; without a bus (as in
# scripts/screenshots.py) nothing shows them.
#
#   CHIME_BIN=.build/debug/chime scripts/push-screenshot.sh
#
# Needs `scripts/install-deps.sh screenshots`.
set -euo pipefail
cd "$(dirname "$0")/.."
export CHIME_BIN="${CHIME_BIN:-.build/debug/chime}" SE_OFFLINE=true PYTHONDONTWRITEBYTECODE=1
python="$(scripts/web-tests.sh --venv-only)"
out="docs/images/push-notification.png"
source scripts/desktop-session.sh
desktop_session 560x376 5

# It prints "shown" once dunst shows the pop-up, and keeps Chromium up until its input closes.
coproc push { "$python" scripts/push_screenshot.py 2>"$work/push.log"; }
pusher="$push_PID"
session_pids+=("$pusher")
if ! read -r -t 180 shown <&"${push[0]}" || [ "$shown" != shown ]; then
  echo "push-screenshot: no pop-up; see below" >&2
  cat "$work/push.log" "$work/dunst.log" >&2
  exit 1
fi
show_actions_menu
shoot "$out"
exec {push[1]}>&-
wait "$pusher" || true
echo "push-screenshot: wrote $out"
