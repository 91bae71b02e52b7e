#!/usr/bin/env bash
# Measures the CPU an idle event-stream reader costs: `chime events` and a Swift app on the service
# (the alarm example with CHIME_SERVICE), each waiting SECONDS with nothing happening.
#   scripts/idle-cpu.sh [BINDIR] [SECONDS]     BINDIR holds `chime` and `alarm` (default .build/debug)
# Prints utime+stime (from /proc/PID/stat) over the window and the share of one core.
set -euo pipefail
bin="${1:-.build/debug}"
seconds="${2:-60}"
dir="$(mktemp -d /tmp/chime-idle.XXXXXX)"
port=$((20000 + RANDOM % 20000))
cleanup() { kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT

"$bin/chime" serve --data "$dir" --listen "127.0.0.1:$port" --auto-allow >"$dir/serve.log" 2>&1 &
for _ in $(seq 100); do [ -f "$dir/server.json" ] && break; sleep 0.1; done
token="$("$bin/chime" apps add com.example.idle --data "$dir" --json | sed -n 's/.*"token" *: *"\([^"]*\)".*/\1/p')"

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
measure() {  # NAME PID: waits 15 s to settle, then SECONDS of idle
  sleep 15
  local before after hz
  hz="$(getconf CLK_TCK)"
  before="$(ticks "$2")"
  sleep "$seconds"
  after="$(ticks "$2")"
  awk -v n="$1" -v d="$((after - before))" -v hz="$hz" -v s="$seconds" \
    'BEGIN { printf "%s: %.2f s of CPU in %d s idle = %.2f%% of a core\n", n, d / hz, s, 100 * d / hz / s }'
}

"$bin/chime" events --data "$dir" >/dev/null 2>&1 &
events=$!
# The alarm example's input stays open (it quits at the end of its input).
sleep $((seconds + 60)) | CHIME_SERVICE="http://127.0.0.1:$port" CHIME_APP_TOKEN="$token" CHIME_BUNDLE_IDENTIFIER=com.example.idle \
  CHIME_DESKTOP=off "$bin/alarm" >/dev/null 2>&1 &
app=$!
measure "chime events" "$events" &
first=$!
measure "alarm on CHIME_SERVICE" "$app" &
second=$!
wait "$first" "$second"
