#!/usr/bin/env python3
"""Peer benchmark: APScheduler 3.x with a SQLite-backed SQLAlchemyJobStore.

This is the "what does an established scheduler do" comparison point for
Chime. It uses APScheduler's BackgroundScheduler, a thread pool executor and
``SQLAlchemyJobStore(url="sqlite:///<file>")`` with its default SQLite
settings (rollback journal, synchronous=FULL) unless ``--wal`` is given, in
which case every connection runs ``PRAGMA journal_mode=WAL`` and
``PRAGMA synchronous=NORMAL`` -- the settings Chime itself uses.

Subcommands (each prints exactly one JSON line on stdout; progress goes to
stderr as a single carriage-return-updated line):

  schedule --count N --db FILE
      Scheduler running. Adds N one-shot jobs (date trigger, run_date uniformly
      random 1 min .. 30 days ahead, random order, ids "req-<i>", kwargs with a
      title, a ~60 character body and 200 bytes of data, replace_existing=True).
      Every add is its own SQLite transaction. Reports jobs/s.

  burst --count N --db FILE
      Scheduler started paused; N jobs are added, all due at the same instant D,
      then the scheduler is resumed before D. The job function records the
      wall-clock time at which it ran. Reports the time from D until the last
      of the N jobs has run, and jobs/s over that span.

  steady --rate R --seconds T --db FILE
      Scheduler started paused; R*T jobs are added with due times spaced
      1/R apart, then it is resumed before the first due time. Lateness =
      (time the job function ran) - (its due time). Reports p50/p99/max
      lateness in milliseconds, and how many ran out of how many scheduled
      before the deadline (last due time + --grace seconds).

      The peer cannot keep up with 10,000 jobs/s (Chime's target): every fired
      job costs a query+unpickle, an executor hand-off and a DELETE in its own
      transaction, done one job at a time by the single scheduler thread while
      it holds the job store lock. Measured on the 2-core dev machine: with
      default SQLite settings its firing ceiling is ~1,000-1,100 jobs/s, so
      the default 1,000/s sits right at the edge (5 s runs: usually on time,
      p99 2-25 ms, but one run in five fell behind to p99 ~1.2 s -- every
      fired job waits for an fsync, so disk latency shows); at 2,000/s or 10,000/s lateness grows linearly through the run
      (seconds of p50/p99). With --wal the ceiling is ~5,000-5,700 jobs/s:
      5,000/s keeps up, 10,000/s does not. The JSON reports the achieved rate
      ("ranPerSecond") so the ceiling can be read off directly.

Why burst and steady pre-load while paused: adding and firing both take
APScheduler's job store lock, and adding is slow (~1 ms per job), so adding
jobs while they are firing would measure the add path, not the firing path.
The due instant is therefore placed after the expected end of the add phase:
a short calibration adds a few hundred jobs to a scratch store to estimate
the add rate, and the due instant is set to (now + add-time estimate * 1.5 +
--lead seconds). If the adds still overrun that instant, the JSON says so
("addsOverranDue": true) and lateness includes the overrun.

Setup:
  python3 -m venv .venv-bench
  .venv-bench/bin/pip install -r Benchmarks/peer/requirements.txt
  .venv-bench/bin/python Benchmarks/peer/apscheduler_bench.py schedule --count 20000 --db /tmp/aps.sqlite
"""

import argparse
import json
import logging
import math
import os
import random
import sys
import threading
import time
from datetime import datetime, timezone

try:
    from apscheduler.executors.pool import ThreadPoolExecutor
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
    from apscheduler.schedulers.background import BackgroundScheduler
    import apscheduler
    import sqlalchemy
    from sqlalchemy import event as sa_event
except ImportError as exc:  # pragma: no cover - setup problem, not a benchmark result
    sys.stderr.write(
        "apscheduler_bench: %s\n"
        "install the peer first:\n"
        "  python3 -m venv .venv-bench && "
        ".venv-bench/bin/pip install -r Benchmarks/peer/requirements.txt\n" % exc
    )
    sys.exit(2)

APP_SEED = 20240601
MONTH = 86400.0 * 30.0

# ---------------------------------------------------------------------------
# The job function. It must be importable by reference ("__main__:deliver")
# because the SQLAlchemy job store pickles jobs by textual reference.
# ---------------------------------------------------------------------------

_ran_lock = threading.Lock()
_ran = []  # list of (ran_at_wall_seconds, due_wall_seconds or None)


def deliver(title, body, data, due=None):
    """Stand-in for "post the notification": just record when it ran."""
    now = time.time()
    with _ran_lock:
        _ran.append((now, due))


def ran_count():
    with _ran_lock:
        return len(_ran)


def ran_snapshot():
    with _ran_lock:
        return list(_ran)


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


