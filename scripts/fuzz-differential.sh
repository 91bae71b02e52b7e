#!/usr/bin/env bash
# make fuzz-differential: Chime against independent implementations on generated inputs, more and
# from other seeds than the suite's fixed runs (which make test runs every time):
#   - recurrence rules: the first 20 occurrences of CASES generated rules (two queries each: from
#     before the start and from a later date, random zones) against python-dateutil
#     (RecurrenceOracleTests/differential, scripts/recurrence-test-env.sh);
#   - JWTs: CASES generated and mutated ES256 tokens, accepted by both or refused by both, against
#     PyJWT (JSONWebTokenDifferentialTests, scripts/crypto-test-env.sh).
#
#   scripts/fuzz-differential.sh [CASES [SEED]]     default 2000 cases, a seed from the clock (printed)
#
# Uses the test build (swift build --build-tests first); exits 1 on any difference not listed as
# Chime's stricter reading (see the two tests).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/opt/swift/usr/bin"
cases="${1:-2000}"
seed="${2:-$(date +%s)}"
echo "fuzz-differential: $cases cases, seed $seed"
log="${TMPDIR:-/tmp}/chime-fuzz-differential-$$.log"
set +e
CHIME_DIFFERENTIAL_CASES="$cases" CHIME_DIFFERENTIAL_SEED="$seed" SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=2 \
  swift test --skip-build --filter 'RecurrenceOracleTests/differential|JSONWebTokenDifferentialTests' >"$log" 2>&1
rc=$?
set -e
grep -E 'differential \(seed|Test run|✘|difference|failed' "$log" | cut -c1-2000 || true
echo "fuzz-differential: exit $rc (log $log)"
exit "$rc"
