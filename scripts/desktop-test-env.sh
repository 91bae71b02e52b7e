#!/usr/bin/env bash
# The Python environment of the desktop tests' own notification server
# (Tests/ChimeDesktopTests/Servers/notification_server.py, on dbus-next from PyPI).
#
#   scripts/desktop-test-env.sh     sets up .build/venv-desktop if needed; prints its python
#
# Needs python3-venv (scripts/install-deps.sh test). Override the place with DESKTOP_TEST_VENV.
# Test processes running at once share the environment: the first sets it up (python-venv.sh locks it).
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/python-venv.sh "${DESKTOP_TEST_VENV:-.build/venv-desktop}" Tests/ChimeDesktopTests/Servers/requirements.txt