class Progress:
    """One stderr line: on a terminal rewritten with '\\r' at most ~10 times a second; into a log,
    plain lines at most every 5 seconds (no control characters in a CI log)."""

    def __init__(self, label, total):
        self.label = label
        self.total = total
        self._last = 0.0
        self._tty = sys.stderr.isatty()

    def update(self, done, force=False, extra=""):
        now = time.monotonic()
        if not force and now - self._last < (0.1 if self._tty else 5):
            return
        self._last = now
        text = "apscheduler %s: %d/%d%s" % (self.label, done, self.total, extra)
        sys.stderr.write("\r" + text + "   " if self._tty else text + "\n")
        sys.stderr.flush()

    def finish(self, done, extra=""):
        self.update(done, force=True, extra=extra)
        if self._tty:
            sys.stderr.write("\n")
        sys.stderr.flush()


def fresh_db(path):
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(path + suffix)
        except FileNotFoundError:
            pass


def make_scheduler(db_path, workers, wal):
    """BackgroundScheduler + SQLAlchemyJobStore(url=sqlite:///FILE) + thread pool."""
    store = SQLAlchemyJobStore(url="sqlite:///" + os.path.abspath(db_path))
    if wal:
        def _pragmas(dbapi_conn, _record):
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        # Registered before the store's first connection (made in start()).
        sa_event.listen(store.engine, "connect", _pragmas)
    return BackgroundScheduler(
        jobstores={"default": store},
        executors={"default": ThreadPoolExecutor(max_workers=workers)},
        job_defaults={
            "coalesce": False,
            # "Large": nothing in these runs may be dropped for being late.
            "misfire_grace_time": 7 * 86400,
            "max_instances": 1,
        },
        timezone=timezone.utc,
    )


def payload(rng, i):
    """kwargs for job i: title, ~60 char body, 200 bytes of data."""
    return {
        "title": "Reminder %d" % i,
        "body": ("Don't forget item #%d: check the schedule and reply soon." % i)[:60],
        "data": rng.randbytes(200),
    }


def utc(ts):
    return datetime.fromtimestamp(ts, tz=timezone.utc)


def add_one(sched, i, run_at, rng, due_kwarg):
    kw = payload(rng, i)
    if due_kwarg:
        kw["due"] = run_at
    sched.add_job(
        deliver,
        trigger="date",
        run_date=utc(run_at),
        id="req-%d" % i,
        kwargs=kw,
        replace_existing=True,
    )


def estimate_add_rate(db_path, workers, wal, sample=300):
    """Adds `sample` jobs to a scratch store (scheduler paused); returns jobs/s."""
    scratch = db_path + ".calib"
    fresh_db(scratch)
    sched = make_scheduler(scratch, workers, wal)
    sched.start(paused=True)
    rng = random.Random(1)
    far = time.time() + 86400.0
    t0 = time.perf_counter()
    for i in range(sample):
        add_one(sched, i, far, rng, due_kwarg=False)
    dt = time.perf_counter() - t0
    sched.shutdown(wait=False)
    fresh_db(scratch)
    return sample / dt if dt > 0 else float("inf")


def percentile(sorted_vals, p):
    """Nearest-rank percentile of an already-sorted list."""
    if not sorted_vals:
        return None
    k = max(0, min(len(sorted_vals) - 1, math.ceil(p / 100.0 * len(sorted_vals)) - 1))
    return sorted_vals[k]


def emit(result):
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


def common_fields(args):
    return {
        "peer": "apscheduler",
        "apschedulerVersion": apscheduler.__version__ if hasattr(apscheduler, "__version__") else None,
        "sqlalchemyVersion": sqlalchemy.__version__,
        "sqliteMode": "wal+normal" if args.wal else "default",
        "workers": args.workers,
    }


def preload(sched, args, label, due_times):
    """Adds len(due_times) jobs (scheduler paused). Returns seconds taken."""
    rng = random.Random(APP_SEED)
    order = list(range(len(due_times)))
    prog = Progress(label + " (adding)", len(order))
    t0 = time.perf_counter()
    for n, i in enumerate(order, 1):
        add_one(sched, i, due_times[i], rng, due_kwarg=True)
        prog.update(n)
    took = time.perf_counter() - t0
    prog.finish(len(order), extra=" in %.1fs" % took)
    return took


def wait_for_runs(label, total, deadline):
    prog = Progress(label, total)
    while True:
        n = ran_count()
        prog.update(n)
        if n >= total or time.time() >= deadline:
            prog.finish(n)
            return n
        time.sleep(0.02)


# ---------------------------------------------------------------------------
# Subcommands
# ---------------------------------------------------------------------------


def cmd_schedule(args):
    fresh_db(args.db)
    sched = make_scheduler(args.db, args.workers, args.wal)
    sched.start()  # running: each add persists and wakes the scheduler thread
    rng = random.Random(APP_SEED)
    now = time.time()
    run_at = [now + 60.0 + rng.random() * (MONTH - 60.0) for _ in range(args.count)]
    prog = Progress("schedule", args.count)
    t0 = time.perf_counter()
    for i in range(args.count):
        add_one(sched, i, run_at[i], rng, due_kwarg=False)
        prog.update(i + 1)
    secs = time.perf_counter() - t0
    prog.finish(args.count)
    stored = len(sched.get_jobs())
    sched.shutdown(wait=False)
    result = common_fields(args)
    result.update({
        "benchmark": "schedule",
        "jobs": args.count,
        "stored": stored,
        "seconds": round(secs, 3),
        "jobsPerSecond": round(args.count / secs, 1) if secs > 0 else None,
    })
    emit(result)


