#!/usr/bin/env bash
# The Python environment of the HTTP/2 client tests (Tests/Support/HTTP2Clients/clients.py: httpx
# with h2, the h2 library itself, aioapns, an APNs provider library on h2, and kalyke-apns, one on
# httpx), for ChimeServerTests and `make abuse`.
#
#   scripts/http2-test-env.sh     sets up .build/venv-http2 if needed; prints its python
#
# Needs python3-venv (scripts/install-deps.sh test). Override the place with HTTP2_TEST_VENV.
# Test processes running at once share the environment: the first sets it up (python-venv.sh locks it).
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/python-venv.sh "${HTTP2_TEST_VENV:-.build/venv-http2}" Tests/Support/HTTP2Clients/requirements.txt
