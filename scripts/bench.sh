#!/usr/bin/env bash
# make bench: builds in release mode and runs Benchmarks/ with the physical limit (a plain C loop)
# and the peer (APScheduler 3 + SQLAlchemy job store on SQLite) in the same run.
#   scripts/bench.sh [chime-bench options, e.g. --quick or --only bulk,steady]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/opt/swift/usr/bin"
out=Benchmarks/out
mkdir -p "$out"

echo "building chime-bench (release)…" >&2
swift build -c release --product chime-bench >&2
gcc -O2 -o "$out/insert_loop" Benchmarks/reference/insert_loop.c -lsqlite3

if [ ! -x .venv-bench/bin/python ]; then
  echo "setting up the peer (APScheduler) in .venv-bench…" >&2
  python3 -m venv .venv-bench
  .venv-bench/bin/pip install -q -r Benchmarks/peer/requirements.txt
fi

dir="${CHIME_BENCH_DIR:-$PWD/$out/stores}"
exec .build/release/chime-bench --dir "$dir" --reference "$out/insert_loop" --peer .venv-bench/bin/python \
  --json "$out/results.json" "$@"
