#!/usr/bin/env bash
# The web notification center's browser tests: headless Chromium (Debian's chromium and
# chromium-driver) driven by Selenium from PyPI, against real `chime serve` processes.
#
#   scripts/web-tests.sh                 builds chime, then runs Tests/web
#   CHIME_BIN=/path/to/chime scripts/web-tests.sh   uses that binary (no build)
#   scripts/web-tests.sh -k snooze       extra arguments go to pytest
#   scripts/web-tests.sh --venv-only     only set up the Python environment; print its python
#
# Needs `scripts/install-deps.sh test` (chromium, chromium-driver, python3-venv). The Python
# packages go to a virtual environment in .build/venv-web (override with WEB_TEST_VENV).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/opt/swift/usr/bin"

python="$(scripts/python-venv.sh "${WEB_TEST_VENV:-.build/venv-web}" Tests/web/requirements.txt)"
if [ "${1:-}" = "--venv-only" ]; then
  # For scripts/screenshots.py: the Python that has Selenium.
  echo "$python"
  exit 0
fi

# The binary embeds Web/: it must be current, or the tests would test old files.
if ! scripts/generate-web-assets.sh --check; then
  echo "web-tests: run scripts/generate-web-assets.sh (Web/ changed since the embedded copy was made)" >&2
  exit 1
fi

for tool in chromium chromedriver; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "web-tests: $tool is missing; run scripts/install-deps.sh test" >&2
    exit 1
  fi
done

if [ -z "${CHIME_BIN:-}" ]; then
  swift build ${SWIFT_FLAGS:-} --product chime
  CHIME_BIN="$(swift build ${SWIFT_FLAGS:-} --product chime --show-bin-path)/chime"
fi
export CHIME_BIN
# The alarm example (a Swift app on the service, CHIME_SERVICE): next to chime, or built here.
if [ -z "${ALARM_BIN:-}" ]; then
  ALARM_BIN="$(dirname "$CHIME_BIN")/alarm"
  [ -x "$ALARM_BIN" ] || { swift build ${SWIFT_FLAGS:-} --product alarm; ALARM_BIN="$(swift build ${SWIFT_FLAGS:-} --product alarm --show-bin-path)/alarm"; }
fi
export ALARM_BIN

# Selenium must not look for a browser or driver of its own (no network here): both are given.
export SE_OFFLINE=true
export PYTHONDONTWRITEBYTECODE=1
exec "$python" -m pytest -p no:cacheprovider Tests/web "$@"
