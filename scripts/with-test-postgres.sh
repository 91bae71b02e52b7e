#!/usr/bin/env bash
# Runs a command with a PostgreSQL server of the tests' own, started before it and removed after:
# Debian's binaries, `initdb` into a temporary directory (as the postgres user when run as root),
# listening on a free loopback port only. The command finds the port in CHIME_TEST_POSTGRES_PORT,
# which PostgresTestServer.shared() uses instead of starting a server inside the test process
# (that start held threads of Swift's concurrency pool for seconds, and other tests timed out).
#
#   scripts/with-test-postgres.sh swift test --skip-build
set -euo pipefail
bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  echo "with-test-postgres: PostgreSQL's initdb was not found in /usr/lib/postgresql/*/bin; run scripts/install-deps.sh test" >&2
  exit 1
fi
dir="$(mktemp -d /tmp/chime-pg-suite-XXXXXX)"
as_postgres=()
if [ "$(id -u)" -eq 0 ]; then
  chown postgres: "$dir"
  as_postgres=(/usr/bin/setpriv --reuid=postgres --regid=postgres --init-groups --)
fi
stop() {
  "${as_postgres[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 20 stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap stop EXIT
"${as_postgres[@]}" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1 \
  || { cat "$dir/initdb.log" >&2; exit 1; }
started=""
for _ in 1 2 3; do
  port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  if "${as_postgres[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 \
       -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories= -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
       start >/dev/null 2>&1; then
    started=yes
    break
  fi
done
if [ -z "$started" ]; then
  echo "with-test-postgres: PostgreSQL did not start; its log:" >&2
  tail -n 30 "$dir/log" >&2 || true
  exit 1
fi
set +e
CHIME_TEST_POSTGRES_PORT="$port" "$@"
status=$?
set -e
exit "$status"
