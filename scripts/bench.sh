#!/usr/bin/env bash
# make bench: builds in release mode and runs Benchmarks/ with the physical limit (a plain C loop)
# and the peer (APScheduler 3 + SQLAlchemy job store on SQLite) in the same run, then the HTTP load
# benchmarks against a release `chime serve` (Benchmarks/http/: wrk adds, event fan-out), then the
# cluster part (Benchmarks/cluster/: PostgreSQL and 1, 2, 3 nodes against SQLite, same workloads).
#   scripts/bench.sh [chime-bench options, e.g. --quick or --only bulk,steady,http-add,http-bulk,fanout,cluster]
# --only names http-add, http-bulk, fanout and apns (APNs pushes over HTTP/2 against HTTP/1.1, h2load) go to
# Benchmarks/http/http_bench.py; api-concurrent, api-realistic (the realistic add path), api-burst, api-steady
# and cost (the public API and the cost of a delivery) to chime-bench-api;
# cluster (all four) or cluster-bulk, cluster-concurrent, cluster-burst, cluster-steady to
# Benchmarks/cluster/cluster_bench.py; webpush (one delivery to 1,000 and 10,000 Web Push
# subscribers, against pywebpush) to Benchmarks/webpush/webpush_bench.py; the others to chime-bench; --quick shortens all four. CHIME_HTTP_BENCH_ARGS adds options for http_bench.py (e.g.
# "--seconds 60 --perf"); CHIME_BENCH_SCRATCH builds somewhere other than .build.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/opt/swift/usr/bin"
# What the benchmarks run (gcc for the C loop, wrk, python3-venv, PostgreSQL): installed when
# missing, so scripts/bench.sh alone works as `make bench` does.
scripts/install-deps.sh bench
out=Benchmarks/out
mkdir -p "$out"
scratch="${CHIME_BENCH_SCRATCH:-.build}"

engine_args=()
api_args=()
http_args=()
cluster_args=()
webpush_args=()
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --only) [ $# -ge 2 ] || { echo "bench.sh: --only needs a list of names" >&2; exit 2; }; only="$2"; shift 2 ;;
    --only=*) only="${1#--only=}"; shift ;;
    --quick) engine_args+=(--quick); api_args+=(--quick); http_args+=(--quick); cluster_args+=(--quick); webpush_args+=(--quick); shift ;;
    *) engine_args+=("$1"); shift ;;
  esac
done
run_engine=1
run_api=1
run_http=1
run_cluster=1
run_webpush=1
if [ -n "$only" ]; then
  run_webpush=0
  engine_only=()
  api_only=()
  http_only=()
  cluster_only=()
  IFS=, read -ra names <<< "$only"
  for name in "${names[@]}"; do
    case "$name" in
      http-add|http-bulk|fanout|apns) http_only+=("$name") ;;
      api-concurrent|api-realistic|api-burst|api-steady|cost) api_only+=("$name") ;;
      cluster) cluster_only+=(bulk concurrent burst steady) ;;
      cluster-*) cluster_only+=("${name#cluster-}") ;;
      webpush) run_webpush=1 ;;
      *) engine_only+=("$name") ;;
    esac
  done
  if [ "${#engine_only[@]}" -gt 0 ]; then engine_args+=(--only "$(IFS=,; echo "${engine_only[*]}")"); else run_engine=0; fi
  if [ "${#api_only[@]}" -gt 0 ]; then api_args+=(--only "$(IFS=,; echo "${api_only[*]}")"); else run_api=0; fi
  if [ "${#http_only[@]}" -gt 0 ]; then http_args+=(--only "$(IFS=,; echo "${http_only[*]}")"); else run_http=0; fi
  if [ "${#cluster_only[@]}" -gt 0 ]; then cluster_args+=(--only "$(IFS=,; echo "${cluster_only[*]}")"); else run_cluster=0; fi
fi

if [ "$run_engine" = 1 ]; then
  echo "building chime-bench (release)…" >&2
  swift build -c release --scratch-path "$scratch" --product chime-bench >&2
fi
if [ "$run_api" = 1 ]; then
  echo "building chime-bench-api (release)…" >&2
  swift build -c release --scratch-path "$scratch" --product chime-bench-api >&2
fi
if [ "$run_http" = 1 ] || [ "$run_cluster" = 1 ] || [ "$run_webpush" = 1 ]; then
  echo "building chime (release)…" >&2
  swift build -c release --scratch-path "$scratch" --product chime >&2
fi
if [ "$run_engine" = 1 ] || [ "$run_api" = 1 ]; then
  gcc -O2 -o "$out/insert_loop" Benchmarks/reference/insert_loop.c -lsqlite3
  if [ ! -x .venv-bench/bin/python ]; then
    echo "setting up the peer (APScheduler) in .venv-bench…" >&2
    python3 -m venv .venv-bench
    .venv-bench/bin/pip install -q -r Benchmarks/peer/requirements.txt
  fi
fi

dir="${CHIME_BENCH_DIR:-$PWD/$out/stores}"
if [ "$run_engine" = 1 ]; then
  "$scratch/release/chime-bench" --dir "$dir" --reference "$out/insert_loop" --peer .venv-bench/bin/python \
    --json "$out/results.json" ${engine_args[@]+"${engine_args[@]}"}
fi
if [ "$run_api" = 1 ]; then
  "$scratch/release/chime-bench-api" --dir "$dir/api" --reference "$out/insert_loop" --json "$out/results.json" \
    ${api_args[@]+"${api_args[@]}"}
fi
if [ "$run_http" = 1 ]; then
  # shellcheck disable=SC2086 # CHIME_HTTP_BENCH_ARGS is a list of options
  python3 Benchmarks/http/http_bench.py --chime "$scratch/release/chime" --dir "$dir" --out "$out" \
    --json "$out/results.json" ${http_args[@]+"${http_args[@]}"} ${CHIME_HTTP_BENCH_ARGS:-}
fi
if [ "$run_cluster" = 1 ]; then
  python3 Benchmarks/cluster/cluster_bench.py --chime "$scratch/release/chime" --dir "$dir" --json "$out/results.json" \
    ${cluster_args[@]+"${cluster_args[@]}"}
fi
if [ "$run_webpush" = 1 ]; then
  webpush_python="$(scripts/python-venv.sh .build/venv-webpush-bench Benchmarks/webpush/requirements.txt)"
  "$webpush_python" Benchmarks/webpush/webpush_bench.py --chime "$scratch/release/chime" --json "$out/webpush.json" \
    ${webpush_args[@]+"${webpush_args[@]}"}
fi
