#!/usr/bin/env bash
# Installs what Chime needs to build, run and test, if it is missing. Safe to run again.
#   scripts/install-deps.sh           build and run: C libraries
#   scripts/install-deps.sh test      also what the tests use (browser, Python tools)
#   scripts/install-deps.sh bench     also what the benchmarks use
#   scripts/install-deps.sh screenshots  what `make screenshots` uses (browser, a font, a desktop pop-up under Xvfb)
#   scripts/install-deps.sh fuzz      also what `make fuzz` uses (libFuzzer and ASan, from the toolchain)
set -euo pipefail
purpose="${1:-build}"

export PATH="$PATH:/opt/swift/usr/bin"
if ! command -v swift >/dev/null 2>&1; then
  echo "install-deps: the Swift 6.3 toolchain is not on PATH (expected in /opt/swift/usr/bin)." >&2
  exit 1
fi

packages=(libsqlite3-dev libmicrohttpd-dev libcurl4-openssl-dev libsystemd-dev libqrencode-dev libpq-dev libssl-dev libnghttp2-dev pkg-config sqlite3)
# The desktop tests' session: a private bus, a display, dunst with dunstctl (dbus-send), a dialog for
# replies (yad) driven by xdotool.
desktop=(dbus-daemon dbus-bin xvfb dunst yad xdotool)
case "$purpose" in
  # postgresql: the tests start servers of their own (initdb into a temporary directory).
  test) packages+=(openssl python3-venv chromium chromium-driver curl postgresql "${desktop[@]}") ;;
  screenshots) packages+=(python3-venv chromium chromium-driver fonts-inter "${desktop[@]}" suckless-tools x11-xserver-utils imagemagick) ;;
  bench) packages+=(gcc wrk nghttp2-client python3-venv postgresql) ;;
  fuzz)
    # libFuzzer and AddressSanitizer come with the Swift toolchain's clang runtime; nothing from Debian.
    runtime="$(dirname "$(readlink -f "$(command -v swift)")")/../lib/swift/clang/lib/linux"
    if ! ls "$runtime"/libclang_rt.fuzzer-*.a >/dev/null 2>&1 || ! ls "$runtime"/libclang_rt.asan-*.a >/dev/null 2>&1; then
      echo "install-deps: the Swift toolchain has no libFuzzer/ASan runtime in $runtime; install the full Swift 6.3 toolchain" >&2
      exit 1
    fi
    ;;
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
