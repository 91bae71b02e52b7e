#!/usr/bin/env bash
# make fuzz: builds the libFuzzer targets of the Fuzz/ package (with address sanitizer) and runs each
# for a bounded time. Exits 1 when any target finds something; the input is saved under
# Fuzz/findings/<target>/ (crash-*, timeout-*, oom-*, leak-*), to replay with
#   Fuzz/.build/release/fuzz-<target> Fuzz/findings/<target>/crash-…
#
#   scripts/fuzz.sh                    every target, FUZZ_SECONDS (default 60) each
#   scripts/fuzz.sh json-request       one target
#   scripts/fuzz.sh --smoke            make test's check: every target builds, runs its committed
#                                      corpus, then FUZZ_SMOKE_RUNS (default 10000) inputs from -seed=1
#   scripts/fuzz.sh --no-build T       runs what the last build made (a long run outside the build
#                                      lock, after `scripts/fuzz.sh --build-only` inside it)
# Environment: FUZZ_SECONDS, FUZZ_BUILD (scratch directory, default Fuzz/.build), FUZZ_ARGS (more
# libFuzzer flags, e.g. "-use_value_profile=1"), FUZZ_SMOKE_RUNS.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/opt/swift/usr/bin"
# A trap is libFuzzer's to report (and its input to save); Swift's own backtracer would hold the
# crashing process for seconds first.
export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}"

smoke=0
build_step=1
case "${1:-}" in
  --smoke) smoke=1; shift ;;
  --no-build) build_step=0; shift ;;
  --build-only) build_step=2; shift ;;
esac
seconds="${FUZZ_SECONDS:-60}"
build="${FUZZ_BUILD:-Fuzz/.build}"
all=(apns-payload json-request config-file percent-encoding link-header event-stream send-headers arguments jwt rrule web-push-subscription apns-headers http2 web-push-keys)
targets=("$@")
[ "${#targets[@]}" -eq 0 ] && targets=("${all[@]}")

flags=(--package-path Fuzz --scratch-path "$build" -c release
       -Xswiftc -sanitize=fuzzer,address -Xswiftc -warnings-as-errors)
if [ "$build_step" -eq 0 ]; then
  bin="$build/release"
else
  swift build "${flags[@]}"
  bin="$(swift build "${flags[@]}" --show-bin-path)"
  [ "$build_step" -eq 2 ] && exit 0
fi

status=0
for target in "${targets[@]}"; do
  extra=()
  case "$target" in
    apns-payload) max_len=4200; dict=json.dict ;;    # a little over Apple's 4096-byte limit
    json-request) max_len=16384; dict=json.dict ;;
    config-file) max_len=4096; dict=toml.dict ;;
    percent-encoding) max_len=2048; dict=percent.dict ;;
    link-header) max_len=2048; dict=link.dict ;;
    event-stream) max_len=8192; dict=sse.dict ;;
    send-headers) max_len=4096; dict=headers.dict ;;
    arguments) max_len=2048; dict=args.dict ;;
    jwt) max_len=4200; dict=jwt.dict ;;              # a little over JSONWebToken.maximumLength
    rrule) max_len=1024; dict=rrule.dict ;;
    web-push-subscription) max_len=4096; dict=webpush.dict ;;
    apns-headers) max_len=1024; dict=apns-headers.dict ;;
    http2) max_len=4096; dict=http2.dict ;;                 # a client's choices: limits, then frames and the handler's moves
    # OpenSSL keeps caches that grow as keys are made, so every input looked like a leak to libFuzzer, which then
    # scanned the whole heap after each (30 inputs a second); a real leak is still found by ASan at exit.
    web-push-keys) max_len=4200; dict=webpush-keys.dict; extra=(-detect_leaks=0) ;;
    *) echo "fuzz: unknown target $target; accepted: ${all[*]}" >&2; exit 2 ;;
  esac
  findings="Fuzz/findings/$target"
  mkdir -p "$findings"
  log="$build/fuzz-$target.log"
  common=(-timeout=10 -rss_limit_mb=2048 -max_len="$max_len" -dict="Fuzz/$dict" -artifact_prefix="$findings/"
          -print_final_stats=1 "${extra[@]}")
  set +e
  if [ "$smoke" -eq 1 ]; then
    # Every committed input once (a crash on the corpus fails), then a fixed, bounded run from it:
    # -seed=1 makes the same inputs each time. New inputs go to a scratch directory emptied each
    # time, so the committed corpus stays as it is and every smoke starts from the same place.
    work="$build/smoke/$target"
    rm -rf "$work" && mkdir -p "$work"
    # Swift's per-process hash seed would change the order of dictionaries, and so the coverage.
    # shellcheck disable=SC2086
    SWIFT_DETERMINISTIC_HASHING=1 "$bin/fuzz-$target" "${common[@]}" -seed=1 -runs="${FUZZ_SMOKE_RUNS:-10000}" ${FUZZ_ARGS:-} \
      "$work" "Fuzz/corpus/$target" >"$log" 2>&1 </dev/null
    rc=$?
  else
    # New inputs go to the first corpus directory (a working copy outside the repository); the seeds
    # in Fuzz/corpus/<target> stay as committed.
    work="$build/corpus/$target"
    mkdir -p "$work"
    echo "fuzz: $target for ${seconds}s (log: $log)"
    # shellcheck disable=SC2086
    ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" "$bin/fuzz-$target" "${common[@]}" -max_total_time="$seconds" \
      ${FUZZ_ARGS:-} "$work" "Fuzz/corpus/$target" >"$log" 2>&1 </dev/null
    rc=$?
  fi
  set -e
  if [ "$smoke" -eq 1 ]; then
    summary="$(grep -E '^stat::number_of_executed_units' "$log" | sed 's/.*: *//')"
    cov="$(grep -oE 'DONE +cov: [0-9]+' "$log" | sed 's/.*: *//')"
    echo "fuzz smoke: $target ${summary:-?} inputs, cov ${cov:-?}, exit $rc"
  else
    grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added|stat::peak_rss_mb)|(DONE|INITED) +cov:' "$log" | sed "s/^/  $target: /" || true
  fi
  if [ "$rc" -ne 0 ]; then
    status=1
    echo "fuzz: $target FOUND A PROBLEM (exit $rc, log $log); the input is in $findings/:" >&2
    grep -E 'ERROR|SUMMARY|Fatal error|Test unit written|Assertion failed' "$log" | head -20 >&2 || true
  fi
done
exit "$status"
