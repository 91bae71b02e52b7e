#!/usr/bin/env bash
# The Python environment of the recurrence oracle (Tests/Support/RecurrenceOracle/rrule_oracle.py:
# python-dateutil from PyPI), for ChimeCoreTests' RecurrenceOracleTests.
#
#   scripts/recurrence-test-env.sh     sets up .build/venv-recurrence if needed; prints its python
#
# Needs python3-venv (scripts/install-deps.sh test). Override the place with RECURRENCE_TEST_VENV.
# Test processes running at once share the environment: the first sets it up (python-venv.sh locks it).
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/python-venv.sh "${RECURRENCE_TEST_VENV:-.build/venv-recurrence}" Tests/Support/RecurrenceOracle/requirements.txt
