"""Occurrences of recurrence rules by python-dateutil's rrule: the other side of Chime's
recurrence tests (Tests/ChimeCoreTests/Schedule/RecurrenceOracleTests.swift).

    rrule_oracle.py CASES.json     prints one JSON list: for each case, its occurrences

Each case is {"rule": RRULE text, "start": "YYYY-MM-DDTHH:MM:SS" (local wall time), "zone": an IANA
name, "after": Unix seconds, "count": N, "exdates": [indices]}. dateutil expands the rule from the
start with the zone attached (wall-clock arithmetic, as RFC 5545 says); zoneinfo turns each wall
time into an instant: a time in a daylight-saving gap with the offset before the gap (fold=0, as
RFC 5545 section 3.3.5 reads a DATE-TIME in a gap: it moves forward by the gap), a time that occurs
twice at its first pass (fold=0). The instants are sorted and repeats dropped; "exdates" names
occurrences (by index among those instants, from the start) that are then excluded with
rruleset.exdate. The answer for a case is {"exdates": [Unix seconds], "next": the first N
instants after "after", in Unix seconds}.
"""
import json
import signal
import sys
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

from dateutil.rrule import rrulestr, rruleset

LOOK_AHEAD = 60  # occurrences taken from dateutil before sorting by instant


def instants(rule, limit):
    taken = []
    for wall in rule:
        taken.append(int(wall.astimezone(timezone.utc).timestamp()))
        if len(taken) >= limit:
            break
    return sorted(set(taken))


def answer(case):
    zone = ZoneInfo(case["zone"])
    start = datetime.fromisoformat(case["start"]).replace(tzinfo=zone)
    rule = rrulestr(case["rule"], dtstart=start)
    every = instants(rule, LOOK_AHEAD + 2 * case["count"])
    excluded = [every[i] for i in case.get("exdates", []) if i < len(every)]
    rules = rruleset()
    rules.rrule(rule)
    for instant in excluded:
        rules.exdate(datetime.fromtimestamp(instant, timezone.utc))
    after = case["after"]
    # Generated in wall order: look far enough past `after` that a time moved by a gap is in.
    kept = []
    for wall in rules:
        instant = int(wall.astimezone(timezone.utc).timestamp())
        if instant > after:
            kept.append(instant)
        if len(kept) >= case["count"] + 8:
            break
    return {"exdates": excluded, "next": sorted(set(kept))[: case["count"]]}


class TooSlow(Exception):
    pass


def timed_answer(case):
    """dateutil steps through every hour, minute or second of a sparse sub-daily rule, and through
    every period up to the year 9999 for one that never matches: such a case gets {"slow": true}
    after SECONDS_PER_CASE, and the test leaves it out (and says how many)."""
    def stop(signum, frame):
        raise TooSlow()
    signal.signal(signal.SIGALRM, stop)
    signal.alarm(SECONDS_PER_CASE)
    try:
        return answer(case)
    except ValueError as error:
        # dateutil refuses a sub-daily rule whose steps never land on its BYHOUR/BYMINUTE/BYSECOND:
        # it has no occurrences.
        if "generates an empty set" not in str(error):
            raise
        return {"exdates": [], "next": []}
    except TooSlow:
        return {"slow": True}
    except Exception as error:  # dateutil's own failure: reported, not compared
        return {"failed": f"{type(error).__name__}: {error}"}
    finally:
        signal.alarm(0)


SECONDS_PER_CASE = 2


def main(path):
    with open(path) as file:
        cases = json.load(file)
    json.dump([timed_answer(case) for case in cases], sys.stdout)


if __name__ == "__main__":
    main(*sys.argv[1:])
