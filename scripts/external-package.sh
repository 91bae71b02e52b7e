#!/usr/bin/env bash
# Tests/ExternalPackage: app code and its tests outside the Chime package (Chime by path, Swift 5
# mode). Builds it once, then runs plain `swift test` (parallel, Swift Testing and XCTest)
# RUNS times in a row (default 20); any failing run prints its log and fails.
set -euo pipefail
cd "$(dirname "$0")/../Tests/ExternalPackage"
export PATH="$PATH:/opt/swift/usr/bin"
runs="${RUNS:-20}"
swift build --build-tests ${SWIFT_FLAGS:--Xswiftc -warnings-as-errors}
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
for run in $(seq 1 "$runs"); do
    if ! swift test --skip-build >"$log" 2>&1; then
        echo "external-package: run $run of $runs failed:" >&2
        cat "$log" >&2
        exit 1
    fi
    summary="$(grep -E '^. Test run with' "$log" | tail -1)"
    echo "external-package: run $run of $runs: ${summary#* }"
done
