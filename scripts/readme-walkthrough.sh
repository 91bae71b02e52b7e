#!/usr/bin/env bash
# Runs the README's walkthrough as a new user would: every ```sh block marked <!-- walkthrough -->,
# in order, in one shell, against a fresh `chime serve` (what `make run` starts) with its own data
# directory. `chime` is the built binary; the README's http://127.0.0.1:7878 is the test server's
# URL; `chime events`, which follows until Ctrl-C, is given three seconds. Part of `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/opt/swift/usr/bin"
bin="$(swift build --show-bin-path)"
work="$(mktemp -d)"
server=""
cleanup() {
  if [ -n "$server" ]; then kill -TERM "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The blocks, in order.
python3 - README.md >"$work/walkthrough.sh" <<'PYEOF'
import re, sys
text = open(sys.argv[1]).read()
blocks = re.findall(r"<!-- walkthrough -->\n```sh\n(.*?)```", text, re.S)
if not blocks:
    sys.exit("readme-walkthrough: no <!-- walkthrough --> blocks in README.md")
for number, block in enumerate(blocks, 1):
    print(f"echo '--- README walkthrough block {number}'")
    print(block)
PYEOF

export XDG_DATA_HOME="$work/data"   # the default data directory of `chime serve` and of every command
mkdir -p "$work/bin" "$work/cwd"
ln -s "$bin/chime" "$work/bin/chime-binary"
cat >"$work/bin/chime" <<'WRAPEOF'
#!/usr/bin/env bash
# `chime events` follows until Ctrl-C: three seconds of it here.
if [ "${1:-}" = events ]; then
  timeout 3 "$(dirname "$0")/chime-binary" "$@" || [ $? -eq 124 ]
else
  exec "$(dirname "$0")/chime-binary" "$@"
fi
WRAPEOF
chmod +x "$work/bin/chime"
export PATH="$work/bin:$PATH"

# --desktop off: a desktop session running the tests stays quiet (`make run` itself pops up).
"$bin/chime" serve --listen 127.0.0.1:0 --desktop off >"$work/serve.out" 2>&1 &
server=$!
for _ in $(seq 100); do [ -f "$XDG_DATA_HOME/chime/server.json" ] && break; sleep 0.1; done
url=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["url"])' "$XDG_DATA_HOME/chime/server.json")
sed -i "s#http://127.0.0.1:7878#$url#g" "$work/walkthrough.sh"

cd "$work/cwd"
if ! bash -euo pipefail -x "$work/walkthrough.sh" >"$work/walkthrough.out" 2>&1; then
  echo "readme-walkthrough: a README command failed; what ran and what it printed:" >&2
  sed 's/^/    /' "$work/walkthrough.out" >&2
  echo "  the service logged:" >&2
  sed 's/^/    /' "$work/serve.out" >&2
  exit 1
fi
# What a reader is promised along the way.
for expected in "Added Alarm to com.example.alarm" "actions: snooze, comment" "Answered Alarm with comment" \
                "Pushed to com.example.alarm" "Backup done"; do
  if ! grep -qF -- "$expected" "$work/walkthrough.out"; then
    echo "readme-walkthrough: the README's commands ran, but \"$expected\" never appeared:" >&2
    sed 's/^/    /' "$work/walkthrough.out" >&2
    exit 1
  fi
done
delivered=$(chime delivered --app com.example.backup --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
[ "$delivered" = 1 ] || { echo "readme-walkthrough: the one-line send did not deliver (\"$delivered\" delivered)" >&2; exit 1; }
echo "readme-walkthrough: $(grep -c '^--- README walkthrough block' "$work/walkthrough.out") README blocks ran as written"
