#!/usr/bin/env bash
# make fuzz: builds the libFuzzer targets of the Fuzz/ package (with address sanitizer) and runs each
# for a bounded time. Exits 1 when any target finds something; the input is saved under
# Fuzz/findings/<target>/ (crash-*, timeout-*, oom-*, leak-*), to replay with
#   Fuzz/.build/release/fuzz-<target> Fuzz/findings/<target>/crash-…
#
#   scripts/fuzz.sh                    every target, FUZZ_SECONDS (default 60) each
#   scripts/fuzz.sh json-request       one target
# Environment: FUZZ_SECONDS, FUZZ_BUILD (scratch directory, default Fuzz/.build), FUZZ_ARGS (more
# libFuzzer flags, e.g. "-jobs=2").
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/opt/swift/usr/bin"

seconds="${FUZZ_SECONDS:-60}"
build="${FUZZ_BUILD:-Fuzz/.build}"
all=(apns-payload json-request)
targets=("$@")
[ "${#targets[@]}" -eq 0 ] && targets=("${all[@]}")

flags=(--package-path Fuzz --scratch-path "$build" -c release
       -Xswiftc -sanitize=fuzzer,address -Xswiftc -warnings-as-errors)
swift build "${flags[@]}"
bin="$(swift build "${flags[@]}" --show-bin-path)"

status=0
for target in "${targets[@]}"; do
  case "$target" in
    apns-payload) max_len=4200 ;;    # a little over Apple's 4096-byte limit
    json-request) max_len=16384 ;;
    *) echo "fuzz: unknown target $target; accepted: ${all[*]}" >&2; exit 2 ;;
  esac
  # New inputs go to the first corpus directory (a working copy outside the repository); the seeds
  # in Fuzz/corpus/<target> stay as committed.
  work="$build/corpus/$target"
  findings="Fuzz/findings/$target"
  mkdir -p "$work" "$findings"
  log="$build/fuzz-$target.log"
  echo "fuzz: $target for ${seconds}s (log: $log)"
  set +e
  # shellcheck disable=SC2086
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" "$bin/fuzz-$target" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" \
    -dict=Fuzz/json.dict -artifact_prefix="$findings/" -print_final_stats=1 ${FUZZ_ARGS:-} \
    "$work" "Fuzz/corpus/$target" >"$log" 2>&1
  rc=$?
  set -e
  grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added|stat::peak_rss_mb)|(DONE|INITED) +cov:' "$log" | sed "s/^/  $target: /" || true
  if [ "$rc" -ne 0 ]; then
    status=1
    echo "fuzz: $target FOUND A PROBLEM (exit $rc); the input is in $findings/:" >&2
    grep -E 'ERROR|SUMMARY|Fatal error|Test unit written|Precondition failed|Assertion failed' "$log" | head -20 >&2 || true
  fi
done
exit "$status"
