#!/usr/bin/env bash
# A Python virtual environment for a test tool, set up (again) when its requirements changed.
#
#   scripts/python-venv.sh VENV REQUIREMENTS    prints VENV's python
#
# Needs python3-venv (scripts/install-deps.sh test). Used by web-tests.sh and desktop-test-env.sh.
set -euo pipefail
venv="$1"
requirements="$2"
stamp="$venv/.requirements"
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
