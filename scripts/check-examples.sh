#!/usr/bin/env bash
# Runs the four tutorial apps as a person would, in a terminal session driven through standard
# input, and checks what they print: the notification appears with its numbered actions, the
# chosen action is handled by the app's delegate.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/opt/swift/usr/bin"
bin="$(swift build --show-bin-path)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

run() {  # run NAME SCRIPT EXPECTED... : feeds SCRIPT's output to the example, checks each EXPECTED
  local name="$1" script="$2"
  shift 2
  # The variables go to the example (not to the shell feeding it), so it keeps its state in this
  # run's own store and never touches the user's data directory.
  # CHIME_DESKTOP=off: these runs check the terminal; a desktop session running the tests stays quiet.
  bash -c "$script" | CHIME_STORE="$work/$name.sqlite" CHIME_BUNDLE_IDENTIFIER="com.example.$name" ORGANIZER_TASKS="$work/$name-tasks.json" CHIME_DESKTOP=off \
    timeout 60 "$bin/$name" --exit-after 40 >"$work/$name.out" 2>&1 || true
  for expected in "$@"; do
    if ! grep -qF -- "$expected" "$work/$name.out"; then
      echo "check-examples: $name did not print \"$expected\"; its output:" >&2
      sed 's/^/    /' "$work/$name.out" >&2
      touch "$work/failed-$name"
      return
    fi
  done
  echo "check-examples: $name ok"
}

# The alarm fires after 10 s; Snooze brings it back 5 s later; a typed comment becomes the body.
run alarm '(sleep 11; echo 1; sleep 6; echo 2; echo "call the plumber"; sleep 2; echo q)' \
  "Snooze 5 Sec" "Add Comment" "Snooze 5 Seconds" 'Add: "call the plumber"' &
# The question shows without its answer; "Show me" reveals it 3 s later.
run show-me '(sleep 6; echo 1; sleep 4.5; echo q)' "What is the capital of Australia?" "Canberra" &
# A pushed (APNs-format) reminder with Done / Not thirsty, answered with Done.
run drinking-reminder '(sleep 1; echo push; sleep 1; echo 1; sleep 1; echo q)' "Stay hydrated" "Not thirsty" "logged: drank" &
# A time reminder, then Mark As Done removes the task without opening the app.
run organizer '(echo "add Buy milk in 2"; sleep 3.5; echo 2; sleep 1; echo list; sleep 0.5; echo q)' \
  "Mark As Done" "marked as done" &
wait

# Background launch: the user adds a task in the organizer running on a `chime serve` service and
# quits it; the reminder fires in the service; "Mark As Done" given while no organizer runs starts
# the organizer (its launch command), whose own code removes the task from its file.
background() {
  local data="$work/service" tasks="$work/background-tasks.json" app=com.example.organizer
  "$bin/chime" serve --data "$data" --listen 127.0.0.1:0 --auto-allow >"$work/serve.out" 2>&1 &
  local server=$!
  for _ in $(seq 100); do [ -f "$data/server.json" ] && break; sleep 0.1; done
  local url token id=""
  url=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["url"])' "$data/server.json")
  # A launched app gets a scrubbed environment (docs/security.md): what it needs of its own goes in
  # its launch command.
  token=$("$bin/chime" apps add "$app" --launch "/usr/bin/env ORGANIZER_TASKS=$tasks $bin/organizer" --json --data "$data" |
          python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])')
  (echo "add Buy milk in 1"; sleep 3; echo q) | CHIME_SERVICE="$url" CHIME_APP_TOKEN="$token" CHIME_BUNDLE_IDENTIFIER="$app" \
    ORGANIZER_TASKS="$tasks" timeout 30 "$bin/organizer" >"$work/organizer-background.out" 2>&1 || true
  id=$(python3 -c 'import json, sys; t = json.load(open(sys.argv[1])); print(t[0]["id"] if t else "")' "$tasks" 2>/dev/null || true)
  local outcome="no task was saved"
  if [ -n "$id" ]; then
    "$bin/chime" respond "$id" markAsDone --app "$app" --data "$data" >/dev/null
    outcome="the task is still there"
    for _ in $(seq 200); do
      if [ "$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$tasks")" = 0 ]; then outcome=ok; break; fi
      sleep 0.1
    done
  fi
  kill -TERM "$server"; wait "$server" || true
  if [ "$outcome" = ok ] && grep -q "launched an app" "$work/serve.out"; then
    echo "check-examples: organizer in the background ok"
  else
    echo "check-examples: organizer in the background: $outcome; the organizer printed:" >&2
    sed 's/^/    /' "$work/organizer-background.out" >&2
    echo "  the service logged:" >&2
    sed 's/^/    /' "$work/serve.out" >&2
    touch "$work/failed-background"
  fi
}
background

if ls "$work"/failed-* >/dev/null 2>&1; then exit 1; fi