def cmd_burst(args):
    fresh_db(args.db)
    rate = estimate_add_rate(args.db, args.workers, args.wal)
    sched = make_scheduler(args.db, args.workers, args.wal)
    sched.start(paused=True)
    due = time.time() + args.lead + 1.5 * args.count / rate
    add_secs = preload(sched, args, "burst", [due] * args.count)
    overran = time.time() >= due
    sched.resume()  # before `due` unless the adds overran; then they are all due now
    n = wait_for_runs("burst", args.count, due + args.timeout)
    snap = ran_snapshot()
    sched.shutdown(wait=False)
    last = max(t for t, _ in snap) if snap else None
    first = min(t for t, _ in snap) if snap else None
    span = (last - due) if last is not None else None
    result = common_fields(args)
    result.update({
        "benchmark": "burst",
        "jobs": args.count,
        "ran": n,
        "addSeconds": round(add_secs, 3),
        "addsOverranDue": overran,
        "firstRunAfterDueMs": round((first - due) * 1000.0, 1) if first is not None else None,
        "seconds": round(span, 3) if span is not None else None,
        "jobsPerSecond": round(n / span, 1) if span and span > 0 else None,
    })
    emit(result)


def cmd_steady(args):
    fresh_db(args.db)
    total = int(round(args.rate * args.seconds))
    rate = estimate_add_rate(args.db, args.workers, args.wal)
    sched = make_scheduler(args.db, args.workers, args.wal)
    sched.start(paused=True)
    start = time.time() + args.lead + 1.5 * total / rate
    due_times = [start + i / args.rate for i in range(total)]
    add_secs = preload(sched, args, "steady", due_times)
    overran = time.time() >= start
    sched.resume()
    deadline = due_times[-1] + args.grace
    n = wait_for_runs("steady", total, deadline)
    snap = ran_snapshot()
    sched.shutdown(wait=False)
    late_ms = sorted((ran - due) * 1000.0 for ran, due in snap)
    last = max(t for t, _ in snap) if snap else None
    result = common_fields(args)
    result.update({
        "benchmark": "steady",
        "targetRate": args.rate,
        "seconds": args.seconds,
        "scheduled": total,
        "ran": n,
        "graceSeconds": args.grace,
        "addSeconds": round(add_secs, 3),
        "addsOverranDue": overran,
        "p50Ms": round(percentile(late_ms, 50), 2) if late_ms else None,
        "p99Ms": round(percentile(late_ms, 99), 2) if late_ms else None,
        "maxMs": round(late_ms[-1], 2) if late_ms else None,
        # Jobs that ran, divided by first due .. last actual run.
        "ranPerSecond": round(n / (last - start), 1) if last and last > start else None,
    })
    emit(result)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    def common(p):
        p.add_argument("--db", required=True, help="SQLite file (deleted and recreated)")
        p.add_argument("--workers", type=int, default=10,
                       help="thread pool size (default 10, APScheduler's own default)")
        p.add_argument("--wal", action="store_true",
                       help="use journal_mode=WAL, synchronous=NORMAL (Chime's settings)")

    p = sub.add_parser("schedule", help="add N future one-shot jobs; jobs/s")
    p.add_argument("--count", type=int, default=20000)
    common(p)

    p = sub.add_parser("burst", help="N jobs due at one instant; time until all ran")
    p.add_argument("--count", type=int, default=10000)
    p.add_argument("--lead", type=float, default=2.0,
                   help="seconds between the expected end of adding and the due instant")
    p.add_argument("--timeout", type=float, default=300.0,
                   help="give up this many seconds after the due instant")
    common(p)

    p = sub.add_parser("steady", help="jobs due at R/s for T s; lateness percentiles")
    p.add_argument("--rate", type=float, default=1000.0)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--lead", type=float, default=2.0,
                   help="seconds between the expected end of adding and the first due time")
    p.add_argument("--grace", type=float, default=60.0,
                   help="stop waiting this many seconds after the last due time")
    common(p)

    args = ap.parse_args(argv)
    for name in ("count", "workers"):
        if getattr(args, name, 1) <= 0:
            ap.error("--%s must be positive" % name)
    if args.cmd == "steady" and (args.rate <= 0 or args.seconds <= 0):
        ap.error("--rate and --seconds must be positive")

    # APScheduler logs misfires etc. as warnings; keep stderr to those.
    logging.basicConfig(level=logging.WARNING, format="\n%(name)s: %(message)s")

    {"schedule": cmd_schedule, "burst": cmd_burst, "steady": cmd_steady}[args.cmd](args)

    # Any jobs still queued in the thread pool (a timed-out run) would keep the
    # interpreter alive at exit; the result is already printed, so leave now.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
