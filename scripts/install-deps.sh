#!/usr/bin/env bash
# Installs what Chime needs to build, run and test, if it is missing. Safe to run again.
#   scripts/install-deps.sh           build and run: C libraries
#   scripts/install-deps.sh test      also what the tests use (browser, Python tools)
#   scripts/install-deps.sh bench     also what the benchmarks use
set -euo pipefail
purpose="${1:-build}"

export PATH="$PATH:/opt/swift/usr/bin"
if ! command -v swift >/dev/null 2>&1; then
  echo "install-deps: the Swift 6.3 toolchain is not on PATH (expected in /opt/swift/usr/bin)." >&2
  exit 1
fi

packages=(libsqlite3-dev libmicrohttpd-dev pkg-config sqlite3)
case "$purpose" in
  test) packages+=(openssl python3-venv) ;;
  bench) packages+=(gcc wrk python3-venv) ;;
esac

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q "${missing[@]}" >/dev/null
fi
