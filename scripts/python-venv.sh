#!/usr/bin/env bash
# A Python virtual environment for a test tool, set up (again) when its requirements changed.
#
#   scripts/python-venv.sh VENV REQUIREMENTS    prints VENV's python
#
# Needs python3-venv (scripts/install-deps.sh test). Used by web-tests.sh and the *-test-env.sh scripts.
# Test processes and tests running at once share an environment: the first sets it up while the
# others wait on VENV.lock (without it two set-ups remove each other's half-made environment).
set -euo pipefail
venv="$1"
requirements="$2"
stamp="$venv/.requirements"
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
if ! flock -w 600 9; then
  echo "python-venv: $venv.lock was held for 10 minutes; is another set-up stuck?" >&2
  exit 1
fi
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$requirements" "$stamp"; then
  echo "python-venv: setting up $venv" >&2
  # Debian's Python (python3-venv): another python3 on PATH may lack the ssl module pip needs.
  python=python3
  [ -x /usr/bin/python3 ] && python=/usr/bin/python3
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" >&2
  cp "$requirements" "$stamp"
fi
echo "$(cd "$venv" && pwd)/bin/python"
